// What the tournament page shows of a tournament, drawn from its model: the entrants (lobby),
// the standings with a column per round (rounds) or how far each got (knockout), the rounds with
// a link to every race, and the knockout bracket. Pure functions of the model; the host's remove
// buttons call `onRemove(entrant)`.

import { gameTitle } from "../cards.js";
import { store } from "../storage.js";
import { formatTime, h, ordinal } from "../ui.js";
import { botTag } from "./parts.js";

export const TIE_BREAKS = {
  rounds: "Points per round: entrants in the round minus place. Ties: cards home over all rounds, " +
    "then total time of finished deals, then entry order.",
  knockout: "Ranked by how far each got (the champion first), then games won, then entry order.",
};

// A race this browser raced (it holds its racer token) opens the race page, any other the spectator's.
const isOwn = (race) => !!store.racer(race);
const racePath = (race) => `/race/${encodeURIComponent(race)}${isOwn(race) ? "" : "/watch"}`;

function entrantName(row, you) {
  return [
    h("span.entrant-name", {}, row.name),
    row.bot ? botTag() : null,
    row.entrant === you ? h("span.muted", {}, " (you)") : null,
    row.removed ? h("span.tag.removed-tag", {}, "removed") : null,
  ];
}

function removeButton(row, onRemove) {
  if (!onRemove || row.removed) return null;
  return h("button.small.danger.remove-entrant", {
    type: "button", dataset: { entrant: row.entrant }, "aria-label": `Remove ${row.name}`,
    onclick: () => onRemove(row),
  }, "Remove");
}

/** The entrants before the start, in entry order. */
export function entrantList(model, { onRemove = null } = {}) {
  const view = model.view;
  const entrants = view.entrants || [];
  const active = entrants.filter((e) => !e.removed).length;
  const max = view.settings?.max_entrants;
  return [
    h("h2#entrants-title", {}, `Entrants ${active}${max && max < 512 ? ` / ${max}` : ""}`),
    entrants.length
      ? h("ul.entrant-list", {}, entrants.map((e) => h("li", {
        class: [e.entrant === model.you ? "is-you" : "", e.removed ? "removed" : ""].filter(Boolean).join(" "),
        dataset: { entrant: e.entrant },
      }, entrantName(e, model.you), removeButton(e, onRemove))))
      : h("p.muted", {}, "Nobody has entered yet. Share the link!"),
  ];
}

/** The standings table: rounds format with a column per round, knockout with how far each got. */
export function standingsTable(model, { onRemove = null } = {}) {
  const view = model.view;
  const rows = model.standings || [];
  const knockout = view.format === "knockout";
  const total = view.total_rounds || 0;
  const games = view.settings?.games || [];
  const final = view.status === "finished";
  const head = knockout
    ? ["Place", "Entrant", "Games won", "Result"]
    : ["Place", "Entrant", ...Array.from({ length: total }, (_, i) => `R${i + 1}`), "Points", "Cards", "Time"];
  const heads = head.map((t, i) => {
    const round = !knockout && i >= 2 && i < 2 + total ? i - 1 : 0;
    return h("th", {
      scope: "col",
      class: [round || (i > 1 && !knockout) || (knockout && i === 2) ? "num" : "", t === "Time" ? "col-time" : ""]
        .filter(Boolean).join(" "),
      title: round ? `Round ${round}: ${gameTitle(games[(round - 1) % games.length])}` : null,
    }, round ? [h("span", { "aria-hidden": "true" }, t), h("span.sr-only", {}, `Round ${round}`)] : t);
  });
  if (onRemove) heads.push(h("th", { scope: "col" }, h("span.sr-only", {}, "Host")));
  const body = rows.map((row) => {
    const cells = [
      h("td.place", {}, row.closed ? h("span.muted.closed", { title: "Account closed for fair play: no place" }, "closed")
        : row.flagged ? h("span.muted.flagged", { title: "Played at machine speed: no place" }, "flagged")
        : h("span.medal", { dataset: { place: row.place } }, ordinal(row.place))),
      h("th", { scope: "row" }, entrantName(row, model.you)),
    ];
    if (knockout) {
      cells.push(h("td.num", {}, row.points ?? 0), h("td", {}, knockoutResult(row, view, final)));
    } else {
      for (let i = 0; i < total; i++) {
        const p = row.rounds?.[i];
        cells.push(h("td.num.round-points", { dataset: { round: i + 1 } }, p === null || p === undefined ? "–" : p));
      }
      cells.push(
        h("td.num.points", {}, h("strong", {}, row.points ?? 0)),
        h("td.num", {}, row.cards ?? 0),
        h("td.num.col-time", {}, row.time_ms ? formatTime(row.time_ms) : "–"));
    }
    if (onRemove) cells.push(h("td", {}, final ? null : removeButton(row, onRemove)));
    return h("tr", {
      class: [row.entrant === model.you ? "is-you" : "", row.removed ? "removed" : ""].filter(Boolean).join(" "),
      dataset: { entrant: row.entrant },
    }, cells);
  });
  return h("table.standings-table.tournament-table", { "aria-describedby": "tie-breaks" },
    h("caption.sr-only", {}, final ? "Final table" : "Standings"),
    h("thead", {}, h("tr", {}, heads)),
    h("tbody", {}, body));
}

/** How the table is ordered, said once beside it. */
export function tieBreakNote(view) {
  return h("p.hint.table-note#tie-breaks", {}, TIE_BREAKS[view.format] || "");
}

function knockoutResult(row, view, final) {
  if (final && row.place === 1) return h("strong.champion", {}, "♛ Champion");
  if (row.eliminated_in) return `out in ${bracketRoundName(row.eliminated_in, view.total_rounds)}`;
  if (row.removed) return "removed";
  return view.status === "entry" ? "" : "still in";
}

/** "Final", "Semi-finals", "Quarter-finals", else "Round n". */
export function bracketRoundName(round, total) {
  const left = total - round;
  if (left === 0) return "the final";
  if (left === 1) return "the semi-finals";
  if (left === 2) return "the quarter-finals";
  return `round ${round}`;
}

const capital = (s) => s.charAt(0).toUpperCase() + s.slice(1);

/** Every round, newest first, with a link to each of its races and each race's order once it
 * is over. */
export function roundsList(model) {
  const view = model.view;
  const names = new Map((view.entrants || []).map((e) => [e.entrant, e.name]));
  const rounds = [...(view.rounds || [])].reverse();
  if (!rounds.length) return null;
  return rounds.map((r) => {
    const over = r.status === "over";
    // Finished early by the host: a round still under way no longer counts.
    const dropped = !over && view.status === "finished";
    const races = r.races.map((race, i) => {
      const result = r.results?.[race];
      const own = isOwn(race);
      return h("li.race-link", { dataset: { race }, class: own ? "is-you" : "" },
        h("a", { href: racePath(race), "data-link": true }, own ? `Race ${i + 1} (yours)` : `Race ${i + 1}`),
        h("span.muted", {}, result ? " · " : " · running"),
        result ? h("span.race-order", {}, raceOrder(result, r.places?.[race], names)) : null);
    });
    const void_ = (r.void || []).map((race) => h("li.race-link.void", { dataset: { race } },
      h("a", { href: racePath(race), "data-link": true }, race), h("span.muted", {}, " · void (re-dealt)")));
    const label = view.format === "knockout" ? capital(bracketRoundName(r.round, view.total_rounds)) : `Round ${r.round}`;
    return h("section.round-card", { dataset: { round: r.round, status: r.status } },
      h("h3", {}, `${label} · ${gameTitle(r.game)} `, h("span.tag", { class: over || dropped ? "tag-over" : "tag-live" },
        over ? "over" : dropped ? "not counted" : "running")),
      h("ul.race-links", {}, races, void_));
  });
}

/** A race's order: "1. Ann  2. Bo  3= Cy  3= Di". Equal results share a place, as in every
 * standings table, and a shared place is marked "=" (the server's `places`; a view without
 * them counts 1, 2, 3…). */
function raceOrder(entrants, places, names) {
  const placeOf = (j) => places?.[j] ?? j + 1;
  return entrants.flatMap((e, j) => {
    const place = placeOf(j);
    const shared = entrants.some((_, k) => k !== j && placeOf(k) === place);
    return [j ? " " : null, h("span.race-place", { dataset: { place }, title: shared ? `Shared ${ordinal(place)} place` : null },
      `${place}${shared ? "=" : "."} ${names.get(e) || e}`)];
  });
}

/** The knockout bracket: a column per bracket round, each match with its two entrants (a bye,
 * or "to be decided"), games won, the winner, and a link to each game. */
export function bracketView(model) {
  const view = model.view;
  const matches = view.bracket?.matches || [];
  if (!matches.length) return null;
  const names = new Map((view.entrants || []).map((e) => [e.entrant, e.name]));
  const total = view.total_rounds || Math.max(...matches.map((m) => m.round));
  const columns = [];
  for (let round = 1; round <= total; round++) {
    const here = matches.filter((m) => m.round === round);
    columns.push(h("div.bracket-round", { role: "listitem" },
      h("h3", {}, capital(bracketRoundName(round, total))),
      here.length ? h("ol.bracket-matches", {}, here.map((m) => matchBox(m, names, model.you)))
        : h("p.muted", {}, "To be decided")));
  }
  return h("div.bracket", { role: "list", "aria-label": "Bracket" }, columns);
}

function matchBox(m, names, you) {
  const slot = (e, other) => {
    const wins = e ? m.wins?.[e] ?? 0 : null;
    const text = e ? names.get(e) || e : other ? "bye" : "to be decided";
    return h("div.bracket-slot", {
      class: [e && m.winner === e ? "winner" : "", e && e === you ? "is-you" : "", e ? "" : "empty"].filter(Boolean).join(" "),
    }, h("span.slot-name", {}, text), e && m.games.length ? h("span.slot-wins", {}, wins) : null);
  };
  const [a, b] = m.entrants;
  return h("li.bracket-match", { dataset: { match: m.match } },
    slot(a, b), slot(b, a),
    m.games.length ? h("div.match-games", {}, m.games.map((race, i) =>
      h("a.small", { href: racePath(race), "data-link": true, "aria-label": `Game ${i + 1} (${race})` },
        `G${i + 1}`))) : null);
}
