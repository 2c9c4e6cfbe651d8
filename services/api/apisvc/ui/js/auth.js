// auth.js: the API key, entered once and kept in this browser's local
// storage until sign-out. It is sent only in the X-API-Key header.

import { h, clear } from "./dom.js";

const STORE = "braid.apiKey";
let role = null;
let name = null;

export const getKey = () => localStorage.getItem(STORE) || "";
export const isWriter = () => role === "write";
export const whoName = () => name;

let leaving = false;

// signedOut reports that the user signed out: no call may go out any more
// (the page is reloading to the sign-in form).
export const signedOut = () => leaving;

// signOut forgets the key and reloads the page to the sign-in form.
export function signOut() {
  leaving = true;
  localStorage.removeItem(STORE);
  role = name = null;
  location.replace(location.pathname);
}

// checkKey asks the API who key belongs to; it resolves {name, role} or
// throws the API's error (401 for a wrong key).
export async function checkKey(key) {
  const { get } = await import("./api.js");
  return get("/whoami", { key });
}

// restore validates a stored key; false when there is none or it is refused.
export async function restore() {
  const key = getKey();
  if (!key) return false;
  try {
    const me = await checkKey(key);
    role = me.role;
    name = me.name;
    return true;
  } catch (err) {
    if (err.status === 401) {
      localStorage.removeItem(STORE);
      return false;
    }
    throw err;
  }
}

// signInView renders the sign-in form into root and resolves once a key
// the API accepts was entered.
export function signInView(root) {
  return new Promise((resolve) => {
    const input = h("input#key", { type: "password", autocomplete: "current-password", placeholder: "braid_…", "aria-label": "API key", required: true });
    const msg = h("p.error#signin-error", { role: "alert" });
    const form = h("form.signin", {
      onsubmit: async (e) => {
        e.preventDefault();
        msg.textContent = "";
        const key = input.value.trim();
        try {
          const me = await checkKey(key);
          localStorage.setItem(STORE, key);
          role = me.role;
          name = me.name;
          input.value = "";
          resolve();
        } catch (err) {
          msg.textContent = err.status === 401
            ? "That API key was not accepted. Check it and try again (braid dev prints it, and keeps it in .braid/api-key)."
            : `Cannot reach the Braid API: ${err.message}`;
          input.select();
        }
      },
    },
      h("h1", "Sign in to Braid"),
      h("p", "Enter an API key. It stays in this browser until you sign out, and is sent only in a request header."),
      h("label", { for: "key" }, "API key"), input,
      h("button#signin", { type: "submit" }, "Sign in"), msg);
    clear(root, form);
    input.focus();
  });
}
