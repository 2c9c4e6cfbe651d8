package worker

import (
	"context"
	"encoding/json"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/records"
)

// status describes the worker now.
func (w *Worker) status() records.WorkerStatus {
	return records.WorkerStatus{
		ID: w.cfg.ID, Handlers: w.handlers, Group: w.cfg.Group, Concurrency: w.cfg.Concurrency, InFlight: w.inflight.len(),
		HeartbeatIntervalMs: w.cfg.HeartbeatInterval.Milliseconds(),
		StartedAt:           w.started.UTC(), SeenAt: time.Now().UTC(),
	}
}

// register writes the worker's registry entry, even if ctx has ended.
func (w *Worker) register(ctx context.Context) {
	b, err := json.Marshal(w.status())
	if err != nil { // plain fields: cannot fail
		return
	}
	ctx, cancel := w.io(ctx)
	defer cancel()
	if err := w.rdb.HSet(ctx, w.keys.Workers(), w.cfg.ID, b).Err(); err != nil {
		w.log.Warn("register worker", logkey.Err, err)
	}
}

// unregister deletes the worker's registry entry, even if ctx has ended:
// maintain calls it as it stops.
func (w *Worker) unregister(ctx context.Context) {
	ctx, cancel := w.io(ctx)
	defer cancel()
	if err := w.rdb.HDel(ctx, w.keys.Workers(), w.cfg.ID).Err(); err != nil {
		w.log.Warn("unregister worker", logkey.Err, err)
	}
}
