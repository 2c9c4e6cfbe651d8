package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/e2e/internal/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The run page while its run is live: the duration and the timeline
// advance on their own, the node panel's waiting reason follows the run,
// rerun is offered only once the run ended, and an approval node's panel
// shows its message.

// gateWorkflow registers nap (a wait node of nap) → gate (an approval node
// with message) → after (noop), and returns its name.
func gateWorkflow(t *testing.T, c *apiClient, prefix, nap, message string) string {
	t.Helper()
	name, _ := c.register([]byte(fmt.Sprintf(`{"name": %q, "nodes": [
		{"id": "nap", "handler": "wait", "config": {"duration": %q}},
		{"id": "gate", "handler": "approval", "depends_on": ["nap"], "config": {"message": %q}},
		{"id": "after", "handler": "noop", "depends_on": ["gate"]}]}`, wfName(t, prefix), nap, message)))
	return name
}

// elementText is the text of the element sel matches ("" when none does).
func elementText(t *testing.T, b *browser.Browser, sel string) string {
	t.Helper()
	var s string
	b.Run(t, chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q)?.textContent ?? ""`, sel), &s))
	return s
}

// waitTextChange waits until the text of sel is neither empty nor from,
// and returns it.
func waitTextChange(t *testing.T, b *browser.Browser, sel, from string, within time.Duration) string {
	t.Helper()
	js := fmt.Sprintf(`(() => { const s = document.querySelector(%q)?.textContent ?? ""; return s !== "" && s !== %q; })()`, sel, from)
	b.Run(t, chromedp.Poll(js, nil, chromedp.WithPollingTimeout(within), chromedp.WithPollingInterval(50*time.Millisecond)))
	return elementText(t, b, sel)
}

// uiMs reads a duration as the UI writes it (dom.js fmtDuration: "12 ms",
// "3.40 s", "12.3 s", "2 m 5 s") back into milliseconds.
func uiMs(t *testing.T, text string) float64 {
	t.Helper()
	unit := map[string]float64{"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}
	f := strings.Fields(text)
	require.True(t, len(f) == 2 || len(f) == 4, "duration %q", text)
	var ms float64
	for i := 0; i < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		require.NoError(t, err, "duration %q", text)
		u, ok := unit[f[i+1]]
		require.True(t, ok, "duration %q", text)
		ms += v * u
	}
	return ms
}

// countIntervals makes every page the browser loads from now on count its
// live interval timers in window.__intervals (a Set of their ids).
func countIntervals(t *testing.T, b *browser.Browser) {
	t.Helper()
	b.Run(t, chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(`(() => {
		  const live = new Set(), set = window.setInterval, clear = window.clearInterval;
		  window.__intervals = live;
		  window.setInterval = (...a) => { const id = set(...a); live.add(id); return id; };
		  window.clearInterval = (id) => { live.delete(id); clear(id); };
		})()`).Do(ctx)
		return err
	}))
}

// waitIntervals waits until the page has n live interval timers.
func waitIntervals(t *testing.T, b *browser.Browser, n int) {
	t.Helper()
	b.Run(t, chromedp.Poll(fmt.Sprintf(`window.__intervals.size === %d`, n), nil,
		chromedp.WithPollingTimeout(uiWait), chromedp.WithPollingInterval(50*time.Millisecond)))
}

// TestUIRunPageDurationAdvances: while a run waits for an approval, its
// page's duration and timeline advance by themselves, about once a second,
// with no event to repaint them; once the run ended the duration is the
// api's final figure and stays. The page keeps one interval timer and
// drops it when the user leaves the run.
func TestUIRunPageDurationAdvances(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	id := c.start(gateWorkflow(t, c, "ui-tick", "1s", "go?"), `{}`)
	b := openUI(t, s, s.Key)
	countIntervals(t, b)
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/runs/"+id), chromedp.Reload(), chromedp.WaitVisible(`g.node[data-node="gate"]`, chromedp.ByQuery))
	b.WaitText(t, `g.node[data-node="gate"] text.sub`, "awaiting approval", uiWait)
	waitIntervals(t, b, 1)

	// Two ticks: each shows a longer duration and a longer timeline axis.
	const axis = ".tl-axis span:last-child"
	d0, a0 := waitTextChange(t, b, "#run-duration", "", uiWait), waitTextChange(t, b, axis, "", uiWait)
	d1, a1 := waitTextChange(t, b, "#run-duration", d0, 3*time.Second), waitTextChange(t, b, axis, a0, 3*time.Second)
	d2, a2 := waitTextChange(t, b, "#run-duration", d1, 3*time.Second), waitTextChange(t, b, axis, a1, 3*time.Second)
	require.Less(t, uiMs(t, d0), uiMs(t, d1), "the duration went back")
	require.Less(t, uiMs(t, d1), uiMs(t, d2), "the duration went back")
	require.Less(t, uiMs(t, a0), uiMs(t, a2), "the timeline shrank")
	require.Equal(t, "running", c.run(id).Status, "the run ended while the test watched it run")
	b.Screenshot(t, "ticking")

	c.call(http.MethodPost, "/runs/"+id+"/tasks/gate/approve", []byte(`{}`), http.StatusAccepted, nil)
	b.WaitText(t, ".runhead .badge", "succeeded", uiWait)
	var final struct {
		DurationMs *int64 `json:"duration_ms"`
	}
	c.call(http.MethodGet, "/runs/"+id, nil, http.StatusOK, &final)
	require.NotNil(t, final.DurationMs)
	require.Less(t, *final.DurationMs, int64(60_000))
	// The api's figure, as the page writes one between 1 s and a minute.
	b.Run(t, chromedp.Poll(fmt.Sprintf(`(() => { const ms = %d;
	  return document.querySelector("#run-duration").textContent === (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + " s"; })()`, *final.DurationMs), nil,
		chromedp.WithPollingTimeout(uiWait), chromedp.WithPollingInterval(50*time.Millisecond)))
	// And it stays: over more than a tick (an absence cannot be polled for,
	// so the page waits 1.5 s and reads the text again).
	shown := elementText(t, b, "#run-duration")
	var later string
	b.Run(t, chromedp.Evaluate(`new Promise((done) => setTimeout(() => done(document.querySelector("#run-duration").textContent), 1500))`, &later,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	require.Equal(t, shown, later, "the duration of an ended run changed")
	b.Screenshot(t, "ended")

	// Leaving the run page stops its timer; coming back starts one.
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/"), chromedp.WaitVisible("#workflows", chromedp.ByQuery))
	waitIntervals(t, b, 0)
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/runs/"+id), chromedp.WaitVisible(`g.node[data-node="gate"]`, chromedp.ByQuery))
	waitIntervals(t, b, 1)
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/workers"), chromedp.WaitVisible("#workers", chromedp.ByQuery))
	waitIntervals(t, b, 0)
}

// TestUIRunPageWaitingReasonFollowsTheRun: the node panel's waiting reason
// follows the live run without a reload, as the graph's box does: an
// approval node the panel shows waits for its parent, then awaits approval
// once the parent ended (with the time it has waited, re-read from the api);
// and a node clicked after its state changed says so too.
func TestUIRunPageWaitingReasonFollowsTheRun(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	name := gateWorkflow(t, c, "ui-why", "6s", "go?")
	b := openUI(t, s, s.Key)
	const gateSub = `g.node[data-node="gate"] text.sub`

	// The panel open on gate while nap runs.
	id := c.start(name, `{}`)
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/runs/"+id), chromedp.WaitVisible(`g.node[data-node="gate"]`, chromedp.ByQuery),
		chromedp.Click(`g.node[data-node="gate"]`, chromedp.ByQuery))
	b.WaitText(t, "#node-waiting", "waiting for parents: nap", uiWait)
	b.Screenshot(t, "waiting-for-nap")
	b.WaitText(t, gateSub, "awaiting approval", uiWait)
	b.WaitText(t, "#node-waiting", "awaiting approval", uiWait)
	b.WaitText(t, "#node-timing", "Awaiting a decision for ", uiWait) // an approval node's wait is its own time
	b.WaitText(t, "#node-panel .badge", "queued", uiWait)
	b.Screenshot(t, "awaiting-approval")
	c.call(http.MethodPost, "/runs/"+id+"/tasks/gate/reject", []byte(`{}`), http.StatusAccepted, nil)

	// The panel opened on gate after nap ended.
	id = c.start(name, `{}`)
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/runs/"+id), chromedp.WaitVisible(`g.node[data-node="gate"]`, chromedp.ByQuery))
	b.WaitText(t, gateSub, "pending", uiWait)
	b.WaitText(t, gateSub, "awaiting approval", uiWait)
	b.Run(t, chromedp.Click(`g.node[data-node="gate"]`, chromedp.ByQuery))
	b.WaitText(t, "#node-waiting", "awaiting approval", uiWait)
	b.WaitText(t, "#node-timing", "Awaiting a decision for ", uiWait) // an approval node's wait is its own time
	require.NotContains(t, elementText(t, b, "#node-panel"), "waiting for parents")
	c.call(http.MethodPost, "/runs/"+id+"/tasks/gate/reject", []byte(`{}`), http.StatusAccepted, nil)
}

// TestUIRunPageRerunOnlyOnceEnded: "Rerun from here" is not offered while
// the run runs (the api refuses it then), appears live in the open panel
// when the run ends (on a node whose own state did not change), and goes
// again while the rerun it started runs.
func TestUIRunPageRerunOnlyOnceEnded(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	id := c.start(gateWorkflow(t, c, "ui-rerun", "1s", "go?"), `{}`)
	b := openUI(t, s, s.Key)
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/runs/"+id), chromedp.WaitVisible(`g.node[data-node="gate"]`, chromedp.ByQuery))
	b.WaitText(t, `g.node[data-node="gate"] text.sub`, "awaiting approval", uiWait)
	b.Run(t, chromedp.Click(`g.node[data-node="gate"]`, chromedp.ByQuery), chromedp.WaitVisible(".act-approve", chromedp.ByQuery))
	require.Zero(t, count(t, b, ".act-rerun"), "rerun offered while an approval waits")
	b.Screenshot(t, "running-no-rerun")
	b.Run(t, chromedp.Click(`g.node[data-node="nap"]`, chromedp.ByQuery))
	b.WaitText(t, "#node-panel h2", "nap", uiWait)
	b.WaitText(t, "#node-panel .badge", "succeeded", uiWait)
	require.Zero(t, count(t, b, ".act-rerun"), "rerun offered on a succeeded node of a running run")

	approve := func() {
		c.waitRun(id, runTimeout, "gate awaits approval", func(r apiRun) bool { return r.node(t, "gate").State == "queued" })
		c.call(http.MethodPost, "/runs/"+id+"/tasks/gate/approve", []byte(`{}`), http.StatusAccepted, nil)
		b.WaitText(t, ".runhead .badge", "succeeded", uiWait)
	}
	approve()
	waitCount(t, b, ".act-rerun", 1)
	b.Screenshot(t, "ended-rerun")

	b.Run(t, chromedp.Click(".act-rerun", chromedp.ByQuery))
	b.WaitText(t, ".runhead .badge", "running", uiWait)
	waitCount(t, b, ".act-rerun", 0)
	approve()
	waitCount(t, b, ".act-rerun", 1)
}

// TestUIRunPageApprovalMessage: an approval node's panel shows its message
// (as text: markup in it stays text) beside Approve and Reject while the
// node awaits a decision, and as a row once it was decided.
func TestUIRunPageApprovalMessage(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	const message = "Ship it?\nv2 goes to <b>everyone</b>"
	id := c.start(gateWorkflow(t, c, "ui-message", "1s", message), `{}`)
	b := openUI(t, s, s.Key)
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/runs/"+id), chromedp.WaitVisible(`g.node[data-node="gate"]`, chromedp.ByQuery))
	b.WaitText(t, `g.node[data-node="gate"] text.sub`, "awaiting approval", uiWait)
	b.Run(t, chromedp.Click(`g.node[data-node="gate"]`, chromedp.ByQuery))
	b.WaitText(t, "#node-approval #node-approval-message", message, uiWait)
	require.Equal(t, 1, count(t, b, "#node-approval .act-approve"), "Approve is not beside the message")
	require.Equal(t, 1, count(t, b, "#node-approval .act-reject"), "Reject is not beside the message")
	require.Zero(t, count(t, b, "#node-approval-message *"), "the message was parsed as markup")
	b.Screenshot(t, "approval-message")

	b.Run(t, chromedp.Click(".act-approve", chromedp.ByQuery))
	b.WaitText(t, ".runhead .badge", "succeeded", uiWait)
	waitCount(t, b, "#node-approval", 0)
	b.WaitText(t, "#node-panel dd#node-approval-message", message, uiWait)
	b.Screenshot(t, "approval-message-decided")
}
