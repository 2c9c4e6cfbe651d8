package apisvc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
)

// feedBatch is how many events one Fetch takes.
const feedBatch = 256

// feedErrorWindow is how long a fetch error keeps the feed unhealthy.
const feedErrorWindow = 5 * time.Second

// errFeedStopped answers a stream that asks for events while the api stops.
var errFeedStopped = errors.New("the events feed is stopped: the api is shutting down")

// feed is the api process's reader of workflow.events, and it reads only
// while someone watches: the first SSE stream opens an eventbus.Tail (every
// partition read from its end at that moment, no consumer group), later
// streams share it, and Config.FeedLinger after the last one closed the
// tail closes. Without watchers the api reads nothing of the topic, which
// carries every run's events. Events of runs nobody watches are skipped by
// key before decoding.
//
// Order: a stream calls acquire before it subscribes to the hub and reads
// its snapshot from Redis. acquire returns once the tail is positioned, so
// every event appended afterwards reaches the hub; an event whose write
// came after the snapshot was appended after it (the orchestrator appends
// events after their write), hence after acquire returned.
type feed struct {
	bus    eventbus.Config
	hub    *hub
	log    *slog.Logger
	linger time.Duration

	open chan struct{} // a semaphore: one acquire opens the tail at a time

	mu      sync.Mutex
	users   int      // streams between acquire and release
	cur     *feedRun // the open tail, nil while closed
	gen     uint64   // moves on each acquire and release; a timer armed at an older gen does nothing
	idle    *time.Timer
	stopped bool
	lastErr error
	errAt   time.Time
	opened  int // tails opened so far (tests)
}

// feedRun is one open tail and the goroutine pumping it into the hub.
type feedRun struct {
	tail   *eventbus.Tail
	cancel context.CancelFunc
	done   chan struct{}
}

// newFeed returns a feed of workflow.events on bus, closed until acquired.
func newFeed(bus eventbus.Config, h *hub, linger time.Duration, log *slog.Logger) *feed {
	return &feed{bus: bus, hub: h, linger: linger, log: log.With(logkey.Topic, eventsv1.TopicWorkflowEvents), open: make(chan struct{}, 1)}
}

// acquire makes sure the tail is open, opening it within ctx when it is
// not, and counts the caller as a user until release. On error the caller
// is not counted.
func (f *feed) acquire(ctx context.Context) error {
	select {
	case f.open <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-f.open }()
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return errFeedStopped
	}
	if f.cur != nil {
		f.use()
		f.mu.Unlock()
		return nil
	}
	f.mu.Unlock()
	tail, err := eventbus.OpenTail(ctx, f.bus, eventsv1.TopicWorkflowEvents)
	if err != nil {
		f.fail(err)
		return fmt.Errorf("open the run events feed: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return errors.Join(errFeedStopped, tail.Close())
	}
	run := &feedRun{tail: tail, done: make(chan struct{})}
	var rctx context.Context
	rctx, run.cancel = context.WithCancel(context.Background())
	go f.pump(rctx, run)
	f.cur = run
	f.opened++
	f.use()
	return nil
}

// use counts one more user and disarms the idle timer (one that already
// fired finds gen moved on); f.mu must be held.
func (f *feed) use() {
	f.users++
	f.gen++
	if f.idle != nil {
		f.idle.Stop()
		f.idle = nil
	}
}

// release uncounts a user of acquire; the last one arms the idle timer.
func (f *feed) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.users--
	if f.users > 0 || f.cur == nil || f.stopped {
		return
	}
	f.gen++
	gen := f.gen
	f.idle = time.AfterFunc(f.linger, func() { f.closeIdle(gen) })
}

// closeIdle closes the tail if no one acquired it since timer gen was armed.
func (f *feed) closeIdle(gen uint64) {
	f.mu.Lock()
	if gen != f.gen || f.cur == nil {
		f.mu.Unlock()
		return
	}
	run := f.cur
	f.cur, f.idle = nil, nil
	f.mu.Unlock()
	if err := run.stop(); err != nil {
		f.log.Warn("close the run events feed", logkey.Err, err)
	}
}

// pump fetches until ctx ends or the tail closes.
func (f *feed) pump(ctx context.Context, run *feedRun) {
	defer close(run.done)
	for {
		msgs, err := run.tail.Fetch(ctx, feedBatch)
		if ctx.Err() != nil || errors.Is(err, eventbus.ErrClosed) {
			return
		}
		if err != nil {
			f.fail(err)
			continue
		}
		for _, m := range msgs {
			f.deliver(m)
		}
	}
}

// stop ends the pump and closes the tail.
func (r *feedRun) stop() error {
	r.cancel()
	<-r.done
	return r.tail.Close()
}

// deliver decodes one event and hands it to the hub if anyone listens.
func (f *feed) deliver(m eventbus.Message) {
	if !f.hub.wants(string(m.Key)) {
		return
	}
	var ev eventsv1.RunEvent
	if err := eventbus.Decode(m, &ev); err != nil {
		f.log.Warn("undecodable run event skipped", logkey.Err, err)
		return
	}
	f.hub.publish(&ev)
}

// fail records a fetch or open error; an open tail keeps retrying.
func (f *feed) fail(err error) {
	f.mu.Lock()
	f.lastErr, f.errAt = err, time.Now()
	f.mu.Unlock()
	f.log.Warn("read run events", logkey.Err, err)
}

// healthy reports nil unless opening or reading the feed failed recently.
func (f *feed) healthy() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lastErr != nil && time.Since(f.errAt) < feedErrorWindow {
		return fmt.Errorf("reading workflow.events failed %s ago: %w", time.Since(f.errAt).Round(time.Millisecond), f.lastErr)
	}
	return nil
}

// state reports whether the tail is open, how many streams use it and how
// many tails were opened so far.
func (f *feed) state() (open bool, users, opened int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur != nil, f.users, f.opened
}

// stop closes the tail for good; later acquires fail. Safe to call twice.
func (f *feed) stop() error {
	f.mu.Lock()
	f.stopped = true
	run := f.cur
	f.cur = nil
	if f.idle != nil {
		f.idle.Stop()
		f.idle = nil
	}
	f.mu.Unlock()
	if run == nil {
		return nil
	}
	return run.stop()
}
