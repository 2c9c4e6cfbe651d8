// main.js: sign-in, the hash router (#/, #/runs/ID, #/schedules, #/workers) and the
// API-unreachable banner.

import { restore, signInView, signOut, whoName, isWriter } from "./auth.js";
import { onConnection } from "./api.js";
import { clear, h } from "./dom.js";
import { dashboardView } from "./dashboard.js";
import { runView } from "./run.js";
import { workersView } from "./workers.js";
import { schedulesView } from "./schedules.js";

const app = document.getElementById("app");
let current = null; // the mounted view: {destroy()}

function route() {
  current?.destroy?.();
  current = null;
  window.scrollTo(0, 0);
  const hash = location.hash.replace(/^#/, "") || "/";
  const run = hash.match(/^\/runs\/([^/?]+)/);
  if (run) current = runView(app, decodeURIComponent(run[1]));
  else if (hash.startsWith("/workers")) current = workersView(app);
  else if (hash.startsWith("/schedules")) current = schedulesView(app);
  else current = dashboardView(app, new URLSearchParams(hash.split("?")[1] || ""));
}

function banner(ok) {
  const b = document.getElementById("banner");
  b.hidden = ok;
  b.textContent = ok ? "" : "The Braid API is not reachable. Reconnecting…";
}

async function boot() {
  onConnection(banner);
  let ok = false;
  for (let i = 0; !ok; i++) {
    try {
      ok = await restore();
      break;
    } catch {
      banner(false);
      await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** i)));
    }
  }
  banner(true);
  if (!ok) await signInView(app);
  document.getElementById("nav").hidden = false;
  const so = document.getElementById("signout");
  so.hidden = false;
  so.addEventListener("click", signOut);
  clear(document.getElementById("who"), h("span.muted", `${whoName()} · ${isWriter() ? "write" : "read-only"}`));
  document.body.classList.toggle("readonly", !isWriter());
  window.addEventListener("hashchange", route);
  route();
}

boot();
