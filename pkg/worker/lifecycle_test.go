package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/worker"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// blocker blocks until its context ends, reporting that it started and why it ended.
type blocker struct {
	started chan struct{}
	cause   chan error
}

func newBlocker() *blocker {
	return &blocker{started: make(chan struct{}, 16), cause: make(chan error, 16)}
}

func (b *blocker) Handle(ctx context.Context, task *worker.Task) (any, error) {
	task.Log("handler", "started")
	b.started <- struct{}{}
	<-ctx.Done()
	b.cause <- context.Cause(ctx)
	return nil, ctx.Err()
}

func waitChan[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(within):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func TestHeartbeatStopsCancelledAttempt(t *testing.T) {
	t.Parallel()
	h := newBlocker()
	b := setup(t, map[string]worker.Handler{"block": h}, nil)
	b.dispatch(b.queued("run1", "a", "block", `{}`))
	waitChan(t, h.started, "handler start")

	claim := b.keys.Claim("run1", "a", 0, 1)
	require.Equal(t, b.w.Holder(), b.rdb.Get(context.Background(), claim).Val())
	b.putNode("run1", "a", 0, `{"s":"cancelled","a":1}`)

	cause := waitChan(t, h.cause, "handler cancellation") // within a few heartbeat intervals
	require.ErrorContains(t, cause, "stopped: finished")
	require.Eventually(t, func() bool { return b.w.Stats().Stopped == 1 }, within, tick)
	for _, r := range b.resultsOf("run1", "a") {
		require.Equal(t, running, r.GetStatus(), "a stopped attempt publishes no result")
	}
	// Its logs were still flushed.
	require.NotEmpty(t, b.logLines("run1", "a", 1))
}

// TestStopNoticeStopsAttemptBeforeItsBeat: the orchestrator's stop
// announcement alone stops a cancelled attempt. The attempt's heartbeat is
// an hour apart, so only the notice (pub/sub on StopChannel, then an
// immediate claim check) can end it within the test.
func TestStopNoticeStopsAttemptBeforeItsBeat(t *testing.T) {
	t.Parallel()
	h := newBlocker()
	b := setup(t, map[string]worker.Handler{"block": h}, func(c *worker.Config) { c.HeartbeatInterval = time.Hour })
	d := b.queued("run1", "a", "block", `{}`)
	d.HeartbeatTimeoutMs = (3 * time.Hour).Milliseconds()
	b.dispatch(d)
	waitChan(t, h.started, "handler start")

	b.putNode("run1", "a", 0, `{"s":"cancelled","a":1}`)
	select {
	case cause := <-h.cause:
		t.Fatalf("the attempt stopped before any notice: %v", cause)
	case <-time.After(200 * time.Millisecond):
	}
	// Subscribers may still be joining; announce until the attempt stops.
	ctx := context.Background()
	var cause error
	require.Eventually(t, func() bool {
		require.NoError(t, b.rdb.Publish(ctx, b.keys.StopChannel(), "run1").Err())
		select {
		case cause = <-h.cause:
			return true
		default:
			return false
		}
	}, within, 100*time.Millisecond, "the stop notice never stopped the attempt")
	require.ErrorContains(t, cause, "stopped: finished")
}

func TestHeartbeatKeepsClaimAlive(t *testing.T) {
	t.Parallel()
	h := newBlocker()
	b := setup(t, map[string]worker.Handler{"block": h}, nil)
	b.dispatch(b.queued("run1", "a", "block", `{}`)) // claim TTL: the default 30s
	waitChan(t, h.started, "handler start")
	claim := b.keys.Claim("run1", "a", 0, 1)
	// Left alone, the claim's TTL only shrinks; each heartbeat resets it.
	// Seeing it grow three times proves the heartbeats, however loaded the
	// machine is.
	every := time.NewTicker(tick)
	defer every.Stop()
	last, refreshes := time.Duration(1<<62), 0
	for i := 0; refreshes < 3 && i < int(within/tick); i++ {
		<-every.C
		ttl := b.rdb.PTTL(context.Background(), claim).Val()
		require.Positive(t, ttl, "claim gone")
		if ttl > last {
			refreshes++
		}
		last = ttl
	}
	require.Equal(t, 3, refreshes, "claim TTL never refreshed")
	require.Equal(t, b.w.Holder(), b.rdb.Get(context.Background(), claim).Val())
}

// TestHeartbeatFollowsShortHeartbeatTimeout gives the worker an hour-long
// HeartbeatInterval and a dispatch whose heartbeat timeout (the claim TTL)
// is 1.5 s: the claim must still be refreshed, at least every third of its
// own timeout, and never lapse while the handler runs.
func TestHeartbeatFollowsShortHeartbeatTimeout(t *testing.T) {
	t.Parallel()
	h := newBlocker()
	b := setup(t, map[string]worker.Handler{"block": h}, func(c *worker.Config) { c.HeartbeatInterval = time.Hour })
	d := b.queued("run1", "a", "block", `{}`)
	d.HeartbeatTimeoutMs = 1500
	b.dispatch(d)
	waitChan(t, h.started, "handler start")
	claim := b.keys.Claim("run1", "a", 0, 1)
	every := time.NewTicker(tick)
	defer every.Stop()
	last, refreshes := time.Duration(1<<62), 0
	for i := 0; refreshes < 3 && i < int(within/tick); i++ {
		<-every.C
		ttl := b.rdb.PTTL(context.Background(), claim).Val()
		require.Positive(t, ttl, "the claim lapsed while its attempt ran")
		if ttl > last {
			refreshes++
		}
		last = ttl
	}
	require.Equal(t, 3, refreshes, "claim TTL never refreshed")
	require.Equal(t, b.w.Holder(), b.rdb.Get(context.Background(), claim).Val())
}

func TestShutdownHandsBackUnfinishedAttempt(t *testing.T) {
	t.Parallel()
	h := newBlocker()
	var quick atomic.Int64
	b := setup(t, map[string]worker.Handler{"block": h, "echo": echo(&quick)}, func(c *worker.Config) {
		c.DrainTimeout = 100 * time.Millisecond
	})
	b.dispatch(b.queued("run1", "a", "block", `{}`))
	waitChan(t, h.started, "handler start")
	claim := b.keys.Claim("run1", "a", 0, 1)
	require.Equal(t, b.w.Holder(), b.rdb.Get(context.Background(), claim).Val())
	require.Eventually(t, func() bool {
		return b.rdb.HExists(context.Background(), b.keys.Workers(), b.w.ID()).Val()
	}, within, tick)

	b.stop()
	require.ErrorContains(t, waitChan(t, h.cause, "handler cancellation"), "worker shutting down")
	require.ErrorIs(t, b.rdb.Get(context.Background(), claim).Err(), redis.Nil, "claim not handed back")
	require.EqualValues(t, 1, b.w.Stats().HandedBack)
	require.False(t, b.rdb.HExists(context.Background(), b.keys.Workers(), b.w.ID()).Val(), "registry entry left behind")
	var handedBack []*eventsv1.TaskResult
	require.Eventually(t, func() bool {
		handedBack = handedBack[:0]
		for _, r := range b.resultsOf("run1", "a") {
			if r.GetStatus() != running {
				handedBack = append(handedBack, r)
			}
		}
		return len(handedBack) > 0
	}, within, tick, "no hand-back result")
	require.Len(t, handedBack, 1, "a handed-back attempt publishes only its hand-back")
	require.True(t, handedBack[0].GetHandedBack())
	require.Equal(t, failed, handedBack[0].GetStatus())
	require.Contains(t, handedBack[0].GetError(), "handed back")
}

func TestShutdownLetsAttemptsFinish(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	h := worker.HandlerFunc(func(ctx context.Context, _ *worker.Task) (any, error) {
		started <- struct{}{}
		<-release // ignores ctx on purpose: shutdown must not cancel it within DrainTimeout
		return "finished", ctx.Err()
	})
	b := setup(t, map[string]worker.Handler{"h": h}, nil)
	b.dispatch(b.queued("run1", "a", "h", `{}`))
	waitChan(t, started, "handler start")
	done := b.done
	b.done = nil // this test waits for Run itself
	b.cancel()
	require.Never(t, func() bool { return len(done) > 0 }, 200*time.Millisecond, tick,
		"Run returned while an attempt was still draining")
	close(release)
	require.NoError(t, waitChan(t, done, "Run to return"))
	b.result("run1", "a", succeeded)
}

func TestLargeOutputGoesToRedis(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 5000)
	h := worker.HandlerFunc(func(context.Context, *worker.Task) (any, error) { return map[string]string{"big": big}, nil })
	b := setup(t, map[string]worker.Handler{"big": h}, func(c *worker.Config) { c.MaxInlineOutput = 1024 })
	b.dispatch(b.queued("run1", "a", "big", `{}`))
	r := b.result("run1", "a", succeeded)
	require.Empty(t, r.GetOutput())
	require.Equal(t, b.keys.Blob("run1", "a", 0, 1), r.GetOutputRef())
	stored, err := b.rdb.Get(context.Background(), r.GetOutputRef()).Bytes()
	require.NoError(t, err)
	want, _ := json.Marshal(map[string]string{"big": big})
	require.JSONEq(t, string(want), string(stored))
}

func TestLogsAreCappedAndFlushedBeforeResult(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", worker.MaxLogLineBytes) // 2 bytes per rune
	h := worker.HandlerFunc(func(_ context.Context, task *worker.Task) (any, error) {
		for i := range 20 {
			task.Log("stdout", "line "+string(rune('a'+i)))
		}
		task.Log("stderr", long)
		return nil, nil
	})
	b := setup(t, map[string]worker.Handler{"chatty": h}, func(c *worker.Config) {
		c.LogLinesCap = 5
		c.LogFlushInterval = time.Hour // only the flush before the result counts
	})
	b.dispatch(b.queued("run1", "a", "chatty", `{}`))
	b.result("run1", "a", succeeded)

	lines := b.logLines("run1", "a", 1) // no waiting: flushed before the result was published
	require.Len(t, lines, 5)
	for i, l := range lines[:4] {
		require.Equal(t, records.LogLine{TimeMs: l.TimeMs, Stream: "stdout", Text: "line " + string(rune('a'+16+i))}, l)
		require.NotZero(t, l.TimeMs)
	}
	last := lines[4]
	require.Equal(t, "stderr", last.Stream)
	require.Len(t, last.Text, worker.MaxLogLineBytes)
	require.Equal(t, long[:worker.MaxLogLineBytes], last.Text)
}

func TestRegistryAdvertisesWorker(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	b := setup(t, map[string]worker.Handler{"zeta": echo(&calls), "alpha": echo(&calls)}, func(c *worker.Config) {
		c.Concurrency = 3
	})
	var st records.WorkerStatus
	require.Eventually(t, func() bool {
		raw, err := b.rdb.HGet(context.Background(), b.keys.Workers(), b.w.ID()).Bytes()
		return err == nil && json.Unmarshal(raw, &st) == nil
	}, within, tick)
	require.Equal(t, b.w.ID(), st.ID)
	require.Equal(t, []string{"alpha", "zeta"}, st.Handlers)
	require.Equal(t, 3, st.Concurrency)
	require.Zero(t, st.InFlight)
	require.False(t, st.StartedAt.IsZero())
	first := st.SeenAt
	require.Eventually(t, func() bool { // rewritten every heartbeat
		raw, err := b.rdb.HGet(context.Background(), b.keys.Workers(), b.w.ID()).Bytes()
		return err == nil && json.Unmarshal(raw, &st) == nil && st.SeenAt.After(first)
	}, within, tick)
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	ok := worker.Config{
		Bus:      eventbusConfig(),
		Redis:    redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}),
		Handlers: map[string]worker.Handler{"noop": worker.HandlerFunc(func(context.Context, *worker.Task) (any, error) { return nil, nil })},
	}
	tests := []struct {
		name    string
		mutate  func(*worker.Config)
		wantErr string
	}{
		{name: "valid", mutate: func(*worker.Config) {}},
		{name: "no redis", mutate: func(c *worker.Config) { c.Redis = nil }, wantErr: "Redis client is required"},
		{name: "no brokers", mutate: func(c *worker.Config) { c.Bus.Brokers = nil }, wantErr: "Bus.Brokers is required"},
		{name: "no handlers", mutate: func(c *worker.Config) { c.Handlers = nil }, wantErr: "Handlers is empty"},
		{name: "nil handler", mutate: func(c *worker.Config) { c.Handlers = map[string]worker.Handler{"x": nil} }, wantErr: `handler "x"`},
		{name: "negative concurrency", mutate: func(c *worker.Config) { c.Concurrency = -1 }, wantErr: "Concurrency must be positive"},
		{name: "negative drain", mutate: func(c *worker.Config) { c.DrainTimeout = -time.Second }, wantErr: "DrainTimeout must be positive"},
		{name: "id not UTF-8", mutate: func(c *worker.Config) { c.ID = "w\xff" }, wantErr: "ID \"w\\xff\": want at most 200 bytes of UTF-8"},
		{name: "id with a newline", mutate: func(c *worker.Config) { c.ID = "w\n1" }, wantErr: "without control characters"},
		{name: "id too long", mutate: func(c *worker.Config) { c.ID = strings.Repeat("w", 201) }, wantErr: "at most 200 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.mutate(&cfg)
			w, err := worker.New(cfg)
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.NotEmpty(t, w.ID())
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			require.Nil(t, w)
		})
	}
}

func TestRunTwiceFails(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	b := setup(t, map[string]worker.Handler{"echo": echo(&calls)}, nil)
	require.Eventually(t, func() bool { // the first Run is under way
		return b.rdb.HExists(context.Background(), b.keys.Workers(), b.w.ID()).Val()
	}, within, tick)
	err := b.w.Run(context.Background())
	require.Error(t, err)
	require.False(t, errors.Is(err, context.Canceled))
}

// TestLivenessIsRenewedAnnouncedAndLeftToExpire: a running worker keeps its
// incarnation alive under its id (renewed well within the timeout, so the
// key never lapses) and announces its start on the workers channel; a
// graceful stop leaves the key to expire within the timeout instead of
// deleting it (a deleted key would have results that are published but
// not applied yet declared lost).
func TestLivenessIsRenewedAnnouncedAndLeftToExpire(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	b := setupIdle(t, map[string]worker.Handler{"noop": echo(&calls)}, func(c *worker.Config) {
		c.LivenessTimeout = 400 * time.Millisecond
	})
	sub := b.rdb.Subscribe(context.Background(), b.keys.WorkerChannel())
	defer sub.Close()
	_, err := sub.Receive(context.Background()) // the subscription is confirmed
	require.NoError(t, err)
	b.start()
	select {
	case m := <-sub.Channel():
		require.Equal(t, b.w.ID(), m.Payload)
	case <-time.After(within):
		t.Fatal("the worker did not announce its start")
	}
	inc, _, _ := strings.Cut(b.w.Holder(), "/")
	live := b.keys.WorkerLive(b.w.ID())
	require.Never(t, func() bool { return b.rdb.Get(context.Background(), live).Val() != inc },
		1500*time.Millisecond, 20*time.Millisecond, "liveness lapsed while the worker ran (several timeouts)")
	b.stop()
	ttl := b.rdb.PTTL(context.Background(), live).Val()
	require.Positive(t, ttl, "a graceful stop deleted the liveness key")
	require.LessOrEqual(t, ttl, 400*time.Millisecond, "the key expires within the liveness timeout")
	require.Eventually(t, func() bool { return b.rdb.Exists(context.Background(), live).Val() == 0 }, within, tick)
}
