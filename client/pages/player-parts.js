// Pieces about players shared by every page: a racer's name (a link to his page when he is a
// player), ratings and their changes as text, the house bots' levels.

import { h } from "../ui.js";

/** The house bots (docs/protocol.md, "One click to a race"): level → name and fixed rating. */
export const LEVELS = [
  { level: 1, name: "Random", rating: 700, about: "any legal move" },
  { level: 2, name: "Greedy", rating: 1000, about: "cards home first" },
  { level: 3, name: "Steady", rating: 1400, about: "the solver's line, slowly" },
  { level: 4, name: "Sharp", rating: 1800, about: "the solver's line" },
  { level: 5, name: "Ace", rating: 2200, about: "the solver's line, fast" },
];

export const levelOf = (n) => LEVELS.find((l) => l.level === Number(n)) || null;

/** The time limits of quick races and bot races, in seconds. */
export const QUICK_TIMES = [180, 300, 600];

export const playerPath = (name) => `/player/${encodeURIComponent(name)}`;
export const leaderboardPath = (game) => `/leaderboard/${encodeURIComponent(game)}`;
export const dailyPath = (game = "") => (game ? `/daily/${encodeURIComponent(game)}` : "/daily");

/** When the daily deal of the UTC day of `at` is revealed, and its races open to everyone: the
 * day's end, plus the last attempt's time limit (15 minutes) and a minute (docs/protocol.md,
 * "The daily deal"). Until then only its racer's own browser may open one. */
export function dailyRevealAt(at) {
  const DAY = 86_400_000;
  return (Math.floor(at / DAY) + 1) * DAY + 16 * 60_000;
}

/** {rating, deviation, provisional} from what the server sends: a number or such an object. */
export function asRating(value) {
  if (value === null || value === undefined) return null;
  if (typeof value === "number") return { rating: value, deviation: null, provisional: false };
  if (typeof value.rating !== "number") return null;
  return value;
}

/** "1563", or "1563?" while provisional. */
export function ratingText(value) {
  const r = asRating(value);
  if (!r) return "";
  return `${Math.round(r.rating)}${r.provisional ? "?" : ""}`;
}

/** "1563 ± 240" (the rating and twice its deviation), for titles and the player page. */
export function ratingRange(value) {
  const r = asRating(value);
  if (!r) return "";
  return r.deviation === null || r.deviation === undefined
    ? ratingText(r) : `${Math.round(r.rating)} ± ${Math.round(2 * r.deviation)}`;
}

/** "+63", "−12", "±0". */
export function deltaText(delta) {
  const d = Math.round(delta || 0);
  return d > 0 ? `+${d}` : d < 0 ? `−${-d}` : "±0";
}

/** "1500 → 1563? (+63)" for one row of a `ratings` message. */
export function changeText(change) {
  if (change.bot && change.before === change.after) return `${Math.round(change.after)} (fixed)`;
  return `${Math.round(change.before)} → ${Math.round(change.after)}${change.provisional ? "?" : ""} ` +
    `(${deltaText(change.delta ?? change.after - change.before)})`;
}

/** The rating chip: "1563?" with its range and state in the title. */
export function ratingChip(value, { label = "" } = {}) {
  const r = asRating(value);
  if (!r) return null;
  const title = `${label ? `${label}: ` : ""}rating ${ratingRange(r)}${r.provisional ? " (provisional)" : ""}`;
  return h("span.rating-chip", { title, class: r.provisional ? "provisional" : "" },
    label ? h("span.rating-game", {}, label) : null, ratingText(r));
}

/** A racer's name: a link to his page when he is a player (`id`), his rating at the start when
 * given, and for a bot its tag and, for a house bot, its level. */
export function racerName(p, { rating = true, link = true } = {}) {
  const name = p.name || p.player || "";
  const level = levelOf(p.level);
  return [
    p.id && link
      ? h("a.player-link", { href: playerPath(name), "data-link": true, dataset: { id: p.id } }, name)
      : h("span.racer-plain", {}, name),
    rating && !p.bot && asRating(p.rating) ? h("span.racer-rating", { title: `rating ${ratingRange(p.rating)} at the start` },
      ratingText(p.rating)) : null,
    p.bot ? botLabel(level) : null,
  ];
}

/** "bot" (a program), and for a house bot "level 2" (its name and rating in the title). */
export function botLabel(level) {
  return [
    h("span.tag.bot-tag", { title: "This racer is a program", dataset: { bot: "" } }, "bot"),
    level ? h("span.bot-level", { title: `House bot ${level.name}, rated ${level.rating}: ${level.about}` },
      `level ${level.level}`) : null,
  ];
}

/** "2 Dec 2026" for unix ms. */
export function dayText(ms) {
  return new Date(ms).toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" });
}
