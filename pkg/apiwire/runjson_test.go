package apiwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stdJSON is what the api wrote for v before Run.AppendJSON: a
// json.Encoder's output without HTML escaping, trailing newline included.
func stdJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return buf.Bytes(), err
}

// requireSameJSON requires AppendJSON plus "\n" to be exactly stdJSON's
// bytes, or both to fail alike with nothing appended to the buffer.
func requireSameJSON(t *testing.T, r *Run) {
	t.Helper()
	want, wantErr := stdJSON(r)
	prefix := []byte("prefix")
	got, err := r.AppendJSON(prefix)
	if wantErr != nil {
		require.EqualError(t, err, wantErr.Error())
		require.Equal(t, "prefix", string(got))
		return
	}
	require.NoError(t, err)
	require.Equal(t, "prefix", string(got[:len(prefix)]))
	require.Equal(t, string(want), string(got[len(prefix):])+"\n")
}

func ptr[T any](v T) *T { return &v }

// weird holds every kind of string encoding/json escapes or keeps.
const weird = "a<b>&c \"q\" back\\slash \x00\x01\b\f\n\r\t\x1f\x7f é 日本 🎉 \u2028 \u2029 bad\xff\xfe\xe2\x80 end"

var (
	t0    = time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	paris = time.FixedZone("CET", 3600)
)

func succeededRun() Run {
	node := func(id string, deps []string, start time.Duration) Node {
		return Node{ID: id, DependsOn: deps, NodeFields: NodeFields{
			Handler: "noop", State: "succeeded", Attempt: 1,
			QueuedAt: At(t0.Add(start)), StartedAt: At(t0.Add(start + time.Millisecond)), FinishedAt: At(t0.Add(start + 5*time.Millisecond)),
			QueueWaitMs: ptr[int64](1), DurationMs: ptr[int64](4), Worker: "dev-worker-2", MaxAttempts: 1,
		}}
	}
	return Run{
		RunSummary: RunSummary{ID: "01JABCDEF", Workflow: "etl", Version: 3, Status: "succeeded",
			CreatedAt: At(t0), StartedAt: At(t0), FinishedAt: At(t0.Add(20 * time.Millisecond)), RequestedBy: "ci"},
		Seq: 12, Input: json.RawMessage(`{"day":"2026-01-02"}`), DurationMs: ptr[int64](20),
		Nodes: []Node{node("extract", []string{}, 0), node("transform", []string{"extract"}, 6*time.Millisecond),
			node("load", []string{"transform"}, 12*time.Millisecond)},
	}
}

func everyFieldRun() Run {
	past := []PastAttempt{
		{Attempt: 1, Outcome: "failed", Worker: "w1", QueuedAt: At(t0), StartedAt: At(t0.Add(time.Second)), EndedAt: At(t0.Add(2 * time.Second)),
			QueueWaitMs: ptr[int64](1000), DurationMs: ptr[int64](1000), Error: "boom: " + weird, State: "running"},
		{Attempt: 2, Outcome: "reset"},
		{Attempt: -1, Outcome: weird, QueueWaitMs: ptr[int64](0), DurationMs: ptr[int64](-5)},
	}
	return Run{
		RunSummary: RunSummary{ID: "r", Workflow: "w", Version: -7, Status: "failed", Paused: true,
			CreatedAt: At(t0.In(paris)), StartedAt: At(t0.Add(123_456_789)), FinishedAt: At(t0.Add(time.Hour)), Error: "node x failed", RequestedBy: "key"},
		Seq: ^uint64(0), Input: json.RawMessage(`[1,2,3]`), DurationMs: ptr[int64](0),
		Nodes: []Node{
			{ID: "x", DependsOn: []string{"a", "b"}, NodeFields: NodeFields{Handler: "http", State: "retry_wait", Attempt: 3,
				QueuedAt: At(t0), StartedAt: At(t0), FinishedAt: At(t0), QueueWaitMs: ptr[int64](-1), DurationMs: ptr[int64](1 << 62),
				Worker: "w", Error: "e", Reason: "r", RetryAt: At(t0.Add(time.Minute)), WaitingReason: "backoff", ApprovalMessage: "ship it?",
				MaxAttempts: 5, Lost: 2, PastAttempts: past, Instances: &InstanceCounts{Total: 10, Pending: 1, Running: 2, Succeeded: 3, Failed: 4, Cancelled: -1}},
			},
			{ID: "zeros", DependsOn: []string{}, NodeFields: NodeFields{QueueWaitMs: ptr[int64](0), DurationMs: ptr[int64](0),
				MaxAttempts: -1, Lost: -1, PastAttempts: []PastAttempt{}, Instances: &InstanceCounts{}}},
		},
	}
}

func weirdRun() Run {
	return Run{
		RunSummary: RunSummary{ID: weird, Workflow: "<script>&amp;", Status: `"\`, Error: weird, RequestedBy: "\u2028"},
		Input:      json.RawMessage(" {\"s\" : \"<&>\u2028 \\u2029 é\xff\" ,\n\t\"n\": [ 1 , 2 ] } "),
		Nodes: []Node{{ID: "\xff", DependsOn: []string{weird, "", "\x00"}, NodeFields: NodeFields{
			Handler: "日本", State: "\u2029", Worker: "\t", Error: weird, Reason: "\xe2\x80\xa8", WaitingReason: "\x7f"}}},
	}
}

// asciiEscapesRun has strings that need escaping but are otherwise
// plain ASCII, which appendString's fast path must not take.
func asciiEscapesRun() Run {
	return Run{RunSummary: RunSummary{ID: `say "hi"`, Workflow: `back\slash`, Status: "tab\there", Error: "nul\x00", RequestedBy: "del\x7f"},
		Nodes: []Node{{ID: `"`, DependsOn: []string{`\`, "\n", "\x1f"}, NodeFields: NodeFields{Handler: "\b\f\r"}}}}
}

func oddTimesRun() Run {
	at := func(t time.Time) Time { return At(t) }
	return Run{
		RunSummary: RunSummary{CreatedAt: at(time.Date(12345, 6, 7, 8, 9, 10, 999_999_999, time.UTC)),
			StartedAt: at(time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)), FinishedAt: at(time.Unix(-1, 0))},
		Nodes: []Node{{NodeFields: NodeFields{QueuedAt: at(time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)),
			StartedAt: at(time.Date(1, 1, 1, 0, 59, 0, 0, paris)), RetryAt: UnixMilli(1)}}},
	}
}

func withInput(r Run, in json.RawMessage) Run { r.Input = in; return r }

func TestRunAppendJSON(t *testing.T) {
	t.Parallel()
	big := bigRun(10_000)
	tests := []struct {
		name    string
		run     Run
		wantErr bool
	}{
		{name: "zero run", run: Run{}},
		{name: "succeeded 3 nodes", run: succeededRun()},
		{name: "every optional field", run: everyFieldRun()},
		{name: "nil nodes and depends_on", run: Run{Nodes: []Node{{ID: "a"}}}},
		{name: "empty nodes", run: Run{Nodes: []Node{}}},
		{name: "empty depends_on", run: Run{Nodes: []Node{{ID: "a", DependsOn: []string{}}}}},
		{name: "escapes", run: weirdRun()},
		{name: "ascii escapes", run: asciiEscapesRun()},
		{name: "odd times", run: oddTimesRun()},
		{name: "10,000 nodes", run: big},
		{name: "input nil", run: withInput(succeededRun(), nil)},
		{name: "input {}", run: withInput(succeededRun(), json.RawMessage(`{}`))},
		{name: "input not compact", run: withInput(succeededRun(), json.RawMessage(`{ "a" : 1 }`))},
		{name: "input null", run: withInput(succeededRun(), json.RawMessage(`null`))},
		{name: "input string with html", run: withInput(succeededRun(), json.RawMessage(`"<&>"`))},
		{name: "input empty", run: withInput(succeededRun(), json.RawMessage{}), wantErr: true},
		{name: "input invalid", run: withInput(succeededRun(), json.RawMessage(`{"a":`)), wantErr: true},
		{name: "input trailing data", run: withInput(succeededRun(), json.RawMessage(`1 2`)), wantErr: true},
		{name: "input whitespace only", run: withInput(succeededRun(), json.RawMessage(" \n")), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			requireSameJSON(t, &tt.run)
			_, err := tt.run.AppendJSON(nil)
			require.Equal(t, tt.wantErr, err != nil, "error: %v", err)
		})
	}
}

func FuzzRunAppendJSON(f *testing.F) {
	f.Add("run", weird, "", []byte(`{ "a" : [1, "<&>"] }`), int64(1_767_323_045_006), int64(-3), ^uint64(0))
	f.Add("", "", "", []byte(nil), int64(0), int64(0), uint64(0))
	f.Add("a", "b", "c", []byte(`{`), int64(-1), int64(1<<40), uint64(0x5555_5555_5555_5555))
	f.Add("\u2028", "\xff", "\"", []byte(""), int64(1<<62), int64(86399), uint64(0xaaaa_aaaa_aaaa_aaaa))
	f.Fuzz(func(t *testing.T, a, b, c string, input []byte, ms, n int64, flags uint64) {
		r := fuzzRun(a, b, c, input, ms, n, flags)
		requireSameJSON(t, &r)
	})
}

// bits hands out the fuzzer's flags one or a few at a time.
type bits struct{ v uint64 }

func (b *bits) take(n int) uint64 {
	v := b.v & (1<<n - 1)
	b.v >>= n
	return v
}

func (b *bits) on() bool { return b.take(1) == 1 }

// fuzzRun builds a run of up to three nodes whose every field comes from
// the fuzzer's strings, numbers and flags.
func fuzzRun(a, b, c string, input []byte, ms, n int64, flags uint64) Run {
	fl := &bits{flags}
	r := Run{RunSummary: RunSummary{ID: a, Workflow: b, Version: int(n), Status: c, Paused: fl.on(),
		CreatedAt: fuzzTime(fl.on(), ms, n), StartedAt: fuzzTime(fl.on(), n, ms), FinishedAt: fuzzTime(fl.on(), ms, 0),
		Error: b, RequestedBy: c}, Seq: uint64(ms)}
	if fl.on() {
		r.Input = input
	}
	if fl.on() {
		r.DurationMs = &n
	}
	switch k := fl.take(2); k {
	case 0:
	case 1:
		r.Nodes = []Node{}
	default:
		for i := range int(k) {
			r.Nodes = append(r.Nodes, fuzzNode([3]string{a, b, c}, i, ms, n, fl))
		}
	}
	return r
}

// fuzzNode builds node i of fuzzRun.
func fuzzNode(s [3]string, i int, ms, n int64, fl *bits) Node {
	x, y, z := s[i%3], s[(i+1)%3], s[(i+2)%3]
	node := Node{ID: x, NodeFields: NodeFields{Handler: y, State: z, Attempt: int(n) + i,
		QueuedAt: fuzzTime(fl.on(), ms, n), StartedAt: fuzzTime(fl.on(), ms+int64(i), n), FinishedAt: fuzzTime(fl.on(), n, ms),
		Worker: x, Error: y, Reason: z, RetryAt: fuzzTime(fl.on(), ms, -n), WaitingReason: x}}
	switch fl.take(2) {
	case 1:
		node.DependsOn = []string{}
	case 2:
		node.DependsOn = []string{y, z}
	}
	if fl.on() {
		node.QueueWaitMs = &n
	}
	if fl.on() {
		node.DurationMs = &ms
	}
	if fl.on() {
		node.MaxAttempts, node.Lost = int(n), int(ms)
	}
	switch fl.take(2) {
	case 1:
		node.PastAttempts = []PastAttempt{}
	case 2, 3:
		node.PastAttempts = []PastAttempt{{Attempt: int(n), Outcome: x, Worker: y, QueuedAt: fuzzTime(true, ms, n),
			StartedAt: fuzzTime(fl.on(), n, ms), EndedAt: fuzzTime(fl.on(), ms, 1), QueueWaitMs: &ms, DurationMs: &n, Error: z, State: x}, {}}
	}
	if fl.on() {
		node.Instances = &InstanceCounts{Total: int(n), Pending: int(ms), Running: i, Succeeded: -i, Failed: int(n >> 3), Cancelled: 1}
	}
	return node
}

// fuzzTime is the zero time unless set, else a time of any year, with
// nanoseconds, in a zone of up to ±14h.
func fuzzTime(set bool, ms, ns int64) Time {
	if !set {
		return Time{}
	}
	return At(time.UnixMilli(ms).Add(time.Duration(ns)).In(time.FixedZone("", int(ns%50400))))
}

// bigRun is a succeeded run of a root and n-1 nodes that depend on it, as
// the api answers ?wait= for a large fan-out of no-op nodes.
func bigRun(n int) Run {
	base := int64(1_767_323_045_006)
	nodes := make([]Node, n)
	for i := range nodes {
		at := UnixMilli(base + int64(i))
		nodes[i] = Node{ID: fmt.Sprintf("n%d", i), DependsOn: []string{"root"}, NodeFields: NodeFields{
			Handler: "noop", State: "succeeded", Attempt: 1, QueuedAt: at, StartedAt: at, FinishedAt: at,
			QueueWaitMs: ptr[int64](0), DurationMs: ptr[int64](0), Worker: "dev-worker-2", MaxAttempts: 1}}
	}
	nodes[0].ID, nodes[0].DependsOn = "root", []string{}
	return Run{RunSummary: RunSummary{ID: "01JBIGRUN", Workflow: "fanout", Version: 1, Status: "succeeded",
		CreatedAt: UnixMilli(base), StartedAt: UnixMilli(base), FinishedAt: UnixMilli(base + int64(n)), RequestedBy: "bench"},
		Seq: uint64(3 * n), Input: json.RawMessage(`{"n":10000}`), DurationMs: ptr(int64(n)), Nodes: nodes}
}

// BenchmarkRunJSON encodes a succeeded run of 10,000 nodes (2.9 MB) as
// the api did (encoding/json) and does (AppendJSON into a reused buffer,
// and into a new one each time).
func BenchmarkRunJSON(b *testing.B) {
	run := bigRun(10_000)
	doc, err := run.AppendJSON(nil)
	require.NoError(b, err)
	b.Run("encoding_json", func(b *testing.B) {
		enc := json.NewEncoder(io.Discard)
		enc.SetEscapeHTML(false)
		b.SetBytes(int64(len(doc) + 1))
		b.ReportAllocs()
		for b.Loop() {
			if err := enc.Encode(&run); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendJSON_reused", func(b *testing.B) {
		buf := doc
		b.SetBytes(int64(len(doc) + 1))
		b.ReportAllocs()
		for b.Loop() {
			if buf, err = run.AppendJSON(buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendJSON_new", func(b *testing.B) {
		b.SetBytes(int64(len(doc) + 1))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := run.AppendJSON(nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
