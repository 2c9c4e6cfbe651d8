// schedules.js: every schedule (cron, time zone, overlap policy, next fire,
// the run its latest fire started or why it could not), refreshed every
// 5 s; for a write key a form for a new one, enable/disable and delete
// (asked inline first).

import { get, post, patch, del, q, enc } from "./api.js";
import { h, clear, badge, button, fmtTime } from "./dom.js";
import { isWriter } from "./auth.js";

const PAGE = 50;

export function schedulesView(root) {
  const body = h("tbody#schedules");
  const side = h("div#side");
  const pager = h("div.pager");
  const cursors = [""];
  let page = 0;
  let timer = null;
  let alive = true;

  const load = async () => {
    clearTimeout(timer);
    // A refresh would drop a delete the user is being asked about.
    if (body.querySelector("td.confirm .delete-confirm")) {
      timer = setTimeout(load, 5000);
      return;
    }
    try {
      const { items, next_cursor } = await get("/schedules" + q({ limit: PAGE, cursor: cursors[page] }));
      if (!alive) return;
      clear(body, items.length ? items.map(row) : h("tr", h("td.muted", { colspan: 7 }, "No schedules. A schedule starts runs of a workflow on a cron expression.")));
      cursors[page + 1] = next_cursor || null;
      clear(pager,
        button("← Newer", () => { page--; load(); }, "small"),
        h("span.muted", ` page ${page + 1} `),
        button("Older →", () => { page++; load(); }, "small"));
      pager.children[0].disabled = page === 0;
      pager.children[2].disabled = !next_cursor;
    } catch { /* the banner tells */ }
    if (alive) timer = setTimeout(load, 5000);
  };

  function row(s) {
    const ask = h("td.confirm", { colspan: 7 });
    const remove = () => clear(ask, `Delete this schedule? Its runs are kept. `,
      button("Delete", async () => {
        try { await del(`/schedules/${enc(s.id)}`); clear(ask); load(); } catch (err) { clear(ask, h("span.error", err.message)); }
      }, "small danger delete-confirm"),
      " ", button("Keep", () => clear(ask), "small"));
    const toggle = async () => {
      try { await patch(`/schedules/${enc(s.id)}`, { enabled: !s.enabled }); clear(ask); load(); } catch (err) { clear(ask, h("span.error", err.message)); }
    };
    return [
      h("tr", { dataset: { schedule: s.id, workflow: s.workflow } },
        h("td", h("strong", s.workflow), h("div.mono.small.muted", s.id)),
        h("td.mono", s.cron, h("div.small.muted", s.timezone)),
        h("td", h(`span.badge.s-${s.enabled ? "succeeded" : "pending"}`, s.enabled ? "enabled" : "disabled"), h("div.small.muted", `overlap: ${s.overlap}`)),
        h("td", s.next_fire_at ? fmtTime(s.next_fire_at) : h("span.muted", "—")),
        h("td", s.last_run_id ? h("a.mono.small", { href: `#/runs/${enc(s.last_run_id)}` }, fmtTime(s.last_fire_at)) : h("span.muted", "never"),
          s.last_skipped_at ? h("div.small.muted", `skipped ${fmtTime(s.last_skipped_at)} (overlap)`) : null,
          s.last_error ? h("div.small.error.last-error", s.last_error) : null),
        h("td.muted.small", s.created_by || ""),
        h("td.actions", isWriter() ? [
          button(s.enabled ? "Disable" : "Enable", toggle, `small ${s.enabled ? "sched-disable" : "sched-enable"}`), " ",
          button("Delete…", remove, "small danger sched-delete")] : null)),
      h("tr.confirm-row", { dataset: { confirm: s.id } }, ask),
    ];
  }

  clear(root, h("div.dash",
    h("section.main",
      h("div.section-head", h("h2", "Schedules"), h("span.spacer"),
        isWriter() && button("New schedule…", () => scheduleForm(side, load), "primary small sched-new")),
      h("table.grid.schedules", h("thead", h("tr", ["Workflow", "Cron", "State", "Next fire", "Latest fire", "By", ""].map((t) => h("th", t)))), body),
      pager),
    side));
  load();
  return { destroy() { alive = false; clearTimeout(timer); } };
}

// scheduleForm: a new schedule of a registered workflow. The api checks
// everything (cron, zone, input against the workflow's inputs) and its
// problems are listed by field.
async function scheduleForm(side, done) {
  // The newest 500 workflows are offered; any other name can be typed.
  const { items } = await get("/workflows" + q({ limit: 500 }));
  const wf = h("input#sched-workflow", { list: "sched-workflows", value: items[0]?.name || "", placeholder: "workflow name", required: true });
  const names = h("datalist#sched-workflows", items.map((w) => h("option", { value: w.name })));
  const cron = h("input#sched-cron", { placeholder: "0 9 * * 1-5, @daily or @every 30s", required: true });
  const tz = h("input#sched-timezone", { value: "UTC", placeholder: "IANA zone, e.g. Europe/Lisbon" });
  const overlap = h("select#sched-overlap", { "aria-label": "overlap" },
    h("option", { value: "skip" }, "skip a fire while the previous run is active"), h("option", { value: "allow" }, "allow overlapping runs"));
  const input = h("textarea#sched-input", { rows: 4, spellcheck: "false" });
  input.value = "{}";
  const enabled = h("input#sched-enabled", { type: "checkbox", checked: true });
  const out = h("div#sched-result", { role: "status" });
  const create = async () => {
    let body;
    try { body = JSON.parse(input.value || "{}"); } catch (err) { return clear(out, h("p.error", `Input is not JSON: ${err.message}`)); }
    try {
      const s = await post("/schedules", { workflow: wf.value, cron: cron.value, timezone: tz.value, overlap: overlap.value, input: body, enabled: enabled.checked });
      clear(out, h("p.ok#sched-created", s.next_fire_at ? `Created; next fire ${fmtTime(s.next_fire_at)}.` : "Created (disabled)."));
      done();
    } catch (err) {
      clear(out, h("p.error", err.message), err.problem?.errors ? h("ul.problems", err.problem.errors.map((p) => h("li", h("span.mono", p.path), " ", p.message))) : null);
    }
  };
  const field = (label, el, hint) => h("label.field", h("span", label), el, hint ? h("small.muted", hint) : null);
  clear(side, h("section.panel#sched-form",
    h("div.section-head", h("h2", "New schedule"), h("span.spacer"), button("×", () => clear(side), "small close")),
    items.length ? [
      field("Workflow", wf), names,
      field("Cron", cron, "five fields (minute hour day-of-month month day-of-week), @hourly/@daily/…, or @every <duration>"),
      field("Time zone", tz),
      field("Overlap", overlap),
      field("Input (JSON object)", input),
      h("label.check", enabled, " enabled"),
      h("div.buttons", button("Create", create, "primary sched-create")), out,
    ] : h("p.muted", "Register a workflow first.")));
  cron.focus();
}
