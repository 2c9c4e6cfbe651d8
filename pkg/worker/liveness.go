package worker

import (
	"context"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
)

// livenessEvery is how often the liveness key is renewed: four times per
// LivenessTimeout, so that one slow or failed renewal never lets it lapse.
func (w *Worker) livenessEvery() time.Duration { return w.cfg.LivenessTimeout / 4 }

// announce declares this incarnation alive before the first claim, writes
// its registry entry (the handlers it offers) and tells the orchestrators
// that the worker started, so that attempts a killed predecessor under the
// same id still holds are found orphaned and dispatched again at once
// instead of after a heartbeat timeout, and the reconcile pass the notice
// starts finds its handlers offered.
func (w *Worker) announce(ctx context.Context) {
	w.renewLiveness(ctx, true)
	w.register(ctx)
	ctx, cancel := w.io(ctx)
	defer cancel()
	if err := w.rdb.Publish(ctx, w.keys.WorkerChannel(), w.cfg.ID).Err(); err != nil {
		w.log.Warn("announce start", logkey.Err, err)
	}
}

// keepLiving renews the liveness key every livenessEvery until ctx ends.
// It runs on its own goroutine, apart from claims, logs and the registry,
// so that nothing but a dead, frozen or cut-off process misses a renewal.
func (w *Worker) keepLiving(ctx context.Context) {
	t := time.NewTicker(w.livenessEvery())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.renewLiveness(ctx, false)
		}
	}
}

// renewLiveness stores this incarnation as the one alive under the
// worker's id. Another incarnation found there at start is a killed
// predecessor; found later, it is a second live process using the same id,
// which makes each declare the other's attempts lost: that is logged as an
// error, since worker ids must be unique among live workers. The call is
// bounded by livenessEvery, not by ctx.
func (w *Worker) renewLiveness(ctx context.Context, first bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.livenessEvery())
	defer cancel()
	prev, err := w.claims.RenewLiveness(ctx, w.cfg.ID, w.holder.Incarnation, w.cfg.LivenessTimeout)
	switch {
	case err != nil:
		w.log.Warn("renew liveness", logkey.Err, err)
	case prev == "" || prev == w.holder.Incarnation:
	case first:
		w.log.Info("restarted under the same id: the previous incarnation's attempts are lost and run again", logkey.Previous, prev)
	default:
		w.log.Error("another live process uses this worker id: give every worker its own BRAID_WORKER_ID", logkey.Other, prev)
	}
}
