package records

import "time"

// WorkerStatus is a worker's entry in the Redis hash statestore.Keys.Workers
// (field: worker id, value: WorkerStatus as JSON). A worker writes it at start and
// every HeartbeatInterval, and deletes it when it stops; an entry whose
// SeenAt is older than a few HeartbeatIntervalMs belongs to a worker that
// died without stopping.
type WorkerStatus struct {
	ID string `json:"id"`
	// Handlers are the handler names the worker runs, sorted.
	Handlers []string `json:"handlers"`
	// Group is its consumer group on task.dispatch: its pool (workers of
	// one handler set share one). Empty from workers older than pools.
	Group string `json:"group,omitempty"`
	// Concurrency is the most attempts it runs at once; InFlight how many it holds now.
	Concurrency int `json:"concurrency"`
	InFlight    int `json:"in_flight"`
	// HeartbeatIntervalMs is how often the entry is rewritten, in milliseconds.
	HeartbeatIntervalMs int64     `json:"heartbeat_interval_ms"`
	StartedAt           time.Time `json:"started_at"`
	SeenAt              time.Time `json:"seen_at"`
}

// Worker liveness by registry entry: an entry counts as a live worker's
// while it was rewritten within MissedBeats of its heartbeat intervals, and
// never less than MinStale.
const (
	MissedBeats = 3
	MinStale    = 3 * time.Second
)

// Live reports whether the entry belongs to a live worker at now: one that
// rewrote it lately (the api's waiting reasons and the reconciler's
// re-sends agree on it).
func (w WorkerStatus) Live(now time.Time) bool {
	stale := max(time.Duration(w.HeartbeatIntervalMs)*time.Millisecond*MissedBeats, MinStale)
	return now.Sub(w.SeenAt) < stale
}

// LogLine is one line of an attempt's log, stored as JSON in the Redis list
// statestore.Keys.Logs (oldest first, capped at the worker's Config.LogLinesCap lines).
type LogLine struct {
	// TimeMs is when the line was logged, in Unix milliseconds.
	TimeMs int64 `json:"ts"`
	// Stream is "stdout", "stderr" or "handler".
	Stream string `json:"stream"`
	// Text is the line, cut at worker.MaxLogLineBytes.
	Text string `json:"line"`
}
