// Small DOM and formatting helpers shared by the pages. No game rules here.

/**
 * Build an element: h("button#go.primary", {onclick, type: "button"}, "Start").
 * Attributes whose name starts with "on" become listeners, `dataset` and `style` objects are merged,
 * `null`/`false` attributes are skipped; children may be strings, nodes, arrays or null.
 */
export function h(spec, attrs = {}, ...children) {
  const tag = /^[a-z0-9-]*/i.exec(spec)[0] || "div";
  const id = /#([\w-]+)/.exec(spec);
  const classes = [...spec.matchAll(/\.([\w-]+)/g)].map((m) => m[1]);
  const el = document.createElement(tag);
  if (id) el.id = id[1];
  if (classes.length) el.className = classes.join(" ");
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (key === "style" && typeof value === "object") {
      for (const [prop, v] of Object.entries(value)) el.style.setProperty(prop, v);
    } else if (key === "class") {
      el.className = [el.className, value].filter(Boolean).join(" ");
    } else if (key in el && typeof value !== "string") {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : value);
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** Set `el`'s text, unless it is already that: even an equal write replaces the text node and
 * costs the page a style and layout pass (the race header's clock writes ten times a second). */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** Show or hide `el`, touching it only when that changes. */
export function setHidden(el, hidden) {
  if (el.hidden !== hidden) el.hidden = hidden;
}

/** Replace every child of `el` with `children`. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** Coalesce many "something changed" calls into one callback per animation frame.
 * `schedule.flush()` runs a scheduled callback now (from inside another frame's callback, so
 * that a redraw does not wait one more frame). */
export function frameScheduler(fn) {
  let pending = 0;
  const schedule = () => {
    if (pending) return;
    pending = requestAnimationFrame(() => {
      pending = 0;
      fn();
    });
  };
  schedule.flush = () => {
    if (!pending) return;
    cancelAnimationFrame(pending);
    pending = 0;
    fn();
  };
  return schedule;
}

/** "1:05.3" for 65300 ms; "-" for null. */
export function formatTime(ms, { tenths = true } = {}) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return "–";
  const neg = ms < 0;
  ms = Math.abs(ms);
  const total = Math.floor(ms / 100);
  const minutes = Math.floor(total / 600);
  const seconds = Math.floor((total % 600) / 10);
  const t = total % 10;
  const text = `${minutes}:${String(seconds).padStart(2, "0")}${tenths ? `.${t}` : ""}`;
  return neg ? `-${text}` : text;
}

export function ordinal(n) {
  const s = ["th", "st", "nd", "rd"];
  const v = n % 100;
  return n + (s[(v - 20) % 10] || s[v] || s[0]);
}

const toastBox = () => document.getElementById("toasts");

/** Show a short message in the corner; `kind` is "info", "good" or "bad". */
export function toast(text, kind = "info", ms = 4000, { silent = false } = {}) {
  const box = toastBox();
  if (!box) return;
  const el = h(`div.toast.toast-${kind}`, silent ? { "aria-hidden": "true" } : { role: kind === "bad" ? "alert" : "status" }, text);
  box.append(el);
  setTimeout(() => el.classList.add("toast-out"), ms);
  setTimeout(() => el.remove(), ms + 400);
}

/** Say something to screen-reader users without moving focus. */
export function announce(text, { assertive = false } = {}) {
  const el = document.getElementById(assertive ? "announce-assertive" : "announce-polite");
  if (!el) return;
  // Re-setting identical text is not re-announced; clear first.
  el.textContent = "";
  setTimeout(() => (el.textContent = text), 30);
}

/** The connection indicator in the top bar: "", "connecting", "reconnecting", "offline". */
export function setConnectionState(state) {
  const el = document.getElementById("conn");
  if (!el) return;
  el.dataset.state = state;
  el.textContent =
    state === "reconnecting" ? "Reconnecting…" :
    state === "connecting" ? "Connecting…" :
    state === "offline" ? "Offline — waiting for the network" : "";
}

/** The banner under the top bar while the server cannot save moves (`service` degraded). */
export function setServiceState(status) {
  const el = document.getElementById("service");
  if (!el) return;
  const degraded = status === "degraded";
  if (el.hidden === !degraded) return;
  el.hidden = !degraded;
  el.textContent = degraded
    ? "Saving moves is unavailable right now — your moves will go through when it is back."
    : "";
}


export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Clipboard API needs a secure context and permission; fall back to a selection copy.
    const area = h("textarea", { style: { position: "fixed", opacity: "0" } });
    area.value = text;
    document.body.append(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}

/** Tries of one request answered 429 (too many requests) or 503 (the server is busy). */
const FETCH_TRIES = 6;

/** GET `url` as JSON. A 429 or 503 is tried again after the server's Retry-After (else an
 * exponential backoff from 0.5 s, capped at 8 s, with jitter so that a room of players behind
 * one address does not come back in step); other errors throw at once, with `status`. */
export async function fetchJSON(url, { tries = FETCH_TRIES } = {}) {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(url, { headers: { accept: "application/json" } });
    if (res.ok) return res.json();
    if ((res.status === 429 || res.status === 503) && attempt < tries) {
      const after = Number(res.headers.get("retry-after"));
      const base = after > 0 ? after * 1000 : Math.min(8000, 500 * 2 ** (attempt - 1));
      await new Promise((resolve) => setTimeout(resolve, base * (1 + Math.random() * 0.5)));
      continue;
    }
    const err = new Error(`${res.status} ${res.statusText}`);
    err.status = res.status;
    throw err;
  }
}

/** "the tournament has started" → "The tournament has started." (server messages are lower case). */
export function sentence(text) {
  const t = String(text || "").trim();
  if (!t) return "";
  return t.charAt(0).toUpperCase() + t.slice(1) + (/[.!?]$/.test(t) ? "" : ".");
}

/** Load a stylesheet of the client once (for pages that are not on every visit); resolves when
 * it applies, so that nothing is drawn unstyled. */
const styles = new Map();
export function loadStyle(name) {
  if (!styles.has(name)) {
    styles.set(name, new Promise((resolve) => {
      const link = h("link", { rel: "stylesheet", href: `/static/${name}` });
      link.addEventListener("load", resolve);
      link.addEventListener("error", resolve); // unstyled rather than not at all
      document.head.append(link);
    }));
  }
  return styles.get(name);
}

/** Go to `path` inside the app without a reload; `state` reaches the page's mount params. */
export function navigate(path, state = null) {
  history.pushState(state, "", path);
  window.dispatchEvent(new Event("solrace:navigate"));
}

/** The link a racer shares: this origin + /race/{race}. */
export function raceLink(race, suffix = "") {
  return `${location.origin}/race/${encodeURIComponent(race)}${suffix}`;
}
