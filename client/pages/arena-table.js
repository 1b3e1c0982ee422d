// What the arena page (and the bar on its races) shows of an arena's table, drawn from its rows
// (docs/protocol.md, "Arenas": {place, player, name, points, races, wins, streak, racing, paused,
// form, flagged?, closed?}): the live table, a racer's marks (on a streak, racing, paused), his last results,
// the podium, and the countdown's words. Pure functions of what they are given.

import { h, ordinal } from "../ui.js";
import { playerPath } from "./player-parts.js";

/** Wins in a row from which a racer's next win counts 4 points, not 2 (core/arena.py). */
export const STREAK_FROM = 2;

export const RULES = "A win scores 2 points, a shared first place 1. After two wins in a row every win " +
  "scores 4 (marked ×2) until a race not won. A racer who makes no move loses his race and is paused.";

const RESULT_WORDS = { W: "won", D: "shared first", L: "lost", F: "flagged" };

/** His last results, oldest first, as letters a screen reader hears as words. */
export function formChips(form) {
  const letters = [...(form || "")];
  if (!letters.length) return h("span.form.muted", {}, "–");
  return h("span.form", { role: "img", "aria-label": `Last results: ${letters.map((l) => RESULT_WORDS[l] || l).join(", ")}` },
    letters.map((l) => h("span.form-chip", { dataset: { result: l }, "aria-hidden": "true" }, l)));
}

/** The ×2 mark of a racer on a streak (his next win counts double), or null. */
export function streakMark(row) {
  if (!row || row.streak < STREAK_FROM) return null;
  const why = `${row.streak} wins in a row: the next win counts 4 points`;
  return h("span.streak-mark", { title: why }, h("span", { "aria-hidden": "true" }, "×2"), h("span.sr-only", {}, why));
}

/** The racer's name (linked to his page) and his marks. */
function racerCell(row, myId) {
  return [
    h("a.player-link", { href: playerPath(row.name), "data-link": true, dataset: { id: row.player } }, row.name),
    row.player === myId ? h("span.muted", {}, " (you)") : null,
    streakMark(row),
    row.racing ? h("span.tag.tag-racing", {}, "racing") : null,
    row.paused ? h("span.tag.tag-paused", {}, "paused") : null,
  ];
}

function placeCell(row) {
  if (row.closed) {
    return h("td.place", {}, h("span.muted.closed", { title: "Account closed for fair play: no place" }, "closed"));
  }
  return h("td.place", {}, row.flagged || !row.place
    ? h("span.muted.flagged", { title: "Played at machine speed: no place" }, "flagged")
    : h("span.medal", { dataset: { place: row.place } }, ordinal(row.place)));
}

function tableRow(row, myId) {
  return h("tr", { class: row.player === myId ? "is-you" : null, dataset: { player: row.player } },
    placeCell(row),
    h("th", { scope: "row" }, racerCell(row, myId)),
    h("td.num.points", {}, h("strong", {}, row.points)),
    h("td.num.wins", {}, row.wins),
    h("td.num.col-races", {}, row.races),
    h("td.col-form", {}, formChips(row.form)));
}

/** The table (its rows as given: the first 50 of a big one), `myId`'s row marked. */
export function arenaTable(rows, { myId = null, caption = "Table" } = {}) {
  const heads = [["Place", ""], ["Racer", ""], ["Points", "num"], ["Wins", "num"], ["Races", "num col-races"],
    ["Form", "col-form"]];
  return h("table.standings-table.arena-table", { "aria-describedby": "arena-rules" },
    h("caption.sr-only", {}, caption),
    h("thead", {}, h("tr", {}, heads.map(([t, cls]) => h("th", { scope: "col", class: cls || null }, t)))),
    h("tbody", {}, rows.map((row) => tableRow(row, myId))));
}

/** The first three of the final table, the winner in the middle (in reading order: 1st, 2nd,
 * 3rd). */
export function podium(rows, myId) {
  const top = rows.filter((r) => r.place && r.place <= 3 && !r.flagged).slice(0, 3);
  if (!top.length) return h("p.muted", {}, "Nobody raced in this arena.");
  return h("ol.podium", { "aria-label": "Podium" }, top.map((r) => h("li.podium-step", {
    class: r.player === myId ? "is-you" : null, dataset: { place: r.place },
  },
  h("span.medal", { dataset: { place: r.place } }, ordinal(r.place)),
  h("a.podium-name.player-link", { href: playerPath(r.name), "data-link": true }, r.name),
  r.player === myId ? h("span.podium-you", {}, "you") : null,
  h("span.podium-points", {}, `${r.points} point${r.points === 1 ? "" : "s"}`),
  h("span.podium-wins.muted", {}, `${r.wins} win${r.wins === 1 ? "" : "s"} in ${r.races} race${r.races === 1 ? "" : "s"}`))));
}

/** "0:42", "1:05:09", or "3 d 4 h" for `ms` from now. */
export function untilText(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const days = Math.floor(s / 86400);
  if (days) return `${days} d ${Math.floor((s % 86400) / 3600)} h`;
  const hours = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, "0");
  return hours ? `${hours}:${String(mm).padStart(2, "0")}:${ss}` : `${mm}:${ss}`;
}

/** The countdown's words for the session's arena now: to the start, then to the end. */
export function clockText(session) {
  const view = session.model.view;
  const now = session.now();
  switch (session.phase()) {
    case "upcoming": return `Starts in ${untilText(view.starts_at - now)}`;
    case "running": return `Ends in ${untilText(view.ends_at - now)}`;
    case "closing": return "Time is up: the last races are finishing";
    case "finished": return "Finished";
    default: return "";
  }
}

/** "2 points · 1st of 12" for the viewer's row. */
export function standingText(row, entrants) {
  if (!row) return "";
  const points = `${row.points} point${row.points === 1 ? "" : "s"}`;
  if (row.closed) return `${points} · no place (account closed for fair play)`;
  if (row.flagged || !row.place) return `${points} · no place (flagged)`;
  return `${points} · ${ordinal(row.place)} of ${entrants}`;
}
