package statestore_test

import (
	"context"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/statestore/statestoretest"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/stretchr/testify/require"
)

// TestConformance runs the state store's contract (statestoretest) on a
// real redis-server. The rules share the server, each in its own key
// namespace.
func TestConformance(t *testing.T) {
	srv := testinfra.StartRedis(t)
	rdb := srv.Client(t)
	statestoretest.RunConformance(t, func(t *testing.T) statestoretest.Harness {
		return statestoretest.Harness{Client: rdb, Keys: statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"}}
	})
}

// TestClaimAttemptsReloadsFlushedScripts: a server that lost its script
// cache (a restart, SCRIPT FLUSH) answers NOSCRIPT to the pipelined
// claims; ClaimAttempts loads the script and sends them again within the
// call. (The suite cannot flush: its rules share a server.)
func TestClaimAttemptsReloadsFlushedScripts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putNode(t, "r1", "A", records.NodeRecord{State: records.NodeQueued, Attempt: 1})
	require.NoError(t, b.rdb.ScriptFlush(context.Background()).Err())
	reqs := []statestore.ClaimRequest{{Attempt: statestore.Attempt{Run: "r1", Node: "A", Attempt: 1}, TTL: time.Minute}}
	res, err := b.keys.ClaimAttempts(b.ctx, b.rdb, reqs, "w1")
	require.NoError(t, err)
	require.Equal(t, []statestore.ClaimResult{statestore.ClaimOK}, results(res))
}
