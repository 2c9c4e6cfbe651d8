package schedule

import (
	"time"
)

// Overlap policies: what a due fire does while the run of the previous fire
// is still active.
const (
	OverlapSkip  = "skip"  // do not start another run; wait for the next fire
	OverlapAllow = "allow" // start it anyway
)

// ValidOverlap reports whether p is an overlap policy.
func ValidOverlap(p string) bool { return p == OverlapSkip || p == OverlapAllow }

// State is what the scheduler knows of a schedule when it looks at it.
type State struct {
	// Next is the stored next fire time; the schedule is due when Next ≤ now.
	Next time.Time
	// Overlap is OverlapSkip or OverlapAllow.
	Overlap string
	// PreviousActive reports that the run of the previous fire has not ended.
	PreviousActive bool
}

// Decision is what a schedule does at one instant.
type Decision struct {
	// Due is false when the schedule is not due yet; nothing else is set then
	// except Next (unchanged).
	Due bool
	// FireAt is the latest fire time ≤ now. Earlier missed fire times are
	// dropped: after downtime only the latest missed fire runs.
	FireAt time.Time
	// Fire is true when a run starts for FireAt; false with Due means the
	// fire is skipped because the previous run is still active.
	Fire bool
	// Next is the first fire time after now (zero: the expression never
	// fires again).
	Next time.Time
}

// Decide returns what a schedule with timetable t and state st does at now.
func Decide(t Timetable, st State, now time.Time) Decision {
	if st.Next.IsZero() || st.Next.After(now) {
		return Decision{Next: st.Next}
	}
	d := Decision{Due: true, FireAt: Latest(t, st.Next, now), Next: t.Next(now)}
	d.Fire = !(st.Overlap == OverlapSkip && st.PreviousActive)
	return d
}

// lookbacks are the windows Latest searches before walking fire times one
// by one, so that a long outage does not cost one step per missed fire.
var lookbacks = []time.Duration{time.Minute, time.Hour, 24 * time.Hour, 32 * 24 * time.Hour, 367 * 24 * time.Hour}

// maxWalk bounds the fire times Latest steps through.
const maxWalk = 1 << 20

// Latest returns the last fire time of t that is ≤ now, given that next (a
// fire time ≤ now) is the first one not yet handled.
func Latest(t Timetable, next, now time.Time) time.Time {
	for _, back := range lookbacks {
		from := now.Add(-back)
		if !from.After(next) {
			break
		}
		if f := t.Next(from); !f.IsZero() && !f.After(now) {
			return walk(t, f, now)
		}
	}
	return walk(t, next, now)
}

// walk steps from fire time f to the last fire time ≤ now (bounded).
func walk(t Timetable, f, now time.Time) time.Time {
	for range maxWalk {
		n := t.Next(f)
		if n.IsZero() || n.After(now) {
			return f
		}
		f = n
	}
	return f
}

// RunID derives the id of the run a schedule starts for fire time at: the
// schedule id and the fire time in UTC to the second. Fire times are at
// least a second apart, so a fire maps to exactly one run id however often
// it is attempted.
func RunID(scheduleID string, at time.Time) string {
	return scheduleID + "." + at.UTC().Format("20060102T150405Z")
}
