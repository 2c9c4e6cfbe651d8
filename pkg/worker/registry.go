package worker

import (
	"context"
	"encoding/json"
	"github.com/braidhq/braid/pkg/logkey"
	"time"
)

// Status is a worker's entry in the Redis hash statestore.Keys.Workers
// (field: worker id, value: Status as JSON). A worker writes it at start and
// every HeartbeatInterval, and deletes it when it stops; an entry whose
// SeenAt is older than a few HeartbeatIntervalMs belongs to a worker that
// died without stopping.
type Status struct {
	ID string `json:"id"`
	// Handlers are the handler names the worker runs, sorted.
	Handlers []string `json:"handlers"`
	// Concurrency is the most attempts it runs at once; InFlight how many it holds now.
	Concurrency int `json:"concurrency"`
	InFlight    int `json:"in_flight"`
	// HeartbeatIntervalMs is how often the entry is rewritten, in milliseconds.
	HeartbeatIntervalMs int64     `json:"heartbeat_interval_ms"`
	StartedAt           time.Time `json:"started_at"`
	SeenAt              time.Time `json:"seen_at"`
}

// status describes the worker now.
func (w *Worker) status() Status {
	return Status{
		ID: w.cfg.ID, Handlers: w.handlers, Concurrency: w.cfg.Concurrency, InFlight: w.inflight.len(),
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
