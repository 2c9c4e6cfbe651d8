package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestUIBench measures the run page in headless Chromium (`make bench-ui`;
// skipped otherwise): for a 1,000-node and a 10,000-node layered run, how
// long after navigation the page has drawn the run (graph, or the list
// view above 3,000 nodes), how long a click on a node takes to open its
// panel, and how far behind the run's end the page shows it ended (live
// events keeping up). One JSON line per repetition on stdout; figures are
// reported, never asserted.
func TestUIBench(t *testing.T) {
	if os.Getenv("BRAID_UI_BENCH") != "1" {
		t.Skip("make bench-ui only (BRAID_UI_BENCH=1): timings are measured, not tested")
	}
	s := shared(t)
	c := s.client(t)
	for _, w := range []struct{ nodes, width int }{{1000, 20}, {10000, 100}} {
		name, _ := c.register(faultDefinition(wfName(t, fmt.Sprintf("uibench-%d", w.nodes)), layeredNoop(w.nodes, w.width)))
		for rep := range 3 {
			benchRunPage(t, s, c, name, w.nodes, rep)
		}
	}
}

// benchRunPage opens a fresh run of name as it starts and prints its figures.
func benchRunPage(t *testing.T, s *Stack, c *apiClient, name string, nodes, rep int) {
	b := openUI(t, s, s.Key)
	id := c.start(name, `{}`)
	sel := "g.node"
	if nodes > 3000 {
		sel = ".listview tr"
	}
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/runs/"+id), chromedp.Reload())
	waitCount(t, b, sel, nodes)
	var drawn float64
	b.Run(t, chromedp.Evaluate(`performance.getEntriesByName("braid:graph-drawn")[0].startTime`, &drawn))
	click := time.Now()
	b.Run(t, chromedp.Click(sel, chromedp.ByQuery), chromedp.WaitVisible("#node-attempt", chromedp.ByQuery))
	driverMs := float64(time.Since(click).Microseconds()) / 1000
	var selectMs float64
	b.Run(t, chromedp.Evaluate(`performance.getEntriesByName("braid:select")[0].duration`, &selectMs))
	r := c.waitDone(id, 2*time.Minute)
	require.Equal(t, "succeeded", r.Status)
	b.WaitText(t, ".runhead .badge", "succeeded", time.Minute)
	var endedAt float64 // epoch ms when the page learnt the run ended
	b.Run(t, chromedp.Evaluate(`performance.timeOrigin + performance.getEntriesByName("braid:run-ended")[0].startTime`, &endedAt))
	finished, err := time.Parse(time.RFC3339Nano, r.Finished)
	require.NoError(t, err)
	line, _ := json.Marshal(map[string]any{
		"bench": "ui_run_page", "nodes": nodes, "rep": rep + 1,
		"drawn_ms": drawn, "select_to_panel_ms": selectMs, "click_round_trip_ms": driverMs,
		"end_shown_after_ms": endedAt - float64(finished.UnixMicro())/1000,
		"method":             "headless Chromium, the run live while measured; drawn_ms: navigation start → graph (or list) on screen (performance mark); select_to_panel_ms: the click handler's own time to open the node panel (performance measure); click_round_trip_ms: chromedp's click → panel visible, driver round trips included; end_shown_after_ms: run finished_at (api) → the page's live feed showed it ended",
	})
	fmt.Println(string(line))
	b.Screenshot(t, fmt.Sprintf("run-%d-nodes", nodes))
}

// layeredNoop is layered's shape (width nodes per layer, two parents each
// in the layer before) with noop nodes and short ids, so that a
// 10,000-node definition stays under the api's 1-MiB limit.
func layeredNoop(n, width int) []faultNode {
	nodes := layered(n, width, 0)
	for i := range nodes {
		nodes[i].Handler, nodes[i].Config = "noop", nil
	}
	return nodes
}
