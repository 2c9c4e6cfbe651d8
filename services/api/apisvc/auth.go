package apisvc

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// ctxPrincipal is the gin context key of the authenticated principal.
const ctxPrincipal = "braid.principal"

// principal is who made a request: a key's name and role.
type principal struct {
	Name string
	Role Role
}

// anonymous is the principal of every request when authentication is off.
var anonymous = principal{Name: "anonymous", Role: RoleWrite}

// authenticate admits requests carrying a configured key and records its
// principal. It never logs or echoes the key. A request without a valid key
// is charged to its client address's rate budget before its 401, so that
// guessing keys is rate limited too (then it gets the 429 instead).
func (s *Server) authenticate(c *gin.Context) {
	if s.cfg.AuthOff {
		c.Set(ctxPrincipal, anonymous)
		return
	}
	tok, ok := credential(c.Request)
	if !ok {
		s.unauthorized(c, `Bearer realm="braid"`, "missing API key: send it as X-API-Key: <key> or Authorization: Bearer <key>")
		return
	}
	i := s.ring.match(tok)
	if i < 0 {
		s.unauthorized(c, `Bearer realm="braid", error="invalid_token"`, "invalid API key")
		return
	}
	c.Set(ctxPrincipal, principal{Name: s.ring.names[i], Role: s.ring.roles[i]})
}

// unauthorized answers 401 with challenge, or 429 when the client address
// is over its rate limit.
func (s *Server) unauthorized(c *gin.Context, challenge, detail string) {
	if !s.admit(c, peerClient(c)) {
		return
	}
	c.Header("WWW-Authenticate", challenge)
	abort(c, errUnauthorized(detail))
}

// authorize admits write requests only with a write key. It runs after
// rateLimit, so refused requests count against the key's rate as well.
func authorize(c *gin.Context) {
	p := c.MustGet(ctxPrincipal).(principal)
	if p.Role != RoleWrite && !readOnly(c.Request.Method) && !readOnlyPosts[c.FullPath()] {
		abort(c, errForbidden("API key %q has role read; %s %s needs a write key", p.Name, c.Request.Method, routeTemplate(c.FullPath())))
	}
}

// readOnlyPosts are the POST routes that change nothing, open to read keys.
var readOnlyPosts = map[string]bool{"/workflows/validate": true}

// routeTemplate writes a gin route as the API reference does: /runs/{id},
// not /runs/:id.
func routeTemplate(route string) string {
	parts := strings.Split(route, "/")
	for i, p := range parts {
		if len(p) > 1 && (p[0] == ':' || p[0] == '*') {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

// credential returns the key from X-API-Key or Authorization: Bearer.
func credential(r *http.Request) (string, bool) {
	if k := r.Header.Get("X-API-Key"); k != "" {
		return k, true
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if ok && strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(tok) != "" {
		return strings.TrimSpace(tok), true
	}
	return "", false
}

// readOnly reports whether a read key may use method.
func readOnly(method string) bool { return method == http.MethodGet || method == http.MethodHead }

// requester returns the name of the key that made the request.
func requester(c *gin.Context) string {
	if p, ok := c.Get(ctxPrincipal); ok {
		return p.(principal).Name
	}
	return ""
}
