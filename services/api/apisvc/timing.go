package apisvc

import "github.com/braidhq/braid/pkg/records"

// attemptTiming splits the current attempt of a node record (a node's or
// one fan-out instance's) into its queue wait and its execution, in ms:
//
//   - wait is started-queued: how long the attempt's latest dispatch sat in
//     task.dispatch before a worker started it; now-queued while it is still
//     queued; ended-queued when it ended without starting (cancelled or
//     timed out in the queue); nil while no attempt is queued (pending,
//     skipped, or before the first dispatch).
//   - run is ended-started (now-started while running); nil before it starts.
//
// Both describe the current attempt only: queuing a retry (and re-sending an
// attempt lost with its worker or handed back) resets the record's queued
// and started times, and the earlier runs are in its Past. A failed attempt
// waiting to retry, or cancelled while it waited, ended when it failed (its
// Past entry), not when the node did. Built-in nodes (builtin) run in the
// orchestrator, not on a worker: they start when queued, as the orchestrator
// records them. A worker's clock behind the orchestrator's gives 0, never a
// negative span.
func attemptTiming(rec records.NodeRecord, builtin bool, now int64) (wait, run *int64) {
	if rec.State == records.NodePending || rec.QueuedAt <= 0 {
		return nil, spanMs(rec.StartedAt, attemptEnd(rec), now, rec.State)
	}
	started := rec.StartedAt
	if started <= 0 && builtin {
		started = rec.QueuedAt
	}
	end := attemptEnd(rec)
	switch {
	case started > 0:
		wait = msBetween(rec.QueuedAt, started)
	case end > 0:
		wait = msBetween(rec.QueuedAt, end)
	case rec.State == records.NodeQueued:
		wait = msBetween(rec.QueuedAt, now)
	}
	return wait, spanMs(started, end, now, rec.State)
}

// attemptEnd is when rec's current attempt ended, or 0 while it has not: the
// failure of an attempt that then waited to retry (its Past entry), else the
// finish of a terminal node.
func attemptEnd(rec records.NodeRecord) int64 {
	if k := len(rec.Past); k > 0 {
		if p := rec.Past[k-1]; p.Attempt == rec.Attempt && p.Outcome == records.OutcomeFailed {
			return p.EndedAt
		}
	}
	if rec.State.Terminal() {
		return rec.FinishedAt
	}
	return 0
}

// spanMs is end-started, or now-started while the attempt has not ended;
// nil before it starts and for a pending record (no attempt in progress).
func spanMs(started, end, now int64, state records.NodeState) *int64 {
	switch {
	case started <= 0 || state == records.NodePending:
		return nil
	case end > 0:
		return msBetween(started, end)
	}
	return msBetween(started, now)
}

// pastTiming is attemptTiming for an earlier run of an attempt: it waited
// started-queued (ended-queued if it never started) and ran ended-started.
func pastTiming(p records.PastAttempt) (wait, run *int64) {
	switch {
	case p.QueuedAt > 0 && p.StartedAt > 0:
		wait = msBetween(p.QueuedAt, p.StartedAt)
	case p.QueuedAt > 0 && p.EndedAt > 0:
		wait = msBetween(p.QueuedAt, p.EndedAt)
	}
	if p.StartedAt > 0 && p.EndedAt > 0 {
		run = msBetween(p.StartedAt, p.EndedAt)
	}
	return wait, run
}

// msBetween is b-a in ms, at least 0.
func msBetween(a, b int64) *int64 {
	d := max(b-a, 0)
	return &d
}
