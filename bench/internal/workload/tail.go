package workload

import (
	"context"
	"sync"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
)

// dispatchTail reads the stack's task.dispatch topic in a consumer group of
// its own (it never commits, so it changes nothing for the stack) and notes
// when each (run, node) was first seen, on this process's clock with
// microsecond resolution. Gaps between consecutive nodes of a chain are
// then per-hop latencies finer than the millisecond timestamps of run
// records; the tail's own consume delay is in every arrival alike.
type dispatchTail struct {
	cons   *eventbus.Consumer
	cancel context.CancelFunc
	done   chan struct{}
	closed sync.Once

	mu   sync.Mutex
	seen map[string]map[string]time.Time // run → node → first arrival
}

// tailFetchLimit is how many records one Fetch of the tail takes.
const tailFetchLimit = 512

// startTail joins a fresh group on bus's task.dispatch and starts reading.
func startTail(ctx context.Context, bus eventbus.Config, group string) (*dispatchTail, error) {
	cons, err := eventbus.NewConsumer(ctx, bus, group, eventsv1.TopicTaskDispatch)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &dispatchTail{cons: cons, cancel: cancel, done: make(chan struct{}), seen: map[string]map[string]time.Time{}}
	go t.loop(ctx)
	return t, nil
}

func (t *dispatchTail) loop(ctx context.Context) {
	defer close(t.done)
	for ctx.Err() == nil {
		msgs, err := t.cons.Fetch(ctx, tailFetchLimit)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			continue // transient: the consumer retries with backoff
		}
		now := time.Now()
		t.mu.Lock()
		for _, m := range msgs {
			var d eventsv1.TaskDispatch
			if eventbus.Decode(m, &d) != nil {
				continue
			}
			nodes := t.seen[d.GetRunId()]
			if nodes == nil {
				nodes = map[string]time.Time{}
				t.seen[d.GetRunId()] = nodes
			}
			if _, ok := nodes[d.GetNodeId()]; !ok {
				nodes[d.GetNodeId()] = now
			}
		}
		t.mu.Unlock()
	}
}

// arrivals returns when each of nodes of run was first seen, and whether
// every one was.
func (t *dispatchTail) arrivals(run string, nodes []string) ([]time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]time.Time, len(nodes))
	for i, n := range nodes {
		at, ok := t.seen[run][n]
		if !ok {
			return nil, false
		}
		out[i] = at
	}
	return out, true
}

// close stops reading and leaves the group. Safe to call twice.
func (t *dispatchTail) close() {
	t.closed.Do(func() {
		t.cancel()
		<-t.done
		_ = t.cons.Close()
	})
}
