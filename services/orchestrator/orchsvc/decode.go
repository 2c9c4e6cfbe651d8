package orchsvc

import (
	"context"
	"errors"
	"fmt"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/braidhq/braid/services/orchestrator/core"
)

// inbound is one decoded message: the run it concerns and the core event,
// or, for a start, the request that creates the run.
type inbound struct {
	run   string
	start *eventsv1.RunStartRequested
	plan  *core.Plan // a start's compiled workflow version
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

// errUnknownRun is the dead-letter reason of events for runs never started.
var errUnknownRun = errors.New("event for a run that was never started (unknown run id, or its start is still on its way)")

// decodeBatch decodes msgs into per-run groups in arrival order. Poison
// messages (undecodable, or a start of a workflow version that does not
// exist or no longer compiles) become dead letters, published with the
// batch's other messages.
func (s *Service) decodeBatch(ctx context.Context, msgs []eventbus.Message, now int64) ([]*runBatch, []eventbus.Message, error) {
	byRun := map[string]*runBatch{}
	var order []*runBatch
	var dead []eventbus.Message
	// A run's events are keyed by its id: counting them first sizes each
	// run's list once (a fan-out's batch is up to a thousand results of one
	// run, whose list grew by doubling, a large struct each).
	perKey := make(map[string]int, 8)
	for _, m := range msgs {
		perKey[string(m.Key)]++
	}
	for _, m := range msgs {
		in, err := decode(m, now)
		if err == nil && in.start != nil {
			in.plan, err = s.plans.get(ctx, in.start.Workflow, int(in.start.Version))
			if err != nil && !errors.Is(err, statestore.ErrNotFound) && !errors.Is(err, errBadDefinition) {
				return nil, nil, err // Redis trouble: retry the batch later
			}
		}
		if err != nil {
			dead = append(dead, s.deadLetter(m, err))
			continue
		}
		g := byRun[in.run]
		if g == nil {
			g = &runBatch{run: in.run, events: make([]inbound, 0, perKey[in.run])}
			byRun[in.run] = g
			order = append(order, g)
		}
		in.msg = m
		g.events = append(g.events, in)
	}
	return order, dead, nil
}

// deadLetter is m's dead letter, logged.
func (s *Service) deadLetter(m eventbus.Message, reason error) eventbus.Message {
	s.log.Warn("dead-lettering message", logkey.Topic, m.Topic, logkey.Partition, m.Partition, logkey.Offset, m.Offset, logkey.Err, reason)
	return eventbus.DeadLetterMessage(m, reason.Error())
}

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
