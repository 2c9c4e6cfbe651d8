package statestore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestEndedNoticeCarriesTheRun: the ended notice carries the run exactly
// as LoadRunView reads it after the write it follows (binary-safe: values
// with newlines, colons, semicolons and invalid UTF-8 come back intact),
// without its outputs, however large they are, and only the run id when
// the run is too large to carry.
func TestEndedNoticeCarriesTheRun(t *testing.T) {
	t.Parallel()
	ctx, rdb, k := endedSetup(t)
	sub := rdb.Subscribe(ctx, k.EndedChannel())
	t.Cleanup(func() { _ = sub.Close() })
	_, err := sub.Receive(ctx) // subscribed
	require.NoError(t, err)
	notice := func(run string) string {
		pipe := rdb.Pipeline()
		k.QueueEnded(ctx, pipe, run, true)
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
		m, err := sub.ReceiveMessage(ctx)
		require.NoError(t, err)
		return m.Payload
	}

	odd := "a\nb:c;1:\xff\x00"
	require.NoError(t, rdb.HSet(ctx, k.Run("r1"), "status", "succeeded", "input", odd, "empty", "").Err())
	require.NoError(t, rdb.HSet(ctx, k.Nodes("r1"), "a", `{"s":"succeeded","a":1}`, odd, odd).Err())
	require.NoError(t, rdb.HSet(ctx, k.Outputs("r1"), "a", `"`+strings.Repeat("o", 70<<10)+`"`).Err())
	run, got, err := statestore.ParseEnded(notice("r1"))
	require.NoError(t, err)
	require.Equal(t, "r1", run)
	want, err := k.LoadRunView(ctx, rdb, "r1")
	require.NoError(t, err)
	require.NotNil(t, got, "a small run travels with its notice, its 70 KiB output left behind")
	require.Equal(t, want, *got)
	require.Nil(t, got.Outputs)

	big := make([]any, 0, 600)
	for i := range 300 {
		big = append(big, fmt.Sprintf("n%d", i), "{}")
	}
	require.NoError(t, rdb.HSet(ctx, k.Nodes("r2"), big...).Err())
	require.NoError(t, rdb.HSet(ctx, k.Run("r2"), "status", "failed").Err())
	run, got, err = statestore.ParseEnded(notice("r2"))
	require.NoError(t, err)
	require.Equal(t, "r2", run)
	require.Nil(t, got, "a run of 301 fields is announced by its id alone")

	require.NoError(t, rdb.HSet(ctx, k.Run("r3"), "status", "failed", "error", strings.Repeat("x", 70<<10)).Err())
	run, got, err = statestore.ParseEnded(notice("r3"))
	require.NoError(t, err)
	require.Equal(t, "r3", run)
	require.Nil(t, got, "a notice over 64 KiB carries the id alone")
}

// TestEndedNoticeOnlyWhenHeard: with heardOnly the notice is sent only
// while the channel has a subscriber (Redis's PUBSUB NUMSUB, which counts
// no pattern subscriptions: a pattern subscriber sees what was sent);
// without it, always.
func TestEndedNoticeOnlyWhenHeard(t *testing.T) {
	t.Parallel()
	ctx, rdb, k := endedSetup(t)
	require.NoError(t, rdb.HSet(ctx, k.Run("r1"), "status", "succeeded").Err())
	watch := rdb.PSubscribe(ctx, k.EndedChannel()+"*")
	t.Cleanup(func() { _ = watch.Close() })
	_, err := watch.Receive(ctx) // psubscribed
	require.NoError(t, err)
	send := func(run string, heardOnly bool) {
		pipe := rdb.Pipeline()
		k.QueueEnded(ctx, pipe, run, heardOnly)
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
	}
	send("unheard", true) // nobody subscribed: not sent
	send("always", false) // sent regardless
	m, err := watch.ReceiveMessage(ctx)
	require.NoError(t, err)
	run, _, err := statestore.ParseEnded(m.Payload)
	require.NoError(t, err)
	require.Equal(t, "always", run, "the notice nobody was subscribed for was not sent")

	sub := rdb.Subscribe(ctx, k.EndedChannel())
	t.Cleanup(func() { _ = sub.Close() })
	_, err = sub.Receive(ctx) // subscribed
	require.NoError(t, err)
	send("r1", true)
	m, err = watch.ReceiveMessage(ctx)
	require.NoError(t, err)
	run, got, err := statestore.ParseEnded(m.Payload)
	require.NoError(t, err)
	require.Equal(t, "r1", run, "heard: sent")
	require.NotNil(t, got)
	require.Equal(t, "succeeded", got.Fields["status"])
}

// endedSetup starts a Redis with the store's scripts loaded, and names a
// namespace of its own; ctx ends with the test, at most in a minute.
func endedSetup(t *testing.T) (context.Context, *redis.Client, statestore.Keys) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	rdb := testinfra.StartRedis(t).Client(t)
	require.NoError(t, statestore.LoadScripts(ctx, rdb))
	return ctx, rdb, statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"}
}

// TestParseEndedRefusesMalformedNotices: a notice that is not what
// QueueEnded sends is an error (never a panic), with the id when there is
// one; an id alone is an older sender's notice.
func TestParseEndedRefusesMalformedNotices(t *testing.T) {
	t.Parallel()
	run, st, err := statestore.ParseEnded("r1")
	require.NoError(t, err)
	require.Equal(t, "r1", run)
	require.Nil(t, st)
	for _, msg := range []string{
		"r1\n", "r1\nx;", "r1\n1;", "r1\n1;1:a", "r1\n1;1:a1:", "r1\n1;5:a1:b0;0;", "r1\n-1;0;0;",
		"r1\n0;0;0;junk", "r1\n99999999999999999999;0;0;", "r1\n1;1:a1:b0;", "r1\n0;0;1;-1:",
	} {
		run, st, err := statestore.ParseEnded(msg)
		require.Error(t, err, "%q", msg)
		require.Equal(t, "r1", run, "%q", msg)
		require.Nil(t, st, "%q", msg)
	}
	run, st, err = statestore.ParseEnded("r1\n1;6:status9:succeeded0;1;1:a2:{}") // an older sender's, with outputs
	require.NoError(t, err)
	require.Equal(t, "r1", run)
	require.Equal(t, statestore.StoredRun{Fields: map[string]string{"status": "succeeded"}, Nodes: map[string]string{}}, *st)
}

// FuzzParseEnded: no input makes ParseEnded panic, and what it accepts
// has the id it was given.
func FuzzParseEnded(f *testing.F) {
	f.Add("r1\n1;6:status9:succeeded0;0;")
	f.Add("r1\n0;0;0;")
	f.Add("r1")
	f.Fuzz(func(t *testing.T, msg string) {
		run, st, err := statestore.ParseEnded(msg)
		id, _, _ := strings.Cut(msg, "\n")
		require.Equal(t, id, run)
		if err != nil {
			require.Nil(t, st)
		}
	})
}
