// Package workload holds the benchmarks of `make bench`: each workload drives
// a Braid stack running as separate processes, only through its HTTP API
// (reading Redis and Kafka, never writing them, where precise timings or
// memory figures need it), repeats its measurement, and reports one Line.
package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/braidhq/braid/bench/internal/stats"
)

// Figures every line carries (null where a figure does not apply), each as
// the median of the repetitions with _min and _max next to it — except
// latency percentiles, pooled over every repetition's samples (setPooled).
var standardFigures = []string{"wall_ms", "tasks_per_s", "p50_ms", "p99_ms", "rss_mb", "redis_bytes_per_node", "floor_ratio"}

// Line is one workload's result: one JSON object on one line.
type Line struct {
	// Workload names the workload, e.g. "chain_100_hop".
	Workload string
	// Setup names the infrastructure when it is not the default single
	// node: "cluster". Written after workload, only when set.
	Setup string
	// N is the workload's size (nodes, runs or hops; Method says which).
	N int
	// Runs is how many times the measurement was repeated.
	Runs int
	// Figures maps a figure name to its summary over the repetitions.
	Figures map[string]stats.Summary
	// Extra names further figures in Figures, in output order.
	Extra []string
	// Target is the figure to reach (issues 6 and 20), for the reader.
	Target string
	// goals are issue 20's targets, written as "met" after target (see
	// setGoals).
	goals []goal
	// Method says how each figure was derived.
	Method string
	// Error, when set, says why the workload failed.
	Error string
	// samples, when non-nil, keeps every figure's samples, written as
	// "samples" (see keepSamples).
	samples map[string][]float64
}

// keepSamples makes l write, besides each figure's median, min and max,
// every repetition's value under "samples" (figure → values in
// repetition order; null for a value that could not be read).
func (l *Line) keepSamples() { l.samples = map[string][]float64{} }

// set records samples of figure name, adding it to Extra when it is not
// a standard figure.
func (l *Line) set(name string, samples []float64) {
	if l.Figures == nil {
		l.Figures = map[string]stats.Summary{}
	}
	if _, seen := l.Figures[name]; !seen && !isStandard(name) {
		l.Extra = append(l.Extra, name)
	}
	l.Figures[name] = stats.Summarize(samples)
	if l.samples != nil {
		l.samples[name] = slices.Clone(samples)
	}
}

// setOnce records a figure measured once for the whole line, not per
// repetition (its median, min and max are that value; kept samples leave
// it out, as they hold one value per repetition).
func (l *Line) setOnce(name string, v float64) {
	samples := l.samples
	l.samples = nil
	l.set(name, []float64{v})
	l.samples = samples
}

// setSummary records a figure already summarised (a pooled percentile),
// adding it to Extra when it is not a standard figure; kept samples get
// reps (the per-repetition values), when given.
func (l *Line) setSummary(name string, s stats.Summary, reps []float64) {
	if l.Figures == nil {
		l.Figures = map[string]stats.Summary{}
	}
	if _, seen := l.Figures[name]; !seen && !isStandard(name) {
		l.Extra = append(l.Extra, name)
	}
	l.Figures[name] = s
	if l.samples != nil && reps != nil {
		l.samples[name] = slices.Clone(reps)
	}
}

// pooledMethod says how setPooled's figures read; every line with a
// latency percentile carries it.
const pooledMethod = "p50_ms/p99_ms (and every p50_ms_*/p99_ms_*): the nearest-rank percentile of every sample of every repetition pooled " +
	"(not a median of per-repetition percentiles); their _min/_max: the lowest and highest per-repetition percentile; " +
	"latency_samples: the pooled sample count; latency_samples_per_rep: the samples of one repetition (median, min, max)"

// setPooled records p50_ms<suffix> and p99_ms<suffix> as percentiles of
// every sample of sets (one set per repetition) pooled, and
// latency_samples<suffix>, the pooled count (see pooledMethod).
func (l *Line) setPooled(suffix string, sets [][]float64) {
	var n stats.Pooled
	for _, p := range []float64{50, 99} {
		pp := stats.PooledPercentile(sets, p)
		reps := make([]float64, len(sets))
		for i, s := range sets {
			reps[i] = stats.Percentile(s, p)
		}
		l.setSummary(fmt.Sprintf("p%d_ms%s", int(p), suffix), summaryOf(pp.Value, pp.Min, pp.Max, len(sets)), reps)
		n = pp
	}
	counts := make([]float64, len(sets))
	for i, s := range sets {
		counts[i] = float64(len(s))
	}
	total := float64(n.Samples)
	l.setSummary("latency_samples"+suffix, summaryOf(total, total, total, len(sets)), nil)
	l.set("latency_samples_per_rep"+suffix, counts)
}

// summaryOf is a Summary whose headline is v; no finite v means no figure.
func summaryOf(v, lo, hi float64, reps int) stats.Summary {
	if math.IsNaN(v) || math.IsInf(v, 0) || reps == 0 {
		return stats.Summary{}
	}
	return stats.Summary{Median: v, Min: lo, Max: hi, N: reps}
}

// goal is one of issue 20's targets: a figure's headline value (the median
// of the repetitions; a pooled percentile for p50/p99) at most or at least
// limit.
type goal struct {
	figure string
	atMost bool
	limit  float64
}

func (g goal) String() string {
	op := "≥"
	if g.atMost {
		op = "≤"
	}
	return fmt.Sprintf("%s %s %s", g.figure, op, strconv.FormatFloat(g.limit, 'f', -1, 64))
}

// holds reports whether s meets g.
func (g goal) holds(s stats.Summary) bool {
	if g.atMost {
		return s.Median <= g.limit
	}
	return s.Median >= g.limit
}

// goalMethod says how "met" is computed.
const goalMethod = "met: every issue-20 goal in target holds for its figure's headline value — the median of the repetitions " +
	"(for p50_ms/p99_ms the pooled percentile), not the best repetition"

// setGoals makes gs (issue 20) the line's target, followed by older (the
// targets of earlier issues the line keeps, when not empty), and adds how
// "met" is computed to the method. Call it after Method is set.
func (l *Line) setGoals(older string, gs ...goal) {
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = g.String()
	}
	l.goals = gs
	l.Target = "#20: " + strings.Join(parts, ", ")
	if older != "" {
		l.Target += "; " + older
	}
	l.Method += "; " + goalMethod
}

// met reports whether every goal holds, or nil when a goal's figure is
// missing (or the line has no goals).
func (l Line) met() *bool {
	if len(l.goals) == 0 {
		return nil
	}
	ok := true
	for _, g := range l.goals {
		s, found := l.Figures[g.figure]
		if !found || s.N == 0 {
			return nil
		}
		ok = ok && g.holds(s)
	}
	return &ok
}

func isStandard(name string) bool {
	for _, f := range standardFigures {
		if f == name {
			return true
		}
	}
	return false
}

// MarshalJSON writes the line's keys in a fixed order: workload, setup
// (when set), n, runs, each standard figure with _min and _max, the extra
// figures, samples (when kept), target, met (with goals), method and, when
// set, error.
func (l Line) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	seen := map[string]bool{}
	var dup []string
	put := func(k string, v any) {
		if seen[k] { // e.g. a figure named like another's _min or _max
			dup = append(dup, k)
		}
		seen[k] = true
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(v)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	put("workload", l.Workload)
	if l.Setup != "" {
		put("setup", l.Setup)
	}
	put("n", l.N)
	put("runs", l.Runs)
	for _, name := range append(append([]string{}, standardFigures...), l.Extra...) {
		s, ok := l.Figures[name]
		if !ok || s.N == 0 {
			put(name, nil)
			put(name+"_min", nil)
			put(name+"_max", nil)
			continue
		}
		put(name, round(s.Median))
		put(name+"_min", round(s.Min))
		put(name+"_max", round(s.Max))
	}
	if l.samples != nil {
		put("samples", l.roundedSamples())
	}
	put("target", l.Target)
	if len(l.goals) > 0 {
		put("met", l.met())
	}
	put("method", l.Method)
	if l.Error != "" {
		put("error", l.Error)
	}
	b.WriteByte('}')
	if len(dup) > 0 {
		return nil, fmt.Errorf("line %s: keys written twice: %s", l.Workload, strings.Join(dup, ", "))
	}
	return b.Bytes(), nil
}

// roundedSamples are the kept samples, rounded as the figures are, in an
// ordered JSON object (figures in output order); NaN becomes null.
func (l Line) roundedSamples() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for _, name := range append(append([]string{}, standardFigures...), l.Extra...) {
		xs, ok := l.samples[name]
		if !ok {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		vals := make([]*float64, len(xs))
		for i, x := range xs {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				r := round(x)
				vals[i] = &r
			}
		}
		kb, _ := json.Marshal(name)
		vb, _ := json.Marshal(vals)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// round keeps three decimals (microseconds, for millisecond figures).
func round(x float64) float64 { return math.Round(x*1000) / 1000 }
