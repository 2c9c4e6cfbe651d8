// dashboard.js: workflows, recent runs (filters, cursor paging), register
// a definition (paste or upload → validate → register), a workflow's
// definition by version (edit as a new version, delete), trigger a run
// with a form built from the workflow's inputs, and "load examples".

import { get, post, del, q, enc, ApiError } from "./api.js";
import { h, clear, badge, button, fmtTime, fmtDuration } from "./dom.js";
import { isWriter } from "./auth.js";
import { jsonPositions, locate, lineOf } from "./jsonpos.js";

const PAGE = 50;
const MAX_WORKFLOWS = 500; // the api's largest page
const STAT_ROWS = 25;
const STATS_EVERY = 15000; // ms
const STATUSES = ["pending", "running", "succeeded", "failed", "cancelled"];

export function dashboardView(root, params) {
  const state = { workflow: params.get("workflow") || "", status: params.get("status") || "", cursors: [""], page: 0 };
  const wfBody = h("tbody#workflows");
  const runsBody = h("tbody#runs");
  const wfFilter = h("select#filter-workflow", { "aria-label": "workflow", onchange: () => filter() }, h("option", { value: "" }, "all workflows"));
  const stFilter = h("select#filter-status", { "aria-label": "status", onchange: () => filter() },
    h("option", { value: "" }, "any status"), STATUSES.map((s) => h("option", { value: s }, s)));
  const pager = h("div.pager");
  const wfMore = h("div.pager#workflows-more");
  const side = h("div#side");
  let timer = null;
  let alive = true;

  const filter = () => {
    state.workflow = wfFilter.value;
    state.status = stFilter.value;
    state.cursors = [""];
    state.page = 0;
    loadRuns();
  };

  // Workflows and their run statistics (one /runs query per workflow
  // shown, at most STAT_ROWS of them) refresh every STATS_EVERY; runs every
  // 3 s.
  // The list shows the wfShown most recently updated workflows (50 more
  // per "More workflows", up to the api's page limit).
  let statsAt = 0;
  let wfShown = PAGE;
  async function loadWorkflows() {
    if (Date.now() - statsAt < STATS_EVERY) return;
    statsAt = Date.now();
    const { items, next_cursor } = await get("/workflows" + q({ limit: wfShown }));
    const rows = items.map((wf, i) => workflowRow(wf, i < STAT_ROWS));
    // The filter offers the workflows listed (a deleted one goes), and the
    // one it is set to even when it is not listed.
    const names = items.map((wf) => wf.name);
    if (state.workflow && !names.includes(state.workflow)) names.push(state.workflow);
    clear(wfFilter, h("option", { value: "" }, "all workflows"), names.map((n) => h("option", { value: n }, n)));
    wfFilter.value = state.workflow;
    clear(wfBody, rows.length ? rows : h("tr", h("td.muted", { colspan: 6 }, "No workflows yet. Register one, or load the examples.")));
    clear(wfMore, !next_cursor ? null : wfShown < MAX_WORKFLOWS
      ? button("More workflows", () => { wfShown = Math.min(wfShown + PAGE, MAX_WORKFLOWS); refreshNow(); }, "small more-workflows")
      : h("span.muted", `The ${MAX_WORKFLOWS} most recently updated workflows; braid workflows lists the others.`));
  }

  function workflowRow(wf, stats) {
    const last = h("td"), rate = h("td");
    if (stats) get("/runs" + q({ workflow: wf.name, limit: 50 })).then(({ items }) => {
      if (!items.length) return clear(last, h("span.muted", "never"));
      clear(last, h("a", { href: `#/runs/${enc(items[0].id)}` }, badge(items[0].status), " ", fmtTime(items[0].created_at)));
      const ended = items.filter((r) => ["succeeded", "failed", "cancelled"].includes(r.status));
      if (ended.length) {
        const ok = ended.filter((r) => r.status === "succeeded").length;
        clear(rate, `${Math.round((100 * ok) / ended.length)}%`, h("span.muted", ` of ${ended.length}`));
      }
    }).catch(() => {});
    return h("tr", { dataset: { workflow: wf.name } },
      h("td", h("button.link.wf-open", { type: "button", title: "Show the definition", onclick: () => workflowPanel(side, wf.name, refreshNow) }, h("strong", wf.name))),
      h("td", `v${wf.latest_version}`), last, rate,
      h("td", fmtTime(wf.updated_at)),
      h("td.actions", isWriter() && button("Run…", () => triggerForm(side, wf.name), "primary small run-workflow")));
  }

  async function loadRuns() {
    const cursor = state.cursors[state.page];
    const { items, next_cursor } = await get("/runs" + q({ workflow: state.workflow, status: state.status, limit: PAGE, cursor }));
    const none = next_cursor ? "No match among the latest runs searched; Older → searches further back." : "No runs match.";
    clear(runsBody, items.length ? items.map(runRow) : h("tr", h("td.muted", { colspan: 6 }, none)));
    state.cursors[state.page + 1] = next_cursor || null;
    clear(pager,
      button("← Newer", () => { state.page--; loadRuns(); }, "small"),
      h("span.muted", ` page ${state.page + 1} `),
      button("Older →", () => { state.page++; loadRuns(); }, "small"));
    pager.children[0].disabled = state.page === 0;
    pager.children[2].disabled = !next_cursor;
  }

  const refresh = async () => {
    if (!alive) return;
    try {
      await Promise.all([loadWorkflows(), state.page === 0 ? loadRuns() : null]);
    } catch (err) {
      if (!(err instanceof TypeError)) console.warn(err);
    }
    timer = setTimeout(refresh, 3000);
  };

  clear(root,
    h("div.dash",
      h("section.main",
        h("div.section-head", h("h2", "Workflows"), h("span.spacer"),
          isWriter() && button("Load examples", () => loadExamples(side, refreshNow), "small load-examples"),
          isWriter() && button("Register workflow…", () => registerForm(side, refreshNow), "primary small register-open")),
        h("table.grid", h("thead", h("tr", ["Name", "Version", "Last run", "Success", "Updated", ""].map((t) => h("th", t)))), wfBody),
        wfMore,
        h("div.section-head", h("h2", "Runs"), h("span.spacer"), wfFilter, stFilter),
        h("table.grid.runs", h("thead", h("tr", ["Run", "Workflow", "Status", "Started", "Duration", "By"].map((t) => h("th", t)))), runsBody),
        pager),
      side));
  wfFilter.value = state.workflow;
  stFilter.value = state.status;
  const refreshNow = () => { clearTimeout(timer); statsAt = 0; refresh(); };
  refresh();
  return { destroy() { alive = false; clearTimeout(timer); } };
}

function runRow(r) {
  // A run still going shows how long it has run so far (the list refreshes every 3 s).
  const end = r.finished_at ? Date.parse(r.finished_at) : Date.now();
  const dur = r.started_at ? Math.max(0, end - Date.parse(r.started_at)) : null;
  return h("tr", { dataset: { run: r.id, status: r.status } },
    h("td", h("a.mono", { href: `#/runs/${enc(r.id)}` }, r.id.slice(0, 8) + "…" + r.id.slice(-6))),
    h("td", r.workflow, h("span.muted", ` v${r.version}`)),
    h("td", badge(r.status), r.paused ? h("span.muted", " paused") : null),
    h("td", fmtTime(r.started_at || r.created_at)),
    h("td", fmtDuration(dur)),
    h("td.muted", r.requested_by || ""));
}

// workflowPanel: one version of a workflow (the latest unless version)
// as the api stored it, a version picker, and for a write key Run…, Edit
// (the register form filled with this definition: registering it makes
// the next version) and Delete, which asks first.
async function workflowPanel(side, name, done, version = 0) {
  let vs, wf;
  try {
    [vs, wf] = await Promise.all([get(`/workflows/${enc(name)}/versions`), get(`/workflows/${enc(name)}` + q({ version: version || "" }))]);
  } catch (err) {
    return clear(side, h("section.panel#workflow", h("div.section-head", h("h2", name), h("span.spacer"), button("×", () => clear(side), "small close")),
      h("p.error", err.message)));
  }
  const text = JSON.stringify(wf.definition, null, 2);
  const pick = h("select#workflow-version", { "aria-label": "version", onchange: () => workflowPanel(side, name, done, Number(pick.value)) },
    [...vs.versions].reverse().map((v) => h("option", { value: v.version }, `v${v.version}${v.version === vs.latest_version ? " (latest)" : ""}`)));
  pick.value = String(wf.version);
  const ask = h("div#delete-confirm");
  const remove = () => clear(ask, h("p", `Delete ${name}? New runs of it are refused; runs already started finish on their version.`),
    h("div.buttons",
      button("Delete", async () => {
        try { await del(`/workflows/${enc(name)}`); clear(side); done(); } catch (err) { clear(ask, h("p.error", err.message)); }
      }, "small danger delete-confirm"),
      button("Keep", () => clear(ask), "small")));
  clear(side, h("section.panel#workflow",
    h("div.section-head", h("h2.mono.wrap", name), h("span.spacer"), button("×", () => clear(side), "small close")),
    h("p.muted#workflow-version-line", "Version ", pick, ` of ${vs.latest_version} · updated ${fmtTime(wf.updated_at)}`),
    wf.definition.description ? h("p", wf.definition.description) : null,
    h("pre.json#workflow-definition", text),
    isWriter() ? h("div.buttons",
      button("Run…", () => triggerForm(side, name), "primary small"),
      button("Edit as new version…", () => registerForm(side, done, text), "small wf-edit"),
      button("Delete…", remove, "small danger wf-delete")) : null,
    ask));
}

// registerForm: paste or upload a definition, validate, register.
function registerForm(side, done, initial = "") {
  const text = h("textarea#definition", { spellcheck: "false", rows: 18, placeholder: '{"name": "hello", "nodes": [{"id": "a", "handler": "shell", "config": {"command": "echo hi"}}]}' });
  text.value = initial;
  const file = h("input#definition-file", { type: "file", accept: ".json,application/json",
    onchange: async () => { if (file.files[0]) { text.value = await file.files[0].text(); result(); } } });
  const out = h("div#validation", { role: "status" });
  const result = (...c) => clear(out, ...c);
  const problems = (list) => {
    const pos = jsonPositions(text.value);
    text.classList.add("invalid");
    return h("ul.problems", list.map((p) => {
      const at = locate(pos, p.path);
      return h("li.problem", { dataset: { path: p.path } },
        h("button.link.mono", { type: "button", title: "show in the definition",
          onclick: () => { if (at) { text.focus(); text.setSelectionRange(at[0], at[1]); } } },
          p.path, at ? ` (line ${lineOf(text.value, at[0])})` : ""),
        " ", p.message);
    }));
  };
  const body = () => { try { return JSON.parse(text.value); } catch (e) { return e; } };
  const validate = async () => {
    text.classList.remove("invalid");
    const b = body();
    if (b instanceof Error) return result(h("p.error", `Not JSON: ${b.message}`)), false;
    const v = await post("/workflows/validate", b);
    if (v.valid) return result(h("p.ok#valid", "✓ Valid definition")), true;
    result(h("p.error", `${v.problems.length} problem${v.problems.length > 1 ? "s" : ""}:`), problems(v.problems));
    return false;
  };
  const register = async () => {
    if (!(await validate())) return;
    try {
      const r = await post("/workflows", body());
      result(h("p.ok#registered", `Registered ${r.name} version ${r.version}.`));
      done();
    } catch (err) {
      result(h("p.error", err.message), err.problem?.errors ? problems(err.problem.errors) : null);
    }
  };
  clear(side, h("section.panel#register",
    h("div.section-head", h("h2", "Register a workflow"), h("span.spacer"), button("×", () => clear(side), "small close")),
    h("p.muted", "Paste a definition or upload a JSON file."), text, file,
    h("div.buttons", button("Validate", validate, "validate"), button("Register", register, "primary register")), out));
  text.focus();
}

// triggerForm: a run's input, one field per declared input.
async function triggerForm(side, name) {
  const wf = await get(`/workflows/${enc(name)}`);
  const inputs = Object.entries(wf.definition.inputs || {}).sort(([a], [b]) => a.localeCompare(b));
  const fields = inputs.map(([k, spec]) => {
    const def = spec.default === undefined ? "" : (spec.type === "string" ? spec.default : JSON.stringify(spec.default));
    const input = h("input", { name: k, id: `input-${k}`, value: def, placeholder: spec.type || "any JSON", required: spec.required });
    return { k, spec, input, row: h("label.field", h("span", k, spec.required ? " *" : "", h("span.muted", ` ${spec.type || "any"}`)), input, spec.description ? h("small.muted", spec.description) : null) };
  });
  const out = h("div#trigger-result", { role: "status" });
  const start = async () => {
    const input = {};
    for (const f of fields) {
      const raw = f.input.value;
      if (raw === "") continue;
      if (f.spec.type === "string") input[f.k] = raw;
      else {
        try { input[f.k] = JSON.parse(raw); } catch { input[f.k] = f.spec.type ? raw : raw; }
      }
    }
    try {
      const r = await post(`/workflows/${enc(name)}/runs`, { input });
      location.hash = `#/runs/${enc(r.run_id)}`;
    } catch (err) {
      clear(out, h("p.error", err.message), err.problem?.errors ? h("ul.problems", err.problem.errors.map((p) => h("li", h("span.mono", p.path), " ", p.message))) : null);
    }
  };
  clear(side, h("section.panel#trigger",
    h("div.section-head", h("h2", `Run ${name}`), h("span.spacer"), button("×", () => clear(side), "small close")),
    h("p.muted", `version ${wf.version}`),
    fields.length ? fields.map((f) => f.row) : h("p.muted", "This workflow declares no inputs."),
    h("div.buttons", button("Start run", start, "primary start-run")), out));
}

// loadExamples registers the example workflows shipped with the UI that
// are not registered yet. One that is keeps its versions: pressing the
// button again adds none, and a workflow of that name changed since is not
// replaced as the latest by the example. An example's name comes from the
// api's validation (the seeds' formats name it differently).
async function loadExamples(side, done) {
  const out = h("ul#examples-result");
  clear(side, h("section.panel", h("div.section-head", h("h2", "Examples"), h("span.spacer"), button("×", () => clear(side), "small close")), out));
  const { files } = await get("examples/index.json", { key: "" });
  let have = new Map();
  try {
    have = await registeredWorkflows();
  } catch (err) {
    out.append(h("li.error", `listing the registered workflows: ${err.message}`));
    done();
    return;
  }
  for (const f of files) {
    try {
      const def = await get(`examples/${f}`, { key: "" });
      const { name } = await post("/workflows/validate", def);
      if (name && have.has(name)) {
        out.append(h("li.kept", `= ${name} v${have.get(name)} already registered`));
        continue;
      }
      const r = await post("/workflows", def);
      out.append(h("li", `✓ ${r.name} v${r.version}`));
    } catch (err) {
      out.append(h("li.error", `${f}: ${err.message}`));
    }
  }
  done();
}

// registeredWorkflows maps every registered workflow to its latest
// version, paging through GET /workflows (at most 100 pages of 500).
async function registeredWorkflows() {
  const have = new Map();
  let cursor = "";
  for (let page = 0; page < 100; page++) {
    const r = await get(`/workflows${q({ limit: 500, cursor })}`);
    for (const w of r.items || []) have.set(w.name, w.latest_version);
    if (!r.next_cursor) break;
    cursor = r.next_cursor;
  }
  return have;
}
