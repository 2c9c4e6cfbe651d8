package worker

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// fakeBus records dead letters; Publish is not on the settle path.
type fakeBus struct {
	mu   sync.Mutex
	dead []string // reasons, in order
}

func (b *fakeBus) Publish(context.Context, ...eventbus.Message) error { return nil }

func (b *fakeBus) DeadLetter(_ context.Context, _ eventbus.Message, reason string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dead = append(b.dead, reason)
	return nil
}

// fakeClaims answers each claim with the result set for its node; a node
// in aheadFor answers ClaimAhead to that many claims first.
type fakeClaims struct {
	answers  map[string]statestore.Claimed
	aheadFor map[string]int
	asked    []statestore.ClaimRequest
}

func (c *fakeClaims) ClaimAttempts(_ context.Context, reqs []statestore.ClaimRequest, _ string) ([]statestore.Claimed, error) {
	c.asked = append(c.asked, reqs...)
	out := make([]statestore.Claimed, len(reqs))
	for i, r := range reqs {
		out[i] = c.answers[r.Attempt.Node]
		if c.aheadFor[r.Attempt.Node] > 0 {
			c.aheadFor[r.Attempt.Node]--
			out[i] = statestore.Claimed{Result: statestore.ClaimAhead}
		}
	}
	return out, nil
}

func (c *fakeClaims) Heartbeat(context.Context, statestore.Attempt, string, time.Duration) (statestore.ClaimResult, error) {
	return statestore.ClaimOK, nil
}

func (c *fakeClaims) ReleaseClaim(context.Context, statestore.Attempt, string) error { return nil }

func (c *fakeClaims) RenewLiveness(context.Context, string, string, time.Duration) (string, error) {
	return "", nil
}

// TestSettleOverTheSeams drives the claim path through its interfaces
// alone: a poison dispatch and one whose records the store finds corrupt
// are dead-lettered with their reasons, a refused claim is dropped, and
// only a granted claim becomes an attempt. The whole batch is settled, so
// all of it may be committed.
func TestSettleOverTheSeams(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled: the fakes answer
	t.Cleanup(func() { _ = rdb.Close() })
	w, err := New(Config{Bus: eventbus.Config{Brokers: []string{"127.0.0.1:1"}}, Redis: rdb,
		Handlers: map[string]Handler{"noop": HandlerFunc(func(context.Context, *Task) (any, error) { return nil, nil })}})
	require.NoError(t, err)
	claims := &fakeClaims{answers: map[string]statestore.Claimed{
		"ok": {Result: statestore.ClaimOK}, "taken": {Result: statestore.ClaimTaken},
		"corrupt": {Result: statestore.ClaimCorrupt, Problem: "bad record"},
	}}
	w.claims = claims
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	msg := func(node string) eventbus.Message { return dispatchOf(t, node) }
	msgs := []eventbus.Message{msg("ok"), {Topic: eventsv1.TopicTaskDispatch, Value: []byte("\xff")}, msg("taken"), msg("corrupt")}
	bus := &fakeBus{}
	settled, attempts, ahead := w.settleAll(ctx, bus, msgs)
	require.Equal(t, len(msgs), settled)
	require.Empty(t, ahead)
	require.Len(t, claims.asked, 3, "the poison dispatch is not claimed")
	require.Len(t, attempts, 1)
	require.Equal(t, "ok", attempts[0].id.Node)
	require.Len(t, bus.dead, 2)
	require.Contains(t, bus.dead[0], "poison")
	require.Equal(t, "bad record", bus.dead[1])
	require.EqualValues(t, 1, w.Stats().Dropped)
	for _, a := range attempts {
		a.leave() // ends its heartbeat goroutine
	}
	w.beats.Wait()
}

// TestSettleDispatchAheadOfItsRecord: the orchestrator publishes a
// dispatch beside the write that queues its attempt, so a claim can find
// no record naming the attempt yet. Such a dispatch is claimed again until
// its record lands (then it runs), while the batch's other attempts are
// handed out at once; one whose record never lands within AheadWindow is
// dropped, and the batch is settled either way.
func TestSettleDispatchAheadOfItsRecord(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled: the fakes answer
	t.Cleanup(func() { _ = rdb.Close() })
	w, err := New(Config{Bus: eventbus.Config{Brokers: []string{"127.0.0.1:1"}}, Redis: rdb, AheadWindow: 50 * time.Millisecond,
		Handlers: map[string]Handler{"noop": HandlerFunc(func(context.Context, *Task) (any, error) { return nil, nil })}})
	require.NoError(t, err)
	ok := statestore.Claimed{Result: statestore.ClaimOK}
	claims := &fakeClaims{
		answers:  map[string]statestore.Claimed{"ok": ok, "late": ok, "never": ok, "stale": {Result: statestore.ClaimStale}},
		aheadFor: map[string]int{"late": 3, "never": 1 << 30, "stale": 1},
	}
	w.claims = claims
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	msg := func(node string) eventbus.Message { return dispatchOf(t, node) }
	msgs := []eventbus.Message{msg("late"), msg("ok"), msg("never"), msg("stale")}
	bus := &fakeBus{}
	settled, attempts, ahead := w.settleAll(ctx, bus, msgs)
	require.Equal(t, len(msgs), settled)
	require.Len(t, attempts, 1, "the claim granted at once is handed out before the others are retried")
	require.Equal(t, "ok", attempts[0].id.Node)
	require.Len(t, ahead, 3)

	more, all := w.settleAhead(ctx, bus, msgs, ahead)
	require.True(t, all, "every dispatch is settled: claimed, refused, or dropped after the window")
	require.Len(t, more, 1)
	require.Equal(t, "late", more[0].id.Node, "the dispatch whose record landed on the fourth claim runs")
	require.Equal(t, 0, claims.aheadFor["late"])
	require.EqualValues(t, 3, w.Stats().Ahead)
	require.EqualValues(t, 2, w.Stats().Dropped, "the stale one is refused once its record shows a later attempt; the one never stored is dropped")
	require.Empty(t, bus.dead)
	for _, a := range append(attempts, more...) {
		a.leave()
	}
	w.beats.Wait()

	// Shutting down while a dispatch is still ahead leaves it unsettled.
	claims.answers["again"], claims.aheadFor["again"] = ok, 1<<30
	msgs = []eventbus.Message{msg("again")}
	_, _, ahead = w.settleAll(ctx, bus, msgs)
	require.Len(t, ahead, 1)
	cancel()
	more, all = w.settleAhead(ctx, bus, msgs, ahead)
	require.False(t, all)
	require.Empty(t, more)
}

// dispatchOf is a dispatch of attempt 1 of node in run "r", for the noop handler.
func dispatchOf(t *testing.T, node string) eventbus.Message {
	t.Helper()
	m, err := eventbus.NewMessage(eventsv1.TopicTaskDispatch, "r",
		&eventsv1.TaskDispatch{RunId: "r", NodeId: node, Attempt: 1, Handler: "noop"})
	require.NoError(t, err)
	return m
}
