package orchsvc

import (
	"time"

	"github.com/braidhq/braid/services/orchestrator/core"
)

// fenceSeen is the fence this orchestrator last got for a run, and when.
type fenceSeen struct {
	fence int64
	at    time.Time
}

// fenceMemory remembers, for RedispatchAfter, the fences this orchestrator
// got, so that it can tell its own re-acquisition of a run (the fence moved
// by exactly one: nobody held the run in between) from a takeover (anyone
// else held it since, or this process never did: a predecessor killed
// between storing a batch and publishing its dispatches). Only the event
// loop uses it.
type fenceMemory map[string]fenceSeen

// takeover records fence as got for run at now and reports whether the
// lock came from another holder. Beyond RedispatchAfter the memory does
// not matter: the reconciler re-sends unclaimed dispatches by then anyway.
func (m fenceMemory) takeover(run string, fence int64, now time.Time) bool {
	prev, known := m[run]
	m[run] = fenceSeen{fence: fence, at: now}
	return !known || prev.fence != fence-1
}

// prune forgets fences older than RedispatchAfter.
func (m fenceMemory) prune(now time.Time) {
	for run, f := range m {
		if now.Sub(f.at) > core.RedispatchAfter {
			delete(m, run)
		}
	}
}
