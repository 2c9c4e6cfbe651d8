// Package autoprocs moves braid dev's GOMAXPROCS between a floor and a
// ceiling by how long its goroutines wait for a P.
//
// braid dev is one process whose hops hand work from goroutine to
// goroutine all the time. On few Ps a light load runs fastest: every
// wake-up of a goroutine on another P is a futex and an inter-processor
// interrupt (on two cores one P took a sequential 1-node run from about
// 2.1 to 1.3 ms of CPU). Under a heavy load the same floor makes
// goroutines queue for the one P while a core is left to others (the
// 1,000-diamond load ran 20–30 % faster on two Ps). The runtime cannot
// tell the two apart, but its scheduler's latency histogram can: when a
// noticeable share of the goroutines made runnable in a window waited a
// millisecond or more before they ran, work is queueing; when almost none
// did, the floor serves. The controller reads the histogram every
// Interval and moves between Min and Max with hysteresis, so a steady load
// stays where it is and a change of load is followed within a second.
package autoprocs

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/metrics"
	"time"
)

// The controller's defaults and thresholds (DESIGN.md, Round two).
const (
	// DefaultInterval is the window the scheduler's latencies are read over.
	DefaultInterval = 250 * time.Millisecond
	// LateWait is how long a runnable goroutine waits for a P before the
	// wait counts as late.
	LateWait = time.Millisecond
	// UpShare is the share of late waits in a window at which the window
	// asks for the ceiling; UpWindows such windows in a row move there.
	UpShare   = 0.03
	UpWindows = 2
	// DownShare is the share at or below which a window asks for the
	// floor; DownWindows such windows in a row move there.
	DownShare   = 0.01
	DownWindows = 4
	// MinEvents is the fewest goroutine wake-ups a window needs to say
	// anything about queueing: an idle stack's windows ask for the floor.
	MinEvents = 100
)

const latencyMetric = "/sched/latencies:seconds"

// Config is what Run needs.
type Config struct {
	// Min and Max are the floor and the ceiling of GOMAXPROCS; Run
	// returns at once when Max ≤ Min.
	Min, Max int
	// Interval is the window (DefaultInterval when zero).
	Interval time.Duration
	// Logger gets a debug line for each move (none when nil).
	Logger *slog.Logger
}

// Window is what one interval of the scheduler's latency histogram says:
// how many goroutines were made to run, and how many of them waited
// LateWait or longer for a P.
type Window struct {
	Events, Late uint64
}

// Share is the share of late waits, 0 in a window with fewer than
// MinEvents events.
func (w Window) Share() float64 {
	if w.Events < MinEvents {
		return 0
	}
	return float64(w.Late) / float64(w.Events)
}

// Decider turns windows into a P count. Its zero value is ready.
type Decider struct {
	up, down int
}

// Next returns the P count after window w at procs Ps between lo and hi.
func (d *Decider) Next(procs, lo, hi int, w Window) int {
	s := w.Share()
	switch {
	case s >= UpShare:
		d.up, d.down = d.up+1, 0
	case s <= DownShare:
		d.up, d.down = 0, d.down+1
	default:
		d.up, d.down = 0, 0
	}
	switch {
	case procs < hi && d.up >= UpWindows:
		d.up = 0
		return hi
	case procs > lo && d.down >= DownWindows:
		d.down = 0
		return lo
	}
	return procs
}

// Run moves GOMAXPROCS between cfg.Min, which the caller has set, and
// cfg.Max until ctx ends, when it leaves the floor set. It returns at
// once, having set nothing, when cfg.Max ≤ cfg.Min or cfg.Min < 1.
func Run(ctx context.Context, cfg Config) {
	if cfg.Min < 1 || cfg.Max <= cfg.Min {
		return
	}
	interval := cfg.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	procs := cfg.Min
	defer runtime.GOMAXPROCS(cfg.Min)
	var h histogram
	h.read()
	var d Decider
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w := h.read()
		next := d.Next(procs, cfg.Min, cfg.Max, w)
		if next == procs {
			continue
		}
		runtime.GOMAXPROCS(next)
		if cfg.Logger != nil {
			cfg.Logger.LogAttrs(ctx, slog.LevelDebug, "braid dev: GOMAXPROCS moved", slog.Int("from", procs), slog.Int("to", next),
				slog.Uint64("wakeups", w.Events), slog.Float64("late_share", w.Share()))
		}
		procs = next
	}
}

// histogram reads the scheduler's cumulative latency histogram and keeps
// the last counts, so each read returns the window since the one before.
type histogram struct {
	sample [1]metrics.Sample
	last   []uint64
}

func (h *histogram) read() Window {
	h.sample[0].Name = latencyMetric
	metrics.Read(h.sample[:])
	if h.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return Window{}
	}
	cur := h.sample[0].Value.Float64Histogram()
	w := windowOf(cur.Buckets, cur.Counts, h.last)
	h.last = append(h.last[:0], cur.Counts...)
	return w
}

// windowOf is the window between the cumulative counts last and counts of
// a histogram whose bucket i starts at buckets[i] seconds; with no last
// counts (the first read) the window is empty.
func windowOf(buckets []float64, counts, last []uint64) Window {
	var w Window
	if len(last) != len(counts) {
		return w
	}
	late := LateWait.Seconds()
	for i, c := range counts {
		n := c - last[i]
		w.Events += n
		if buckets[i] >= late {
			w.Late += n
		}
	}
	return w
}
