package apisvc

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/redis/go-redis/v9"
)

// endings hands the orchestrator's run-ended announcements (Redis pub/sub,
// statestore.Keys.EndedChannel) to the requests waiting for those runs.
// Announcements are hints: an announcement that carries the run (as the
// write that ended it left it) answers the waiter without another read;
// one that carries only the id makes the waiter re-read the run from
// Redis; and recheck announces, once a period, every waited-for run whose
// status says it ended, so one lost while the subscription reconnects (or
// never sent: notices are best effort) only delays an answer.
//
// The api is subscribed only while requests wait, and for linger after
// the last one left: an orchestrator on one Redis server builds a notice
// only when the channel has a subscriber (statestore.Keys.QueueEnded), so
// runs nobody waits for cost Redis no notice. A waiter added while the api
// is not subscribed is handed a channel that closes once Redis has
// confirmed the subscription: from then on every run that ends is
// announced to it. Safe for concurrent use.
type endings struct {
	max    int           // most waiters at once; more are refused
	linger time.Duration // how long the subscription outlives the last waiter

	mu      sync.Mutex
	waiters map[string]map[*waiter]struct{}
	n       int
	// subscribed is closed while Redis has confirmed the subscription;
	// unsubscribing replaces it with an open one.
	subscribed chan struct{}
	isSub      bool
	lastLeft   time.Time     // when n last fell to 0
	wanted     chan struct{} // capacity 1: a waiter needs the subscription
}

// waiter is one request waiting for run to end. ended receives a value
// (capacity 1, never closed) on every announcement for run; stored holds
// the run the latest announcement carried, if it carried one.
type waiter struct {
	run    string
	ended  chan struct{}
	stored atomic.Pointer[statestore.StoredRun]
	// subscribed closes once announcements reach the api (see endings).
	subscribed <-chan struct{}
	// client is who waits (set by Server.register, for its per-client
	// limit); endings does not read it.
	client string
}

func newEndings(max int, linger time.Duration) *endings {
	return &endings{max: max, linger: linger, waiters: map[string]map[*waiter]struct{}{},
		subscribed: make(chan struct{}), wanted: make(chan struct{}, 1)}
}

// add registers a waiter for run; false when max waiters are registered.
// When the api is not subscribed, it asks listen to subscribe.
func (e *endings) add(run string) (*waiter, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n >= e.max {
		return nil, false
	}
	w := &waiter{run: run, ended: make(chan struct{}, 1), subscribed: e.subscribed}
	if e.waiters[run] == nil {
		e.waiters[run] = map[*waiter]struct{}{}
	}
	e.waiters[run][w] = struct{}{}
	e.n++
	if !e.isSub {
		select {
		case e.wanted <- struct{}{}:
		default:
		}
	}
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
	if e.n == 0 {
		e.lastLeft = time.Now()
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

// confirmed records that Redis confirmed the subscription.
func (e *endings) confirmed() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.isSub {
		e.isSub = true
		close(e.subscribed)
	}
}

// needed reports whether waiters lack a confirmed subscription.
func (e *endings) needed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n > 0 && !e.isSub
}

// dropIdle reports whether the subscription is to end (no waiter for
// linger) and, if so, marks the api unsubscribed before the lock is let go:
// a waiter added from then on asks for a new subscription.
func (e *endings) dropIdle(now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.isSub || e.n > 0 || now.Sub(e.lastLeft) < e.linger {
		return false
	}
	e.isSub, e.subscribed = false, make(chan struct{})
	return true
}

// listen keeps the subscription to channel while requests wait (and for
// linger after) and announces every message's run until ctx ends.
// go-redis re-subscribes by itself after a lost connection. It returns
// once the subscription is closed.
func (e *endings) listen(ctx context.Context, rdb redis.UniversalClient, channel string, log *slog.Logger) {
	ps := rdb.Subscribe(ctx) // no channel yet: subscribed on demand
	defer ps.Close()
	msgs := ps.ChannelWithSubscriptions()
	tick := time.NewTicker(max(e.linger/2, 10*time.Millisecond))
	defer tick.Stop()
	subscribe := func() {
		// On error go-redis still remembers the channel and subscribes
		// when it reconnects; the tick asks again meanwhile.
		if err := ps.Subscribe(ctx, channel); err != nil && ctx.Err() == nil {
			log.Warn("run-ended subscription failed; waiting requests re-read their runs until it succeeds", logkey.Err, err)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.wanted:
			if e.needed() {
				subscribe()
			}
		case <-tick.C:
			if e.dropIdle(time.Now()) {
				if err := ps.Unsubscribe(ctx, channel); err != nil && ctx.Err() == nil {
					log.Debug("run-ended unsubscribe", logkey.Err, err)
				}
			} else if e.needed() {
				subscribe()
			}
		case m, ok := <-msgs:
			if !ok {
				log.Warn("run-ended subscription closed; waiting requests fall back to re-reading runs")
				return
			}
			switch m := m.(type) {
			case *redis.Subscription:
				if m.Kind == "subscribe" && m.Channel == channel {
					e.confirmed()
				}
			case *redis.Message:
				run, stored, err := statestore.ParseEnded(m.Payload)
				if err != nil {
					log.Debug("run-ended announcement unreadable; its waiters re-read the run", logkey.RunID, run, logkey.Err, err)
				}
				e.announce(run, stored)
			}
		}
	}
}

// recheckChunk is how many runs one re-check round trip asks about.
const recheckChunk = 1000

// recheck is the fallback for lost announcements: every period while
// requests wait, it reads the status alone of every run waited for
// (statuses, in pipelines of recheckChunk runs) and announces, without the
// run, each that has ended or is gone, so that its waiters read it. One
// pass costs a round trip per recheckChunk runs however many requests wait
// (each waiter re-reading its own run cost a round trip per request per
// period). A failed pass is logged once until one succeeds; the waiters
// still answer when their wait is over.
func (e *endings) recheck(ctx context.Context, period time.Duration, statuses func(context.Context, []string) ([]string, error), log *slog.Logger) {
	t := time.NewTicker(period)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		runs := e.runs()
		var err error
		for from := 0; from < len(runs) && err == nil; from += recheckChunk {
			chunk := runs[from:min(from+recheckChunk, len(runs))]
			var got []string
			got, err = statuses(ctx, chunk)
			for i, status := range got {
				if status == "" || records.RunStatus(status).Terminal() {
					e.announce(chunk[i], nil)
				}
			}
		}
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			log.Warn("re-check of waited-for runs failed; waiting requests answer when their wait is over, or when a run-ended announcement comes", logkey.Err, err)
		case err == nil && failing:
			log.Info("re-check of waited-for runs works again")
		}
		failing = err != nil
	}
}

// runs returns the runs requests wait for.
func (e *endings) runs() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Collect(maps.Keys(e.waiters))
}
