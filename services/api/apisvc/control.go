package apisvc

import (
	"bytes"
	"context"
	"net/http"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/tracing"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
)

// controlBody is the optional body of a control request.
type controlBody struct {
	Reason string `json:"reason"`
}

// controlAccepted is the 202 answer to a control request.
type controlAccepted struct {
	RunID     string `json:"run_id"`
	Action    string `json:"action"`
	Node      string `json:"node,omitempty"`
	RequestID string `json:"request_id"`
}

// controlSpec is one run control endpoint: its path verb, wire action, and
// the run states it applies to.
type controlSpec struct {
	verb     string
	action   eventsv1.ControlAction
	finished bool // applies to finished runs only (else: unfinished only)
}

// controls are the run-level control endpoints.
var controls = []controlSpec{
	{"cancel", eventsv1.ControlAction_CONTROL_ACTION_CANCEL, false},
	{"pause", eventsv1.ControlAction_CONTROL_ACTION_PAUSE, false},
	{"resume", eventsv1.ControlAction_CONTROL_ACTION_RESUME, false},
	{"retry", eventsv1.ControlAction_CONTROL_ACTION_RETRY, true},
	{"rerun", eventsv1.ControlAction_CONTROL_ACTION_RERUN_FROM, true},
}

// control returns the handler of one run control endpoint: it checks the
// run's state (409 when the action cannot apply), publishes RunControl and
// answers 202.
func (s *Server) control(spec controlSpec) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, body, err := controlRequest(c)
		r, ctx, cancel := s.runFor(c, id, err)
		defer cancel()
		if r == nil {
			return
		}
		node, err := rerunFrom(c, spec, r)
		if err == nil {
			err = checkApplies(spec, r)
		}
		if err != nil {
			abort(c, err)
			return
		}
		s.publishControl(ctx, c, &eventsv1.RunControl{RunId: id, Action: spec.action, NodeId: node, Reason: body.Reason}, spec.verb)
	}
}

// controlRequest reads the run id and the optional {reason} body.
func controlRequest(c *gin.Context) (string, controlBody, error) {
	var body controlBody
	id, err := runParam(c)
	if err != nil {
		return "", body, err
	}
	raw, err := readJSONBody(c)
	if err == nil && len(bytes.TrimSpace(raw)) > 0 {
		err = decodeStrict(raw, &body)
	}
	return id, body, err
}

// rerunFrom returns ?from= for rerun (required, a node of the run).
func rerunFrom(c *gin.Context, spec controlSpec, r *loadedRun) (string, error) {
	if spec.action != eventsv1.ControlAction_CONTROL_ACTION_RERUN_FROM {
		return "", nil
	}
	from, ok := c.GetQuery("from")
	if !ok || from == "" {
		return "", errBadRequest("rerun needs ?from=<node id>: the node to re-run with everything downstream of it")
	}
	if !nodeIDShape.MatchString(from) {
		return "", errBadRequest("query parameter from=%q is not a node id ([A-Za-z0-9_-]{1,64})", from)
	}
	if _, ok := r.graph.Index[from]; !ok {
		return "", errBadRequest("query parameter from=%q: run %q has no such node", from, r.id)
	}
	return from, nil
}

// checkApplies refuses actions the run's state makes meaningless.
func checkApplies(spec controlSpec, r *loadedRun) error {
	st := r.status()
	switch {
	case spec.finished && !st.Terminal():
		return errConflict("run %q is %s; %s applies to finished runs (cancel it first, or wait)", r.id, st, spec.verb)
	case !spec.finished && st.Terminal():
		return errConflict("run %q already %s; %s applies to unfinished runs", r.id, st, spec.verb)
	case spec.verb == "cancel" && st == records.RunCancelling:
		return errConflict("run %q is already cancelling", r.id)
	case spec.verb == "retry" && st == records.RunSucceeded:
		return errConflict("run %q succeeded: retry re-runs failed, skipped and cancelled nodes, and it has none (rerun?from=<node> runs a node and what follows it again)", r.id)
	}
	return nil
}

// approval returns the handler of approve (true) or reject (false).
func (s *Server) approval(approve bool) gin.HandlerFunc {
	action, verb := eventsv1.ControlAction_CONTROL_ACTION_REJECT, "reject"
	if approve {
		action, verb = eventsv1.ControlAction_CONTROL_ACTION_APPROVE, "approve"
	}
	return func(c *gin.Context) {
		id, body, err := controlRequest(c)
		var node string
		if err == nil {
			node, err = nodeParam(c)
		}
		r, ctx, cancel := s.runFor(c, id, err)
		defer cancel()
		if r == nil {
			return
		}
		if err := checkApproval(r, node); err != nil {
			abort(c, err)
			return
		}
		s.publishControl(ctx, c, &eventsv1.RunControl{RunId: id, Action: action, NodeId: node, Reason: body.Reason}, verb)
	}
}

// checkApproval accepts only an approval node that awaits a decision (the
// orchestrator ignores a decision for any other, so accepting one would
// lose it): one whose turn has not come yet, or that is over, gets a 409.
func checkApproval(r *loadedRun, node string) error {
	i, err := r.nodeIndex(node)
	if err != nil {
		return err
	}
	if h := r.graph.Def.Nodes[i].Handler; h != "approval" {
		return errConflict("node %s is not an approval node (its handler is %q)", node, h)
	}
	st := r.nodes[i].State
	switch {
	case r.status().Terminal() || st.Terminal():
		return errConflict("approval node %s of run %q is no longer waiting (node %s, run %s)", node, r.id, st, r.status())
	case st != records.NodeQueued:
		why := waitingReason(r.graph, i, r.nodes, r.waitContext(time.Now(), nil))
		if why == "" {
			why = "node " + string(st)
		}
		return errConflict("approval node %s of run %q is not awaiting a decision yet (%s); approve or reject it once it is", node, r.id, why)
	}
	return nil
}

// publishControl stamps and publishes a control request, then answers 202
// (503 when the bus does not acknowledge it).
func (s *Server) publishControl(ctx context.Context, c *gin.Context, m *eventsv1.RunControl, verb string) {
	m.RequestId, m.RequestedBy, m.RequestedAtMs = uuid.NewString(), requester(c), time.Now().UnixMilli()
	msg, err := eventbus.NewMessage(eventsv1.TopicWorkflowControl, m.RunId, m)
	if err == nil {
		tracing.Inject(ctx, &msg.Headers)
		err = s.prod.Publish(ctx, msg)
	}
	if err != nil {
		abort(c, errUnavailable(err, "could not send %s for run %q: the event bus did not acknowledge it; retry later", verb, m.RunId))
		return
	}
	traceRun(c, m.RunId, "")
	s.log.InfoContext(ctx, "run control requested", logkey.RunID, m.RunId, logkey.Action, verb, logkey.NodeID, m.NodeId, logkey.RequestID, m.RequestId, logkey.KeyName, m.RequestedBy)
	respond(c, http.StatusAccepted, controlAccepted{RunID: m.RunId, Action: verb, Node: m.NodeId, RequestID: m.RequestId})
}
