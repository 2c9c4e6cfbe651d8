package e2e

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
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

// TestStackRetryOfCappedRunWaitsForSlot: a retry reopens a finished run of a
// workflow with `concurrency: 1` while another run holds the only slot: the
// reopened run waits (pending, with the cap as its waiting reason) and runs
// only once the other has finished.
func TestStackRetryOfCappedRunWaitsForSlot(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	dir := t.TempDir()
	name, _ := c.register([]byte(`{"name":"` + wfName(t, "capretry") + `","concurrency":1,
	  "inputs":{"flag":{"type":"string"},"secs":{"type":"string","default":"0"}},
	  "nodes":[{"id":"work","handler":"shell","config":{"command":"test -f << input.flag >> && sleep << input.secs >>"}}]}`))
	missing := filepath.Join(dir, "later")
	failed := c.start(name, `{"flag":"`+missing+`"}`)
	require.Equal(t, "failed", c.waitDone(failed, runTimeout).Status)

	present := filepath.Join(dir, "now")
	require.NoError(t, os.WriteFile(present, nil, 0o600))
	holder := c.start(name, `{"flag":"`+present+`","secs":"3"}`)
	c.waitRun(holder, runTimeout, "the slot holder running", func(r apiRun) bool { return r.Status == "running" })

	require.NoError(t, os.WriteFile(missing, nil, 0o600))
	c.call(http.MethodPost, "/runs/"+failed+"/retry", nil, http.StatusAccepted, nil)
	r := c.waitRun(failed, runTimeout, "the retried run held by the cap", func(r apiRun) bool {
		return r.Status == "pending" && r.node(t, "work").WaitingReason == "workflow concurrency: waiting for a free slot"
	})
	require.Equal(t, "pending", r.node(t, "work").State)
	require.Equal(t, "running", c.run(holder).Status, "the retry was held while the slot holder still ran")

	require.Equal(t, "succeeded", c.waitDone(holder, runTimeout).Status)
	require.Equal(t, "succeeded", c.waitDone(failed, runTimeout).Status)
	var times struct {
		Started  time.Time `json:"started_at"`
		Finished time.Time `json:"finished_at"`
	}
	var held struct {
		Started time.Time `json:"started_at"`
	}
	c.call(http.MethodGet, "/runs/"+url.PathEscape(holder), nil, http.StatusOK, &times)
	c.call(http.MethodGet, "/runs/"+url.PathEscape(failed), nil, http.StatusOK, &held)
	require.False(t, held.Started.Before(times.Finished), "the retried run started at %s, before the slot holder finished at %s", held.Started, times.Finished)
}
