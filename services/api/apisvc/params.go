package apisvc

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
)

// Path parameter shapes. Anything else is a 400 before any lookup.
var (
	workflowName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)
	runIDShape   = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)
	nodeIDShape  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// Page sizes of list endpoints.
const (
	defaultLimit = 50
	maxLimit     = 500
)

// nameParam returns the :name path parameter, checked.
func nameParam(c *gin.Context) (string, error) {
	n := c.Param("name")
	if !workflowName.MatchString(n) {
		return "", errBadRequest("workflow name %q is invalid: names match [a-z0-9][a-z0-9_.-]{0,63}", n)
	}
	return n, nil
}

// runParam returns the :id path parameter, checked.
func runParam(c *gin.Context) (string, error) {
	id := c.Param("id")
	if !runIDShape.MatchString(id) {
		return "", errBadRequest("run id %q is invalid: run ids match [A-Za-z0-9_.:-]{1,128}", id)
	}
	return id, nil
}

// nodeParam returns the :node path parameter, checked.
func nodeParam(c *gin.Context) (string, error) {
	n := c.Param("node")
	if !nodeIDShape.MatchString(n) {
		return "", errBadRequest("node id %q is invalid: node ids match [A-Za-z0-9_-]{1,64}", n)
	}
	return n, nil
}

// runNodeParams returns the :id and :node path parameters of a task route,
// checked.
func runNodeParams(c *gin.Context) (run, node string, err error) {
	if run, err = runParam(c); err == nil {
		node, err = nodeParam(c)
	}
	return run, node, err
}

// workflowVersionParams returns the :name path parameter and ?version=
// (0 when absent: the latest), checked.
func workflowVersionParams(c *gin.Context) (name string, version int, err error) {
	if name, err = nameParam(c); err == nil {
		version, err = versionQuery(c)
	}
	return name, version, err
}

// intQuery parses an optional integer query parameter within [lo, hi].
func intQuery(c *gin.Context, name string, def, lo, hi int) (int, error) {
	v, ok := c.GetQuery(name)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, errBadRequest("query parameter %s=%q must be an integer from %d to %d", name, v, lo, hi)
	}
	return n, nil
}

// boolQuery parses an optional boolean query parameter.
func boolQuery(c *gin.Context, name string) (bool, error) {
	v, ok := c.GetQuery(name)
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, errBadRequest("query parameter %s=%q must be true or false", name, v)
	}
	return b, nil
}

// limitQuery parses ?limit= (1..maxLimit, default defaultLimit).
func limitQuery(c *gin.Context) (int, error) { return intQuery(c, "limit", defaultLimit, 1, maxLimit) }

// cursor is the decoded form of an opaque page cursor: the last item of the
// previous page, and the list it belongs to.
type cursor struct {
	List   string  `json:"l"`
	Score  float64 `json:"s,omitempty"`
	Member string  `json:"m,omitempty"`
	Offset int     `json:"o,omitempty"`
}

// encode returns the opaque form of cur.
func (cur cursor) encode() string {
	b, _ := json.Marshal(cur) // plain fields: cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// after returns the cursor as a sorted-set position.
func (cur *cursor) after() *redis.Z {
	if cur == nil {
		return nil
	}
	return &redis.Z{Score: cur.Score, Member: cur.Member}
}

// cursorQuery decodes ?cursor= for list (nil when absent); a cursor that is
// malformed or from another list is a 400.
func cursorQuery(c *gin.Context, list string) (*cursor, error) {
	v, ok := c.GetQuery("cursor")
	if !ok {
		return nil, nil
	}
	bad := errBadRequest("query parameter cursor=%q is not a cursor of this list; pass next_cursor from the previous page", v)
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(v) > 512 {
		return nil, bad
	}
	var cur cursor
	if json.Unmarshal(b, &cur) != nil || cur.List != list || cur.Offset < 0 {
		return nil, bad
	}
	if cur.Member == "" && cur.Offset == 0 {
		return nil, bad
	}
	return &cur, nil
}
