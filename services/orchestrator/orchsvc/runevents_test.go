package orchsvc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/services/orchestrator/core"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// TestRunEventsStayUnderTheRecordLimit cancels a 10,000-node run whose
// nodes carry long ids and reasons: the batch's RunEvents each stay far
// under 1 MiB, carry every change once in order with consecutive seqs
// ending at the run's, and the cancelled status rides on the last.
func TestRunEventsStayUnderTheRecordLimit(t *testing.T) {
	t.Parallel()
	const n = 10000
	nodes := make([]dag.Node, n)
	for i := range nodes {
		nodes[i] = dag.Node{ID: fmt.Sprintf("node-with-a-rather-long-identifier-%05d", i), Handler: "noop"}
	}
	g, err := dag.Compile(&dag.Definition{Name: "wide", Nodes: nodes})
	require.NoError(t, err)
	p, err := core.NewPlan(g)
	require.NoError(t, err)
	r, err := core.NewRun("r1", 1, p, json.RawMessage(`{}`), 1000)
	require.NoError(t, err)
	r.Apply(core.Start{Now: 1000}, &core.Effects{})
	eff := &core.Effects{}
	r.Apply(core.Control{Now: 2000, Action: core.ControlCancel, Reason: strings.Repeat("maintenance window ", 5)}, eff)
	require.Len(t, eff.Changes, n)

	spans := eventSpans(r, eff.Changes)
	require.Greater(t, len(spans), 1, "a batch this large is split")
	r.Seq += uint64(len(spans))
	evs := runEvents(r, eff, spans)
	seen := 0
	for k, ev := range evs {
		require.Less(t, proto.Size(ev), 512<<10, "event %d", k)
		require.Equal(t, r.Seq-uint64(len(evs)-1-k), ev.Seq)
		for _, c := range ev.Nodes {
			require.Equal(t, nodes[seen].ID, c.NodeId, "changes in order, each once")
			seen++
		}
		if k < len(evs)-1 {
			require.Zero(t, ev.RunStatus, "the status rides on the last event only")
		}
	}
	require.Equal(t, n, seen)
	require.Equal(t, records.RunCancelled.Proto(), evs[len(evs)-1].RunStatus)

	small := eventSpans(r, eff.Changes[:3])
	require.Equal(t, []span{{0, 3}}, small)
	require.Equal(t, []span{{0, 0}}, eventSpans(r, nil), "a status-only batch has one empty event")
}
