package e2e

import (
	"net/http"
	"net/url"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStackWorkflowConcurrency triggers 10 runs of a workflow capped at 2
// active runs: never more than 2 run at once (from the runs' recorded start
// and finish times), and they start in the order they were triggered.
func TestStackWorkflowConcurrency(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	name, _ := c.register([]byte(`{"name":"` + wfName(t, "capped") + `","concurrency":2,
	  "nodes":[{"id":"work","handler":"shell","config":{"command":"sleep 0.4"}}]}`))
	const runs = 10
	ids := make([]string, runs)
	for i := range ids {
		ids[i] = c.start(name, `{}`)
	}
	c.waitRun(ids[runs-1], runTimeout, "last run held by the cap", func(r apiRun) bool {
		return len(r.Nodes) == 1 && r.node(t, "work").WaitingReason == "workflow concurrency: waiting for a free slot"
	})

	type span struct{ start, end time.Time }
	spans := make([]span, runs)
	for i, id := range ids {
		require.Equal(t, "succeeded", c.waitDone(id, 2*runTimeout).Status)
		var r struct {
			Started  time.Time `json:"started_at"`
			Finished time.Time `json:"finished_at"`
		}
		c.call(http.MethodGet, "/runs/"+url.PathEscape(id), nil, http.StatusOK, &r)
		spans[i] = span{r.Started, r.Finished}
	}
	for i := 1; i < runs; i++ {
		require.False(t, spans[i].start.Before(spans[i-1].start),
			"run %d started at %s, before run %d (%s): admission is FIFO", i, spans[i].start, i-1, spans[i-1].start)
	}
	// Sweep the start/finish events in time order (finishes first on ties:
	// a slot freed at t can be taken at t) and track how many overlap.
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, sp := range spans {
		edges = append(edges, edge{sp.start, +1}, edge{sp.end, -1})
	}
	sort.Slice(edges, func(a, b int) bool {
		if edges[a].at.Equal(edges[b].at) {
			return edges[a].delta < edges[b].delta
		}
		return edges[a].at.Before(edges[b].at)
	})
	active, peak := 0, 0
	for _, e := range edges {
		active += e.delta
		peak = max(peak, active)
	}
	require.LessOrEqual(t, peak, 2, "never more than 2 active runs")
	require.Equal(t, 2, peak, "the cap is used, not just respected")
}
