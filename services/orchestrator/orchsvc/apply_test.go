package orchsvc

import (
	"testing"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/braidhq/braid/services/orchestrator/core"
	"github.com/stretchr/testify/require"
)

func testPlan(t *testing.T, def string) *core.Plan {
	t.Helper()
	d, err := dag.Parse([]byte(def))
	require.NoError(t, err)
	g, err := dag.Compile(d)
	require.NoError(t, err)
	p, err := core.NewPlan(g)
	require.NoError(t, err)
	return p
}

// A reconcile is built from the claims gather read before the batch: an
// attempt that entered flight after the read counts as held, never lost.
func TestReconcileEventTakesUnreadClaimsAsHeld(t *testing.T) {
	t.Parallel()
	p := testPlan(t, `{"name":"wf","nodes":[{"id":"a","handler":"noop"},{"id":"b","handler":"noop"},{"id":"c","handler":"noop"}]}`)
	r, err := core.NewRun("r1", 1, p, nil, 1000)
	require.NoError(t, err)
	r.Apply(core.Start{Now: 1000}, &core.Effects{})
	att := func(node string) statestore.Attempt { return statestore.Attempt{Run: "r1", Node: node, Attempt: 1} }
	reads := &statestore.ClaimReads{
		Attempts: []statestore.Attempt{att("a"), att("b")},
		Facts: []statestore.ClaimFact{{State: statestore.ClaimNone},
			{State: statestore.ClaimOrphaned, Holder: records.Holder{Worker: "w", Incarnation: "i1"}}},
	}
	s := &Service{}
	g := &runBatch{run: "r1", o: &owned{run: r}, facts: facts{claims: reads}}
	ev := s.reconcileEvent(g, 5000, false)
	a, b, c := r.Index("a"), r.Index("b"), r.Index("c")
	require.False(t, ev.Claimed[a], "read: no claim")
	require.Equal(t, "w", ev.Orphaned[b].Worker, "read: held by a gone incarnation")
	require.True(t, ev.Claimed[c], "not read: counts as held")
	require.False(t, ev.Slot, "a running run takes no slot")
}

// slotRequest asks for a slot exactly where the core will need the answer.
func TestSlotRequestOnlyWhereAdmissionDecides(t *testing.T) {
	t.Parallel()
	capped := testPlan(t, `{"name":"wf","concurrency":1,"nodes":[{"id":"a","handler":"noop"}]}`)
	free := testPlan(t, `{"name":"wf","nodes":[{"id":"a","handler":"noop"}]}`)
	start := func(p *core.Plan) inbound {
		return inbound{start: &eventsv1.RunStartRequested{RunId: "r1", RequestedAtMs: 900}, plan: p, ev: core.Start{Now: 1000}}
	}
	_, limit, score, ok := slotRequest(&runBatch{o: &owned{}, events: []inbound{start(capped)}}, false)
	require.True(t, ok, "a new run of a capped workflow")
	require.Equal(t, 1, limit)
	require.Equal(t, int64(900), score, "queued by its request time")
	_, _, _, ok = slotRequest(&runBatch{o: &owned{}, events: []inbound{start(free)}}, false)
	require.False(t, ok, "no cap, no slot")

	r, err := core.NewRun("r1", 1, capped, nil, 900)
	require.NoError(t, err)
	r.Apply(core.Start{Now: 1000, NoSlot: true}, &core.Effects{})
	require.True(t, r.Held)
	held := &runBatch{o: &owned{run: r}, events: []inbound{{reconcile: true, ev: core.Reconcile{Now: 2000}}}}
	_, _, score, ok = slotRequest(held, true)
	require.True(t, ok, "a held run being reconciled asks again")
	require.Equal(t, int64(900), score)
	_, _, _, ok = slotRequest(held, false)
	require.False(t, ok, "a held run with no reconcile waits")

	r.Apply(core.Control{Now: 3000, Action: core.ControlCancel}, &core.Effects{})
	require.True(t, r.Status.Terminal())
	retry := &runBatch{o: &owned{run: r}, events: []inbound{{ev: core.Control{Now: 4000, Action: core.ControlRetry}}}}
	_, _, score, ok = slotRequest(retry, false)
	require.True(t, ok, "a retry reopening a finished capped run")
	require.Equal(t, int64(4000), score, "queued by the retry's time")
}
