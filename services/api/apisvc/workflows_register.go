package apisvc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/gin-gonic/gin"
)

// validation is the body of POST /workflows/validate.
type validation struct {
	Valid    bool         `json:"valid"`
	Name     string       `json:"name,omitempty"`
	Problems []FieldError `json:"problems"`
}

// registerWorkflow stores a definition (any accepted format) as the next
// version of its name: 201 {name, version}.
func (s *Server) registerWorkflow(c *gin.Context) {
	body, err := readJSONBody(c)
	if err != nil {
		abort(c, err)
		return
	}
	def, err := parseDefinition(body)
	if err != nil {
		abort(c, err)
		return
	}
	if err := s.mayRegister(c, def); err != nil {
		abort(c, err)
		return
	}
	norm, err := encodeDefinition(def)
	if err != nil {
		abort(c, err)
		return
	}
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	v, err := s.keys.RegisterWorkflow(ctx, s.rdb, def.Name, norm, time.Now())
	s.latest.drop(def.Name)
	if err != nil {
		abort(c, err)
		return
	}
	if _, err := s.defs.add(def.Name, v, norm); err != nil {
		// Stored, but it does not compile as stored: a run of it would be
		// refused the same way. Logged; the registration stands.
		s.log.Error("registered workflow does not compile as stored", logkey.Workflow, def.Name, logkey.Version, v, logkey.Err, err)
	}
	s.log.Info("workflow registered", logkey.Workflow, def.Name, logkey.Version, v, logkey.KeyName, requester(c))
	c.Header("Location", "/workflows/"+def.Name)
	respond(c, http.StatusCreated, apiwire.WorkflowRef{Name: def.Name, Version: v, Warnings: handlerWarnings(def, s.handlerOffers(ctx, time.Now()))})
}

// warnNodesMax bounds the node ids a handler warning lists.
const warnNodesMax = 5

// handlerWarnings names each handler of def's nodes that no live worker
// offers (offers, from the worker registry; nil when it could not be read:
// no warning then), with the nodes that use it. The orchestrator's own
// handlers (wait, approval) need no worker. A warning, not a refusal:
// workers may start after the workflow is registered, and its tasks wait
// queued for them (the waiting reason says so too).
func handlerWarnings(def *dag.Definition, offers func(string) bool) []string {
	if offers == nil {
		return nil
	}
	var order []string
	nodes := map[string][]string{}
	for _, n := range def.Nodes {
		if n.Handler == dag.HandlerWait || n.Handler == dag.HandlerApproval || offers(n.Handler) {
			continue
		}
		if _, seen := nodes[n.Handler]; !seen {
			order = append(order, n.Handler)
		}
		nodes[n.Handler] = append(nodes[n.Handler], n.ID)
	}
	out := make([]string, 0, len(order))
	for _, h := range order {
		ids := nodes[h]
		list := strings.Join(ids[:min(len(ids), warnNodesMax)], ", ")
		if len(ids) > warnNodesMax {
			list += fmt.Sprintf(" and %d more", len(ids)-warnNodesMax)
		}
		noun := "node"
		if len(ids) > 1 {
			noun = "nodes"
		}
		out = append(out, fmt.Sprintf("no live worker offers handler %q (%s %s): its tasks will wait queued until a worker offering it starts; GET /workers lists what live workers offer", h, noun, list))
	}
	return out
}

// validateWorkflow is a dry run of registration: 200 {valid, problems}.
func (s *Server) validateWorkflow(c *gin.Context) {
	body, err := readJSONBody(c)
	if err != nil {
		abort(c, err)
		return
	}
	def, err := dag.Parse(body)
	var ve *dag.ValidationError
	switch {
	case errors.As(err, &ve):
		respond(c, http.StatusOK, validation{Problems: fieldErrors(ve.Problems)})
	case err != nil:
		abort(c, err)
	default:
		respond(c, http.StatusOK, validation{Valid: true, Name: def.Name, Problems: []FieldError{}})
	}
}

// parseDefinition parses and validates a definition: 400 when the body is
// not JSON, 413 past dag.MaxDefinitionBytes, 422 listing every problem.
func parseDefinition(body []byte) (*dag.Definition, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errBadRequest("the body is empty: send a workflow definition as JSON")
	}
	if len(body) > dag.MaxDefinitionBytes {
		e := errTooLarge(dag.MaxDefinitionBytes)
		e.detail = "a workflow definition may be at most 1 MiB (1048576 bytes)"
		return nil, e
	}
	def, err := dag.Parse(body)
	var ve *dag.ValidationError
	if errors.As(err, &ve) && !json.Valid(body) {
		e := errBadRequest("%s", ve.Error())
		e.errs = fieldErrors(ve.Problems)
		return nil, e
	}
	return def, err
}

// encodeDefinition returns the normalised definition as stored: JSON
// without HTML escaping, so templates keep their << >> readable.
func encodeDefinition(def *dag.Definition) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(def); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// mayRegister applies the shell policy (Config.ShellKeys): a key outside it
// may not register a workflow with a shell node (403). With auth off there
// is no key to check: every request is a writer.
func (s *Server) mayRegister(c *gin.Context, def *dag.Definition) error {
	if s.cfg.ShellKeys == nil || s.cfg.AuthOff {
		return nil
	}
	i := slices.IndexFunc(def.Nodes, func(n dag.Node) bool { return n.Handler == handlerShell })
	if i < 0 || slices.Contains(s.cfg.ShellKeys, requester(c)) {
		return nil
	}
	return errForbidden("key %q may not register workflows that use the shell handler (node %q); BRAID_API_SHELL_KEYS names the keys that may", requester(c), def.Nodes[i].ID)
}

// handlerShell is the shell handler's name in definitions.
const handlerShell = "shell"
