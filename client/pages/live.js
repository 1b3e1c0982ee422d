// The home page's live strip: how many players are online and races running (GET /api/live), the
// arena running and the next ones with their countdowns (GET /api/arenas), and the featured race —
// the best race running — as a small live board, one click from its spectator page.
//
// The strip holds one socket while the home page is shown: the featured race is followed on it
// (`watch`, as any spectator: cards a racer still racing has not uncovered stay hidden), and the
// next featured race on the same socket after a `leave`. The figures are polled every few seconds
// (the server answers them from a look at most two seconds old), not while the tab is hidden.

import { BoardView } from "../board.js";
import { gameTitle } from "../cards.js";
import { Connection } from "../net.js";
import { RaceSession } from "../session.js";
import { formatTime, frameScheduler, h, ordinal, replace, setHidden, setText } from "../ui.js";
import { livePlaces } from "./parts.js";
import { racerName } from "./player-parts.js";

export const LIVE_REFRESH_MS = 5000;
/** The arenas change seldom: every third refresh. */
const ARENAS_EVERY = 3;
/** Arenas shown: the running ones, then this many of the next. */
const NEXT_ARENAS = 3;
/** Racers listed beside the featured board (a race has up to eight). */
const RACERS_SHOWN = 4;

function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

/** "in 4:05", "in 1 h 02 min", "Sat 14:00" (more than a day ahead). */
export function countdown(ms) {
  const left = Math.max(0, ms);
  if (left >= 24 * 3600_000) {
    return new Date(Date.now() + left).toLocaleString(undefined, { weekday: "short", hour: "2-digit", minute: "2-digit" });
  }
  if (left >= 3600_000) {
    const hours = Math.floor(left / 3600_000);
    const minutes = Math.floor((left % 3600_000) / 60_000);
    return `in ${hours} h ${String(minutes).padStart(2, "0")} min`;
  }
  return `in ${formatTime(left, { tenths: false })}`;
}

export class LiveStrip {
  constructor() {
    this.conn = new Connection();
    this.offset = 0; // the server's clock minus ours (from the socket's pongs)
    this.onClock = (e) => {
      this.offset = e.detail.offset;
    };
    this.conn.addEventListener("clock", this.onClock);
    this.countsText = h("span.live-counts-text");
    this.counts = h("p.live-counts", { hidden: true },
      h("span.live-dot", { "aria-hidden": "true" }), this.countsText);
    this.featured = new FeaturedRace(this.conn, () => Date.now() + this.offset);
    this.arenas = new ArenaList(() => Date.now() + this.offset);
    this.timer = 0;
    this.tick = 0;
    this.refreshes = 0;
    this.clock = 0;
    this.stopped = false;
  }

  start() {
    this.conn.connect();
    const poll = async () => {
      if (this.stopped) return;
      if (!document.hidden) await this.refresh();
      if (!this.stopped) this.timer = setTimeout(poll, LIVE_REFRESH_MS);
    };
    poll();
    // Countdowns and the featured race's clock, once a second.
    this.clock = setInterval(() => {
      this.arenas.tick();
      this.featured.tick();
    }, 1000);
    return this;
  }

  async refresh() {
    const arenas = this.tick++ % ARENAS_EVERY === 0;
    const [live, list] = await Promise.all([
      fetchQuietly("/api/live"),
      arenas ? fetchQuietly("/api/arenas") : Promise.resolve(undefined),
    ]);
    if (this.stopped) return;
    if (live && typeof live.players_online === "number") {
      setText(this.countsText, `${plural(live.players_online, "player")} online · ` +
        `${plural(live.races_running, "race")} running`);
      this.counts.dataset.players = live.players_online;
      this.counts.dataset.races = live.races_running;
      setHidden(this.counts, false);
      this.featured.show(live.featured ?? null);
    }
    if (Array.isArray(list)) this.arenas.show(list);
    this.refreshes++;
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.clock);
    this.featured.close();
    this.conn.removeEventListener("clock", this.onClock);
    this.conn.close();
  }
}

/** GET a JSON route; undefined if it fails (the next refresh tries again). */
async function fetchQuietly(url) {
  try {
    const res = await fetch(url, { headers: { accept: "application/json" } });
    return res.ok ? await res.json() : undefined;
  } catch {
    return undefined;
  }
}

/** The featured race: its game and clock, its racers with their ratings and progress, the
 * leader's board live, and a Watch button. Quiet when nothing runs. */
class FeaturedRace {
  constructor(conn, now) {
    this.conn = conn;
    this.now = now;
    this.session = null;
    this.view = null; // the server's view of the featured race (GET /api/live)
    this.leader = null; // whose board is shown
    this.meta = h("p.featured-meta");
    this.racers = h("ul.featured-racers", { "aria-label": "Racers" });
    this.boardEl = h("div.featured-board");
    this.board = new BoardView(this.boardEl, { player: "featured", compact: true, label: "Board",
      emptyText: "Waiting for the board…" });
    this.caption = h("p.featured-caption.muted");
    this.watch = h("a.button.primary.featured-watch", { "data-link": true }, "Watch");
    this.live = h("div.featured-live", { hidden: true },
      this.meta, this.racers, this.boardEl, h("div.featured-foot", {}, this.caption, this.watch));
    this.quiet = h("p.featured-quiet.muted", { hidden: true }, "No race running right now — ",
      h("a", { href: "#quick-title", onclick: (e) => {
        e.preventDefault();
        const first = document.querySelector(".quick-race .quick-btn");
        first?.scrollIntoView({ block: "center" });
        first?.focus();
      } }, "start one"), ".");
    this.el = h("section.panel.featured-race", { "aria-labelledby": "featured-title" },
      h("h2#featured-title", {}, "Featured race"), this.live, this.quiet);
    this.schedule = frameScheduler(() => this.render());
  }

  /** The server's featured race (or null): followed from now on if it is another race. A race
   * that ended stays shown, over, until the server features another. */
  show(view) {
    const current = this.session?.race ?? null;
    if (view && view.race !== current) {
      this.close();
      this.view = view;
      this.leader = null;
      this.session = new RaceSession(view.race, { spectator: true, conn: this.conn });
      this.session.addEventListener("change", this.schedule);
      this.session.start();
    } else if (!view && current && this.session.model.status !== "running") {
      this.close(); // over, and nothing else runs: quiet
    } else if (view) {
      this.view = view;
    }
    this.schedule();
  }

  close() {
    if (!this.session) return;
    this.session.removeEventListener("change", this.schedule);
    this.session.close(); // leaves the race; the socket stays for the next one
    this.session = null;
    this.view = null;
  }

  tick() {
    if (this.session) this.renderMeta();
  }

  /** The racers in the order they stand, with the model's (live) or the view's figures. */
  standing() {
    const model = this.session?.model;
    if (model?.loaded && model.order.length) {
      const places = livePlaces(model);
      const over = model.status === "finished";
      return model.order.map((id) => ({ ...model.players.get(id), place: over ? model.players.get(id)?.place : places.get(id) }))
        .filter((p) => p.player)
        .sort((a, b) => (a.place ?? 99) - (b.place ?? 99));
    }
    return (this.view?.racers || []).map((r) => ({ ...r, place: null }));
  }

  renderMeta() {
    const model = this.session.model;
    const view = this.view || {};
    const game = gameTitle(model.game || view.game);
    const kind = view.rated ? "rated" : "casual";
    let when = "";
    if (model.status === "finished") {
      const winner = this.standing().find((p) => p.place === 1);
      when = winner ? `Race over: ${winner.name} won` : "Race over";
    } else {
      const ends = model.ends_at ?? view.ends_at;
      if (ends) when = `${formatTime(Math.max(0, ends - this.now()), { tenths: false })} left`;
    }
    setText(this.meta, [game, kind, when].filter(Boolean).join(" · "));
  }

  render() {
    const on = !!this.session;
    setHidden(this.live, !on);
    setHidden(this.quiet, on);
    this.el.dataset.race = on ? this.session.race : "";
    if (!on) {
      this.board.set({ board: null });
      return;
    }
    this.renderMeta();
    const racers = this.standing();
    // The board of the racer ahead (one of those sharing the lead stays while they share it).
    const ahead = racers.filter((p) => p.place === racers[0]?.place);
    if (!ahead.some((p) => p.player === this.leader)) this.leader = racers[0]?.player ?? null;
    const shown = racers.slice(0, RACERS_SHOWN);
    const key = JSON.stringify(shown.map((p) => [p.player, p.name, p.id, p.rating, p.bot, p.level, p.place,
      p.progress?.foundation, p.progress?.total, p.finished, p.resigned]));
    if (key !== this.racersKey) {
      this.racersKey = key;
      replace(this.racers, shown.map((p) => {
        const home = p.progress?.foundation ?? 0;
        const total = p.progress?.total ?? 0;
        const state = p.resigned ? "resigned" : p.place ? ordinal(p.place) : "";
        return h("li.featured-racer", { dataset: { player: p.player }, class: p.player === this.leader ? "leading" : "" },
          h("span.featured-place", {}, state),
          h("span.featured-name", {}, racerName(p)),
          h("span.featured-progress", { title: `${home} of ${total} cards home` }, total ? `${home}/${total}` : "–"));
      }), racers.length > shown.length ? h("li.featured-more.muted", {}, `and ${plural(racers.length - shown.length, "more racer")}`) : null);
    }
    const leader = racers.find((p) => p.player === this.leader);
    const name = leader?.name || "";
    this.board.set({ board: leader?.board ?? null });
    this.boardEl.setAttribute("aria-label", name ? `${name}'s board` : "Board");
    setText(this.caption, name ? `${name}'s board` : "");
    this.watch.href = `/race/${encodeURIComponent(this.session.race)}/watch`;
  }
}

/** The arenas running and the next ones, each a link to its page, with its countdown. */
class ArenaList {
  constructor(now) {
    this.now = now;
    this.list = h("ul.arena-list");
    this.el = h("section.panel.arenas", { "aria-labelledby": "arenas-title", hidden: true },
      h("h2#arenas-title", {}, "Arenas"), this.list);
    this.whens = [];
  }

  show(arenas) {
    const running = arenas.filter((a) => a.status === "running").sort((a, b) => a.ends_at - b.ends_at);
    const next = arenas.filter((a) => a.status === "upcoming").sort((a, b) => a.starts_at - b.starts_at)
      .slice(0, NEXT_ARENAS);
    const shown = [...running, ...next];
    this.whens = [];
    replace(this.list, shown.map((a) => {
      const when = h("span.arena-when");
      this.whens.push([when, a]);
      return h("li.arena-row", { dataset: { arena: a.arena, status: a.status } },
        h("div.arena-top", {},
          a.status === "running" ? h("span.tag.arena-live", {}, "live") : null,
          h("a.arena-name", { href: `/arena/${encodeURIComponent(a.arena)}`, "data-link": true }, a.name || gameTitle(a.game)),
          when),
        h("div.arena-game.muted", {}, `${gameTitle(a.game)} · ${plural(a.players ?? 0, "player")}`));
    }));
    setHidden(this.el, shown.length === 0);
    this.tick();
  }

  tick() {
    const now = this.now();
    for (const [el, a] of this.whens) {
      setText(el, a.status === "running" ? `ends ${countdown(a.ends_at - now)}` : `starts ${countdown(a.starts_at - now)}`);
    }
  }
}
