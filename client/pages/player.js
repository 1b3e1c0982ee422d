// A player's page, /player/{name} (GET /api/players/{name}): his rating per game with its chart
// over time, his statistics per game, his recent races with their results and a link to each
// race's results and replay.

import { GAME_TITLES, gameTitle } from "../cards.js";
import { me } from "../me.js";
import { challengePanel } from "./challenge.js";
import { fetchJSON, formatTime, h, ordinal, replace } from "../ui.js";
import { store } from "../storage.js";
import { dailyPath, dailyRevealAt, dayText, deltaText, leaderboardPath, ratingText } from "./player-parts.js";
import { ratingChart } from "./rating-chart.js";

const KINDS = { quick: "quick race", bot: "vs bot", daily: "daily deal", challenge: "challenge" };

export function mount(root, { name }) {
  document.title = `${name} — solrace`;
  const charts = [];
  let closed = false;
  let challenge = null;
  replace(root, h("section.player-page", { "aria-busy": "true" }, h("p.muted.page-loading", {}, "Loading…")));

  fetchJSON(`/api/players/${encodeURIComponent(name)}`)
    .then((data) => {
      if (!closed) show(data);
    })
    .catch((err) => {
      if (closed) return;
      replace(root, h("section.panel.narrow", {},
        h("h1", {}, err.status === 404 ? "No such player" : "This page did not load"),
        h("p", {}, err.status === 404 ? `Nobody races under the name “${name}”.` : "Try again in a moment."),
        h("p", {}, h("a.button", { href: "/", "data-link": true }, "Go to the start page"))));
    });

  function show(p) {
    document.title = `${p.name} — solrace`;
    const yours = me.player?.id && me.player.id === p.id;
    // Anyone may challenge a player (a visitor becomes a guest as he does), not himself, not a
    // closed account.
    challenge?.destroy();
    challenge = yours || p.closed ? null : challengePanel({ to: p.name });
    if (challenge) {
      const panel = challenge.el;
      me.load().then(() => {
        if (me.player?.id === p.id) panel.hidden = true; // his own page, known a moment late
      });
    }
    const games = Object.keys(GAME_TITLES).filter((g) => p.ratings?.[g] || p.stats?.[g]);
    const ratingCards = Object.keys(GAME_TITLES).filter((g) => p.ratings?.[g]).map((g) => {
      const r = p.ratings[g];
      const chart = ratingChart(withStart(r), gameTitle(g));
      charts.push(chart);
      return h("section.panel.rating-card", { dataset: { game: g }, "aria-labelledby": `rating-${g}` },
        h("div.rating-card-head", {},
          h(`h2#rating-${g}`, {}, gameTitle(g)),
          h("a.small", { href: leaderboardPath(g), "data-link": true }, "Leaderboard")),
        h("p.rating-big", {},
          h("span.rating-value", { title: r.provisional ? "Provisional: a few more rated races settle it" : "" }, ratingText(r)),
          h("span.muted.rating-sub", {}, ` ± ${Math.round(2 * (r.deviation ?? 0))} · ` +
            `${r.races ?? 0} rated race${r.races === 1 ? "" : "s"}${r.provisional ? " · provisional" : ""}`)),
        chart.el);
    });
    replace(root, h("section.player-page", { dataset: { player: p.id } },
      h("header.page-head", {},
        h("h1.page-title", {}, p.name, yours ? h("span.tag.you-tag", {}, "you") : null),
        h("p.muted.page-facts", {}, p.created_at ? `Racing since ${dayText(p.created_at)}` : ""),
        p.closed ? h("p.player-closed", { role: "note" }, `Account closed for fair play on ${dayText(p.closed.at)}: ` +
          "its results are out of every table, and its opponents got back the rating points they lost to it.") : null),
      ratingCards.length ? h("div.rating-cards", {}, ratingCards)
        : h("p.panel.muted.no-ratings", {}, yours ? "No rated race yet: a Quick race or a bot race from the start page counts."
          : "No rated race yet."),
      challenge ? challenge.el : null,
      games.length ? statsPanel(p, games) : null,
      recentPanel(p)));
  }

  return () => {
    closed = true;
    challenge?.destroy();
    for (const c of charts) c.destroy();
  };
}

/** Every player starts at 1500 ± 2 × 350 (docs/protocol.md, "Ratings"): a history that
 * goes back to his first rated race starts from there. */
const START = { rating: 1500, deviation: 350 };
function withStart(r) {
  const history = r.history || [];
  if (!history.length || history.length !== r.races) return history;
  return [[history[0][0] - 1, START.rating, START.deviation], ...history];
}

function statsPanel(p, games) {
  // One column per game (at most three), one row per figure: narrow enough for a phone.
  const figures = [
    ["Races", (st) => st.races ?? 0],
    ["Wins", (st) => st.wins ?? 0],
    ["Deals cleared", (st) => st.finished ?? 0],
    ["Best time", (st) => (st.best_ms ? formatTime(st.best_ms) : "–")],
    ["Median time", (st) => (st.median_ms ? formatTime(st.median_ms) : "–")],
    ["Cards home (average)", (st) => (st.cards_avg !== null && st.cards_avg !== undefined ? Number(st.cards_avg).toFixed(1) : "–")],
  ];
  return h("section.panel.stats-panel", { "aria-labelledby": "stats-title" },
    h("h2#stats-title", {}, "Statistics"),
    h("div.table-scroll", {}, h("table.data-table.stats-table", {},
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, h("span.sr-only", {}, "Figure")), games.map((g) => h("th.num", { scope: "col", dataset: { game: g } }, gameTitle(g))))),
      h("tbody", {}, figures.map(([label, value]) => h("tr", {},
        h("th", { scope: "row" }, label),
        games.map((g) => h("td.num", {}, value(p.stats?.[g] || {})))))))));
}

function recentPanel(p) {
  const recent = p.recent || [];
  const rows = recent.map((r) => {
    const done = r.time_ms !== null && r.time_ms !== undefined;
    const result = r.place ? `${ordinal(r.place)}${r.racers > 1 ? ` of ${r.racers}` : ""}` : "–";
    return h("tr", { dataset: { race: r.race } },
      h("td", {}, h("span.recent-game", {}, gameTitle(r.game)),
        r.kind && KINDS[r.kind] ? h("span.muted.kind", {}, ` · ${KINDS[r.kind]}`) : null,
        h("span.recent-when.muted", {}, r.at ? whenText(r.at) : "")),
      h("td.num", {}, h("span.recent-place", { class: r.place === 1 && r.racers > 1 ? "won" : "" }, result),
        h("span.recent-result.muted", {}, done ? formatTime(r.time_ms) : `${r.foundation ?? 0}/${r.total ?? "?"} home`)),
      h("td.num.delta", { class: !r.rated ? "casual" : r.delta > 0 ? "up" : r.delta < 0 ? "down" : "" },
        r.rated ? deltaText(r.delta) : "casual"),
      h("td.num", {}, resultsLink(r)));
  });
  return h("section.panel.recent-panel", { "aria-labelledby": "recent-races-title" },
    h("h2#recent-races-title", {}, "Recent races"),
    rows.length ? h("div.table-scroll", {}, h("table.data-table.recent-table", {},
      h("thead", {}, h("tr", {}, ["Race", "Place", "Rating", "Results"]
        .map((t, i) => h("th", { scope: "col", class: i ? "num" : "" }, t)))),
      h("tbody", {}, rows)))
      : h("p.muted", {}, "No race yet."));
}

/** The link to a recent race's results and replay. A daily deal's race stays secret until the
 * day is over (nobody but its racer may open it): until then, the day's table instead. */
function resultsLink(r) {
  if (r.kind === "daily" && Date.now() < dailyRevealAt(r.at ?? Date.now()) && !store.racer(r.race)) {
    return h("a.daily-table-link", { href: dailyPath(r.game), "data-link": true,
      title: "The replay opens when the day is over", "aria-label": `The ${gameTitle(r.game)} daily deal's table ` +
        "(its replay opens when the day is over)" }, "Day's table");
  }
  return h("a", { href: `/race/${encodeURIComponent(r.race)}`, "data-link": true,
    "aria-label": `Results and replay of the ${gameTitle(r.game)} race ${r.race}` }, "Replay");
}

/** "today 14:05", "yesterday 09:12", or "2 Dec 2026". */
function whenText(ms) {
  const d = new Date(ms);
  const days = Math.round((new Date().setHours(0, 0, 0, 0) - new Date(ms).setHours(0, 0, 0, 0)) / 86_400_000);
  const time = d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  return days === 0 ? `today ${time}` : days === 1 ? `yesterday ${time}` : dayText(ms);
}
