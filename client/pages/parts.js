// Pieces shared by the race and spectator pages: a racer's card (name, progress bar, live board),
// the race header with status and clock, the share box and the progress announcer.

import { BoardView } from "../board.js";
import { gameTitle } from "../cards.js";
import { announce, copyText, formatTime, h, ordinal, raceLink, replace, setHidden, setText, toast } from "../ui.js";
import { store } from "../storage.js";
import { racerName } from "./player-parts.js";

/** A racer as others see it: name, place, a progress bar and a small live board. With
 * `onEnlarge(id)`, an "Enlarge" button (and a click on the board) asks to show it large. */
export class PlayerCard {
  constructor(playerId, { you = false, boardOptions = {}, onEnlarge = null } = {}) {
    this.id = playerId;
    this.name = h("span.player-name");
    this.nameKey = null;
    this.badge = h("span.player-badge");
    this.meta = h("span.player-meta");
    this.fill = h("div.bar-fill");
    this.barText = h("span.bar-text");
    this.bar = h("div.bar", { role: "progressbar", "aria-valuemin": 0 }, this.fill, this.barText);
    const boardEl = h("div");
    this.boardEl = boardEl;
    this.view = new BoardView(boardEl, { player: playerId, compact: true, emptyText: "Waiting for the deal…",
      label: "Board", ...boardOptions });
    this.enlarge = onEnlarge ? h("button.small.enlarge", { type: "button", "aria-pressed": "false",
      onclick: () => onEnlarge(playerId) }, "Enlarge") : null;
    if (onEnlarge) boardEl.addEventListener("click", () => onEnlarge(playerId));
    this.el = h("section.player-card", { dataset: { player: playerId }, class: you ? "is-you" : "" },
      h("header.player-head", {}, this.name, this.badge, this.meta, this.enlarge),
      this.bar,
      boardEl);
  }

  /** Show the board large (full cards, across the page) or small again. */
  setLarge(large) {
    this.el.classList.toggle("large", large);
    this.boardEl.classList.toggle("compact", !large);
    if (!large) this.boardEl.style.removeProperty("--fit-h");
    if (this.enlarge) {
      this.enlarge.textContent = large ? "Back to all boards" : "Enlarge";
      this.enlarge.setAttribute("aria-pressed", String(large));
    }
  }

  /** `showBoard`: false before the start, so the deal stays hidden until everyone gets it. */
  update(p, showBoard = true, place = null) {
    const progress = p.progress || {};
    const total = progress.total || 0;
    const home = progress.foundation || 0;
    const pct = total ? Math.round((home / total) * 100) : 0;
    const name = p.name || p.player;
    // The name links to the racer's page when he is a player; a bot says so (and its level).
    const key = `${name}|${p.id ?? ""}|${JSON.stringify(p.rating ?? null)}|${p.bot ? p.level ?? "bot" : ""}`;
    if (key !== this.nameKey) {
      this.nameKey = key;
      replace(this.name, racerName(p));
    }
    this.fill.style.width = `${pct}%`;
    this.barText.textContent = total ? `${home} / ${total}` : "–";
    this.bar.setAttribute("aria-valuenow", home);
    this.bar.setAttribute("aria-valuemax", total || 1);
    this.bar.setAttribute("aria-label", `${name}: ${home} of ${total} cards home`);
    const moves = progress.moves ?? 0;
    const hints = p.hints ?? 0;
    this.meta.textContent = `${moves} move${moves === 1 ? "" : "s"}${hints ? ` · ${hints} hint${hints === 1 ? "" : "s"}` : ""}`;
    let badge = "";
    if (p.finished || p.place) badge = `${ordinal(p.place)} · ${formatTime(p.time_ms)}`;
    else if (p.resigned) badge = "resigned";
    else if (p.connected === false) badge = "offline";
    else if (place) badge = ordinal(place);
    this.badge.textContent = badge;
    this.badge.classList.toggle("live-place", !!badge && !(p.finished || p.place) && !p.resigned && p.connected !== false);
    this.el.classList.toggle("finished", !!(p.finished || p.place));
    this.el.classList.toggle("resigned", !!p.resigned);
    this.el.classList.toggle("offline", p.connected === false);
    this.view.set({ board: (showBoard && p.board) || null, label: `${name}'s board` });
  }
}

/** Live places while the race runs: finishers by their place, then everyone else by cards home
 * (the server breaks ties by who got there first; here a tie shares the place). */
export function livePlaces(model) {
  // The server's order (docs/protocol.md, "Standings"): finishers by their places, then those
  // still racing or stopped, then those who resigned (a resign is a loss), each by cards home
  // less one per hint.
  const players = model.order.map((id) => model.players.get(id)).filter(Boolean);
  const finishers = players.filter((p) => p.finished || p.place);
  const others = players.filter((p) => !(p.finished || p.place));
  const places = new Map();
  for (const p of finishers) places.set(p.player, p.place);
  const key = (p) => [p.resigned ? 1 : 0, (p.hints ?? 0) - (p.progress?.foundation ?? 0)];
  const before = (a, b) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
  for (const p of others) {
    const mine = key(p);
    places.set(p.player, finishers.length + 1 + others.filter((q) => before(key(q), mine)).length);
  }
  return places;
}

/** Keeps one PlayerCard per racer in `container`, in the race's player order. With
 * `enlarge`, one racer's board at a time may be shown large (`large`: his id, or null);
 * `onLarge(card)` is told when one is, or null when none is any more. */
export class PlayerCards {
  constructor(container, { exclude = null, boardOptions = {}, enlarge = false, onLarge = null } = {}) {
    this.container = container;
    this.exclude = exclude;
    this.boardOptions = boardOptions;
    this.enlarge = enlarge;
    this.onLarge = onLarge;
    this.large = null;
    this.cards = new Map();
  }

  /** Show `id`'s board large, or (the same id again, or null) every board small. */
  toggleLarge(id) {
    this.large = id && id !== this.large && this.cards.has(id) ? id : null;
    for (const [cid, card] of this.cards) card.setLarge(cid === this.large);
    this.container.classList.toggle("has-large", !!this.large);
    this.onLarge?.(this.large ? this.cards.get(this.large) : null);
  }

  update(model) {
    const ids = model.order.filter((id) => id !== this.exclude?.());
    const places = livePlaces(model);
    for (const id of ids) {
      if (!this.cards.has(id)) {
        this.cards.set(id, new PlayerCard(id, { you: id === model.you, boardOptions: this.boardOptions,
          onEnlarge: this.enlarge ? (pid) => this.toggleLarge(pid) : null }));
      }
      this.cards.get(id).update(model.players.get(id), model.status === "running" || model.status === "finished",
        model.status === "running" ? places.get(id) : null);
    }
    for (const [id, card] of this.cards) {
      if (!ids.includes(id)) {
        card.el.remove();
        this.cards.delete(id);
        if (this.large === id) this.toggleLarge(null);
      }
    }
    const want = ids.map((id) => this.cards.get(id).el);
    if (want.some((el, i) => this.container.children[i] !== el) || this.container.children.length !== want.length) {
      this.container.replaceChildren(...want);
    }
  }
}

/** The last seconds of a race: the clock turns red. */
export const LOW_TIME_MS = 30_000;

/** {phase, text, clock} for the header: what the race is doing and the time to show. */
export function raceClock(model, now) {
  switch (model.status) {
    case "lobby":
      return { phase: "lobby", text: "Waiting to start", clock: "" };
    case "countdown": {
      const left = Math.max(0, (model.starts_at ?? now) - now);
      return { phase: "countdown", text: "Starting", clock: String(Math.ceil(left / 1000)), left };
    }
    case "running": {
      const elapsed = model.started_at ? now - model.started_at : 0;
      const remaining = model.ends_at ? model.ends_at - now : null;
      return {
        phase: "running",
        remaining,
        low: remaining !== null && remaining <= LOW_TIME_MS,
        text: remaining !== null ? `${formatTime(Math.max(0, remaining), { tenths: false })} left` : "Racing",
        // Whole seconds while the race runs (tenths only in finishing times, which rank): a
        // tenth ticking in the header redraws every open race page ten times a second, and
        // draws the eye away from the cards.
        clock: formatTime(Math.max(0, elapsed), { tenths: false }),
      };
    }
    case "finished":
      return { phase: "finished", text: "Race over", clock: "" };
    default:
      return { phase: "loading", text: model.notFound ? "Race not found" : model.refused ? "Not open to watch" : "Loading…",
        clock: "" };
  }
}

/** The header strip: game, race code with copy-link button, status pill and clock. */
export class RaceHeader {
  constructor(race, { watching = false } = {}) {
    this.race = race;
    this.spectate = null;
    this.racePage = null;
    this.title = h("h1.race-title");
    this.status = h("span.status-pill", { role: "status" });
    this.clock = h("span.clock", { "aria-label": "Race clock", role: "timer" });
    const link = raceLink(race);
    this.el = h("div.race-head", {},
      this.title,
      h("span.race-code", {}, "Race ", h("code", {}, race)),
      h("button.small.copy", {
        type: "button",
        title: link,
        onclick: async () => toast((await copyText(link)) ? "Race link copied" : link, "info", 2500),
      }, "Copy link"),
      watching
        ? (this.racePage = h("a.small.button#race-page", { href: `/race/${encodeURIComponent(race)}`, "data-link": true },
          "Race page"))
        // A new tab: a racer who looks at the spectator view must not leave his race.
        : (this.spectate = h("a.small.button#spectate", { href: `/race/${encodeURIComponent(race)}/watch`, target: "_blank",
          rel: "noopener", title: "Opens the spectator view in a new tab" }, "Spectate ↗")),
      h("span.grow"),
      this.status,
      this.clock);
  }

  update(model, now) {
    // Called ten times a second: a write, even of the same text, costs the page a style and
    // layout pass, so only what changed is written.
    setText(this.title, model.game ? gameTitle(model.game) : "Race");
    // A link only where it leads somewhere. The spectator view: of a race that is there and not
    // over (the race page shows a finished race whole), and not of today's daily deal (nobody
    // may watch it until the day is over). The race page: not of a race the server does not
    // have, nor of one it refuses to show, unless this browser raced it (today's daily deal).
    if (this.spectate) {
      setHidden(this.spectate, !model.loaded || model.status === "finished" || model.options?.kind === "daily");
    }
    if (this.racePage) setHidden(this.racePage, !!model.notFound || (!!model.refused && !store.racer(this.race)));
    const c = raceClock(model, now);
    setText(this.status, c.text);
    if (this.status.dataset.phase !== c.phase) this.status.dataset.phase = c.phase;
    setText(this.clock, c.phase === "running" ? c.clock : "");
    this.el.classList.toggle("low-time", !!c.low);
    // While the race counts down and runs, the header (status, clock) stays at the top.
    this.el.classList.toggle("live", c.phase === "countdown" || c.phase === "running");
    return c;
  }
}

/** Announces other racers' progress in the polite live region, at most every few seconds each. */
export class ProgressAnnouncer {
  constructor(gapMs = 8000) {
    this.gapMs = gapMs;
    this.last = new Map();
  }

  update(model) {
    const now = Date.now();
    for (const p of model.players.values()) {
      if (p.player === model.you || !p.progress) continue;
      const key = p.progress.foundation;
      const prev = this.last.get(p.player);
      if (!prev) {
        this.last.set(p.player, { key, at: 0 }); // the first change is announced at once
        continue;
      }
      if (prev.key !== key && now - prev.at > this.gapMs) {
        this.last.set(p.player, { key, at: now });
        announce(`${p.name}: ${key} of ${p.progress.total} cards home`);
      }
    }
  }
}

/** Toast (read out by screen readers too) for a racer who cleared the deal. */
export function announceFinisher(detail, you) {
  const who = detail.player === you ? "You" : detail.name || detail.player;
  const text = `${who} finished ${ordinal(detail.place)} in ${formatTime(detail.time_ms)}`;
  toast(text, detail.player === you ? "good" : "info", 5000, { silent: true });
  announce(text); // the live region, once (the toast is only for the eyes)
}

/** Said wherever a race is shown when its creator chose the deal: he knows it. */
export function seedChosenNote(model) {
  return model.seedChosen
    ? h("p.seed-chosen", { dataset: { note: "seed-chosen" } },
      "Deal chosen by the host: whoever created this race knows the cards.")
    : null;
}

/** The label of a racer that is a program (`bot: true`): the same on every page. */
export function botTag() {
  return h("span.tag.bot-tag", { title: "This racer is a program", dataset: { bot: "" } }, "bot");
}

/** Lobby list of racers. */
export function lobbyList(model) {
  const items = model.order.map((id) => {
    const p = model.players.get(id);
    return h("li", { class: p.connected === false ? "offline" : "" },
      h("span.dot", { "aria-hidden": "true" }),
      racerName({ ...p, name: p.name || id }),
      id === model.you ? h("span.muted", {}, " (you)") : null,
      p.ready ? h("span.tag", {}, "ready") : null);
  });
  const max = model.options?.players;
  return [
    h("h3", {}, `Racers ${model.order.length}${max ? ` / ${max}` : ""}`),
    items.length ? h("ul.lobby-list", {}, items) : h("p.muted", {}, "Nobody has joined yet."),
  ];
}
