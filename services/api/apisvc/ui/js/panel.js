// panel.js: the node panel: attempt n of max, timings, worker, idempotency
// key, waiting reason, error, earlier attempts, output (on demand), live
// log lines, fan-out instances (paged) and the node's actions.

import { get, post, q, enc, stream } from "./api.js";
import { h, clear, badge, button, fmtTime, fmtDuration } from "./dom.js";
import { isWriter } from "./auth.js";

export function nodePanel(el, runId, run, nodeId, reload) {
  let logFeed = null;
  let alive = true;
  const logs = h("pre.logs#node-logs");
  const out = h("div#node-output");
  const inst = h("div#node-instances");
  let lastKey = "";

  const base = `/runs/${enc(runId)}/tasks/${enc(nodeId)}`;

  function render(r) {
    const n = r.nodes.find((x) => x.id === nodeId);
    if (!n) return clear(el, h("p.muted", `No node ${nodeId}.`));
    const key = JSON.stringify([n.state, n.attempt, n.error, n.waiting_reason, n.started_at, n.finished_at, n.instances, (n.past_attempts || []).length]);
    if (key === lastKey) return;
    lastKey = key;
    const ctl = (verb, label, cls = "") => button(label, async () => {
      try { await post(`${base}/${verb}`); reload(); } catch (err) { alert(err.message); }
    }, `small ${cls} act-${verb}`);
    const waiting = n.handler === "approval" && ["queued", "running"].includes(n.state);
    clear(el,
      h("div.section-head", h("h2.mono", nodeId), h("span.spacer"), button("×", () => { destroy(); clear(el); }, "small close")),
      h("p", badge(n.state), " ", h("span#node-attempt", `Attempt ${n.attempt || 0} of ${n.max_attempts || 1}`), n.lost ? h("span.muted", ` · lost ${n.lost}×`) : null),
      h("dl.facts",
        h("dt", "Handler"), h("dd", n.handler),
        h("dt", "Queued"), h("dd", fmtTime(n.queued_at)),
        h("dt", "Started"), h("dd", fmtTime(n.started_at)),
        h("dt", "Time"), h("dd#node-timing", timing(n)),
        n.worker ? [h("dt", "Worker"), h("dd.mono#node-worker", n.worker)] : null,
        n.attempt ? [h("dt", "Idempotency key"), h("dd.mono.small", `${runId}:${nodeId}:0:${n.attempt}`)] : null,
        n.waiting_reason ? [h("dt", "Waiting"), h("dd#node-waiting", n.waiting_reason)] : null,
        n.retry_at ? [h("dt", "Retry at"), h("dd", fmtTime(n.retry_at))] : null),
      n.error ? h("pre.error#node-error", n.error) : null,
      (n.past_attempts || []).length ? h("div", h("h4", "Attempt history"), h("ul.history#node-history", n.past_attempts.map((p) =>
        h("li", `Attempt ${p.attempt}: ${p.outcome}`, p.worker ? ` on ${p.worker}` : "", pastTiming(p), p.error ? h("span.muted", ` — ${p.error}`) : null)))) : null,
      isWriter() ? h("div.buttons",
        waiting ? [ctl("approve", "Approve", "primary"), ctl("reject", "Reject", "danger")] : null,
        button("Rerun from here", async () => {
          try { await post(`/runs/${enc(runId)}/rerun` + q({ from: nodeId })); reload(); } catch (err) { alert(err.message); }
        }, "small act-rerun")) : null,
      n.instances ? inst : [h("h4", "Output"), out],
      h("h4", "Log"), logs);
    if (n.instances) instances(n);
    else output(n);
    followLogs(n);
  }

  async function output(n) {
    if (!["succeeded", "failed"].includes(n.state)) return clear(out, h("p.muted", "No output yet."));
    clear(out, button("Show output", async () => {
      try {
        const t = await get(base);
        clear(out, t.output === undefined ? h("p.muted", "No output.") : h("pre.json", JSON.stringify(t.output, null, 2)));
      } catch (err) { clear(out, h("p.error", err.message)); }
    }, "small show-output"));
  }

  async function instances(n, cursor = "") {
    const c = n.instances;
    const t = await get(base + q({ limit: 20, cursor }));
    const page = t.instance_page || { items: [] };
    clear(inst, h("p", `${c.total} instances: ${c.succeeded} succeeded, ${c.running} running, ${c.pending} pending, ${c.failed} failed, ${c.cancelled} cancelled`),
      h("table.grid.small", h("thead", h("tr.head", ["#", "State", "Wait", "Ran", "Worker"].map((t) => h("th", t)))),
        h("tbody", page.items.map((i) => h("tr", h("td", `#${i.instance}`), h("td", badge(i.state)),
        h("td", { title: "queue wait: queued until a worker started it" }, fmtDuration(i.queue_wait_ms)), h("td", { title: "run time" }, fmtDuration(i.duration_ms)), h("td.mono", i.worker || ""))))),
      page.next_cursor ? button("More…", () => instances(n, page.next_cursor), "small") : null);
  }

  function followLogs(n) {
    const attempt = n.attempt || 1;
    if (logFeed?.attempt === attempt) return;
    logFeed?.close();
    clear(logs);
    if (n.instances) return logs.append("Open an instance's log with the CLI: braid logs RUN NODE --instance N");
    const s = stream(`${base}/logs` + q({ follow: "true", attempt }), {
      onEvent: (type, data) => {
        if (type === "line") logs.append(`${data.stream === "stderr" ? "! " : ""}${data.line}\n`);
        else if (type === "end") logs.append(h("span.muted", `— ${data.reason}\n`));
      },
      stopWhen: (type) => type === "end",
    });
    logFeed = { attempt, close: s.close };
  }

  function destroy() {
    alive = false;
    logFeed?.close();
  }

  render(run);
  return { refresh: (r) => alive && render(r), destroy };
}

// timing says where the current attempt's time went, from the api's
// queue_wait_ms (queued until a worker started it) and duration_ms (run).
function timing(n) {
  const wait = n.queue_wait_ms, ran = n.duration_ms;
  if (wait === undefined || wait === null) return ran === undefined || ran === null ? "" : `Ran ${fmtDuration(ran)}`;
  if (ran === undefined || ran === null) {
    return n.state === "queued" ? `Queued ${fmtDuration(wait)} so far, not started` : `Queued ${fmtDuration(wait)}, never started`;
  }
  return `Queued ${fmtDuration(wait)} before it started, ${["queued", "running"].includes(n.state) ? "running for" : "ran"} ${fmtDuration(ran)}`;
}

// pastTiming is " (queued X, ran Y)" for an earlier attempt with figures.
function pastTiming(p) {
  if (p.queue_wait_ms === undefined) return "";
  return p.duration_ms === undefined ? ` (queued ${fmtDuration(p.queue_wait_ms)}, never started)`
    : ` (queued ${fmtDuration(p.queue_wait_ms)}, ran ${fmtDuration(p.duration_ms)})`;
}
