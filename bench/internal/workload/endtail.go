package workload

import (
	"context"
	"sync"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
)

// endTail reads the stack's workflow.events topic in a consumer group of
// its own (it never commits, so it changes nothing for the stack) and
// notes each run's terminal status and when it was first seen, on this
// process's clock. It lets a workload learn that runs ended without
// sending Redis or the api a single command, so their counters hold only
// the stack's own work.
type endTail struct {
	cons   *eventbus.Consumer
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	ended map[string]runEnd // run id → its end
}

// runEnd is a run's terminal status and when the tail saw it.
type runEnd struct {
	status eventsv1.RunStatus
	at     time.Time
}

// startEndTail joins a fresh group on bus's workflow.events and starts reading.
func startEndTail(ctx context.Context, bus eventbus.Config, group string) (*endTail, error) {
	cons, err := eventbus.NewConsumer(ctx, bus, group, eventsv1.TopicWorkflowEvents)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &endTail{cons: cons, cancel: cancel, done: make(chan struct{}), ended: map[string]runEnd{}}
	go t.loop(ctx)
	return t, nil
}

func (t *endTail) loop(ctx context.Context) {
	defer close(t.done)
	for ctx.Err() == nil {
		msgs, err := t.cons.Fetch(ctx, tailFetchLimit)
		if err != nil {
			continue // ctx ended, or transient: the consumer retries with backoff
		}
		now := time.Now()
		t.mu.Lock()
		for _, m := range msgs {
			var ev eventsv1.RunEvent
			if eventbus.Decode(m, &ev) != nil || !terminalStatus(ev.GetRunStatus()) {
				continue
			}
			if _, seen := t.ended[ev.GetRunId()]; !seen {
				t.ended[ev.GetRunId()] = runEnd{status: ev.GetRunStatus(), at: now}
			}
		}
		t.mu.Unlock()
	}
}

// terminalStatus says whether a run in status s has ended.
func terminalStatus(s eventsv1.RunStatus) bool {
	return s == eventsv1.RunStatus_RUN_STATUS_SUCCEEDED || s == eventsv1.RunStatus_RUN_STATUS_FAILED ||
		s == eventsv1.RunStatus_RUN_STATUS_CANCELLED
}

// ends returns the ends of runs, and whether every one has ended.
func (t *endTail) ends(runs []string) ([]runEnd, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]runEnd, len(runs))
	for i, id := range runs {
		e, ok := t.ended[id]
		if !ok {
			return nil, false
		}
		out[i] = e
	}
	return out, true
}

// close stops reading and leaves the group.
func (t *endTail) close() {
	t.cancel()
	<-t.done
	_ = t.cons.Close()
}
