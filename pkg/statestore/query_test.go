package statestore_test

import (
	"context"
	"errors"
	"path"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// queryEnv is a Redis client and a fresh namespace for the query helpers' tests.
type queryEnv struct {
	ctx  context.Context
	rdb  *redis.Client
	keys statestore.Keys
}

func newQueryEnv(t *testing.T) queryEnv {
	t.Helper()
	rdb := testinfra.StartRedis(t).Client(t)
	return queryEnv{ctx: context.Background(), rdb: rdb, keys: statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"}}
}

func members(zs []redis.Z) []string {
	out := make([]string, len(zs))
	for i, z := range zs {
		out[i] = z.Member.(string)
	}
	return out
}

func TestPageSorted(t *testing.T) {
	t.Parallel()
	e := newQueryEnv(t)
	key := e.keys.AllRunShards()[0]
	// r0..r9 with r4 and r5 sharing a score: ties must neither repeat nor skip.
	for i := range 10 {
		score := float64(1000 + i)
		if i == 5 {
			score = 1004
		}
		require.NoError(t, e.rdb.ZAdd(e.ctx, key, redis.Z{Score: score, Member: "r" + strconv.Itoa(i)}).Err())
	}
	for _, desc := range []bool{true, false} {
		var seen []string
		var after *redis.Z
		for range 10 {
			page, err := statestore.PageSorted(e.ctx, e.rdb, key, after, 3, desc)
			require.NoError(t, err)
			seen = append(seen, members(page)...)
			if len(page) < 3 {
				break
			}
			after = &page[len(page)-1]
		}
		require.Len(t, seen, 10, "desc=%v: %v", desc, seen)
		require.ElementsMatch(t, []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9"}, seen)
		if desc {
			require.Equal(t, "r9", seen[0])
		} else {
			require.Equal(t, "r0", seen[0])
		}
	}
}

func TestPageSortedCursorMemberGone(t *testing.T) {
	t.Parallel()
	e := newQueryEnv(t)
	key := e.keys.AllRunShards()[0]
	for i := range 5 {
		require.NoError(t, e.rdb.ZAdd(e.ctx, key, redis.Z{Score: float64(i), Member: "r" + strconv.Itoa(i)}).Err())
	}
	require.NoError(t, e.rdb.ZRem(e.ctx, key, "r3").Err())
	page, err := statestore.PageSorted(e.ctx, e.rdb, key, &redis.Z{Score: 3, Member: "r3"}, 10, true)
	require.NoError(t, err)
	require.Equal(t, []string{"r2", "r1", "r0"}, members(page))
	_, err = statestore.PageSorted(e.ctx, e.rdb, key, nil, 0, true)
	require.Error(t, err)
}

func TestWorkflowDeleteAndRegisterAgain(t *testing.T) {
	t.Parallel()
	e := newQueryEnv(t)
	now := time.UnixMilli(1_700_000_000_000)
	v, err := e.keys.RegisterWorkflow(e.ctx, e.rdb, "wf", []byte(`{"v":1}`), now)
	require.NoError(t, err)
	require.Equal(t, 1, v)
	info, err := e.keys.LiveWorkflow(e.ctx, e.rdb, "wf")
	require.NoError(t, err)
	require.Equal(t, 1, info.Latest)
	require.Equal(t, now.UTC(), info.Created)

	require.NoError(t, e.keys.DeleteWorkflow(e.ctx, e.rdb, "wf", now))
	_, err = e.keys.LiveWorkflow(e.ctx, e.rdb, "wf")
	require.True(t, errors.Is(err, statestore.ErrNotFound), "%v", err)
	require.True(t, errors.Is(e.keys.DeleteWorkflow(e.ctx, e.rdb, "wf", now), statestore.ErrNotFound))
	n, err := e.rdb.ZCard(e.ctx, e.keys.Workflows()).Result()
	require.NoError(t, err)
	require.Zero(t, n, "a deleted workflow leaves the index")
	def, _, err := e.keys.GetWorkflow(e.ctx, e.rdb, "wf", 1)
	require.NoError(t, err, "versions stay for runs that pinned them")
	require.JSONEq(t, `{"v":1}`, string(def))

	v, err = e.keys.RegisterWorkflow(e.ctx, e.rdb, "wf", []byte(`{"v":2}`), now)
	require.NoError(t, err)
	require.Equal(t, 2, v)
	_, err = e.keys.LiveWorkflow(e.ctx, e.rdb, "wf")
	require.NoError(t, err)
	vs, err := e.keys.WorkflowVersionNumbers(e.ctx, e.rdb, "wf")
	require.NoError(t, err)
	require.Equal(t, []int{2, 1}, vs)
	require.True(t, errors.Is(e.keys.DeleteWorkflow(e.ctx, e.rdb, "nope", now), statestore.ErrNotFound))
}

func TestPendingRunLifecycle(t *testing.T) {
	t.Parallel()
	e := newQueryEnv(t)
	p := statestore.PendingRun{ID: "r1", Workflow: "wf", Version: 3, Input: []byte(`{}`), Created: time.UnixMilli(42), RequestedBy: "ci"}
	created, err := e.keys.CreatePendingRun(e.ctx, e.rdb, p)
	require.NoError(t, err)
	require.True(t, created)
	sums, err := e.keys.RunSummaries(e.ctx, e.rdb, "r1", "missing")
	require.NoError(t, err)
	require.Equal(t, "pending", sums[0][records.FieldStatus])
	require.Equal(t, "3", sums[0][records.FieldVersion])
	require.Equal(t, "ci", sums[0][records.FieldRequestedBy])
	require.Empty(t, sums[1])
	for _, key := range []string{e.keys.AllRunShards()[0], e.keys.WorkflowRunShards("wf")[0], e.keys.ActiveRunShards()[0]} {
		s, err := e.rdb.ZScore(e.ctx, key, "r1").Result()
		require.NoError(t, err)
		require.Equal(t, 42.0, s)
	}
	require.NoError(t, e.keys.DeletePendingRun(e.ctx, e.rdb, "r1", "wf"))
	n, err := e.rdb.Exists(e.ctx, e.keys.Run("r1")).Result()
	require.NoError(t, err)
	require.Zero(t, n)
	require.Zero(t, e.rdb.ZCard(e.ctx, e.keys.AllRunShards()[0]).Val())

	created, err = e.keys.CreatePendingRun(e.ctx, e.rdb, p)
	require.NoError(t, err)
	require.True(t, created)
	require.NoError(t, e.rdb.HSet(e.ctx, e.keys.Nodes("r1"), "A", `{"s":"queued"}`).Err())
	err = e.keys.DeletePendingRun(e.ctx, e.rdb, "r1", "wf")
	require.True(t, errors.Is(err, statestore.ErrRunStarted), "%v", err)
	require.Equal(t, int64(1), e.rdb.Exists(e.ctx, e.keys.Run("r1")).Val())
}

// TestPendingRunNeverResetsAStartedRun requests the same run id again (a
// schedule's fire retried) after the orchestrator moved the run on.
func TestPendingRunNeverResetsAStartedRun(t *testing.T) {
	t.Parallel()
	e := newQueryEnv(t)
	p := statestore.PendingRun{ID: "s1.20260101T000000Z", Workflow: "wf", Version: 1, Input: []byte(`{}`), Created: time.UnixMilli(42)}
	created, err := e.keys.CreatePendingRun(e.ctx, e.rdb, p)
	require.NoError(t, err)
	require.True(t, created)
	require.NoError(t, e.rdb.HSet(e.ctx, e.keys.Run(p.ID), records.FieldStatus, "succeeded").Err())
	require.NoError(t, e.rdb.ZRem(e.ctx, e.keys.ActiveRunShards()[0], p.ID).Err())
	p.Created, p.Capped = time.UnixMilli(99), true
	created, err = e.keys.CreatePendingRun(e.ctx, e.rdb, p)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, 42.0, e.rdb.ZScore(e.ctx, e.keys.AllRunShards()[0], p.ID).Val(), "index scores are left alone")
	require.Zero(t, e.rdb.ZCard(e.ctx, e.keys.AdmitQueue("wf")).Val(), "an existing run never joins the admission queue")
	sums, err := e.keys.RunSummaries(e.ctx, e.rdb, p.ID)
	require.NoError(t, err)
	require.Equal(t, "succeeded", sums[0][records.FieldStatus])
	require.Equal(t, "42", sums[0][records.FieldCreated])
	require.Zero(t, e.rdb.ZCard(e.ctx, e.keys.ActiveRunShards()[0]).Val())
	req := p.StartRequest()
	require.Equal(t, p.ID, req.RunId)
	require.Equal(t, int64(99), req.RequestedAtMs)
}

func TestReserveIdempotency(t *testing.T) {
	t.Parallel()
	e := newQueryEnv(t)
	got, fresh, err := e.keys.ReserveIdempotency(e.ctx, e.rdb, "wf", "k:1", "run-a", time.Minute)
	require.NoError(t, err)
	require.True(t, fresh)
	require.Equal(t, "run-a", got)
	got, fresh, err = e.keys.ReserveIdempotency(e.ctx, e.rdb, "wf", "k:1", "run-b", time.Minute)
	require.NoError(t, err)
	require.False(t, fresh)
	require.Equal(t, "run-a", got)
	_, fresh, err = e.keys.ReserveIdempotency(e.ctx, e.rdb, "other", "k:1", "run-c", time.Minute)
	require.NoError(t, err)
	require.True(t, fresh, "keys are scoped by workflow")
	ttl := e.rdb.PTTL(e.ctx, e.keys.Idempotency("wf", "k:1")).Val()
	require.Greater(t, ttl, 50*time.Second)

	require.NoError(t, e.keys.ReleaseIdempotency(e.ctx, e.rdb, "wf", "k:1", "run-b"))
	_, fresh, _ = e.keys.ReserveIdempotency(e.ctx, e.rdb, "wf", "k:1", "run-b", time.Minute)
	require.False(t, fresh, "release with another value keeps the key")
	require.NoError(t, e.keys.ReleaseIdempotency(e.ctx, e.rdb, "wf", "k:1", "run-a"))
	got, fresh, _ = e.keys.ReserveIdempotency(e.ctx, e.rdb, "wf", "k:1", "run-b", time.Minute)
	require.True(t, fresh)
	require.Equal(t, "run-b", got)
}

func TestRunPatternMatchesEveryKeyOfTheRunOnly(t *testing.T) {
	t.Parallel()
	k := statestore.Keys{Namespace: "ns:"}
	p := k.RunPattern("r1")
	for _, key := range []string{k.Run("r1"), k.Nodes("r1"), k.Outputs("r1"), k.Claim("r1", "a", 0, 1)} {
		ok, err := path.Match(p, key)
		require.NoError(t, err)
		require.True(t, ok, "%s does not match %s", key, p)
	}
	for _, key := range []string{k.Run("r10"), k.Run("r"), statestore.Keys{}.Run("r1")} {
		ok, _ := path.Match(p, key)
		require.False(t, ok, "%s matches %s", key, p)
	}
}

// roundTrips counts the commands and pipelines a client sends, leaving
// out those that set up a new pooled connection (HELLO, CLIENT SETINFO).
type roundTrips struct{ n atomic.Int64 }

func (c *roundTrips) count(first redis.Cmder) {
	if name := first.Name(); name != "hello" && name != "client" {
		c.n.Add(1)
	}
}

func (c *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.count(cmd); return next(ctx, cmd) }
}
func (c *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { c.count(cmds[0]); return next(ctx, cmds) }
}

func TestCreatePendingRunIsOneRoundTrip(t *testing.T) {
	t.Parallel()
	e := newQueryEnv(t)
	trips := &roundTrips{}
	e.rdb.AddHook(trips)
	p := statestore.PendingRun{ID: "r1", Workflow: "wf", Version: 1, Input: []byte(`{}`), Created: time.UnixMilli(42)}
	created, err := e.keys.CreatePendingRun(e.ctx, e.rdb, p)
	require.NoError(t, err)
	require.True(t, created)
	require.EqualValues(t, 1, trips.n.Load(), "record and indexes in one pipeline")
	for _, key := range []string{e.keys.AllRunShards()[0], e.keys.WorkflowRunShards("wf")[0], e.keys.ActiveRunShards()[0]} {
		require.Equal(t, 42.0, e.rdb.ZScore(e.ctx, key, "r1").Val(), key)
	}
}

// TestRunStatuses reads many runs' status in one round trip: "" for a run
// that does not exist, an error naming the run for a key Redis cannot read.
func TestRunStatuses(t *testing.T) {
	t.Parallel()
	e := newQueryEnv(t)
	require.NoError(t, e.rdb.HSet(e.ctx, e.keys.Run("r1"), records.FieldStatus, "succeeded", records.FieldWorkflow, "wf").Err())
	require.NoError(t, e.rdb.HSet(e.ctx, e.keys.Run("r2"), records.FieldStatus, "running").Err())
	require.NoError(t, e.rdb.HSet(e.ctx, e.keys.Run("r3"), records.FieldWorkflow, "wf").Err())
	trips := &roundTrips{}
	e.rdb.AddHook(trips)
	got, err := e.keys.RunStatuses(e.ctx, e.rdb, []string{"missing", "r1", "r2", "r3"})
	require.NoError(t, err)
	require.Equal(t, []string{"", "succeeded", "running", ""}, got)
	require.EqualValues(t, 1, trips.n.Load(), "every status in one pipeline")
	got, err = e.keys.RunStatuses(e.ctx, e.rdb, nil)
	require.NoError(t, err)
	require.Empty(t, got)

	require.NoError(t, e.rdb.Set(e.ctx, e.keys.Run("bad"), "not a hash", 0).Err())
	_, err = e.keys.RunStatuses(e.ctx, e.rdb, []string{"missing", "bad", "r1"})
	require.ErrorContains(t, err, "run bad")
	require.ErrorContains(t, err, "WRONGTYPE")
}

// TestCreatePendingRunOfLatest: a run of the live latest version is written
// with the lookup in the same single round trip; one of an older version,
// or of a deleted workflow, is written and removed again (record and index
// entries) with ErrNotLatest and the live metadata.
func TestCreatePendingRunOfLatest(t *testing.T) {
	t.Parallel()
	e := newQueryEnv(t)
	now := time.UnixMilli(1000)
	for range 2 {
		_, err := e.keys.RegisterWorkflow(e.ctx, e.rdb, "wf", []byte(`{}`), now)
		require.NoError(t, err)
	}
	trips := &roundTrips{}
	e.rdb.AddHook(trips)
	p := statestore.PendingRun{ID: "r2", Workflow: "wf", Version: 2, Input: []byte(`{}`), Created: time.UnixMilli(42)}
	created, info, err := e.keys.CreatePendingRunOfLatest(e.ctx, e.rdb, p)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, 2, info.Latest)
	require.EqualValues(t, 1, trips.n.Load(), "lookup, record and indexes in one pipeline")

	stale := statestore.PendingRun{ID: "r1", Workflow: "wf", Version: 1, Input: []byte(`{}`), Created: time.UnixMilli(43)}
	created, info, err = e.keys.CreatePendingRunOfLatest(e.ctx, e.rdb, stale)
	require.ErrorIs(t, err, statestore.ErrNotLatest)
	require.False(t, created)
	require.Equal(t, 2, info.Latest)
	require.Zero(t, e.rdb.Exists(e.ctx, e.keys.Run("r1")).Val(), "the stale record stayed")
	for _, key := range []string{e.keys.AllRunShards()[0], e.keys.WorkflowRunShards("wf")[0], e.keys.ActiveRunShards()[0]} {
		require.Equal(t, []string{"r2"}, e.rdb.ZRange(e.ctx, key, 0, -1).Val(), key)
	}

	require.NoError(t, e.keys.DeleteWorkflow(e.ctx, e.rdb, "wf", now))
	gone := statestore.PendingRun{ID: "r3", Workflow: "wf", Version: 2, Input: []byte(`{}`), Created: time.UnixMilli(44)}
	_, info, err = e.keys.CreatePendingRunOfLatest(e.ctx, e.rdb, gone)
	require.ErrorIs(t, err, statestore.ErrNotLatest)
	require.True(t, info.Deleted)
	require.Zero(t, e.rdb.Exists(e.ctx, e.keys.Run("r3")).Val())
}
