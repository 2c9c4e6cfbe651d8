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

// feed is the one workflow.events consumer of an api process. Its consumer
// group is unique to the process, so every api instance sees every event;
// it never commits (a new process starts its own group). Events of runs
// nobody watches are skipped by key before decoding.
type feed struct {
	cons   *eventbus.Consumer
	hub    *hub
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	lastErr error
	errAt   time.Time
}

// startFeed joins group on workflow.events and pumps events into h until stop.
// ctx bounds joining only: the feed runs until stop.
func startFeed(ctx context.Context, bus eventbus.Config, group string, h *hub, log *slog.Logger) (*feed, error) {
	// A fresh group per process tails from the end: clients get a snapshot
	// from Redis first, so the history before start-up is not needed.
	bus.StartAtLatest = true
	cons, err := eventbus.NewConsumer(ctx, bus, group, eventsv1.TopicWorkflowEvents)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f := &feed{cons: cons, hub: h, log: log.With(logkey.Group, group), cancel: cancel, done: make(chan struct{})}
	go f.run(ctx)
	return f, nil
}

// run fetches until ctx ends or the consumer closes.
func (f *feed) run(ctx context.Context) {
	defer close(f.done)
	for {
		msgs, err := f.cons.Fetch(ctx, feedBatch)
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

// fail records a fetch error; the consumer keeps retrying.
func (f *feed) fail(err error) {
	f.mu.Lock()
	f.lastErr, f.errAt = err, time.Now()
	f.mu.Unlock()
	f.log.Warn("fetch run events", logkey.Err, err)
}

// healthy reports nil while the feed runs and has not failed recently.
func (f *feed) healthy() error {
	select {
	case <-f.done:
		return errors.New("the workflow.events consumer stopped")
	default:
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lastErr != nil && time.Since(f.errAt) < feedErrorWindow {
		return fmt.Errorf("the workflow.events consumer failed %s ago: %w", time.Since(f.errAt).Round(time.Millisecond), f.lastErr)
	}
	return nil
}

// stop ends the feed and closes its consumer; safe to call twice.
func (f *feed) stop() error {
	f.cancel()
	<-f.done
	return f.cons.Close()
}
