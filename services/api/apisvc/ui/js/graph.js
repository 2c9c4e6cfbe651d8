// graph.js: the run's DAG as SVG, placed by the api's layered layout
// (GET /workflows/{name}/layout). Nodes change colour in place as events
// arrive (setState): no re-layout, no redraw of the rest. Pan by dragging,
// zoom with the wheel or the buttons, fit, and find a node by id.

import { svg, h } from "./dom.js";
import { awaitsApproval } from "./states.js";

const RING = 2 * Math.PI * 9; // progress ring circumference (r = 9)

export function drawGraph(container, layout, nodes, { onSelect }) {
  const byId = new Map();
  const edges = svg("g", { class: "edges" });
  const boxes = svg("g", { class: "nodes" });
  const view = svg("g", { class: "view" }, edges, boxes);
  const root = svg("svg", { class: "dag", role: "img", "aria-label": "workflow graph" },
    svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 8 8", refX: 8, refY: 4, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
      svg("path", { d: "M0,0 L8,4 L0,8 z", class: "arrowhead" }))),
    view);
  const labels = layout.nodes.length <= 3000;
  const frag = document.createDocumentFragment();
  for (const e of layout.edges) {
    const d = "M" + e.points.map((p) => `${p.x},${p.y}`).join(" L");
    frag.append(svg("path", { d, class: "edge", "marker-end": "url(#arrow)" }));
  }
  edges.append(frag);
  const nf = document.createDocumentFragment();
  layout.nodes.forEach((p, i) => {
    const n = nodes[i];
    const g = svg("g", { class: `node s-${n.state}`, transform: `translate(${p.x},${p.y})`, "data-node": n.id, tabindex: 0 });
    g.append(svg("rect", { width: layout.node_width, height: layout.node_height, rx: 6 }));
    const item = { g, n, p, sub: null, ring: null, state: n.state };
    if (labels) {
      g.append(svg("title", {}, n.id));
      g.append(svg("text", { x: 10, y: 15, class: "label" }, n.id.length > 20 ? n.id.slice(0, 19) + "…" : n.id));
      item.sub = svg("text", { x: 10, y: 29, class: "sub" });
      g.append(item.sub);
      if (n.instances) {
        item.ring = svg("circle", { cx: layout.node_width - 16, cy: layout.node_height / 2, r: 9, class: "ring", "stroke-dasharray": `0 ${RING}` });
        g.append(svg("circle", { cx: layout.node_width - 16, cy: layout.node_height / 2, r: 9, class: "ring-bg" }), item.ring);
      }
    }
    g.addEventListener("click", () => onSelect(n.id));
    g.addEventListener("keydown", (e) => { if (e.key === "Enter") onSelect(n.id); });
    byId.set(n.id, item);
    nf.append(g);
    paint(item);
  });
  boxes.append(nf);
  container.append(root);

  // Pan and zoom: one transform on the view group.
  let t = { x: 0, y: 0, k: 1 };
  let moved = false; // the user panned or zoomed: stop fitting on resize
  const apply = () => view.setAttribute("transform", `translate(${t.x},${t.y}) scale(${t.k})`);
  const zoomAt = (f, cx, cy) => {
    const k = Math.min(4, Math.max(0.02, t.k * f));
    t = { k, x: cx - ((cx - t.x) * k) / t.k, y: cy - ((cy - t.y) * k) / t.k };
    apply();
  };
  root.addEventListener("wheel", (e) => {
    e.preventDefault();
    moved = true;
    const r = root.getBoundingClientRect();
    zoomAt(Math.exp(-e.deltaY * 0.0015), e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });
  let drag = null;
  root.addEventListener("pointerdown", (e) => { if (e.target === root || e.target.closest(".edges")) { drag = { x: e.clientX - t.x, y: e.clientY - t.y }; root.setPointerCapture(e.pointerId); } });
  root.addEventListener("pointermove", (e) => { if (drag) { moved = true; t.x = e.clientX - drag.x; t.y = e.clientY - drag.y; apply(); } });
  root.addEventListener("pointerup", () => { drag = null; });
  const fit = () => {
    const r = root.getBoundingClientRect();
    const k = Math.min(1.5, (r.width - 40) / Math.max(layout.width, 1), (r.height - 40) / Math.max(layout.height, 1));
    t = { k, x: (r.width - layout.width * k) / 2, y: (r.height - layout.height * k) / 2 };
    apply();
  };
  const center = (id) => {
    const it = byId.get(id);
    if (!it) return false;
    const r = root.getBoundingClientRect();
    moved = true;
    t.k = Math.max(t.k, 0.8);
    t.x = r.width / 2 - (it.p.x + layout.node_width / 2) * t.k;
    t.y = r.height / 2 - (it.p.y + layout.node_height / 2) * t.k;
    apply();
    return true;
  };
  requestAnimationFrame(fit);
  // Refit when the panel opens or the window changes, until the user moves.
  new ResizeObserver(() => { if (!moved) fit(); }).observe(root);

  let selected = null;
  return {
    fit: () => { moved = false; fit(); },
    zoom: (f) => { moved = true; const r = root.getBoundingClientRect(); zoomAt(f, r.width / 2, r.height / 2); },
    // find centres and selects the first node whose id contains text.
    find(text) {
      const want = text.trim().toLowerCase();
      if (!want) return null;
      for (const id of byId.keys()) if (id.toLowerCase() === want) return center(id) && id;
      for (const id of byId.keys()) if (id.toLowerCase().includes(want)) return center(id) && id;
      return null;
    },
    select(id) {
      if (selected) byId.get(selected)?.g.classList.remove("selected");
      selected = id;
      byId.get(id)?.g.classList.add("selected");
    },
    // update repaints node n (a run-view node) if it changed.
    update(n) {
      const it = byId.get(n.id);
      if (!it) return;
      it.n = n;
      paint(it);
    },
  };
}

function paint(it) {
  const n = it.n;
  if (it.state !== n.state) { // touch the DOM only on a change: each write costs a style pass
    it.g.classList.remove(`s-${it.state}`);
    it.g.classList.add(`s-${n.state}`);
    it.state = n.state;
  }
  if (!it.sub) return;
  let sub = n.state;
  if (n.instances) {
    const c = n.instances;
    const done = c.succeeded + c.failed + c.cancelled;
    // How many ended, then what needs the eye most: the failed ones (a
    // failed node's "2/2" alone would read as all done), else the running
    // ones. One of them: the line has room for about 24 characters, and the
    // panel lists every count.
    const note = c.failed ? `${c.failed} failed` : c.running ? `${c.running} running` : n.state;
    sub = `${done}/${c.total} · ${note}`;
    if (it.ring) it.ring.setAttribute("stroke-dasharray", `${c.total ? (RING * done) / c.total : 0} ${RING}`);
  } else if (awaitsApproval(n)) {
    sub = "awaiting approval";
  } else if (n.max_attempts > 1 || n.attempt > 1) {
    sub += ` · ${n.attempt}/${n.max_attempts || n.attempt}`;
  }
  if (it.sub.textContent !== sub) it.sub.textContent = sub;
}

// listView is the degraded view for very large runs: a filterable list.
export function drawList(container, nodes, { onSelect }) {
  const filter = h("input#list-filter", { placeholder: "filter by id or state", "aria-label": "filter nodes" });
  const body = h("tbody");
  const rows = new Map();
  const render = () => {
    const f = filter.value.trim().toLowerCase();
    let shown = 0;
    for (const [id, tr] of rows) {
      const on = !f || id.toLowerCase().includes(f) || tr.dataset.state.includes(f);
      tr.hidden = !on || ++shown > 500;
    }
  };
  for (const n of nodes) {
    const tr = h("tr", { dataset: { node: n.id, state: n.state }, onclick: () => onSelect(n.id) },
      h("td.mono", n.id), h("td", h(`span.badge.s-${n.state}`, n.state)), h("td", n.handler));
    rows.set(n.id, tr);
    body.append(tr);
  }
  filter.addEventListener("input", render);
  container.append(h("div.listview", h("p.muted", `${nodes.length} nodes: too many to draw at once; showing a list (first 500 matches).`), filter, h("table.grid", body)));
  render();
  return {
    fit() {}, zoom() {}, select() {},
    find(text) { filter.value = text; render(); return null; },
    update(n) {
      const tr = rows.get(n.id);
      if (!tr || tr.dataset.state === n.state) return;
      tr.dataset.state = n.state;
      tr.children[1].replaceChildren(h(`span.badge.s-${n.state}`, n.state));
    },
  };
}
