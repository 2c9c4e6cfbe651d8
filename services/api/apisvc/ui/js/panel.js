// panel.js: the node panel: attempt n of max, timings, worker, idempotency
// key, waiting reason, error, earlier attempts, output (on demand), live
// log lines and the node's actions (an approval node's message next to
// Approve and Reject; rerun once the run ended). A fan-out node shows its instances
// (paged); picking one shows that instance's attempt, error, output and
// live log, and the node's output is the assembled array.

import { get, post, q, enc, stream } from "./api.js";
import { h, clear, badge, button, fmtTime, fmtDuration } from "./dom.js";
import { isWriter } from "./auth.js";
import { ended, awaitsApproval, builtin } from "./states.js";

// nodePanel shows node nodeId of run in el; reload re-reads the run, and
// onClose hears the panel's own close button.
export function nodePanel(el, runId, run, nodeId, reload, onClose = () => {}) {
  let logFeed = null;
  let alive = true;
  const logs = h("pre.logs#node-logs");
  const out = h("div#node-output");
  const inst = h("div#node-instances");
  const instDetail = h("div#instance-detail");
  const instLogs = h("pre.logs#instance-logs");
  let instCursor = "";
  let picked = null;
  let instFeed = null;
  let instSeq = 0; // the latest instances() and showInstance() calls win
  let detailSeq = 0;
  let lastKey = "";
  let timingEl = null;

  const base = `/runs/${enc(runId)}/tasks/${enc(nodeId)}`;

  function render(r) {
    const n = r.nodes.find((x) => x.id === nodeId);
    if (!n) return clear(el, h("p.muted", `No node ${nodeId}.`));
    const runEnded = ended(r.status);
    const awaiting = awaitsApproval(n) && !runEnded;
    // Why it waits: the api's reason; an approval node's own until the
    // api's arrives (the run page drops a reason its state outdated).
    const why = n.waiting_reason || (awaiting ? "awaiting approval" : "");
    const key = JSON.stringify([n.state, n.attempt, n.error, why, n.started_at, n.finished_at, n.instances, (n.past_attempts || []).length, runEnded]);
    if (key === lastKey) {
      timingEl.textContent = timing(n); // re-read figures
      return;
    }
    lastKey = key;
    const ctl = (verb, label, cls = "") => button(label, async () => {
      try { await post(`${base}/${verb}`); reload(); } catch (err) { alert(err.message); }
    }, `small ${cls} act-${verb}`);
    const message = n.approval_message;
    timingEl = h("dd#node-timing", timing(n));
    clear(el,
      h("div.section-head", h("h2.mono", nodeId), h("span.spacer"), button("×", () => { destroy(); clear(el); onClose(); }, "small close")),
      h("p", badge(n.state), " ", n.instances
        ? h("span#node-attempt", `${n.instances.total} instances, up to ${n.max_attempts || 1} attempt${(n.max_attempts || 1) > 1 ? "s" : ""} each`)
        : h("span#node-attempt", `Attempt ${n.attempt || 0} of ${n.max_attempts || 1}`), n.lost ? h("span.muted", ` · lost ${n.lost}×`) : null),
      awaiting ? h("div.approval#node-approval",
        message ? h("p.approval-message#node-approval-message", message) : null,
        isWriter() ? h("div.buttons", ctl("approve", "Approve", "primary"), ctl("reject", "Reject", "danger")) : null) : null,
      h("dl.facts",
        h("dt", "Handler"), h("dd", n.handler),
        h("dt", "Queued"), h("dd", fmtTime(n.queued_at)),
        h("dt", "Started"), h("dd", fmtTime(n.started_at)),
        h("dt", "Time"), timingEl,
        n.worker ? [h("dt#node-worker-label", deciderLabel(n)), h("dd.mono#node-worker", n.worker)] : null,
        n.attempt && !n.instances && !builtin(n) ? [h("dt", "Idempotency key"), h("dd.mono.small", `${runId}:${nodeId}:0:${n.attempt}`)] : null,
        why ? [h("dt", "Waiting"), h("dd#node-waiting", why)] : null,
        message && !awaiting ? [h("dt", "Message"), h("dd#node-approval-message", message)] : null,
        n.retry_at ? [h("dt", "Retry at"), h("dd", fmtTime(n.retry_at))] : null),
      n.error ? h("pre.error#node-error", n.error) : null,
      (n.past_attempts || []).length ? h("div", h("h4", "Attempt history"), h("ul.history#node-history", n.past_attempts.map((p) =>
        h("li", `Attempt ${p.attempt}: ${p.outcome}`, p.worker ? (n.handler === "approval" ? ` by ${p.worker}` : ` on ${p.worker}`) : "", pastTiming(p), p.error ? h("span.muted", ` — ${p.error}`) : null)))) : null,
      // The api reruns only a run that ended.
      isWriter() && runEnded ? h("div.buttons", button("Rerun from here", async () => {
        try { await post(`/runs/${enc(runId)}/rerun` + q({ from: nodeId })); reload(); } catch (err) { alert(err.message); }
      }, "small act-rerun")) : null,
      h("h4", n.instances ? "Output of all instances" : "Output"), out,
      n.instances ? [h("h4", "Instances"), inst, instDetail] : [h("h4", "Log"), logs]);
    output(n);
    if (n.instances) {
      instances(n);
      if (picked !== null) showInstance(picked);
    } else followLogs(n);
  }

  // output offers the node's output once it finished: a fan-out node's is
  // the array of its instances' outputs (read with one instance row, not
  // a page of them).
  async function output(n) {
    if (!["succeeded", "failed"].includes(n.state)) return clear(out, h("p.muted", "No output yet."));
    const label = n.instances ? `Show output (array of ${n.instances.total})` : "Show output";
    clear(out, button(label, async () => {
      try {
        const t = await get(base + q(n.instances ? { limit: 1, output_max: SHOW_MAX } : { output_max: SHOW_MAX }));
        clear(out, jsonOrNone(t, "pre.json#node-output-json", `braid output ${runId} ${nodeId}`));
      } catch (err) { clear(out, h("p.error", err.message)); }
    }, "small show-output"));
  }

  // instances shows the page of instances at instCursor; a row picks its
  // instance.
  async function instances(n) {
    const c = n.instances;
    const seq = ++instSeq;
    let page;
    try {
      // The table shows no outputs: output_max 1 leaves each row's out.
      page = (await get(base + q({ limit: 20, cursor: instCursor, output_max: 1 }))).instance_page || { items: [] };
    } catch (err) { return alive && seq === instSeq && clear(inst, h("p.error", err.message)); }
    if (!alive || seq !== instSeq) return;
    clear(inst, h("p", `${c.total} instances: ${c.succeeded} succeeded, ${c.running} running, ${c.pending} pending, ${c.failed} failed, ${c.cancelled} cancelled`),
      h("table.grid.small.instances", h("thead", h("tr.head", ["#", "State", "Wait", "Ran", "Worker"].map((t) => h("th", t)))),
        h("tbody", page.items.map((i) => h(`tr.pick${i.instance === picked ? ".selected" : ""}`,
          { dataset: { instance: i.instance }, title: "Show this instance", tabindex: 0, onclick: () => pick(i.instance),
            onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); pick(i.instance); } } },
          h("td", `#${i.instance}`), h("td", badge(i.state)),
          h("td", { title: "queue wait: queued until a worker started it" }, fmtDuration(i.queue_wait_ms)), h("td", { title: "run time" }, fmtDuration(i.duration_ms)), h("td.mono", i.worker || ""))))),
      h("div.pager",
        instCursor ? button("First page", () => { instCursor = ""; instances(n); }, "small") : null,
        page.next_cursor ? button("More…", () => { instCursor = page.next_cursor; instances(n); }, "small") : null),
      picked === null ? h("p.muted.small", "Pick an instance for its attempt, error, output and log.") : null);
  }

  function pick(i) {
    picked = i;
    for (const tr of inst.querySelectorAll("tr.pick")) tr.classList.toggle("selected", Number(tr.dataset.instance) === i);
    inst.querySelector("p.muted.small")?.remove();
    showInstance(i);
  }

  function unpick() {
    picked = null;
    instFeed?.close();
    instFeed = null;
    clear(instDetail);
    for (const tr of inst.querySelectorAll("tr.selected")) tr.classList.remove("selected");
  }

  // showInstance shows instance i as the api has it now, and follows the
  // log of its current attempt.
  async function showInstance(i) {
    const seq = ++detailSeq;
    let t;
    try {
      t = await get(base + q({ instance: i, output_max: SHOW_MAX }));
    } catch (err) { return alive && seq === detailSeq && clear(instDetail, h("p.error", err.message)); }
    if (!alive || seq !== detailSeq || picked !== i) return;
    clear(instDetail,
      h("div.section-head", h("h4.mono", `Instance #${i}`), h("span.spacer"), button("×", unpick, "small close")),
      h("p", badge(t.state), " ", h("span#instance-attempt", `Attempt ${t.attempt || 0} of ${t.max_attempts || 1}`), t.lost ? h("span.muted", ` · lost ${t.lost}×`) : null),
      h("dl.facts",
        h("dt", "Time"), h("dd", timing(t)),
        t.worker ? [h("dt", "Worker"), h("dd.mono", t.worker)] : null,
        t.attempt ? [h("dt", "Idempotency key"), h("dd.mono.small", `${runId}:${nodeId}:${i}:${t.attempt}`)] : null),
      t.error ? h("pre.error#instance-error", t.error) : null,
      (t.past_attempts || []).length ? h("ul.history", t.past_attempts.map((p) =>
        h("li", `Attempt ${p.attempt}: ${p.outcome}`, p.worker ? ` on ${p.worker}` : "", pastTiming(p), p.error ? h("span.muted", ` — ${p.error}`) : null))) : null,
      h("h4", "Output"),
      ["succeeded", "failed"].includes(t.state) ? jsonOrNone(t, "pre.json#instance-output", `braid output ${runId} ${nodeId} --instance ${i}`) : h("p.muted", "No output yet."),
      h("h4", "Log"), instLogs);
    const attempt = t.attempt || 1;
    if (instFeed?.instance === i && instFeed.attempt === attempt) return;
    instFeed?.close();
    instFeed = { instance: i, attempt, ...follow(instLogs, `${base}/logs` + q({ follow: "true", attempt, instance: i })) };
  }

  // followLogs follows the log of n's current attempt; a node not
  // dispatched yet has none (the api answers 404 for attempt 1).
  function followLogs(n) {
    const attempt = n.attempt || 0;
    if (logFeed?.attempt === attempt) return;
    logFeed?.close();
    logFeed = null;
    if (!attempt) return clear(logs, h("span.muted", "No log yet: not started."));
    logFeed = { attempt, ...follow(logs, `${base}/logs` + q({ follow: "true", attempt })) };
  }

  function destroy() {
    alive = false;
    logFeed?.close();
    instFeed?.close();
  }

  render(run);
  return { refresh: (r) => alive && render(r), destroy };
}

// follow streams a log's lines into el (emptied first) until its end.
function follow(el, path) {
  clear(el);
  return stream(path, {
    onEvent: (type, data) => {
      if (type === "line") el.append(`${data.stream === "stderr" ? "! " : ""}${data.line}\n`);
      else if (type === "end") el.append(h("span.muted", `— ${data.reason}\n`));
    },
    stopWhen: (type) => type === "end",
  });
}

// SHOW_MAX bounds the bytes of an output the panel asks for and the
// characters it shows: a fan-out node's array can be megabytes, which the
// api then cuts (output_max) and a <pre> would render slowly.
const SHOW_MAX = 200_000;

// jsonOrNone renders task t's output: pretty JSON, or the head of one the
// api cut at SHOW_MAX bytes (pretty JSON longer than SHOW_MAX is cut
// here), saying how to read it whole; "No output." when there is none.
function jsonOrNone(t, tag, cli) {
  const c = t.output_cut;
  if (c) {
    return [h(tag, c.head + "\n…"),
      h("p.muted.small.cut", `Showing the first ${c.head.length.toLocaleString()} characters of ${c.bytes.toLocaleString()} bytes of JSON; ${cli} prints it whole.`)];
  }
  if (t.output === undefined) return h("p.muted", "No output.");
  const text = JSON.stringify(t.output, null, 2);
  if (text.length <= SHOW_MAX) return h(tag, text);
  return [h(tag, text.slice(0, SHOW_MAX) + "\n…"),
    h("p.muted.small.cut", `Showing ${SHOW_MAX.toLocaleString()} of ${text.length.toLocaleString()} characters; ${cli} prints it whole.`)];
}

// timing says where the current attempt's time went, from the api's
// queue_wait_ms (queued until a worker started it) and duration_ms (run).
function timing(n) {
  const wait = n.queue_wait_ms, ran = n.duration_ms;
  const own = builtinTiming(n, ran);
  if (own) return own;
  if (wait === undefined || wait === null) return ran === undefined || ran === null ? "" : `Ran ${fmtDuration(ran)}`;
  if (ran === undefined || ran === null) {
    return n.state === "queued" ? `Queued ${fmtDuration(wait)} so far, not started` : `Queued ${fmtDuration(wait)}, never started`;
  }
  return `Queued ${fmtDuration(wait)} before it started, ${["queued", "running"].includes(n.state) ? "running for" : "ran"} ${fmtDuration(ran)}`;
}

// builtinTiming is timing for the orchestrator's own nodes, which no
// worker runs: the api counts an approval node's wait for a decision, and
// a wait node's sleep, as their run time (queue wait 0), so "queued 0 ms
// before it started, running for" would misread them. "" for other nodes
// and before the figure exists.
function builtinTiming(n, ran) {
  if (ran === undefined || ran === null) return "";
  const d = fmtDuration(ran);
  if (n.handler === "approval") {
    switch (n.state) {
      case "queued": return `Awaiting a decision for ${d}`;
      case "succeeded": return `Approved after ${d}`;
      case "failed": return (n.error || "").startsWith("rejected") ? `Rejected after ${d}` : `No approval after ${d}`;
      case "cancelled": return `Cancelled after ${d} without a decision`;
    }
  }
  if (n.handler === "wait") {
    switch (n.state) {
      case "running": return `Waiting, ${d} so far`;
      case "succeeded": return `Waited ${d}`;
      case "failed": case "cancelled": return `Waited ${d}, then ${n.state}`;
    }
  }
  return "";
}

// deciderLabel names the worker row: an approval node's "worker" is who
// decided it.
function deciderLabel(n) {
  return n.handler === "approval" ? "Decided by" : "Worker";
}

// pastTiming is " (queued X, ran Y)" for an earlier attempt with figures.
// A lost attempt's Y runs until the loss was noticed (a heartbeat timeout
// after its worker died, or the end of an outage of the whole stack), not
// until the worker died: it says so.
function pastTiming(p) {
  if (p.queue_wait_ms === undefined) return "";
  if (p.duration_ms === undefined) return ` (queued ${fmtDuration(p.queue_wait_ms)}, never started)`;
  return p.outcome === "lost" ? ` (queued ${fmtDuration(p.queue_wait_ms)}, lost ${fmtDuration(p.duration_ms)} after it started)`
    : ` (queued ${fmtDuration(p.queue_wait_ms)}, ran ${fmtDuration(p.duration_ms)})`;
}
