package apisvc

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/redis/go-redis/v9"
)

// endings hands the orchestrator's run-ended announcements (Redis pub/sub,
// statestore.Keys.EndedChannel) to the requests waiting for those runs.
// Announcements are hints: an announcement that carries the run (as the
// write that ended it left it) answers the waiter without another read;
// one that carries only the id makes the waiter re-read the run from
// Redis; and a waiter re-reads it on a timer too, so one lost while the
// subscription reconnects only delays an answer. Safe for concurrent use.
type endings struct {
	max int // most waiters at once; more are refused

	mu      sync.Mutex
	waiters map[string]map[*waiter]struct{}
	n       int
}

// waiter is one request waiting for run to end. ended receives a value
// (capacity 1, never closed) on every announcement for run; stored holds
// the run the latest announcement carried, if it carried one.
type waiter struct {
	run    string
	ended  chan struct{}
	stored atomic.Pointer[statestore.StoredRun]
	// client is who waits (set by Server.register, for its per-client
	// limit); endings does not read it.
	client string
}

func newEndings(max int) *endings {
	return &endings{max: max, waiters: map[string]map[*waiter]struct{}{}}
}

// add registers a waiter for run; false when max waiters are registered.
func (e *endings) add(run string) (*waiter, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n >= e.max {
		return nil, false
	}
	w := &waiter{run: run, ended: make(chan struct{}, 1)}
	if e.waiters[run] == nil {
		e.waiters[run] = map[*waiter]struct{}{}
	}
	e.waiters[run][w] = struct{}{}
	e.n++
	return w, true
}

// remove unregisters w; safe to call twice.
func (e *endings) remove(w *waiter) {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.waiters[w.run]
	if _, ok := m[w]; !ok {
		return
	}
	delete(m, w)
	e.n--
	if len(m) == 0 {
		delete(e.waiters, w.run)
	}
}

// announce wakes every waiter of run without blocking, handing each the
// stored run when the announcement carried it (nil: the waiter re-reads).
func (e *endings) announce(run string, stored *statestore.StoredRun) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for w := range e.waiters[run] {
		w.stored.Store(stored)
		select {
		case w.ended <- struct{}{}:
		default:
		}
	}
}

// listen subscribes to channel and announces every message's run id until
// ctx ends. go-redis re-subscribes by itself after a lost connection. It
// returns once the subscription is closed.
func (e *endings) listen(ctx context.Context, rdb redis.UniversalClient, channel string, log *slog.Logger) {
	ps := rdb.Subscribe(ctx, channel)
	defer ps.Close()
	msgs := ps.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-msgs:
			if !ok {
				log.Warn("run-ended subscription closed; waiting requests fall back to re-reading runs")
				return
			}
			run, stored, err := statestore.ParseEnded(m.Payload)
			if err != nil {
				log.Debug("run-ended announcement unreadable; its waiters re-read the run", logkey.RunID, run, logkey.Err, err)
			}
			e.announce(run, stored)
		}
	}
}
