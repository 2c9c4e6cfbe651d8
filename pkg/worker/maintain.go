package worker

import (
	"context"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/redis/go-redis/v9"
)

// minBeatEvery floors the claim refresh period of an attempt whose heartbeat
// timeout is tiny, so that a misconfigured node cannot spin a worker.
const minBeatEvery = 10 * time.Millisecond

// maintain is the worker's background loop beside fetching, executing and
// publishing: every HeartbeatInterval it rewrites the registry entry; every
// LogFlushInterval it appends new log lines of running attempts to Redis. It
// removes the registry entry when ctx is done. Claims are refreshed by each
// attempt's own keepAlive, at the attempt's own pace.
func (w *Worker) maintain(ctx context.Context) {
	beat := time.NewTicker(w.cfg.HeartbeatInterval)
	defer beat.Stop()
	flush := time.NewTicker(w.cfg.LogFlushInterval)
	defer flush.Stop()
	w.register(ctx)
	defer w.unregister(ctx)
	stops := w.subscribeStops(ctx)
	defer stops.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-stops.Channel():
			w.heartbeatRun(ctx, m.Payload)
		case <-beat.C:
			w.register(ctx)
		case <-flush.C:
			for _, a := range w.inflight.snapshot() {
				w.flushLogs(ctx, a)
			}
		}
	}
}

// beatEvery is how often a claim with heartbeat timeout ttl is refreshed:
// every HeartbeatInterval, but at least three times per ttl, so that one
// late or failed refresh never lets a live claim lapse.
func (w *Worker) beatEvery(ttl time.Duration) time.Duration {
	return max(min(w.cfg.HeartbeatInterval, ttl/3), minBeatEvery)
}

// keepAlive refreshes a's claim now and then every beatEvery(a.ttl) until
// it leaves the in-flight set (its result published, it was stopped or
// handed back, or the worker stopped: inflight.leaveAll) or ctx ends. It
// starts when the first beat is due (newAttempt). Each refresh is bounded by
// ioTimeout, not by ctx.
func (w *Worker) keepAlive(ctx context.Context, a *attempt) {
	t := time.NewTicker(w.beatEvery(a.ttl))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.gone:
			return
		default:
		}
		w.check(ctx, a)
		select {
		case <-ctx.Done():
			return
		case <-a.gone:
			return
		case <-t.C:
		}
	}
}

// check refreshes a's claim. An answer other than ClaimOK means the
// orchestrator cancelled the attempt or moved on: the attempt's context is
// cancelled and its result will not be published. A Redis error is only
// logged; the claim outlives two missed beats.
func (w *Worker) check(ctx context.Context, a *attempt) {
	res, err := w.beat(ctx, a)
	switch {
	case err != nil:
		a.log().Warn("heartbeat", logkey.Err, err)
	case res != statestore.ClaimOK:
		a.log().Info("heartbeat refused: stopping attempt", logkey.Reason, res.String())
		a.stop(stopError{reason: res})
	}
}

// subscribeStops subscribes to the orchestrator's stop announcements. The
// subscription reconnects by itself; a message missed meanwhile only delays
// the stop to the attempt's next beat.
func (w *Worker) subscribeStops(ctx context.Context) *redis.PubSub {
	return w.rdb.Subscribe(ctx, w.keys.StopChannel())
}

// heartbeatRun checks at once the claims of run's attempts in flight, so
// that a cancelled attempt stops within a round trip of the announcement.
func (w *Worker) heartbeatRun(ctx context.Context, run string) {
	for _, a := range w.inflight.snapshot() {
		if a.id.Run == run {
			w.check(ctx, a)
		}
	}
}

// beat refreshes a's claim unless a was stopped or handed back. beatMu keeps a
// beat from re-taking a claim that handBack is releasing. The call is not cut
// short by the end of ctx.
func (w *Worker) beat(ctx context.Context, a *attempt) (statestore.ClaimResult, error) {
	a.beatMu.Lock()
	defer a.beatMu.Unlock()
	if a.refused() || a.handedBack.Load() {
		return statestore.ClaimOK, nil
	}
	ctx, cancel := w.io(ctx)
	defer cancel()
	return w.claims.Heartbeat(ctx, a.id, w.holder.String(), a.ttl)
}
