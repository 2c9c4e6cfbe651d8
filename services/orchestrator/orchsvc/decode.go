package orchsvc

import (
	"errors"
	"fmt"

	"github.com/braidhq/braid/pkg/eventbus"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/braidhq/braid/services/orchestrator/core"
)

// inbound is one decoded message: the run it concerns and the core event,
// or, for a start, the request that creates the run.
type inbound struct {
	run   string
	start *eventsv1.RunStartRequested
	ev    core.Event
	// ref names a Redis key holding a large output to load before applying.
	ref string
	// msg is the message the event came from (for dead-lettering).
	msg eventbus.Message
	// reconcile marks a RECONCILE request; ev is filled in once the run's
	// claims have been looked up.
	reconcile bool
}

var errInvalid = errors.New("invalid message")

// decode turns a message into an inbound event; an error means poison.
func decode(m eventsv1Message, now int64) (inbound, error) {
	switch m.Topic {
	case eventsv1.TopicWorkflowStart:
		var s eventsv1.RunStartRequested
		if err := eventbus.Decode(m, &s); err != nil {
			return inbound{}, err
		}
		if s.RunId == "" || s.Workflow == "" || s.Version < 1 {
			return inbound{}, fmt.Errorf("%w: start needs run_id, workflow and version >= 1", errInvalid)
		}
		return inbound{run: s.RunId, start: &s, ev: core.Start{Now: now}}, nil
	case eventsv1.TopicWorkflowControl:
		var c eventsv1.RunControl
		if err := eventbus.Decode(m, &c); err != nil {
			return inbound{}, err
		}
		return decodeControl(&c, now)
	case eventsv1.TopicTaskComplete:
		var r eventsv1.TaskResult
		if err := eventbus.Decode(m, &r); err != nil {
			return inbound{}, err
		}
		return decodeResult(&r, now)
	}
	return inbound{}, fmt.Errorf("%w: unexpected topic %q", errInvalid, m.Topic)
}

type eventsv1Message = eventbus.Message

func decodeControl(c *eventsv1.RunControl, now int64) (inbound, error) {
	if c.RunId == "" {
		return inbound{}, fmt.Errorf("%w: control needs run_id", errInvalid)
	}
	in := inbound{run: c.RunId}
	switch c.Action {
	case eventsv1.ControlAction_CONTROL_ACTION_RECONCILE:
		in.reconcile, in.ev = true, core.Reconcile{Now: now}
		return in, nil
	case eventsv1.ControlAction_CONTROL_ACTION_TIMER:
		kind := coreTimerKind(c.Timer)
		if kind == 0 {
			return inbound{}, fmt.Errorf("%w: timer kind %v", errInvalid, c.Timer)
		}
		in.ev = core.Timer{Now: now, Kind: kind, Node: c.NodeId, Instance: int(c.Instance), Attempt: int(c.Attempt)}
		return in, nil
	}
	action := map[eventsv1.ControlAction]core.ControlAction{
		eventsv1.ControlAction_CONTROL_ACTION_CANCEL: core.ControlCancel, eventsv1.ControlAction_CONTROL_ACTION_RETRY: core.ControlRetry,
		eventsv1.ControlAction_CONTROL_ACTION_RERUN_FROM: core.ControlRerunFrom, eventsv1.ControlAction_CONTROL_ACTION_PAUSE: core.ControlPause,
		eventsv1.ControlAction_CONTROL_ACTION_RESUME:  core.ControlResume,
		eventsv1.ControlAction_CONTROL_ACTION_APPROVE: core.ControlApprove, eventsv1.ControlAction_CONTROL_ACTION_REJECT: core.ControlReject,
	}[c.Action]
	if action == 0 {
		return inbound{}, fmt.Errorf("%w: unsupported control action %v", errInvalid, c.Action)
	}
	in.ev = core.Control{Now: now, Action: action, Node: c.NodeId, Reason: c.Reason, By: c.RequestedBy}
	return in, nil
}

func decodeResult(r *eventsv1.TaskResult, now int64) (inbound, error) {
	if r.RunId == "" || r.NodeId == "" || r.Attempt < 1 {
		return inbound{}, fmt.Errorf("%w: result needs run_id, node_id and attempt >= 1", errInvalid)
	}
	status := map[eventsv1.TaskStatus]core.ResultStatus{
		eventsv1.TaskStatus_TASK_STATUS_RUNNING: core.ResultRunning, eventsv1.TaskStatus_TASK_STATUS_SUCCEEDED: core.ResultSucceeded,
		eventsv1.TaskStatus_TASK_STATUS_FAILED: core.ResultFailed,
	}[r.Status]
	if status == 0 {
		return inbound{}, fmt.Errorf("%w: result status %v", errInvalid, r.Status)
	}
	return inbound{run: r.RunId, ref: r.OutputRef, ev: core.Result{
		Now: now, Node: r.NodeId, Instance: int(r.Instance), Attempt: int(r.Attempt), Status: status,
		Output: r.Output, Error: r.Error, Permanent: r.Permanent, HandedBack: r.HandedBack, Worker: r.WorkerId,
		StartedAt: r.StartedAtMs, FinishedAt: r.FinishedAtMs,
	}}, nil
}
