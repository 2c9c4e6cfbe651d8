// workers.js: live workers, their handlers and pool (consumer group),
// concurrency, tasks in flight and last heartbeat, refreshed every 2 s.

import { get } from "./api.js";
import { h, clear, fmtTime } from "./dom.js";

export function workersView(root) {
  const body = h("tbody#workers");
  let timer = null;
  const load = async () => {
    try {
      const { items } = await get("/workers");
      clear(body, items.length ? items.map((w) => h("tr", { dataset: { worker: w.id } },
        h("td.mono", w.id), h("td", h(`span.badge.s-${w.live ? "running" : "failed"}`, w.live ? "live" : "gone")),
        h("td", w.handlers.join(", ")), h("td.mono", w.group ?? ""), h("td", `${w.in_flight} / ${w.concurrency}`),
        h("td", fmtTime(w.started_at)), h("td", ago(w.seen_at)))) : h("tr", h("td.muted", { colspan: 7 }, "No workers registered.")));
    } catch { /* the banner tells */ }
    timer = setTimeout(load, 2000);
  };
  clear(root, h("section.main", h("h2", "Workers"),
    h("table.grid", h("thead", h("tr", ["Worker", "State", "Handlers", "Pool", "In flight", "Started", "Last heartbeat"].map((t) => h("th", t)))), body)));
  load();
  return { destroy: () => clearTimeout(timer) };
}

function ago(s) {
  const ms = Date.now() - Date.parse(s);
  if (isNaN(ms)) return "";
  return ms < 1500 ? "just now" : `${Math.round(ms / 1000)} s ago`;
}
