// run.js: one run, live. The snapshot and updates come from the run's SSE
// feed (GET /runs/{id}/events, reconnecting with Last-Event-ID); what the
// api derives from states and the clock (waiting reasons, timings, fan-out
// instance counts) is re-read with the run (throttled) when it went stale
// where the page shows it; a one-second tick advances the duration and the
// timeline while the run runs.

import { get, post, del, q, enc, stream } from "./api.js";
import { h, clear, badge, button, fmtTime, fmtDuration } from "./dom.js";
import { isWriter } from "./auth.js";
import { drawGraph, drawList } from "./graph.js";
import { ended } from "./states.js";
import { drawTimeline } from "./timeline.js";
import { nodePanel } from "./panel.js";

const LIST_OVER = 3000; // nodes: above this the run page shows a list, not a graph
const TICK_MS = 1000; // how often the duration and the timeline advance while the run runs

export function runView(root, id) {
  let run = null;
  let graph = null;
  let panel = null;
  let panelNode = null; // the node the panel shows
  let feed = null;
  let refetch = null;
  let ticker = null;
  let alive = true;
  const head = h("div.runhead");
  const canvas = h("div.canvas#graph");
  const side = h("aside.side#node-panel");
  const timeline = h("div#timeline");
  const status = h("span.feed#feed-state", "connecting…");
  const search = h("input#find-node", { type: "search", placeholder: "find node…", "aria-label": "find node",
    onkeydown: (e) => { if (e.key === "Enter") { const found = graph?.find(search.value); if (found) select(found); } } });
  const tools = h("div.tools", search,
    button("Fit", () => graph?.fit(), "small fit"), button("+", () => graph?.zoom(1.25), "small"), button("−", () => graph?.zoom(0.8), "small"), status);
  clear(root, h("div.runpage", head, h("div.split", h("div.graphwrap", tools, canvas), side), h("h3", "Timeline"), timeline));

  // skew is the api's clock minus the browser's, in ms, learnt from the
  // last snapshot of a running run (its started_at plus duration_ms was
  // the api's now): the run's times come from the api's clock, and a
  // browser's clock may be off by minutes.
  let skew = 0;
  const now = () => Date.now() + skew;

  let index = null; // node id → node of the current run object
  const byId = () => {
    if (!index || index.run !== run) index = { run, map: new Map(run.nodes.map((n) => [n.id, n])) };
    return index.map;
  };
  // moved holds the nodes whose state an update changed since the last
  // snapshot: their waiting reasons and timings, and their children's
  // waiting reasons, are stale until the run is re-read.
  let moved = new Set();
  const stale = (nodeId) => moved.has(nodeId) || (byId().get(nodeId)?.depends_on || []).some((p) => moved.has(p));
  const select = (nodeId) => {
    const t0 = performance.now();
    graph?.select(nodeId);
    panel?.destroy();
    panelNode = nodeId;
    panel = nodePanel(side, id, run, nodeId, reload, () => { panel = null; panelNode = null; });
    if (stale(nodeId)) scheduleReload(0);
    performance.measure("braid:select", { start: t0 }); // read by the UI bench
  };

  async function init() {
    try {
      run = await get(`/runs/${enc(id)}`);
    } catch (err) {
      clear(root, h("p.error", err.status === 404 ? `No run ${id}.` : err.message), h("a", { href: "#/" }, "← Dashboard"));
      return;
    }
    if (!alive) return;
    learnClock(run);
    renderHead();
    if (run.nodes.length > LIST_OVER) {
      graph = drawList(canvas, run.nodes, { onSelect: select });
    } else {
      const layout = await get(`/workflows/${enc(run.workflow)}/layout` + q({ version: run.version }));
      if (!alive) return;
      const nodes = byId();
      graph = drawGraph(canvas, layout, layout.nodes.map((p) => nodes.get(p.id)), { onSelect: select });
    }
    drawTimeline(timeline, run, now());
    performance.mark("braid:graph-drawn"); // read by the UI bench (e2e/uibench_test.go)
    ticker = setInterval(tick, TICK_MS);
    feed = stream(`/runs/${enc(id)}/events`, {
      onEvent: (type, data) => {
        for (const later of inFlight) later.push(type === "snapshot" ? null : data);
        if (type === "snapshot") applySnapshot(data);
        else applyUpdate(data);
      },
      onState: (s) => {
        status.textContent = s === "open" ? "● live" : s === "reconnecting" ? "reconnecting…" : s;
        status.className = `feed ${s === "open" ? "live" : "down"}`;
      },
    });
  }

  // learnClock sets skew from snapshot r of a running run.
  function learnClock(r) {
    if (!ended(r.status) && r.started_at && typeof r.duration_ms === "number") {
      skew = Date.parse(r.started_at) + r.duration_ms - Date.now();
    }
  }

  function applySnapshot(r) {
    run = r;
    moved = new Set();
    learnClock(r);
    for (const n of run.nodes) graph.update(n);
    paintLater();
  }

  function applyUpdate(ev) {
    const nodes = byId();
    let fanout = false;
    for (const c of ev.nodes) {
      const n = nodes.get(c.id);
      if (!n) continue;
      if (n.instances) { fanout = true; continue; }
      if (c.state !== n.state) {
        // What the api said of the old state no longer holds.
        delete n.waiting_reason;
        delete n.queue_wait_ms;
        delete n.duration_ms;
        moved.add(n.id);
      }
      n.state = c.state;
      if (c.attempt) n.attempt = c.attempt;
      if (c.worker) n.worker = c.worker;
      if (c.state === "running" && c.at) n.started_at = c.at;
      if (["succeeded", "failed", "cancelled", "skipped"].includes(c.state) && c.at) n.finished_at = c.at;
      if (c.state === "queued" && c.at) n.queued_at = c.at;
      graph.update(n);
    }
    run.seq = ev.seq;
    if (ev.run_status && ev.run_status !== run.status) runStatus(ev);
    if (fanout) scheduleReload(300); // instance counts
    else if (panelNode && stale(panelNode)) scheduleReload(300); // what the panel shows
    paintLater();
  }

  // runStatus applies an update's new run status.
  function runStatus(ev) {
    const was = run.status;
    run.status = ev.run_status;
    delete run.duration_ms; // the api's figure for the old status
    if (ended(run.status)) {
      if (ev.at) run.finished_at = ev.at;
      performance.mark("braid:run-ended"); // read by the UI bench (e2e/uibench_test.go)
      scheduleReload(0); // final durations, errors and outputs
      return;
    }
    delete run.finished_at;
    if (!run.started_at && run.status === "running" && ev.at) run.started_at = ev.at;
    if (ended(was)) scheduleReload(0); // retried or rerun: its nodes were reset
  }

  // paintLater redraws the header and the panel at most once per frame:
  // node colours change at once (graph.update). The timeline (the costly
  // part) is redrawn by the tick while the run runs, and once it ended.
  let painting = false;
  function paintLater() {
    if (painting) return;
    painting = true;
    requestAnimationFrame(() => {
      painting = false;
      if (!alive) return;
      renderHead();
      panel?.refresh(run);
      if (ended(run.status)) drawTimeline(timeline, run, now());
    });
  }

  // tick advances what counts time while the run runs: the duration in the
  // header and the timeline's running bars.
  function tick() {
    if (!alive || ended(run.status)) return;
    showDuration();
    drawTimeline(timeline, run, now());
  }

  // scheduleReload re-reads the run (instance counts, durations, errors,
  // waiting reasons) at most once per wait.
  function scheduleReload(wait) {
    if (refetch) return;
    refetch = setTimeout(() => { refetch = null; reload(); }, wait);
  }

  // inFlight holds, for each re-read under way, the feed's events since it
  // was asked for (null for a snapshot of the feed's own): the answer may
  // predate some of them, which are then applied again on top of it.
  const inFlight = new Set();
  async function reload() {
    if (!alive) return;
    const later = [];
    inFlight.add(later);
    let r;
    try {
      r = await get(`/runs/${enc(id)}`);
    } catch {
      return; // the feed shows the connection state
    } finally {
      inFlight.delete(later);
    }
    if (!alive || later.includes(null)) return; // the feed's snapshot is as new
    applySnapshot(r);
    for (const ev of later) if (ev.seq > r.seq) applyUpdate(ev);
  }

  // askDelete holds the question Delete… asks; it outlives the head's
  // re-renders, so a live update does not take the question away. The
  // duration is set apart from them, every tick.
  const askDelete = h("div.ask#run-delete");
  const durationEl = h("dd#run-duration");
  const removeRun = () => clear(askDelete,
    h("p", "Delete this run with its outputs and logs? This cannot be undone."),
    h("div.buttons",
      button("Delete", async () => {
        try { await del(`/runs/${enc(id)}`); location.hash = "#/"; } catch (err) { clear(askDelete, h("p.error", err.message)); }
      }, "small danger run-delete-confirm"),
      button("Keep", () => clear(askDelete), "small")));

  // showDuration shows the run's duration: the api's final figure once it
  // ended, else how long it has run so far on the api's clock.
  function showDuration() {
    const r = run;
    const since = (a, b) => (a && b ? Date.parse(b) - Date.parse(a) : null);
    const ms = ended(r.status) ? r.duration_ms ?? since(r.started_at, r.finished_at)
      : r.started_at ? now() - Date.parse(r.started_at) : null;
    const text = fmtDuration(ms);
    if (durationEl.textContent !== text) durationEl.textContent = text;
  }

  let headKey = "";
  function renderHead() {
    const r = run;
    const key = JSON.stringify([r.status, r.paused, r.error, r.started_at, r.created_at]);
    if (key !== headKey) {
      headKey = key;
      drawHead(r);
    }
    showDuration();
  }

  function drawHead(r) {
    const terminal = ended(r.status);
    const act = (verb, label, cls = "") => button(label, async () => {
      try { await post(`/runs/${enc(id)}/${verb}`); scheduleReload(200); } catch (err) { alert(err.message); }
    }, `small ${cls} act-${verb}`);
    clear(head,
      h("div.title", h("a", { href: "#/" }, "←"), h("h2", r.workflow, h("span.muted", ` v${r.version}`)), badge(r.status),
        r.paused ? h("span.badge.s-paused", "paused") : null, h("span.spacer"),
        isWriter() && !terminal && act("cancel", "Cancel", "danger"),
        isWriter() && !terminal && (r.paused ? act("resume", "Resume") : act("pause", "Pause")),
        isWriter() && ["failed", "cancelled"].includes(r.status) && act("retry", "Retry failed", "primary"),
        isWriter() && terminal && h("button.small.act-again", { type: "button", title: `A new run of ${r.workflow}'s latest version with this run's input`,
          onclick: async () => {
            try {
              const n = await post(`/workflows/${enc(r.workflow)}/runs`, { input: r.input ?? {} });
              location.hash = `#/runs/${enc(n.run_id)}`;
            } catch (err) { alert(err.message); }
          } }, "Run again"),
        isWriter() && terminal && button("Delete…", removeRun, "small danger act-delete")),
      terminal ? askDelete : null,
      h("dl.facts",
        h("dt", "Run"), h("dd.mono#run-id", r.id),
        h("dt", "Started"), h("dd", fmtTime(r.started_at || r.created_at)),
        h("dt", "Duration"), durationEl,
        h("dt", "By"), h("dd", r.requested_by || ""),
        r.error ? [h("dt", "Error"), h("dd.error", r.error)] : null),
      h("details.input", h("summary", "Input"), h("pre", JSON.stringify(r.input ?? {}, null, 2))));
  }

  init();
  return {
    destroy() {
      alive = false;
      feed?.close();
      panel?.destroy();
      clearTimeout(refetch);
      clearInterval(ticker);
    },
  };
}
