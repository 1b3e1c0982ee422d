// A game's leaderboard, /leaderboard/{game} (GET /api/leaderboard/{game}): the players with enough
// rated races in that game who are no longer provisional, by rating.

import { GAME_TITLES, gameTitle } from "../cards.js";
import { me } from "../me.js";
import { fetchJSON, h, replace } from "../ui.js";
import { leaderboardPath, playerPath } from "./player-parts.js";

/** Tabs between the games' pages of one kind: `path(game)` is each one's address. */
export function gameTabs(current, path, label) {
  return h("nav.game-tabs", { "aria-label": label },
    Object.entries(GAME_TITLES).map(([game, title]) => h("a.game-tab", {
      href: path(game), "data-link": true, "aria-current": game === current ? "page" : null, dataset: { game },
    }, title)));
}

export function mount(root, { game }) {
  const title = GAME_TITLES[game] ? gameTitle(game) : game;
  document.title = `Leaderboard: ${title} — solrace`;
  const body = h("div.leaderboard-body", { "aria-busy": "true" }, h("p.muted.page-loading", {}, "Loading…"));
  replace(root, h("section.leaderboard-page", {},
    h("header.page-head", {},
      h("h1.page-title", {}, "Leaderboard"),
      gameTabs(game, leaderboardPath, "Leaderboards by game")),
    h("section.panel", { "aria-labelledby": "board-title" }, h("h2#board-title", {}, title), body)));
  let closed = false;
  fetchJSON(`/api/leaderboard/${encodeURIComponent(game)}`)
    .then((data) => {
      if (!closed) show(data);
    })
    .catch((err) => {
      if (!closed) replace(body, h("p", {}, err.status === 404 ? "There is no such game." : "This page did not load: try again in a moment."));
    });

  function show(data) {
    body.removeAttribute("aria-busy");
    const players = data.players || [];
    const you = me.player?.id;
    const note = h("p.hint.min-races", {}, `Players with at least ${data.min_races ?? 5} rated races whose rating ` +
      "is no longer provisional. Rating ± twice its uncertainty.");
    if (!players.length) {
      replace(body, h("p.muted.empty-board", {}, `Nobody has played ${data.min_races ?? 5} rated races of ${title} yet: ` +
        "a Quick race or a bot race from the start page counts."), note);
      return;
    }
    replace(body, h("div.table-scroll", {}, h("table.data-table.leaderboard-table", {},
      h("caption.sr-only", {}, `${title} leaderboard`),
      h("thead", {}, h("tr", {}, ["Rank", "Player", "Rating", "Races"].map((t, i) => h("th", { scope: "col", class: i > 1 ? "num" : "" }, t)))),
      h("tbody", {}, players.map((p) => h("tr", { class: p.id === you ? "is-you" : "", dataset: { id: p.id } },
        h("td.place", {}, h("span.medal", { dataset: { place: p.rank } }, p.rank)),
        h("td", {}, h("a.player-link", { href: playerPath(p.name), "data-link": true }, p.name),
          p.id === you ? h("span.muted", {}, " (you)") : null),
        h("td.num.rating-cell", {}, h("strong", {}, Math.round(p.rating)),
          h("span.muted", {}, ` ± ${Math.round(2 * (p.deviation ?? 0))}`)),
        h("td.num", {}, p.races)))))), note);
  }

  return () => {
    closed = true;
  };
}
