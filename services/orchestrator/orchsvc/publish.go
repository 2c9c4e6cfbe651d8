package orchsvc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/template"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
)

// outbox is everything a batch round publishes, in one call: the dead
// letters of poison messages, then per stored run its dispatches, run
// events and the other messages apply decided on, then the nudges settle
// found.
func (s *Service) outbox(applied []*runBatch, nudges, dead []eventbus.Message) ([]eventbus.Message, error) {
	out := dead
	for _, g := range applied {
		if g.cmd != nil || g.start != nil {
			msgs, err := s.messages(g)
			if err != nil {
				return nil, err
			}
			out = append(out, msgs...)
		}
		out = append(out, g.out...)
	}
	return append(out, nudges...), nil
}

// dispatchAhead publishes the dispatches that groups' effects hold, when
// ahead is set, while the caller runs their write (see "Dispatches beside
// the write" in batch.go), and marks those groups dispatched. The channel
// yields the publish's outcome once (nil at once when nothing was sent);
// the caller must receive it before returning.
//
// Two kinds of write publish after it instead: a big start (bigStart), and
// one that declares attempts lost (core.Effects.Orphans). That one sends
// the same attempt again, whose record already names it in flight, and
// until the write deletes the orphaned claim (held by a worker incarnation
// that is gone) a claim of the new dispatch finds the old one and drops the
// dispatch as taken: a worker restarted under the same id, quick to read
// it, would leave the attempt to the reconciler's re-send RedispatchAfter
// later.
func (s *Service) dispatchAhead(ctx context.Context, groups []*runBatch, ahead bool) (<-chan error, error) {
	done := make(chan error, 1)
	var out []eventbus.Message
	for _, g := range groups {
		g.dispatched = false
		if !ahead || g.eff == nil || len(g.eff.Dispatches) == 0 || bigStart(g) || len(g.eff.Orphans) > 0 {
			continue
		}
		msgs, err := s.dispatches(g)
		if err != nil {
			return nil, err
		}
		out = append(out, msgs...)
		g.dispatched = true
	}
	if len(out) == 0 {
		done <- nil
		return done, nil
	}
	go func() { done <- s.publish(ctx, out) }()
	return done, nil
}

// aheadMaxNodes is the most node records a run's creating write may hold
// for the dispatches of that write to go beside it. A big write (10,000
// records took Redis 22 ms) lasts far longer than a worker's pauses
// between claims of a dispatch that arrived ahead (doubling from 200 µs),
// so such a dispatch would wait up to twice the write; published after the
// write it waits for nothing. A start writes the records it changed (its
// roots), so only a run with more than aheadMaxNodes roots, or one whose
// start is held (every record written), has such a write.
const aheadMaxNodes = 1000

// bigStart reports whether g creates a run and writes more than
// aheadMaxNodes node records doing so.
func bigStart(g *runBatch) bool {
	return g.eff.Created && len(g.eff.Nodes) > aheadMaxNodes
}

// messages builds the dispatches (unless already published beside the
// write) and the run events a persisted write implies.
func (s *Service) messages(g *runBatch) ([]eventbus.Message, error) {
	out := make([]eventbus.Message, 0, len(g.eff.Dispatches)+1)
	if !g.dispatched {
		d, err := s.dispatches(g)
		if err != nil {
			return nil, err
		}
		out = append(out, d...)
	}
	events := len(out)
	for _, ev := range runEvents(g.o.run, g.eff, g.spans) {
		m, err := eventbus.NewMessage(eventsv1.TopicWorkflowEvents, g.run, ev)
		if err != nil {
			return nil, fmt.Errorf("encode run event run=%s: %w", g.run, err)
		}
		out = append(out, m)
	}
	traceInject(g, out[events:])
	return out, nil
}

// dispatches encodes the dispatches of g's effects.
func (s *Service) dispatches(g *runBatch) ([]eventbus.Message, error) {
	r, eff := g.o.run, g.eff
	out := make([]eventbus.Message, 0, len(eff.Dispatches))
	for _, d := range eff.Dispatches {
		m, err := eventbus.NewMessage(eventsv1.TopicTaskDispatch, dispatchKey(r, d), &eventsv1.TaskDispatch{
			RunId: g.run, Workflow: r.Workflow, Version: int32(r.Version), NodeId: r.NodeID(d.Node),
			Instance: int32(d.Instance), Count: int32(d.Count), Attempt: int32(d.Attempt), Handler: d.Handler,
			Config: d.Config, IdempotencyKey: d.IdempotencyKey, TimeoutMs: d.TimeoutMs,
			HeartbeatTimeoutMs: d.HeartbeatTimeout, DispatchedAtMs: r.Nodes[d.Node].QueuedAt,
			SecretSlots: secretSlots(d.Secrets),
		})
		if err != nil {
			return nil, fmt.Errorf("encode dispatch run=%s: %w", g.run, err)
		}
		out = append(out, m)
	}
	traceInject(g, out)
	return out, nil
}

// secretSlots is the wire form of a dispatch's secret slots.
func secretSlots(slots []template.Slot) []*eventsv1.SecretSlot {
	if len(slots) == 0 {
		return nil
	}
	out := make([]*eventsv1.SecretSlot, len(slots))
	for i, s := range slots {
		w := &eventsv1.SecretSlot{Path: s.Pointer(), Parts: make([]*eventsv1.SecretPart, len(s.Parts))}
		for j, p := range s.Parts {
			w.Parts[j] = &eventsv1.SecretPart{Text: p.Text, Secret: p.Ref}
		}
		out[i] = w
	}
	return out
}

// errUnpublished reports a batch whose follow-up messages could not be
// published before shutdown: its offsets must not be committed.
var errUnpublished = errors.New("stopping with unpublished messages")

// publish sends the batch's messages: the dispatches while their write is
// on its way (dispatchAhead), the rest once it is stored. Either way it
// retries until the broker acknowledges: giving up would leave
// queued nodes that no worker was told about, and run events nobody sees,
// until the reconciler re-sends the dispatches (core.RedispatchAfter), and
// re-consuming the batch would not bring them back (its events are then
// duplicates, which change nothing). Once the orchestrator is stopping it
// keeps trying for DrainTimeout more, then returns errUnpublished.
func (s *Service) publish(ctx context.Context, msgs []eventbus.Message) error {
	backoff := 20 * time.Millisecond
	stopping, pctx := s.stopping, ctx
	for {
		err := s.prod.Publish(pctx, msgs...)
		if err == nil {
			return nil
		}
		if pctx.Err() != nil {
			s.log.Error("drain timeout with unpublished messages; the reconciler re-sends dispatches", logkey.Messages, len(msgs), logkey.Err, err)
			return fmt.Errorf("publish %d messages: %w: %w", len(msgs), errUnpublished, err)
		}
		s.log.Warn("publish failed; retrying", logkey.Messages, len(msgs), logkey.Err, err, logkey.Backoff, backoff)
		select {
		case <-stopping:
			s.log.Warn("stopping with unpublished messages; still trying", logkey.Messages, len(msgs), logkey.DrainTimeout, s.cfg.DrainTimeout)
			var cancel context.CancelFunc
			pctx, cancel = context.WithTimeout(ctx, s.cfg.DrainTimeout)
			defer cancel()
			stopping = nil // a nil channel never fires: the drain has started
		case <-pctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}
