// dom.js: a tiny element builder. Text is always set as text (never parsed
// as HTML), so data from the API cannot inject markup or script.

// h builds an element: h("div.cls#id", {attr: v, onclick: fn}, child, "text", [children]).
export function h(tag, attrs, ...children) {
  const [name, ...parts] = tag.split(/(?=[.#])/);
  const el = document.createElement(name || "div");
  for (const p of parts) {
    if (p.length < 2) continue;
    if (p[0] === ".") el.classList.add(p.slice(1));
    else el.id = p.slice(1);
  }
  if (attrs && (typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// svg builds an SVG element with attributes.
export function svg(tag, attrs, ...children) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  }
  for (const c of children) if (c) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

// clear empties el and appends children.
export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// fmtTime renders an RFC 3339 time as local date and time (or "").
export function fmtTime(s) {
  if (!s) return "";
  const d = new Date(s);
  return isNaN(d) ? s : d.toLocaleString();
}

// fmtDuration renders milliseconds as 12 ms, 3.4 s, 2 m 5 s, 1 h 3 m.
export function fmtDuration(ms) {
  if (ms === undefined || ms === null || ms < 0) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} m ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} m`;
}

// badge is a status pill coloured by state.
export function badge(state) {
  return h(`span.badge.s-${state || "pending"}`, state || "pending");
}

// button builds a button; danger marks destructive actions.
export function button(label, onclick, cls = "") {
  const classes = cls.split(/\s+/).filter(Boolean);
  return h(`button${classes.map((c) => "." + c).join("")}`, { type: "button", onclick }, label);
}
