package worker

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

func TestCutLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string
		want  int // length in bytes
	}{
		{name: "short", input: "hello", want: 5},
		{name: "exact", input: strings.Repeat("a", MaxLogLineBytes), want: MaxLogLineBytes},
		{name: "long ascii", input: strings.Repeat("a", MaxLogLineBytes+10), want: MaxLogLineBytes},
		{name: "rune across the cut", input: "ab" + strings.Repeat("€", MaxLogLineBytes), want: MaxLogLineBytes - 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cutLine(tt.input)
			require.Len(t, got, tt.want)
			require.True(t, utf8.ValidString(got))
			require.True(t, strings.HasPrefix(tt.input, got))
		})
	}
}

func FuzzCutLine(f *testing.F) {
	f.Add("plain")
	f.Add(strings.Repeat("é", MaxLogLineBytes))
	f.Fuzz(func(t *testing.T, s string) {
		got := cutLine(s)
		if len(got) > MaxLogLineBytes || !strings.HasPrefix(s, got) {
			t.Fatalf("cutLine(%d bytes) = %d bytes, not a bounded prefix", len(s), len(got))
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("cutLine split a rune")
		}
	})
}

func TestLogBufferKeepsNewestLines(t *testing.T) {
	t.Parallel()
	b := newLogBuffer(statestore.Keys{}, statestore.Attempt{Run: "r", Node: "n", Attempt: 1}, 3)
	for _, l := range []string{"1", "2", "3", "4", "5"} {
		b.add("stdout", l)
	}
	got := b.take()
	require.Len(t, got, 3)
	require.Contains(t, string(got[0]), `"line":"3"`)
	require.Contains(t, string(got[2]), `"line":"5"`)
	require.Empty(t, b.take())
}

func TestRecentForgetsOldest(t *testing.T) {
	t.Parallel()
	r := newRecent()
	at := func(i int) statestore.Attempt {
		return statestore.Attempt{Run: "r", Node: "n", Instance: i, Attempt: 1}
	}
	has := func(a statestore.Attempt) bool { return r.has(a, fingerprint(a)) }
	for i := range recentCap + 1 {
		r.add(at(i), fingerprint(at(i)))
	}
	require.False(t, has(at(0)), "oldest kept beyond the cap")
	require.True(t, has(at(1)))
	require.True(t, has(at(recentCap)))
	require.Equal(t, recentCap, r.len())
	now := time.Now()
	r.left(at(1), fingerprint(at(1)), now.Add(-time.Minute))
	require.False(t, r.leftWithin(at(1), fingerprint(at(1)), now, time.Second))
	require.True(t, r.leftWithin(at(1), fingerprint(at(1)), now, 2*time.Minute))
	require.True(t, r.leftWithin(at(2), fingerprint(at(2)), now, time.Second), "still in flight")
	require.False(t, r.leftWithin(at(0), fingerprint(at(0)), now, time.Hour), "forgotten")
}

// TestRecentSurvivesFingerprintCollisions: a fingerprint is only a hint;
// the attempt itself decides.
func TestRecentSurvivesFingerprintCollisions(t *testing.T) {
	t.Parallel()
	r := newRecent()
	a := statestore.Attempt{Run: "r", Node: "a", Attempt: 1}
	b := statestore.Attempt{Run: "r", Node: "b", Attempt: 1}
	r.add(a, 7)
	require.False(t, r.has(b, 7), "another attempt with the same fingerprint read as remembered")
	r.add(b, 7)
	require.True(t, r.has(b, 7))
	require.False(t, r.has(a, 7), "the attempt whose fingerprint was taken over is forgotten, as if evicted")
	for i := range recentCap - 1 { // a's slot (the oldest) is reused by the last of these
		r.add(statestore.Attempt{Run: "r", Node: "n", Instance: i, Attempt: 1}, uint64(100+i))
	}
	require.True(t, r.has(b, 7), "evicting a's slot forgot b, which holds the fingerprint now")
	r.add(statestore.Attempt{Run: "r", Node: "last", Attempt: 1}, 99)
	require.False(t, r.has(b, 7), "b is the oldest now and is evicted in turn")
	require.Equal(t, recentCap, r.len())
}

// TestBatchDuplicatesDespiteFingerprintCollisions: two attempts of one
// fingerprint in a batch are two claims; a repeat of either is a duplicate.
func TestBatchDuplicatesDespiteFingerprintCollisions(t *testing.T) {
	t.Parallel()
	a := statestore.Attempt{Run: "r", Node: "a", Attempt: 1}
	b := statestore.Attempt{Run: "r", Node: "b", Attempt: 1}
	ins := []inbound{{id: a, claim: 0}, {id: b, claim: 1}}
	seen := map[uint64]int{7: 1} // b took over the fingerprint a had
	require.True(t, earlierInBatch(ins, seen, a, 7), "a repeat of a, whose fingerprint b holds now")
	require.True(t, earlierInBatch(ins, seen, b, 7))
	require.False(t, earlierInBatch(ins, seen, statestore.Attempt{Run: "r", Node: "c", Attempt: 1}, 7))
	require.False(t, earlierInBatch(ins, seen, a, 8))
}

func TestOutboxDrainsInOrderThenCloses(t *testing.T) {
	t.Parallel()
	o := newOutbox()
	for i := range 3 {
		require.True(t, o.push(outgoing{result: &eventsv1.TaskResult{Attempt: int32(i)}}))
	}
	ctx := context.Background()
	batch, ok := o.next(ctx)
	require.True(t, ok)
	require.Len(t, batch, 3)
	for i, it := range batch {
		require.EqualValues(t, i, it.result.GetAttempt())
	}
	require.True(t, o.push(outgoing{result: &eventsv1.TaskResult{}}))
	o.close()
	require.False(t, o.push(outgoing{result: &eventsv1.TaskResult{}}), "push after close")
	batch, ok = o.next(ctx)
	require.True(t, ok, "items queued before close are still delivered")
	require.Len(t, batch, 1)
	_, ok = o.next(ctx)
	require.False(t, ok)
}

func TestOutboxNextWaitsForPush(t *testing.T) {
	t.Parallel()
	o := newOutbox()
	got := make(chan int, 1)
	go func() {
		batch, _ := o.next(context.Background())
		got <- len(batch)
	}()
	o.push(outgoing{result: &eventsv1.TaskResult{}})
	select {
	case n := <-got:
		require.Equal(t, 1, n)
	case <-time.After(10 * time.Second):
		t.Fatal("next did not return after push")
	}
}

func TestBackoffIsBounded(t *testing.T) {
	t.Parallel()
	require.Equal(t, backoffBase, backoff(0))
	prev := time.Duration(0)
	for try := range 100 {
		d := backoff(try)
		require.GreaterOrEqual(t, d, prev)
		require.LessOrEqual(t, d, backoffMax)
		prev = d
	}
	require.Equal(t, backoffMax, backoff(100))
}

func TestPrepareClaimsEachAttemptOnce(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled: prepare does no I/O
	t.Cleanup(func() { _ = rdb.Close() })
	w, err := New(Config{Bus: eventbus.Config{Brokers: []string{"127.0.0.1:1"}}, Redis: rdb,
		Handlers: map[string]Handler{"noop": HandlerFunc(func(context.Context, *Task) (any, error) { return nil, nil })}})
	require.NoError(t, err)
	msg := func(node string, inst, attempt int32) eventbus.Message {
		m, err := eventbus.NewMessage(eventsv1.TopicTaskDispatch, "r",
			&eventsv1.TaskDispatch{RunId: "r", NodeId: node, Instance: inst, Attempt: attempt, Handler: "noop", HeartbeatTimeoutMs: 7000})
		require.NoError(t, err)
		return m
	}
	old := statestore.Attempt{Run: "r", Node: "old", Attempt: 1}
	w.recent.add(old, fingerprint(old))
	msgs := []eventbus.Message{
		msg("a", 0, 1),
		{Topic: eventsv1.TopicTaskDispatch, Value: []byte("\xff not protobuf")},
		msg("a", 0, 1),   // duplicate within the batch
		msg("a", 1, 1),   // another instance: its own claim
		msg("old", 0, 1), // claimed by this worker lately: claimed again, marked
		msg("b", 0, 0),   // invalid attempt
		msg("a", 0, 2),   // the next attempt: its own claim
	}
	ins, reqs := w.prepare(msgs)
	require.Len(t, ins, len(msgs))
	type view struct {
		claim  int
		dup    bool
		again  bool
		poison bool
	}
	got := make([]view, len(ins))
	for i, in := range ins {
		got[i] = view{claim: in.claim, dup: in.dup, again: in.again, poison: in.poison != ""}
	}
	require.Equal(t, []view{{0, false, false, false}, {-1, false, false, true}, {-1, true, false, false}, {1, false, false, false},
		{2, false, true, false}, {-1, false, false, true}, {3, false, false, false}}, got)
	require.Equal(t, []statestore.ClaimRequest{
		{Attempt: statestore.Attempt{Run: "r", Node: "a", Attempt: 1}, TTL: 7 * time.Second},
		{Attempt: statestore.Attempt{Run: "r", Node: "a", Instance: 1, Attempt: 1}, TTL: 7 * time.Second},
		{Attempt: statestore.Attempt{Run: "r", Node: "old", Attempt: 1}, TTL: 7 * time.Second},
		{Attempt: statestore.Attempt{Run: "r", Node: "a", Attempt: 2}, TTL: 7 * time.Second},
	}, reqs)
	require.Equal(t, 3, claimsBefore(ins[:6]))
}

// TestUnencodableResultBecomesAFailure: a result protobuf refuses is
// replaced by a permanent failure that encodes, never dropped (its attempt
// would stay in flight and its run wait for ever).
func TestUnencodableResultBecomesAFailure(t *testing.T) {
	t.Parallel()
	r := &eventsv1.TaskResult{RunId: "r", NodeId: "n", Attempt: 2, WorkerId: "w\xff", Status: eventsv1.TaskStatus_TASK_STATUS_SUCCEEDED, Output: []byte(`1`)}
	_, err := eventbus.NewMessage(eventsv1.TopicTaskComplete, "r", r)
	require.Error(t, err, "protobuf took a string that is not UTF-8")
	out := unencodable(r, err)
	m, err := eventbus.NewMessage(eventsv1.TopicTaskComplete, "r", out)
	require.NoError(t, err)
	var got eventsv1.TaskResult
	require.NoError(t, eventbus.Decode(m, &got))
	require.Equal(t, eventsv1.TaskStatus_TASK_STATUS_FAILED, got.GetStatus())
	require.True(t, got.GetPermanent())
	require.Contains(t, got.GetError(), "the task's result could not be encoded")
	require.Equal(t, int32(2), got.GetAttempt())
	require.Empty(t, got.GetOutput())
	running := unencodable(&eventsv1.TaskResult{RunId: "r", NodeId: "n", Attempt: 1, Status: eventsv1.TaskStatus_TASK_STATUS_RUNNING}, err)
	require.Equal(t, eventsv1.TaskStatus_TASK_STATUS_RUNNING, running.GetStatus(), "a start notice stays a notice")
}
