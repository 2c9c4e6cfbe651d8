// run.js: one run, live. The snapshot and updates come from the run's SSE
// feed (GET /runs/{id}/events, reconnecting with Last-Event-ID); fan-out
// nodes' instance counts are re-read (debounced) when their instances move.

import { get, post, del, q, enc, stream } from "./api.js";
import { h, clear, badge, button, fmtTime, fmtDuration } from "./dom.js";
import { isWriter } from "./auth.js";
import { drawGraph, drawList } from "./graph.js";
import { drawTimeline } from "./timeline.js";
import { nodePanel } from "./panel.js";

const LIST_OVER = 3000; // nodes: above this the run page shows a list, not a graph

export function runView(root, id) {
  let run = null;
  let graph = null;
  let panel = null;
  let feed = null;
  let refetch = null;
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

  let index = null; // node id → node of the current run object
  const byId = () => {
    if (!index || index.run !== run) index = { run, map: new Map(run.nodes.map((n) => [n.id, n])) };
    return index.map;
  };
  const select = (nodeId) => {
    const t0 = performance.now();
    graph?.select(nodeId);
    panel?.destroy();
    panel = nodePanel(side, id, run, nodeId, reload);
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
    renderHead();
    if (run.nodes.length > LIST_OVER) {
      graph = drawList(canvas, run.nodes, { onSelect: select });
    } else {
      const layout = await get(`/workflows/${enc(run.workflow)}/layout` + q({ version: run.version }));
      const nodes = byId();
      graph = drawGraph(canvas, layout, layout.nodes.map((p) => nodes.get(p.id)), { onSelect: select });
    }
    drawTimeline(timeline, run);
    performance.mark("braid:graph-drawn"); // read by the UI bench (e2e/uibench_test.go)
    feed = stream(`/runs/${enc(id)}/events`, {
      onEvent: (type, data) => (type === "snapshot" ? applySnapshot(data) : applyUpdate(data)),
      onState: (s) => {
        status.textContent = s === "open" ? "● live" : s === "reconnecting" ? "reconnecting…" : s;
        status.className = `feed ${s === "open" ? "live" : "down"}`;
      },
    });
  }

  function applySnapshot(r) {
    run = r;
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
      n.state = c.state;
      if (c.attempt) n.attempt = c.attempt;
      if (c.worker) n.worker = c.worker;
      if (c.state === "running" && c.at) n.started_at = c.at;
      if (["succeeded", "failed", "cancelled", "skipped"].includes(c.state) && c.at) n.finished_at = c.at;
      if (c.state === "queued" && c.at) n.queued_at = c.at;
      graph.update(n);
    }
    run.seq = ev.seq;
    if (ev.run_status && ev.run_status !== run.status) {
      run.status = ev.run_status;
      if (["succeeded", "failed", "cancelled"].includes(run.status)) {
        performance.mark("braid:run-ended"); // read by the UI bench (e2e/uibench_test.go)
        scheduleReload(0); // final durations, errors and outputs
      }
    }
    if (fanout) scheduleReload(300); // instance counts
    paintLater();
  }

  // paintLater redraws the header and the panel at most once per frame,
  // and the timeline (the costly part) at most every 2 s while events
  // stream in: node colours change at once (graph.update).
  let painting = false;
  let timelineTimer = null;
  let lastTimeline = 0;
  function paintLater() {
    if (painting) return;
    painting = true;
    requestAnimationFrame(() => {
      painting = false;
      if (!alive) return;
      renderHead();
      panel?.refresh(run);
      timelineLater();
    });
  }

  function timelineLater() {
    if (timelineTimer) return;
    const ended = ["succeeded", "failed", "cancelled"].includes(run.status);
    const wait = ended ? 0 : Math.max(0, 2000 - (performance.now() - lastTimeline));
    timelineTimer = setTimeout(() => {
      timelineTimer = null;
      lastTimeline = performance.now();
      if (alive) drawTimeline(timeline, run);
    }, wait);
  }

  // scheduleReload re-reads the run (instance counts, durations, errors) at
  // most once per wait.
  function scheduleReload(wait) {
    if (refetch) return;
    refetch = setTimeout(() => { refetch = null; reload(); }, wait);
  }

  async function reload() {
    if (!alive) return;
    try {
      applySnapshot(await get(`/runs/${enc(id)}`));
    } catch { /* the feed shows the connection state */ }
  }

  // askDelete holds the question Delete… asks; it outlives the head's
  // re-renders, so a live update does not take the question away.
  const askDelete = h("div.ask#run-delete");
  const removeRun = () => clear(askDelete,
    h("p", "Delete this run with its outputs and logs? This cannot be undone."),
    h("div.buttons",
      button("Delete", async () => {
        try { await del(`/runs/${enc(id)}`); location.hash = "#/"; } catch (err) { clear(askDelete, h("p.error", err.message)); }
      }, "small danger run-delete-confirm"),
      button("Keep", () => clear(askDelete), "small")));

  let headKey = "";
  function renderHead() {
    const r = run;
    const key = JSON.stringify([r.status, r.paused, r.error, r.duration_ms, r.started_at, r.seq > 0 && Math.floor(Date.now() / 1000)]);
    if (key === headKey) return;
    headKey = key;
    const terminal = ["succeeded", "failed", "cancelled"].includes(r.status);
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
        h("dt", "Duration"), h("dd", fmtDuration(r.duration_ms ?? (r.started_at ? Date.now() - Date.parse(r.started_at) : null))),
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
      clearTimeout(timelineTimer);
    },
  };
}
