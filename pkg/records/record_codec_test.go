package records

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// succeededJSON is what a node that succeeded on its first attempt stores.
const succeededJSON = `{"s":"succeeded","a":1,"q":1764000000000,"t":1764000000001,"f":1764000000002,"w":"dev-worker-2"}`

// succeededRecord is succeededJSON's record.
func succeededRecord() NodeRecord {
	return NodeRecord{State: NodeSucceeded, Attempt: 1, QueuedAt: 1764000000000, StartedAt: 1764000000001,
		FinishedAt: 1764000000002, Worker: "dev-worker-2"}
}

// fullRecord sets every field, Past included.
func fullRecord() NodeRecord {
	return NodeRecord{State: NodeRetryWait, Attempt: 3, ParentsLeft: 2, QueuedAt: 1764000000000,
		StartedAt: 1764000000001, FinishedAt: 1764000000002, Worker: "w-1", Error: "exit status 1",
		Reason: "upstream failed", UpstreamFailed: true, WhenSkipped: true, RetryAt: 1764000005000,
		Deadline: 1764000060000, WakeAt: 1764000030000, Lost: 1,
		Past: []PastAttempt{
			{Attempt: 1, Outcome: OutcomeFailed, Worker: "w-0", QueuedAt: 1, StartedAt: 2, EndedAt: 3, Error: "boom"},
			{Attempt: 2, Outcome: OutcomeReset, State: NodeFailed},
		},
		FanOutCounts: FanOutCounts{FanOut: true, Count: 10, Next: 9, Active: 4, Succeeded: 3, Failed: 1, Cancelled: 1}}
}

// jsonDecode is encoding/json's decoding, the reference for DecodeNodeRecord.
func jsonDecode(b []byte) (NodeRecord, error) {
	var r NodeRecord
	err := json.Unmarshal(b, &r)
	return r, err
}

// requireDecodeMatches checks that DecodeNodeRecord gives json.Unmarshal's
// record and error for b, and returns them.
func requireDecodeMatches(t testing.TB, b []byte) (NodeRecord, error) {
	t.Helper()
	want, wantErr := jsonDecode(b)
	got, err := DecodeNodeRecord(b)
	require.Equal(t, want, got, "input %q", b)
	require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(err), "input %q", b)
	got, err = DecodeNodeRecordString(string(b))
	require.Equal(t, want, got, "input %q as a string", b)
	require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(err), "input %q as a string", b)
	_, fastBytes := decodeFast(b)
	_, fastString := decodeFast(string(b))
	require.Equal(t, fastBytes, fastString, "the fast path takes %q as bytes and as a string alike", b)
	return want, wantErr
}

// requireEncodeMatches checks that rec encodes to json.Marshal's bytes and
// decodes back to what encoding/json's round trip gives, which is rec
// itself unless a string is invalid UTF-8 or Past is empty but not nil.
func requireEncodeMatches(t testing.TB, rec NodeRecord) {
	t.Helper()
	want, err := json.Marshal(rec)
	require.NoError(t, err)
	got := rec.Encode()
	require.Equal(t, string(want), string(got))
	if !needsEscaping(rec) {
		require.LessOrEqual(t, len(got), rec.sizeHint(), "Encode's allocation fits %s", got)
	}
	back, err := DecodeNodeRecord(got)
	require.NoError(t, err)
	wantBack, err := jsonDecode(want)
	require.NoError(t, err)
	require.Equal(t, wantBack, back)
	if validUTF8(rec) {
		if len(rec.Past) == 0 {
			rec.Past = nil
		}
		require.Equal(t, rec, back)
	}
}

// validUTF8 reports whether every string in rec is valid UTF-8, so that
// JSON carries it unchanged.
func validUTF8(rec NodeRecord) bool {
	ss := []string{string(rec.State), rec.Worker, rec.Error, rec.Reason}
	for _, p := range rec.Past {
		ss = append(ss, string(p.Outcome), p.Worker, p.Error, string(p.State))
	}
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// needsEscaping reports whether a string in rec is anything but ASCII that
// JSON carries unescaped, which sizeHint does not account for.
func needsEscaping(rec NodeRecord) bool {
	ss := []string{string(rec.State), rec.Worker, rec.Error, rec.Reason}
	for _, p := range rec.Past {
		ss = append(ss, string(p.Outcome), p.Worker, p.Error, string(p.State))
	}
	for _, s := range ss {
		for i := range len(s) {
			if c := s[i]; c >= utf8.RuneSelf || c < ' ' || strings.IndexByte(`"\\<>&`, c) >= 0 {
				return true
			}
		}
	}
	return false
}

func TestMaxIntLen(t *testing.T) {
	t.Parallel()
	vs := []int64{0, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	for p := int64(1); p <= math.MaxInt64/10; p *= 10 {
		vs = append(vs, p-1, p, p*10-1, -p, -(p - 1), -(p*10 - 1))
	}
	for _, v := range vs {
		n := len(strconv.FormatInt(v, 10))
		require.GreaterOrEqual(t, maxIntLen(v), n, v)
		require.LessOrEqual(t, maxIntLen(v), n+1, v)
	}
}

func TestNodeRecordEncodeMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	withPast := succeededRecord()
	withPast.Past = []PastAttempt{{}, {Attempt: 2, Outcome: OutcomeLost, Worker: `"<w>"`, QueuedAt: -1, EndedAt: 9}}
	tests := map[string]NodeRecord{
		"zero":        {},
		"succeeded":   succeededRecord(),
		"full":        fullRecord(),
		"pending":     {State: NodePending, ParentsLeft: 3},
		"fan-out":     {State: NodeRunning, Attempt: 1, FanOutCounts: FanOutCounts{FanOut: true, Count: 10000, Next: 10000, Succeeded: 10000}},
		"past":        withPast,
		"empty past":  {State: NodeQueued, Past: []PastAttempt{}},
		"quotes":      {State: `say "hi"`, Worker: `back\slash`, Error: `C:\dir\"x"`},
		"html":        {Error: "<script>alert('&')</script>", Reason: "a>b", Worker: "&amp;"},
		"controls":    {Error: "\x00\x01\b\f\n\r\t\x1f\x7f end", Reason: "line1\nline2\ttab"},
		"non-ascii":   {Worker: "wörker-ü", Error: "失败 🎉", Reason: "\u2028sep\u2029"},
		"invalid utf": {Worker: "\xff\xfe", Error: "cut \xe4\xb8", Reason: "\xed\xa0\x80 surrogate", State: "\xc0\xaf"},
		"negative":    {Attempt: -1, ParentsLeft: -2, QueuedAt: -3, Lost: -4, FanOutCounts: FanOutCounts{Count: -5, Cancelled: -6}},
		"max":         {Attempt: math.MaxInt, QueuedAt: math.MaxInt64, RetryAt: math.MaxInt64, FanOutCounts: FanOutCounts{Next: math.MaxInt}},
		"min":         {Attempt: math.MinInt, QueuedAt: math.MinInt64, WakeAt: math.MinInt64, FanOutCounts: FanOutCounts{Failed: math.MinInt}},
	}
	for name, rec := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			requireEncodeMatches(t, rec)
		})
	}
}

func TestNodeRecordEncodeGolden(t *testing.T) {
	t.Parallel()
	require.Equal(t, succeededJSON, string(succeededRecord().Encode()))
	require.Equal(t, `{"s":""}`, string(NodeRecord{}.Encode()))
	rec := NodeRecord{State: NodeFailed, Error: "<a&b>\"\\\n\u2028\xff", FanOutCounts: FanOutCounts{FanOut: true}}
	require.Equal(t, `{"s":"failed","e":"\u003ca\u0026b\u003e\"\\\n\u2028\ufffd","fo":true}`, string(rec.Encode()))
}

// TestNodeRecordCodecCoversEveryField sets each field of NodeRecord and
// PastAttempt on its own, found by reflection, so that a field added to
// the structs without a line in the hand-written codec fails here.
func TestNodeRecordCodecCoversEveryField(t *testing.T) {
	t.Parallel()
	for _, path := range leafFields(reflect.TypeFor[NodeRecord]()) {
		var rec NodeRecord
		setNonZero(reflect.ValueOf(&rec).Elem().FieldByIndex(path))
		requireEncodeMatches(t, rec)
		_, fast := decodeFast(rec.Encode())
		require.Equal(t, rec.Past == nil, fast, "fast decoding of %s", rec.Encode())
	}
	for _, path := range leafFields(reflect.TypeFor[PastAttempt]()) {
		var p PastAttempt
		setNonZero(reflect.ValueOf(&p).Elem().FieldByIndex(path))
		requireEncodeMatches(t, NodeRecord{Past: []PastAttempt{p}})
	}
}

// leafFields returns the index paths of t's fields, with embedded structs'
// fields in place of the structs.
func leafFields(t reflect.Type) [][]int {
	var paths [][]int
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.Anonymous {
			paths = append(paths, []int{i})
			continue
		}
		for _, sub := range leafFields(f.Type) {
			paths = append(paths, append([]int{i}, sub...))
		}
	}
	return paths
}

// setNonZero gives v a value that omitempty does not drop.
func setNonZero(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		setNonZero(v.Index(0).Field(0))
	default:
		panic("setNonZero: unhandled kind " + v.Kind().String())
	}
}

func TestDecodeNodeRecordMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in string
		// fast says whether decodeFast takes the input itself rather
		// than leaving it to json.Unmarshal.
		fast bool
	}{
		{succeededJSON, true},
		{`{}`, true},
		{`{"s":"pending","p":3}`, true},
		{`{"s":"running","a":1,"fo":true,"n":10000,"nx":10000,"ns":10000}`, true},
		{" \t\r\n{ \"s\" : \"queued\" ,\n\"a\" :1 , \"u\": true,\"k\":false } \n", true},
		{`{"s":"custom","w":"wörker 失败","e":"<&>","r":"\u2028"}`, false},
		{"{\"s\":\"x\",\"e\":\"raw \u2028 sep\"}", true},
		{`{"q":9223372036854775807,"t":-9223372036854775808,"a":-0,"l":-1}`, true},
		{`{"a":9223372036854775807}`, true},
		{`{"ra":0,"d":0,"wk":0,"na":0,"nf":0,"nc":0}`, true},
		{`{"q":9223372036854775808}`, false},
		{`{"q":-9223372036854775809}`, false},
		{`{"q":12345678901234567890}`, false},
		{`{"q":00}`, false},
		{`{"a":01}`, false},
		{`{"a":-}`, false},
		{`{"a":+1}`, false},
		{`{"a":1.0}`, false},
		{`{"a":1e3}`, false},
		{`{"a":1E3}`, false},
		{`{"a":.5}`, false},
		{`{"a":"1"}`, false},
		{`{"a":null}`, false},
		{`{"a":true}`, false},
		{`{"s":1}`, false},
		{`{"s":null}`, false},
		{`{"u":1}`, false},
		{`{"u":tru}`, false},
		{`{"u":truex}`, false},
		{`{"u":"true"}`, false},
		{`{"S":"succeeded"}`, false},
		{`{"W":"w","Fo":true,"NX":3}`, false},
		{`{"\u0073":"x"}`, false},
		{`{"x":1}`, false},
		{`{"s":"a","s":"b"}`, false},
		{`{"a":1,"a":2}`, false},
		{`{"w":"a\"b"}`, false},
		{`{"w":"a\\b"}`, false},
		{`{"w":"\u00e9"}`, false},
		{"{\"w\":\"tab\there\"}", false},
		{"{\"w\":\"\xff\"}", false},
		{"{\"w\":\"\xed\xa0\x80\"}", false},
		{`{"h":[{"a":1,"o":"failed"}]}`, false},
		{`{"h":[]}`, false},
		{`{"h":null}`, false},
		{`{"s":"a"} x`, false},
		{`{"s":"a"}{}`, false},
		{`{"s":"a",}`, false},
		{`{"s":"a" "a":1}`, false},
		{`{"s" "a"}`, false},
		{`{,}`, false},
		{`{"s":"a"`, false},
		{`{"s":"a`, false},
		{`{`, false},
		{``, false},
		{` `, false},
		{`null`, false},
		{`[]`, false},
		{`"s"`, false},
		{"\ufeff{}", false},
		{`{"s":{"x":1}}`, false},
		{`{"e":["x"]}`, false},
	}
	for _, tc := range tests {
		requireDecodeMatches(t, []byte(tc.in))
		_, fast := decodeFast([]byte(tc.in))
		require.Equal(t, tc.fast, fast, "fast path for %q", tc.in)
	}
}

// Sinks keep the benchmarked and allocation-counted results alive, typed
// so that storing them does not allocate.
var (
	encodeSink []byte
	decodeSink NodeRecord
)

// TestNodeRecordCodecAllocations pins the cost of the common record: one
// allocation for the encoded bytes, one for the decoded worker id. It is
// not parallel, because counting allocations needs the process to itself.
func TestNodeRecordCodecAllocations(t *testing.T) {
	rec := succeededRecord()
	require.InDelta(t, 1, testing.AllocsPerRun(100, func() { encodeSink = rec.Encode() }), 0)
	b := []byte(succeededJSON)
	require.InDelta(t, 1, testing.AllocsPerRun(100, func() { decodeSink, _ = DecodeNodeRecord(b) }), 0)
}

// FuzzNodeRecordCodec compares the codec with encoding/json: DecodeNodeRecord
// on arbitrary bytes, and Encode on a record built from the other arguments
// (and on each record the bytes decode to).
func FuzzNodeRecordCodec(f *testing.F) {
	seeds := []string{
		succeededJSON,
		`{"s":"pending","p":3}`,
		`{"s":"running","a":1,"q":1764000000000,"t":1764000000001,"fo":true,"n":10000,"nx":10000,"ns":10000}`,
		`{"s":"failed","a":3,"q":1,"t":2,"f":3,"w":"w-1","e":"exit status 1: \"<oops>\"\n","l":1}`,
		`{"s":"retry_wait","a":2,"ra":1764000005000,"d":1764000060000,"h":[{"a":1,"o":"failed","w":"w-0","e":"boom"}]}`,
		`{"s":"skipped","r":"when was false","k":true}`,
		`{"s":"skipped","r":"upstream failed","u":true}`,
		`{"s":"running","a":1,"wk":1764000030000,"fo":true,"n":5,"na":2,"nf":1,"nc":1}`,
		`{"S":"succeeded","A":1}`,
		`{"s":"a","s":"b"}`,
		`{"a":1.5,"q":1e3,"t":-0,"f":01}`,
		`{"q":9223372036854775808}`,
		"{\"w\":\"\xff\u2028\\u00e9\"}",
	}
	for _, s := range seeds {
		rec, _ := jsonDecode([]byte(s))
		f.Add([]byte(s), string(rec.State), rec.Worker, rec.Error, rec.Reason,
			rec.Attempt, rec.ParentsLeft, rec.Lost, rec.QueuedAt, rec.StartedAt, rec.FinishedAt,
			rec.RetryAt, rec.Deadline, rec.WakeAt, rec.UpstreamFailed, rec.WhenSkipped, rec.FanOut,
			rec.Count, rec.Next, rec.Active, rec.Succeeded, rec.Failed, rec.Cancelled, uint8(len(rec.Past)))
	}
	f.Fuzz(func(t *testing.T, data []byte, state, worker, errMsg, reason string,
		attempt, parentsLeft, lost int, queuedAt, startedAt, finishedAt, retryAt, deadline, wakeAt int64,
		upstreamFailed, whenSkipped, fanOut bool,
		count, next, active, succeeded, failed, cancelled int, past uint8,
	) {
		if decoded, err := requireDecodeMatches(t, data); err == nil {
			requireEncodeMatches(t, decoded)
		}
		rec := NodeRecord{State: NodeState(state), Attempt: attempt, ParentsLeft: parentsLeft,
			QueuedAt: queuedAt, StartedAt: startedAt, FinishedAt: finishedAt, Worker: worker, Error: errMsg,
			Reason: reason, UpstreamFailed: upstreamFailed, WhenSkipped: whenSkipped, RetryAt: retryAt,
			Deadline: deadline, WakeAt: wakeAt, Lost: lost,
			FanOutCounts: FanOutCounts{FanOut: fanOut, Count: count, Next: next, Active: active,
				Succeeded: succeeded, Failed: failed, Cancelled: cancelled}}
		for i := range int(past % 4) {
			rec.Past = append(rec.Past, PastAttempt{Attempt: attempt + i, Outcome: Outcome(reason),
				Worker: worker, QueuedAt: queuedAt, StartedAt: startedAt, EndedAt: finishedAt,
				Error: errMsg, State: NodeState(state)})
		}
		requireEncodeMatches(t, rec)
	})
}

// BenchmarkNodeRecordEncode encodes a succeeded node's record, with
// json.Marshal alongside for comparison.
func BenchmarkNodeRecordEncode(b *testing.B) {
	rec := succeededRecord()
	b.Run("records", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			encodeSink = rec.Encode()
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			encodeSink, _ = json.Marshal(rec)
		}
	})
}

// BenchmarkNodeRecordDecode decodes a succeeded node's record, with
// json.Unmarshal alongside for comparison.
func BenchmarkNodeRecordDecode(b *testing.B) {
	in := []byte(succeededJSON)
	b.Run("records", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			decodeSink, _ = DecodeNodeRecord(in)
		}
	})
	str := string(in)
	b.Run("records_string", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			decodeSink, _ = DecodeNodeRecordString(str)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			decodeSink, _ = jsonDecode(in)
		}
	})
}
