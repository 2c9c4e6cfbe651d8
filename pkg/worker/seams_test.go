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

// fakeClaims answers each claim with the result set for its node.
type fakeClaims struct {
	answers map[string]statestore.Claimed
	asked   []statestore.ClaimRequest
}

func (c *fakeClaims) ClaimAttempts(_ context.Context, reqs []statestore.ClaimRequest, _ string) ([]statestore.Claimed, error) {
	c.asked = append(c.asked, reqs...)
	out := make([]statestore.Claimed, len(reqs))
	for i, r := range reqs {
		out[i] = c.answers[r.Attempt.Node]
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
	msg := func(node string) eventbus.Message {
		m, err := eventbus.NewMessage(eventsv1.TopicTaskDispatch, "r",
			&eventsv1.TaskDispatch{RunId: "r", NodeId: node, Attempt: 1, Handler: "noop"})
		require.NoError(t, err)
		return m
	}
	msgs := []eventbus.Message{msg("ok"), {Topic: eventsv1.TopicTaskDispatch, Value: []byte("\xff")}, msg("taken"), msg("corrupt")}
	bus := &fakeBus{}
	settled, attempts := w.settleAll(ctx, bus, msgs)
	require.Equal(t, len(msgs), settled)
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
