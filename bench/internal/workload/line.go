// Package workload holds the benchmarks of `make bench`: each workload drives
// a Braid stack running as separate processes, only through its HTTP API
// (reading Redis and Kafka, never writing them, where precise timings or
// memory figures need it), repeats its measurement, and reports one Line.
package workload

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"

	"github.com/braidhq/braid/bench/internal/stats"
)

// Figures every line carries (null where a figure does not apply), each as
// the median of the repetitions with _min and _max next to it.
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
	// Target is the figure to reach (issue 6), for the reader.
	Target string
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
// figures, samples (when kept), target, method and, when set, error.
func (l Line) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	put := func(k string, v any) {
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
	put("method", l.Method)
	if l.Error != "" {
		put("error", l.Error)
	}
	b.WriteByte('}')
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
