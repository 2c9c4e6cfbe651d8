// timeline.js: a Gantt chart of the run's attempts: for each node a bar for
// the time queued and the time running, and its earlier attempts (retried,
// lost) before them.

import { h, clear, fmtDuration } from "./dom.js";

const MAX_ROWS = 300;

// drawTimeline draws run's timeline in el; running bars end at now (ms
// since the epoch, on the api's clock). The chart keeps its scroll.
export function drawTimeline(el, run, now = Date.now()) {
  const t = (s) => (s ? Date.parse(s) : NaN);
  const rows = run.nodes.filter((n) => n.queued_at || n.started_at).sort((a, b) => t(a.queued_at || a.started_at) - t(b.queued_at || b.started_at));
  if (!rows.length) return clear(el, h("p.muted", "Nothing has run yet."));
  const start = Math.min(...rows.map((n) => Math.min(t(n.queued_at || n.started_at), ...(n.past_attempts || []).map((p) => t(p.queued_at || p.started_at)).filter((x) => !isNaN(x)))));
  const end = Math.max(...rows.map((n) => t(n.finished_at) || now), start + 1);
  const span = end - start;
  const pct = (x) => `${(100 * (x - start)) / span}%`;
  const w = (a, b) => `${Math.max(0.2, (100 * (b - a)) / span)}%`;
  // Positions go through the CSSOM: the UI's CSP forbids style attributes.
  const bar = (cls, a, b, title) => {
    if (isNaN(a)) return null;
    const el = h(`span.bar.${cls}`, { title });
    el.style.left = pct(a);
    el.style.width = w(a, isNaN(b) ? now : b);
    return el;
  };
  const lines = rows.slice(0, MAX_ROWS).map((n) => {
    const bars = [];
    for (const p of n.past_attempts || []) {
      bars.push(bar(`past.o-${p.outcome}`, t(p.started_at || p.queued_at), t(p.ended_at), `attempt ${p.attempt}: ${p.outcome}${p.error ? " — " + p.error : ""}`));
    }
    const q = t(n.queued_at), s = t(n.started_at), f = t(n.finished_at);
    bars.push(bar("wait", q, isNaN(s) ? f : s, `queued ${fmtDuration((isNaN(s) ? now : s) - q)}`));
    bars.push(bar(`run.s-${n.state}`, s, f, `attempt ${n.attempt}: ${n.state} ${fmtDuration((isNaN(f) ? now : f) - s)}`));
    return h("div.tl-row", h("span.tl-name.mono", { title: n.id }, n.id), h("span.tl-track", bars));
  });
  const scroll = el.querySelector(".tl")?.scrollTop || 0;
  clear(el, h("div.tl", h("div.tl-axis", h("span", "0"), h("span", fmtDuration(span))), lines,
    rows.length > MAX_ROWS ? h("p.muted", `${rows.length - MAX_ROWS} more nodes not shown`) : null));
  if (scroll) el.firstChild.scrollTop = scroll;
}
