// Router: picks a page from location.pathname and mounts it into <main>. Pages export
// `mount(root, params) -> unmount()`; links marked `data-link` navigate without a reload. The
// tournament and arena pages, and the player, leaderboard and daily pages (modules and
// stylesheets), are loaded when first visited. An arena's entrant who looks at another page when
// his race is ready is called under the top bar (arenaCall). Every page has the challenges'
// banner under the top bar (challenges.js, over the page's own connection: inbox.js).

import { challenges } from "./challenges.js";
import { inbox } from "./inbox.js";
import * as challenge from "./pages/challenge.js";
import * as home from "./pages/home.js";
import * as race from "./pages/race.js";
import * as watch from "./pages/watch.js";
import { arenaCalls, arenaPath, openArenaSeat } from "./arena-session.js";
import { me } from "./me.js";
import { settingsMenu } from "./pages/settings.js";
import { meArea } from "./pages/me-area.js";
import { applyDocumentSettings } from "./storage.js";
import { announce, h, loadStyle, navigate, replace, setConnectionState } from "./ui.js";

const tournament = () => Promise.all([import("./pages/tournament.js"), loadStyle("tournament.css")]).then(([m]) => m);
const arena = () => Promise.all([import("./pages/arena.js"), loadStyle("arena.css")]).then(([m]) => m);
const players = (path) => () => Promise.all([import(path), loadStyle("players.css")]).then(([m]) => m);
const player = players("./pages/player.js");
const leaderboard = players("./pages/leaderboard.js");
const daily = players("./pages/daily.js");
const mod = players("./pages/mod.js");

const ROUTES = [
  [/^\/$/, home, () => ({})],
  [/^\/race\/([^/]+)\/watch\/?$/, watch, (m) => ({ race: decodeURIComponent(m[1]) })],
  [/^\/race\/([^/]+)\/?$/, race, (m) => ({ race: decodeURIComponent(m[1]) })],
  [/^\/tournament\/([^/]+)\/?$/, tournament, (m) => ({ tournament: decodeURIComponent(m[1]) })],
  [/^\/arena\/([^/]+)\/?$/, arena, (m) => ({ arena: decodeURIComponent(m[1]) })],
  [/^\/player\/([^/]+)\/?$/, player, (m) => ({ name: decodeURIComponent(m[1]) })],
  [/^\/leaderboard\/([^/]+)\/?$/, leaderboard, (m) => ({ game: decodeURIComponent(m[1]) })],
  [/^\/daily(?:\/([^/]+))?\/?$/, daily, (m) => ({ game: m[1] ? decodeURIComponent(m[1]) : null })],
  [/^\/mod\/?$/, mod, () => ({})],
  [/^\/challenge\/([^/]+)\/?$/, challenge, (m) => ({ challenge: decodeURIComponent(m[1]) })],
];

applyDocumentSettings();
document.querySelector(".topbar")?.append(meArea(), settingsMenu());
me.load();
// One connection per page for what reaches this player on any page (a challenge, its answer).
inbox.start();
challenges.start();

// For automation and curious players: the current page's session (a race's, a tournament's or an
// arena's) and a navigate function.
window.solrace = { session: null, tournament: null, arena: null, navigate, me };

let unmount = null;
let routing = 0;

async function route() {
  const root = document.getElementById("main");
  const turn = ++routing;
  unmount?.();
  unmount = null;
  window.solrace.session = null;
  setConnectionState("");
  for (const [re, entry, params] of ROUTES) {
    const m = re.exec(location.pathname);
    if (m) {
      const page = typeof entry === "function" ? await entry() : entry;
      if (turn !== routing) return; // another navigation came first
      root.replaceChildren();
      unmount = page.mount(root, { ...params(m), ...(history.state || {}) }) || null;
      return;
    }
  }
  replace(
    root,
    h("section.panel.narrow", {},
      h("h1", {}, "Nothing here"),
      h("p", {}, "This address is not a page of solrace."),
      h("p", {}, h("a.button", { href: "/", "data-link": true }, "Go to the start page"))),
  );
}


document.addEventListener("click", (e) => {
  const a = e.target.closest?.("a[data-link]");
  if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin) return;
  e.preventDefault();
  navigate(url.pathname + url.search);
});

/** An arena's entrant is paired while no page of that arena is open (he browses the site): a
 * call under the top bar, his race one click away. It goes once he goes, once a page of the arena
 * opens (it takes him there itself), or once the seat is gone (the race ended without him). */
function arenaCall({ session, seat }) {
  loadStyle("arena.css");
  document.getElementById("arena-call")?.remove();
  const name = session.model.view?.name || "your arena";
  const path = `/race/${encodeURIComponent(seat.race)}`;
  const el = h("div.arena-call#arena-call", { role: "alert" },
    h("span.arena-call-text", {}, `Your race in ${name} is ready`),
    h("a.button.primary#arena-call-go", { href: path, "data-link": true, onclick: () => openArenaSeat(seat) }, "Go"),
    h("a.small.button", { href: arenaPath(session.aid), "data-link": true }, "Arena page"));
  const over = () => location.pathname === path || location.pathname === arenaPath(session.aid)
    || session.closed || session.holders > 0 || session.model.seat?.race !== seat.race;
  if (over()) return;
  const check = () => {
    if (!over()) return;
    el.remove();
    session.removeEventListener("change", check);
    window.removeEventListener("solrace:navigate", check);
    window.removeEventListener("popstate", check);
  };
  session.addEventListener("change", check);
  window.addEventListener("solrace:navigate", check);
  window.addEventListener("popstate", check);
  document.getElementById("service")?.after(el);
  announce(`Your race in ${name} is ready.`, { assertive: true });
}
arenaCalls.addEventListener("call", (e) => arenaCall(e.detail));

window.addEventListener("popstate", route);
window.addEventListener("solrace:navigate", () => {
  route();
  window.scrollTo(0, 0);
});
route();
