// The home page's lists: open public races (GET /api/lobby, refreshed while the page is shown),
// this browser's own races (from localStorage) with their status and the player's place
// (GET /api/races/{race}), and the tournaments it created or entered.

import { gameTitle } from "../cards.js";
import { me } from "../me.js";
import { store } from "../storage.js";
import { fetchJSON, h, navigate, ordinal, replace } from "../ui.js";
import { dailyRevealAt } from "./player-parts.js";

const LOBBY_REFRESH_MS = 5000;
const STATUS_TEXT = { lobby: "waiting for racers", countdown: "starting", running: "racing now", finished: "finished" };

function ago(ms) {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return "just now";
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const hrs = Math.round(m / 60);
  return hrs < 48 ? `${hrs} h ago` : new Date(ms).toLocaleDateString();
}

/** Public races not started yet: join or watch in one click. */
export class OpenRaces {
  constructor() {
    this.list = h("ul.race-list.open-races-list");
    this.empty = h("p.muted", {}, "No public race is waiting right now: try a Quick race, or create one below and tick “Public”.");
    this.el = h("section.panel.open-races", { "aria-labelledby": "open-races-title" },
      h("h2#open-races-title", {}, "Open races"),
      this.list, this.empty);
    this.timer = 0;
    this.stopped = false;
  }

  start() {
    const tick = async () => {
      if (this.stopped) return;
      if (!document.hidden) await this.refresh();
      if (!this.stopped) this.timer = setTimeout(tick, LOBBY_REFRESH_MS);
    };
    tick();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  async refresh() {
    let races;
    try {
      races = await fetchJSON("/api/lobby");
    } catch {
      return; // keep what is shown; the next refresh tries again
    }
    if (this.stopped || !Array.isArray(races)) return;
    const name = me.name || store.name();
    replace(this.list, races.map((r) => {
      const o = r.options || {};
      const path = `/race/${encodeURIComponent(r.race)}`;
      const full = o.players && r.racers >= o.players;
      return h("li.race-row", { dataset: { race: r.race } },
        h("span.race-game", {}, gameTitle(r.game)),
        h("span.muted", {}, `${r.racers}/${o.players ?? "?"} racers · ${Math.round((o.time_limit || 0) / 60)} min` +
          `${o.undo === false ? " · no undo" : ""} · ${ago(r.created_at)}`),
        r.seed_chosen ? h("span.tag.chosen-tag", { title: "The host chose the deal and knows it" }, "deal chosen") : null,
        optionTags(o),
        h("span.grow"),
        full ? null : h("button.small.primary", {
          type: "button",
          onclick: () => navigate(path, name ? { autojoin: name } : null),
        }, name ? `Join as ${name}` : "Join"),
        h("a.small.button", { href: `${path}/watch`, "data-link": true }, "Watch"));
    }));
    this.empty.hidden = races.length > 0;
  }
}

/** What one hint costs in the standings (the server's HINT_PENALTY_MS). */
export const HINT_PENALTY_S = 30;

/** Tags for a race's solver options: a certified-winnable deal (a public demo one, said so),
 * hints allowed and what each costs. */
export function optionTags(options) {
  return [
    options?.winnable ? h("span.tag.option-tag.winnable-tag", { title: "The solver has won this deal" },
      "certified-winnable deal") : null,
    options?.demo_catalogue ? h("span.tag.option-tag.demo-tag", {
      title: "This demo server deals winnable races from the public catalogue: anyone can look the deal up",
    }, "demo deal: public catalogue") : null,
    options?.hints ? h("span.tag.option-tag.hints-tag", {
      title: `Racers may ask for hints; each adds ${HINT_PENALTY_S} s to a finisher's time, or costs a racer who does not finish a card home`,
    }, `hints allowed: +${HINT_PENALTY_S} s each`) : null,
  ];
}

/** The tournaments this browser created (as host) or entered, newest first. */
export function yourTournaments(list) {
  return h("section.panel.recent.your-tournaments", { "aria-labelledby": "your-tournaments-title", hidden: !list.length },
    h("h2#your-tournaments-title", {}, "Your tournaments"),
    h("ul.race-list", {}, list.map((t) => h("li.race-row", { dataset: { tournament: t.tournament } },
      h("a", { href: `/tournament/${encodeURIComponent(t.tournament)}`, "data-link": true }, t.name || t.tournament),
      h("span.muted", {}, `${t.what === "entered" ? "entered" : "hosting"} ${ago(t.at)}`)))));
}

/** The races this browser created or raced, newest first, with status and the player's place. */
export class YourRaces {
  constructor(recent) {
    this.recent = recent;
    this.list = h("ul.race-list.your-races-list");
    this.el = h("section.panel.recent", { "aria-labelledby": "recent-title", hidden: !recent.length },
      h("h2#recent-title", {}, "Your races"),
      this.list);
  }

  load() {
    const rows = this.recent.map((r) => {
      const status = h("span.race-status.muted", {}, "…");
      const link = h("a", { href: `/race/${encodeURIComponent(r.race)}`, "data-link": true }, r.race);
      const row = h("li.race-row", { dataset: { race: r.race } },
        link,
        h("span.race-game", {}, gameTitle(r.game || "")),
        h("span.muted", {}, `${r.what === "daily" ? "daily deal" : r.what} ${ago(r.at)}`),
        h("span.grow"),
        status);
      this.fill(r, status, link);
      return row;
    });
    replace(this.list, rows);
  }

  async fill(r, el, link) {
    if (r.what === "daily" && Date.now() < dailyRevealAt(r.at)) {
      el.textContent = "today's deal"; // nothing of it is public until the day is over
      return;
    }
    let race;
    try {
      race = await fetchJSON(`/api/races/${encodeURIComponent(r.race)}`);
    } catch (err) {
      el.textContent = err.status === 404 ? "gone" : "";
      // A race the server no longer has (its database was reset): no link to "Race not found".
      if (err.status === 404) link.replaceWith(h("span.race-gone", {}, r.race));
      return;
    }
    const me = store.racer(r.race)?.player;
    const mine = me && (race.standings || []).find((s) => s.player === me);
    const player = me && (race.players || []).find((p) => p.player === me);
    let text = STATUS_TEXT[race.status] || race.status;
    if (race.status === "finished" && mine) {
      text = mine.time_ms !== null && mine.time_ms !== undefined
        ? `${ordinal(mine.place)} of ${race.standings.length}`
        : `${ordinal(mine.place)} of ${race.standings.length} (${mine.resigned ? "resigned" : "not finished"})`;
      el.classList.toggle("won", mine.place === 1 && mine.time_ms !== null);
    } else if (race.status === "running" && player) {
      text = player.finished ? `finished ${ordinal(player.place)}, race on` : "racing now — rejoin";
    } else if (race.status === "finished") {
      text = "finished";
    }
    const n = (race.players || []).length;
    el.textContent = `${text}${race.status !== "finished" ? ` · ${n} racer${n === 1 ? "" : "s"}` : ""}`;
    el.classList.remove("muted");
    el.dataset.status = race.status;
  }
}
