// api.js: every call to the Braid API. The key travels in the X-API-Key
// header only: never in a URL, a cookie or a log line.

import { getKey, signedOut } from "./auth.js";

// ApiError carries the problem+json of a failed call.
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem || {};
  }
}

const listeners = new Set();

// onConnection registers fn(ok) called when the API becomes (un)reachable.
export function onConnection(fn) {
  listeners.add(fn);
}

let reachable = true;
function setReachable(ok) {
  if (ok === reachable) return;
  reachable = ok;
  for (const fn of listeners) fn(ok);
}

// call sends a request and returns the decoded JSON (null for 204).
export async function call(method, path, body, { key = getKey(), headers = {}, signal } = {}) {
  if (signedOut()) throw new ApiError(401, { detail: "signed out" });
  const init = { method, headers: { Accept: "application/json", ...headers }, signal, cache: "no-store" };
  if (key) init.headers["X-API-Key"] = key;
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (err) {
    if (err.name !== "AbortError") setReachable(false);
    throw err;
  }
  setReachable(true);
  if (res.status === 204) return null;
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { detail: text };
  }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

export const get = (path, opts) => call("GET", path, undefined, opts);
export const post = (path, body, opts) => call("POST", path, body === undefined ? {} : body, opts);
export const patch = (path, body, opts) => call("PATCH", path, body, opts);
export const del = (path, opts) => call("DELETE", path, undefined, opts);

// q builds a query string from the defined values of params.
export function q(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") u.set(k, v);
  const s = u.toString();
  return s ? "?" + s : "";
}

// enc escapes one path segment.
export const enc = encodeURIComponent;

// stream reads a server-sent-event stream with fetch (EventSource cannot
// send the key header) and calls onEvent(type, data, id) for each event.
// It reconnects with Last-Event-ID after a drop, with backoff, until
// close() is called or stopWhen(type, data) returns true. onState(state)
// hears "open", "reconnecting" and "closed".
export function stream(path, { onEvent, onState = () => {}, stopWhen = () => false }) {
  const ctl = new AbortController();
  let lastId = null;
  let closed = false;
  let tries = 0;
  const close = () => {
    closed = true;
    ctl.abort();
    onState("closed");
  };
  (async () => {
    while (!closed && !signedOut()) {
      try {
        const headers = { Accept: "text/event-stream", "X-API-Key": getKey() };
        if (lastId !== null) headers["Last-Event-ID"] = lastId;
        const res = await fetch(path, { headers, signal: ctl.signal, cache: "no-store" });
        if (!res.ok) {
          const p = await res.json().catch(() => ({}));
          throw new ApiError(res.status, p);
        }
        setReachable(true);
        onState("open");
        tries = 0;
        const done = await readEvents(res.body, (type, data, id) => {
          if (id) lastId = id;
          onEvent(type, data, id);
          return stopWhen(type, data);
        });
        if (done) {
          close();
          return;
        }
      } catch (err) {
        if (closed || err.name === "AbortError") return;
        if (err instanceof ApiError && err.status >= 400 && err.status < 500) {
          onState("error:" + err.message);
          return;
        }
        setReachable(false);
      }
      if (closed) return;
      onState("reconnecting");
      await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** tries++)));
    }
  })();
  return { close };
}

// readEvents parses an SSE body; it resolves true when handle asked to stop,
// false when the server ended the stream.
async function readEvents(body, handle) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return false;
    buf += value;
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      let type = "message", id = null;
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const i = line.indexOf(":");
        const field = i < 0 ? line : line.slice(0, i);
        const val = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
        if (field === "event") type = val;
        else if (field === "data") data.push(val);
        else if (field === "id") id = val;
      }
      if (!data.length) continue;
      let parsed;
      try {
        parsed = JSON.parse(data.join("\n"));
      } catch {
        parsed = data.join("\n");
      }
      if (handle(type, parsed, id)) {
        reader.cancel().catch(() => {});
        return true;
      }
    }
  }
}
