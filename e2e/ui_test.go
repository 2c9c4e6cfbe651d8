package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/e2e/internal/browser"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The web UI in a real browser (Debian's Chromium, headless, driven by
// chromedp) against the shared stack's api: every test fails on any
// console error, uncaught exception, failed request or unexpected HTTP
// error the page met (browser.Start), and saves screenshots under its temp
// dir (or BRAID_SCREENSHOT_DIR).

const uiWait = 20 * time.Second

// openUI starts a browser, opens the UI and signs in with key.
func openUI(t *testing.T, s *Stack, key string) *browser.Browser {
	t.Helper()
	b := browser.Start(t)
	b.Run(t, chromedp.Navigate(s.URL+"/ui/"), chromedp.WaitVisible("#key", chromedp.ByQuery),
		chromedp.SendKeys("#key", key, chromedp.ByQuery), chromedp.Click("#signin", chromedp.ByQuery),
		chromedp.WaitVisible("#nav", chromedp.ByQuery))
	return b
}

// clickWorkflow clicks the element sub of workflow name's row on the
// dashboard. The dashboard lists the 50 most recently updated workflows
// first and other tests on the shared stack register theirs all the time,
// so while the row is not there it asks for more; and as the list is
// re-rendered when it refreshes, the row is found and clicked in one step
// of the page's script, not in two round trips with a repaint between.
func clickWorkflow(t *testing.T, b *browser.Browser, name, sub string) {
	t.Helper()
	row := fmt.Sprintf(`tr[data-workflow=%q]`, name)
	js := fmt.Sprintf(`(() => { const el = document.querySelector(%q);
	  if (el) { el.click(); return true; }
	  const more = document.querySelector(".more-workflows");
	  if (more && !document.querySelector(%q)) more.click();
	  return false; })()`, row+" "+sub, row)
	b.Run(t, chromedp.Poll(js, nil, chromedp.WithPollingTimeout(uiWait), chromedp.WithPollingInterval(100*time.Millisecond)))
}

// count is the number of elements sel matches.
func count(t *testing.T, b *browser.Browser, sel string) int {
	var n int
	b.Run(t, chromedp.Evaluate(fmt.Sprintf(`document.querySelectorAll(%q).length`, sel), &n))
	return n
}

// waitCount waits until sel matches want elements.
func waitCount(t *testing.T, b *browser.Browser, sel string, want int) {
	t.Helper()
	js := fmt.Sprintf(`document.querySelectorAll(%q).length === %d`, sel, want)
	b.Run(t, chromedp.Poll(js, nil, chromedp.WithPollingTimeout(uiWait), chromedp.WithPollingInterval(50*time.Millisecond)))
}

// TestUIRegisterTriggerWatch: a wrong key is refused with a clear message;
// then, signed in: paste seed 000's definition, see an invalid one's
// problems at their JSON paths, validate and register it, trigger a run
// from the dashboard, watch its four nodes turn green live, and open a
// node's attempt, its queue wait and run time, and its log.
func TestUIRegisterTriggerWatch(t *testing.T) {
	t.Parallel()
	s := shared(t)
	b := browser.Start(t)
	b.Expect(401, "/whoami")
	b.Run(t, chromedp.Navigate(s.URL+"/ui/"), chromedp.WaitVisible("#key", chromedp.ByQuery),
		chromedp.SendKeys("#key", "not-a-key", chromedp.ByQuery), chromedp.Click("#signin", chromedp.ByQuery))
	b.WaitText(t, "#signin-error", "not accepted", uiWait)
	b.Run(t, chromedp.SetValue("#key", s.Key, chromedp.ByQuery), chromedp.Click("#signin", chromedp.ByQuery),
		chromedp.WaitVisible("#nav", chromedp.ByQuery))
	var html string
	b.Run(t, chromedp.OuterHTML("html", &html, chromedp.ByQuery))
	require.NotContains(t, html, s.Key, "the key is in the page")

	name := wfName(t, "ui-seed")
	def := strings.Replace(string(readExample(t, "seed-000-example-workflow.json")), `"example_workflow"`, fmt.Sprintf("%q", name), 1)
	b.Run(t, chromedp.Click(".register-open", chromedp.ByQuery), chromedp.WaitVisible("#definition", chromedp.ByQuery),
		chromedp.SetValue("#definition", `{"name": "bad", "nodes": [{"id": "a", "handler": "shell"}, {"id": "b", "handler": "shell", "depends_on": ["zz"]}]}`, chromedp.ByQuery),
		chromedp.Click("button.validate", chromedp.ByQuery))
	b.WaitText(t, "#validation", `unknown node "zz"`, uiWait)
	b.WaitText(t, "#validation", "$.nodes[1].depends_on[0] (line 1)", uiWait)
	b.Screenshot(t, "problems")
	b.Run(t, chromedp.SetValue("#definition", def, chromedp.ByQuery), chromedp.Click("button.validate", chromedp.ByQuery))
	b.WaitText(t, "#validation", "Valid definition", uiWait)
	b.Run(t, chromedp.Click("button.register", chromedp.ByQuery))
	b.WaitText(t, "#validation", "Registered "+name+" version 1", uiWait)

	clickWorkflow(t, b, name, ".run-workflow")
	b.Run(t, chromedp.WaitVisible(".start-run", chromedp.ByQuery), chromedp.Click(".start-run", chromedp.ByQuery),
		chromedp.WaitVisible("svg.dag", chromedp.ByQuery))
	waitCount(t, b, "g.node.s-succeeded", 4)
	b.WaitText(t, ".runhead .badge", "succeeded", uiWait)
	b.WaitText(t, "#feed-state", "live", uiWait)
	b.Run(t, chromedp.Click(`g.node[data-node="D"]`, chromedp.ByQuery))
	b.WaitText(t, "#node-attempt", "Attempt 1 of 1", uiWait)
	b.WaitText(t, "#node-timing", "Queued ", uiWait)
	b.WaitText(t, "#node-timing", " before it started, ran ", uiWait)
	b.WaitText(t, "#node-worker", "-worker-", uiWait)
	b.WaitText(t, "#node-logs", "D", uiWait)
	b.Run(t, chromedp.Click(".show-output", chromedp.ByQuery))
	b.WaitText(t, "#node-output", `"stdout": "D\n"`, uiWait)
	b.Screenshot(t, "run")
}

// TestUICancelLongRun: a running node is blue; Cancel turns the run and the
// node amber.
func TestUICancelLongRun(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	name, _ := c.register(shellWorkflow(wfName(t, "ui-long"), map[string]string{"slow": "sleep 60"}, nil))
	id := c.start(name, `{}`)
	b := openUI(t, s, s.Key)
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/runs/"+id), chromedp.WaitVisible("svg.dag", chromedp.ByQuery))
	waitCount(t, b, "g.node.s-running", 1)
	b.Screenshot(t, "running")
	b.Run(t, chromedp.Click(".act-cancel", chromedp.ByQuery))
	b.WaitText(t, ".runhead .badge", "cancelled", uiWait)
	waitCount(t, b, "g.node.s-cancelled", 1)
	b.Screenshot(t, "cancelled")
	require.Equal(t, "cancelled", c.run(id).Status)

	// An ended run can be deleted: Delete… asks first, Keep keeps it.
	b.Run(t, chromedp.Click(".act-delete", chromedp.ByQuery))
	b.WaitText(t, "#run-delete", "Delete this run with its outputs and logs?", uiWait)
	b.Screenshot(t, "delete-asked")
	b.Run(t, chromedp.Click("#run-delete button:not(.run-delete-confirm)", chromedp.ByQuery))
	waitCount(t, b, "#run-delete *", 0)
	b.Run(t, chromedp.Click(".act-delete", chromedp.ByQuery), chromedp.WaitVisible(".run-delete-confirm", chromedp.ByQuery),
		chromedp.Click(".run-delete-confirm", chromedp.ByQuery))
	b.Run(t, chromedp.Poll(`location.hash === "#/"`, nil, chromedp.WithPollingTimeout(uiWait), chromedp.WithPollingInterval(50*time.Millisecond)))
	status, _, err := c.raw(http.MethodGet, "/runs/"+id, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, status, "the run was deleted")
}

// TestUIApproveApprovalNode: an approval node waits; Approve in its panel
// lets the run go on to the end.
func TestUIApproveApprovalNode(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	name, _ := c.register([]byte(fmt.Sprintf(`{"name": %q, "nodes": [
		{"id": "gate", "handler": "approval", "config": {"message": "ship it?"}},
		{"id": "nap", "handler": "wait", "config": {"duration": "200ms"}, "depends_on": ["gate"]},
		{"id": "after", "handler": "noop", "depends_on": ["nap"]}]}`, wfName(t, "ui-approve"))))
	id := c.start(name, `{}`)
	b := openUI(t, s, s.Key)
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/runs/"+id), chromedp.WaitVisible(`g.node[data-node="gate"]`, chromedp.ByQuery))
	b.WaitText(t, `g.node[data-node="gate"] text.sub`, "awaiting approval", uiWait)
	b.Run(t, chromedp.Click(`g.node[data-node="gate"]`, chromedp.ByQuery), chromedp.WaitVisible(".act-approve", chromedp.ByQuery))
	// The wait for a decision is the approval node's own time, not a
	// queue wait before a worker "started" it.
	b.WaitText(t, "#node-timing", "Awaiting a decision for ", uiWait)
	var panel string
	b.Run(t, chromedp.Text("#node-panel", &panel, chromedp.ByQuery))
	require.NotContains(t, panel, "Idempotency key", "a built-in node has no handler to be idempotent")
	b.Screenshot(t, "approval")
	b.Run(t, chromedp.Click(".act-approve", chromedp.ByQuery))
	waitCount(t, b, "g.node.s-succeeded", 3)
	b.WaitText(t, ".runhead .badge", "succeeded", uiWait)
	b.WaitText(t, "#node-timing", "Approved after ", uiWait)
	b.WaitText(t, "#node-worker-label", "Decided by", uiWait)
	b.Run(t, chromedp.Click(`g.node[data-node="nap"]`, chromedp.ByQuery))
	b.WaitText(t, "#node-timing", "Waited ", uiWait)
	b.Screenshot(t, "wait-node")
}

// TestUIReadKeyShowsNoMutatingControls: with a read key the dashboard, a
// running run's page and its node panel offer nothing that changes state.
func TestUIReadKeyShowsNoMutatingControls(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	name, _ := c.register(shellWorkflow(wfName(t, "ui-read"), map[string]string{"slow": "sleep 30"}, nil))
	id := c.start(name, `{}`)
	b := openUI(t, s, s.ReadKey)
	b.WaitText(t, "#who", "read-only", uiWait)
	b.Run(t, chromedp.WaitVisible(`tr[data-workflow]`, chromedp.ByQuery))
	// The run list shows how long a running run has run so far.
	b.Run(t, chromedp.Poll(fmt.Sprintf(`(document.querySelector('tr[data-run=%q] td:nth-child(5)')?.textContent ?? "").trim() !== ""`, id),
		nil, chromedp.WithPollingTimeout(uiWait), chromedp.WithPollingInterval(50*time.Millisecond)))
	for _, sel := range []string{".register-open", ".load-examples", ".run-workflow"} {
		require.Zero(t, count(t, b, sel), "a read key sees %s", sel)
	}
	// It can read a definition, not edit or delete it.
	clickWorkflow(t, b, name, ".wf-open")
	b.WaitText(t, "#workflow-definition", `"sleep 30"`, uiWait)
	for _, sel := range []string{".wf-edit", ".wf-delete"} {
		require.Zero(t, count(t, b, sel), "a read key sees %s", sel)
	}
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/runs/"+id), chromedp.WaitVisible(`g.node[data-node="slow"]`, chromedp.ByQuery),
		chromedp.Click(`g.node[data-node="slow"]`, chromedp.ByQuery), chromedp.WaitVisible("#node-attempt", chromedp.ByQuery))
	for _, sel := range []string{".act-cancel", ".act-pause", ".act-retry", ".act-rerun", ".act-approve"} {
		require.Zero(t, count(t, b, sel), "a read key sees %s", sel)
	}
	b.Screenshot(t, "read-only")
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/schedules"), chromedp.WaitVisible("table.schedules", chromedp.ByQuery))
	for _, sel := range []string{".sched-new", ".sched-disable", ".sched-enable", ".sched-delete"} {
		require.Zero(t, count(t, b, sel), "a read key sees %s", sel)
	}
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/workers"), chromedp.WaitVisible("#workers", chromedp.ByQuery))
	for _, w := range s.Workers {
		b.WaitText(t, fmt.Sprintf(`tr[data-worker=%q]`, w), "live", uiWait)
		b.WaitText(t, fmt.Sprintf(`tr[data-worker=%q] td:nth-child(4)`, w), "braid-workers", uiWait) // the built-in set's pool
	}
	b.Screenshot(t, "workers")
	// Sign-out forgets the key: the next visit asks for one again.
	var stored string
	b.Run(t, chromedp.Click("#signout", chromedp.ByQuery), chromedp.WaitVisible("#key", chromedp.ByQuery),
		chromedp.Evaluate(`localStorage.getItem("braid.apiKey") ?? ""`, &stored))
	require.Empty(t, stored, "the key outlived sign-out")
	c.call(http.MethodPost, "/runs/"+id+"/cancel", []byte(`{}`), http.StatusAccepted, nil)
}

// TestUIWorkflowDefinitionEditDelete: a workflow's name opens its
// definition; Edit fills the register form with it, and registering the
// edited text makes version 2, whose panel shows the change while version 1
// stays readable through the version picker; Delete asks first, then the
// workflow leaves the list and the api refuses new runs of it.
func TestUIWorkflowDefinitionEditDelete(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	name, _ := c.register(shellWorkflow(wfName(t, "ui-wf"), map[string]string{"a": "echo one"}, nil))
	b := openUI(t, s, s.Key)
	clickWorkflow(t, b, name, ".wf-open")
	b.WaitText(t, "#workflow-definition", `"echo one"`, uiWait)
	b.WaitText(t, "#workflow-version", "v1 (latest)", uiWait)

	b.Run(t, chromedp.Click(".wf-edit", chromedp.ByQuery), chromedp.WaitVisible("#definition", chromedp.ByQuery))
	var text string
	b.Run(t, chromedp.Value("#definition", &text, chromedp.ByQuery))
	require.Contains(t, text, `"echo one"`, "Edit fills the form with the definition")
	b.Run(t, chromedp.SetValue("#definition", strings.Replace(text, "echo one", "echo two", 1), chromedp.ByQuery),
		chromedp.Click(".register", chromedp.ByQuery))
	b.WaitText(t, "#registered", "Registered "+name+" version 2.", uiWait)

	clickWorkflow(t, b, name, ".wf-open") // now the most recently updated
	b.WaitText(t, "#workflow-version", "v2 (latest)", uiWait)
	b.WaitText(t, "#workflow-definition", `"echo two"`, uiWait)
	b.Run(t, chromedp.SetValue("#workflow-version", "1", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#workflow-version").dispatchEvent(new Event("change"))`, nil))
	b.WaitText(t, "#workflow-definition", `"echo one"`, uiWait)
	b.WaitText(t, "#workflow-version-line", "of 2", uiWait)
	b.Screenshot(t, "workflow")

	row, opt := fmt.Sprintf(`tr[data-workflow=%q]`, name), fmt.Sprintf(`#filter-workflow option[value=%q]`, name)
	require.Equal(t, 1, count(t, b, opt), "the run filter offers the workflow")
	b.Run(t, chromedp.Click(".wf-delete", chromedp.ByQuery))
	b.WaitText(t, "#delete-confirm", "Delete "+name+"?", uiWait)
	require.Equal(t, 1, count(t, b, row), "nothing is deleted before the confirmation")
	b.Run(t, chromedp.Click(".delete-confirm", chromedp.ByQuery))
	waitCount(t, b, row, 0)
	waitCount(t, b, opt, 0)
	c.call(http.MethodPost, "/workflows/"+name+"/runs", []byte(`{}`), http.StatusNotFound, nil)
}

// TestUILargeOutputIsCut: an output too large to show at once is shown
// cut, saying how much there is and how to read it whole.
func TestUILargeOutputIsCut(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	name, _ := c.register([]byte(`{"name": "` + wfName(t, "ui-big-out") + `", "nodes": [
	  {"id": "big", "handler": "shell", "config": {"command": "head -c 300000 /dev/zero | tr '\\0' a", "output": "text"}}]}`))
	id := c.start(name, `{}`)
	require.Equal(t, "succeeded", c.waitDone(id, runTimeout).Status)
	b := openUI(t, s, s.Key)
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/runs/"+id), chromedp.WaitVisible(`g.node[data-node="big"]`, chromedp.ByQuery),
		chromedp.Click(`g.node[data-node="big"]`, chromedp.ByQuery), chromedp.WaitVisible(".show-output", chromedp.ByQuery),
		chromedp.Click(".show-output", chromedp.ByQuery))
	b.WaitText(t, "#node-output .cut", "Showing the first 200,000 characters of 600,0", uiWait) // its stdout and result
	b.WaitText(t, "#node-output .cut", "braid output "+id+" big prints it whole", uiWait)
	var shown int
	b.Run(t, chromedp.Evaluate(`document.querySelector("#node-output-json").textContent.length`, &shown))
	require.Equal(t, 200_002, shown, "the first 200,000 characters and a cut mark")
	b.Screenshot(t, "large-output-cut")
	// The api cut it (output_max): the browser did not download the rest.
	var body int
	b.Run(t, chromedp.Evaluate(`Math.max(0, ...performance.getEntriesByType("resource")
	  .filter((e) => e.name.includes("/tasks/big") && e.name.includes("output_max")).map((e) => e.decodedBodySize))`, &body))
	require.Greater(t, body, 200_000, "the answer holds the head")
	require.Less(t, body, 210_000, "the answer holds the head, not the 600 KB output")
}

// TestUIMoreWorkflows: the dashboard lists the 50 most recently updated
// workflows and "More workflows" shows 50 more. It has a braid dev of its
// own: its 51 workflows would push other tests' off the shared stack's
// first page.
func TestUIMoreWorkflows(t *testing.T) {
	t.Parallel()
	s := startDev(t, t.TempDir(), t.TempDir()+"/.braid", freeDevAddrs(t)).stack
	c := s.client(t)
	var names []string
	for i := range 51 {
		name, _ := c.register(shellWorkflow(wfName(t, fmt.Sprintf("ui-more-%02d", i)), map[string]string{"a": "true"}, nil))
		names = append(names, name)
	}
	b := openUI(t, s, s.Key)
	b.Run(t, chromedp.WaitVisible(fmt.Sprintf(`tr[data-workflow=%q]`, names[50]), chromedp.ByQuery))
	waitCount(t, b, "#workflows tr", 50)
	require.Zero(t, count(t, b, fmt.Sprintf(`tr[data-workflow=%q]`, names[0])), "the 51st most recent is not on the first page")
	clickWorkflow(t, b, names[0], ".wf-open") // after More workflows
	b.WaitText(t, "#workflow-definition", `"true"`, uiWait)
	require.Greater(t, count(t, b, "#workflows tr"), 50)
}

// TestUISchedules: the schedules page creates a schedule (a bad time zone
// is refused with its field named), lists it with the run its fire
// started, disables it (no next fire) and deletes it after asking.
func TestUISchedules(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	name, _ := c.register(shellWorkflow(wfName(t, "ui-sched"), map[string]string{"a": "echo tick"}, nil))
	b := openUI(t, s, s.Key)
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/schedules"), chromedp.WaitVisible(".sched-new", chromedp.ByQuery),
		chromedp.Click(".sched-new", chromedp.ByQuery), chromedp.WaitVisible("#sched-cron", chromedp.ByQuery),
		chromedp.SetValue("#sched-workflow", name, chromedp.ByQuery),
		chromedp.SendKeys("#sched-cron", "@every 1s", chromedp.ByQuery),
		chromedp.SetValue("#sched-timezone", "Nowhere/Bogus", chromedp.ByQuery))
	b.Expect(http.StatusUnprocessableEntity, "/schedules")
	b.Run(t, chromedp.Click(".sched-create", chromedp.ByQuery))
	b.WaitText(t, "#sched-result", "timezone", uiWait)
	b.Run(t, chromedp.SetValue("#sched-timezone", "Europe/Lisbon", chromedp.ByQuery), chromedp.Click(".sched-create", chromedp.ByQuery))
	b.WaitText(t, "#sched-created", "Created; next fire", uiWait)

	row := fmt.Sprintf(`tr[data-workflow=%q]`, name)
	b.WaitText(t, row, "@every 1s", uiWait)
	b.WaitText(t, row, "Europe/Lisbon", uiWait)
	b.WaitText(t, row, "enabled", uiWait)
	// Its fires start runs: the latest fire links to its run.
	b.Run(t, chromedp.WaitVisible(row+` a[href^="#/runs/"]`, chromedp.ByQuery))
	b.Screenshot(t, "schedules")

	b.Run(t, chromedp.Click(row+" .sched-disable", chromedp.ByQuery))
	b.WaitText(t, row, "disabled", uiWait)
	b.Run(t, chromedp.WaitVisible(row+" .sched-enable", chromedp.ByQuery))
	var id string
	b.Run(t, chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).dataset.schedule`, row), &id))
	var got struct {
		Enabled    bool   `json:"enabled"`
		NextFireAt string `json:"next_fire_at"`
	}
	c.call(http.MethodGet, "/schedules/"+id, nil, http.StatusOK, &got)
	require.False(t, got.Enabled)
	require.Empty(t, got.NextFireAt, "a disabled schedule has no next fire")

	b.Run(t, chromedp.Click(row+" .sched-delete", chromedp.ByQuery))
	b.WaitText(t, fmt.Sprintf(`tr[data-confirm=%q]`, id), "Delete this schedule?", uiWait)
	c.call(http.MethodGet, "/schedules/"+id, nil, http.StatusOK, nil)
	b.Run(t, chromedp.Click(fmt.Sprintf(`tr[data-confirm=%q] .delete-confirm`, id), chromedp.ByQuery))
	waitCount(t, b, row, 0)
	c.call(http.MethodGet, "/schedules/"+id, nil, http.StatusNotFound, nil)
}

// TestUIRecoversWhenTheAPIComesBack: with the api killed under an open run
// page, the page says it is reconnecting; once the api is back, the live
// feed reconnects by itself (Last-Event-ID) and the run's later states
// all arrive: every node ends green without a reload.
func TestUIRecoversWhenTheAPIComesBack(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 1})
	c := f.client(t)
	name, _ := c.register(shellWorkflow(wfName(t, "ui-down"), map[string]string{"a": "sleep 1", "b": "sleep 2", "c": "true"},
		map[string][]string{"b": {"a"}, "c": {"b"}}))
	id := c.start(name, `{}`)
	b := openUI(t, f.Stack, f.Key)
	b.ExpectFailed("ERR_CONNECTION_REFUSED")          // while the api is down
	b.ExpectFailed("ERR_INCOMPLETE_CHUNKED_ENCODING") // the live feed cut by the kill
	// A request in flight when the api is killed fails one of these ways,
	// depending on where the kill finds it.
	for _, e := range []string{"ERR_SOCKET_NOT_CONNECTED", "ERR_CONNECTION_RESET", "ERR_EMPTY_RESPONSE"} {
		b.ExpectFailed(e)
	}
	b.Run(t, chromedp.Navigate(f.URL+"/ui/#/runs/"+id), chromedp.WaitVisible("svg.dag", chromedp.ByQuery))
	b.WaitText(t, "#feed-state", "live", uiWait)
	api := f.procs[len(f.procs)-1]
	require.Equal(t, "api", api.name)
	f.kill(api)
	b.Run(t, chromedp.WaitVisible("#banner", chromedp.ByQuery))
	b.WaitText(t, "#banner", "not reachable", uiWait)
	b.WaitText(t, "#feed-state", "reconnecting", uiWait)
	b.Screenshot(t, "api-down")
	f.hold(3*time.Second, api) // the run moves on meanwhile: its states must not be missed
	f.restart(api)
	b.WaitText(t, "#feed-state", "live", uiWait)
	b.Run(t, chromedp.WaitNotVisible("#banner", chromedp.ByQuery))
	waitCount(t, b, "g.node.s-succeeded", 3)
	b.WaitText(t, ".runhead .badge", "succeeded", uiWait)
	b.Screenshot(t, "recovered")
}

// TestUILoadExamplesAndFanOut: "Load examples" registers every example
// workflow shipped with the UI that is not registered yet (other tests on
// the shared stack register some too), and pressed again registers none;
// a fan-out run shows its foreach node as one node with its instance
// count, and its panel pages through the instances.
func TestUILoadExamplesAndFanOut(t *testing.T) {
	t.Parallel()
	s := shared(t)
	examples, err := filepath.Glob(filepath.Join(repoRoot(t), "examples", "*.json"))
	require.NoError(t, err)
	b := openUI(t, s, s.Key)
	b.Run(t, chromedp.Click(".load-examples", chromedp.ByQuery))
	waitCount(t, b, "#examples-result li", len(examples))
	for _, wf := range []string{"order-processing", "example_workflow", "fan-out", "templates-and-inputs"} {
		b.WaitText(t, "#examples-result", " "+wf+" v", uiWait)
	}
	require.Zero(t, count(t, b, "#examples-result li.error"))
	// The dashboard's workflow list shows them once they are registered.
	b.Run(t, chromedp.WaitVisible(`tr[data-workflow="order-processing"]`, chromedp.ByQuery))
	b.Screenshot(t, "examples")

	// Pressed again, every example is kept as it is: no line registered one.
	b.Run(t, chromedp.Click(".load-examples", chromedp.ByQuery))
	waitCount(t, b, "#examples-result li.kept", len(examples))
	b.WaitText(t, "#examples-result", "= order-processing v", uiWait)
	b.WaitText(t, "#examples-result", " already registered", uiWait)
	b.Screenshot(t, "examples-again")

	c := s.client(t)
	id := c.start("fan-out", `{}`)
	c.waitDone(id, runTimeout)
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/runs/"+id), chromedp.WaitVisible(`g.node[data-node="greet"]`, chromedp.ByQuery))
	b.WaitText(t, `g.node[data-node="greet"] text.sub`, "4/4", uiWait)
	b.WaitText(t, `g.node[data-node="shard"] text.sub`, "3/3", uiWait)
	b.Run(t, chromedp.Click(`g.node[data-node="greet"]`, chromedp.ByQuery))
	b.WaitText(t, "#node-instances", "4 instances: 4 succeeded", uiWait)
	b.WaitText(t, "#node-attempt", "4 instances, up to 2 attempts each", uiWait)
	waitCount(t, b, "#node-instances tbody tr", 4)
	b.WaitText(t, "#node-instances thead", "Wait", uiWait)
	require.Zero(t, count(t, b, "#node-worker"), "a fan-out node names no worker of its own: its instances do")
	// The README's picture of the run page: an instance picked.
	b.Run(t, chromedp.Click(`#node-instances tr[data-instance="2"]`, chromedp.ByQuery))
	b.WaitText(t, "#instance-output", `"city": "TOKYO"`, uiWait)
	b.Screenshot(t, "fan-out")
}

// TestUIFanOutInstanceDetail: a fan-out node's panel shows its output (the
// array of its instances' outputs) on demand, and picking an instance row
// shows that instance's attempt, output, error and log; a failed
// instance's error and stderr are there, not only in the CLI.
func TestUIFanOutInstanceDetail(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	name, _ := c.register([]byte(fmt.Sprintf(`{"name": %q, "nodes": [
	  {"id": "greet", "handler": "shell", "foreach": "<< input.cities >>",
	   "config": {"command": "echo \"hello $CITY\"", "env": {"CITY": "<< item >>"}}},
	  {"id": "check", "handler": "shell", "depends_on": ["greet"], "foreach": "<< input.checks >>",
	   "config": {"command": "echo \"checking $WHAT\"; [ \"$WHAT\" = fine ] || { echo \"$WHAT is not fine\" >&2; exit 3; }", "env": {"WHAT": "<< item >>"}}}
	]}`, wfName(t, "ui-fan"))))
	id := c.start(name, `{"cities": ["lisbon", "oslo"], "checks": ["fine", "broken"]}`)
	require.Equal(t, "failed", c.waitDone(id, runTimeout).Status)

	b := openUI(t, s, s.Key)
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/runs/"+id), chromedp.WaitVisible(`g.node[data-node="greet"]`, chromedp.ByQuery),
		chromedp.Click(`g.node[data-node="greet"]`, chromedp.ByQuery))
	b.WaitText(t, "#node-instances", "2 instances: 2 succeeded", uiWait)
	b.WaitText(t, "#node-output .show-output", "array of 2", uiWait)
	b.Run(t, chromedp.Click("#node-output .show-output", chromedp.ByQuery))
	b.WaitText(t, "#node-output-json", `"stdout": "hello lisbon\n"`, uiWait)
	b.WaitText(t, "#node-output-json", `"stdout": "hello oslo\n"`, uiWait)
	b.Run(t, chromedp.Click(`#node-instances tr[data-instance="1"]`, chromedp.ByQuery))
	b.WaitText(t, "#instance-detail", "Instance #1", uiWait)
	b.WaitText(t, "#instance-attempt", "Attempt 1 of 1", uiWait)
	b.WaitText(t, "#instance-output", `"stdout": "hello oslo\n"`, uiWait)
	b.WaitText(t, "#instance-logs", "hello oslo", uiWait)
	waitCount(t, b, "#node-instances tr.selected", 1)

	// The failed node's label counts its failed instances, not only the ended ones.
	b.WaitText(t, `g.node[data-node="check"] text.sub`, "2/2 · 1 failed", uiWait)
	b.WaitText(t, `g.node[data-node="greet"] text.sub`, "2/2 · succeeded", uiWait)
	b.Run(t, chromedp.Click(`g.node[data-node="check"]`, chromedp.ByQuery))
	b.WaitText(t, "#node-instances", "2 instances: 1 succeeded, 0 running, 0 pending, 1 failed", uiWait)
	require.Zero(t, count(t, b, "#instance-detail *"), "a new node's panel has no instance picked")
	// Rows are reachable from the keyboard: focus one and press Enter.
	b.Run(t, chromedp.Focus(`#node-instances tr[data-instance="1"]`, chromedp.ByQuery), chromedp.KeyEvent("\r"))
	b.WaitText(t, "#instance-error", "exit code 3: broken is not fine", uiWait)
	b.WaitText(t, "#instance-logs", "checking broken", uiWait)
	b.WaitText(t, "#instance-logs", "! broken is not fine", uiWait)
	b.Screenshot(t, "fan-out-instance")
	b.Run(t, chromedp.Click("#instance-detail button.close", chromedp.ByQuery))
	waitCount(t, b, "#instance-detail *", 0)
	waitCount(t, b, "#node-instances tr.selected", 0)

	// Run again: a new run with this run's input, whose page opens.
	b.Run(t, chromedp.Click(".act-again", chromedp.ByQuery))
	b.Run(t, chromedp.Poll(fmt.Sprintf(`location.hash.startsWith("#/runs/") && location.hash !== "#/runs/%s"`, id), nil,
		chromedp.WithPollingTimeout(uiWait), chromedp.WithPollingInterval(50*time.Millisecond)))
	var again string
	b.Run(t, chromedp.Evaluate(`decodeURIComponent(location.hash.slice("#/runs/".length))`, &again))
	b.WaitText(t, "#run-id", again, uiWait)
	b.WaitText(t, ".runhead details.input pre", `"broken"`, uiWait)
	require.Equal(t, "failed", c.waitDone(again, runTimeout).Status, "the same input fails the same way")
}

// TestUIListViewAboveThreeThousandNodes: a run too large to draw shows as
// a filterable list that follows the run live (make bench-ui measures
// this page's speed; this test keeps it working in make test).
func TestUIListViewAboveThreeThousandNodes(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	const n = 3100
	name, _ := c.register(faultDefinition(wfName(t, "ui-big"), layeredNoop(n, 100)))
	id := c.start(name, `{}`)
	b := openUI(t, s, s.Key)
	b.Run(t, chromedp.Navigate(s.URL+"/ui/#/runs/"+id), chromedp.WaitVisible(".listview", chromedp.ByQuery))
	require.Zero(t, count(t, b, "svg.dag"), "no SVG of that many nodes")
	waitCount(t, b, ".listview tr", n)
	c.waitDone(id, runTimeout)
	waitCount(t, b, `.listview tr[data-state="succeeded"]`, n)
	b.Run(t, chromedp.SendKeys("#list-filter", "n3099", chromedp.ByQuery))
	waitCount(t, b, ".listview tr:not([hidden])", 1)
	b.Screenshot(t, "list-view")
}
