// Package statestoretest is the state store's conformance suite: the
// rules the services rely on from pkg/statestore's Lua scripts, stated
// once, in code. pkg/statestore runs it against a real redis-server; the
// same scripts on another Redis-protocol server (Valkey, a Redis Cluster,
// a managed service) must pass it before Braid can use that server:
//
//	func TestConformance(t *testing.T) {
//		statestoretest.RunConformance(t, func(t *testing.T) statestoretest.Harness { ... })
//	}
//
// It imports testing, so only tests may import it; the services' binaries
// never do.
package statestoretest

import (
	"context"
	"testing"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// Harness is one store under test. setup builds one per rule, so rules
// run in parallel: they may share a server, not a namespace.
type Harness struct {
	// Client talks to the server. Every command must be bounded by its
	// context (ContextTimeoutEnabled).
	Client redis.UniversalClient
	// Keys has a Namespace that nothing else on the server uses.
	Keys statestore.Keys
}

// env is a rule's view of its harness.
type env struct {
	ctx   context.Context
	rdb   redis.UniversalClient
	keys  statestore.Keys
	store statestore.Store // the bound form the worker's claim path uses
}

// rule is one subtest of the suite.
type rule struct {
	name string
	run  func(t *testing.T, e env)
}

// rules lists the contract, one rule per subtest (the names are what a
// failing run prints).
var rules = []rule{
	{"ClaimGrantedToOneHolder", testClaimGrantedToOneHolder},
	{"ClaimBatchAnswersAsSingleClaims", testClaimBatch},
	{"HeartbeatAndRelease", testHeartbeatAndRelease},
	{"FencedWriteRefusedAfterFenceMoved", testFencedWrite},
	{"WriteRefusedUnlessTheLockIsTheWriters", testWriteNeedsTheLock},
	{"WriteReplayIsIdempotent", testWriteReplay},
	{"LockAcquireFencesAndReads", testLockAcquire},
	{"LockRefreshAndReleaseTouchOnlyTheirValue", testLockRefreshRelease},
	{"AdmissionCountsSlots", testAdmission},
	{"PruneDeletesEveryKeyOfAnEndedRun", testPrune},
}

// RunConformance runs every rule of the contract as a parallel subtest,
// each on its own Harness from setup, after loading the scripts.
func RunConformance(t *testing.T, setup func(t *testing.T) Harness) {
	t.Helper()
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			h := setup(t)
			ctx := context.Background()
			require.NoError(t, statestore.LoadScripts(ctx, h.Client))
			r.run(t, env{ctx: ctx, rdb: h.Client, keys: h.Keys, store: statestore.Store{Keys: h.Keys, RDB: h.Client}})
		})
	}
}
