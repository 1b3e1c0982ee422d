// Results of a finished race: standings with the deal's par, the revealed deal with an in-browser
// check of the commitment, a line per racer from his post-race analysis (where the deal was lost,
// linked to that move in the replay), and a side-by-side replay of any two racers (boards come
// from the server's replay API). A race of a tournament round that ends before the others gets
// its deal revealed later (`reveal`): the check, the analyses and the replay wait for it. The
// address ?replay=p1&at=20 opens the replay on that racer's action.

import { gameTitle } from "../cards.js";
import { me as player } from "../me.js";
import { fetchJSON, formatTime, h, navigate, ordinal, replace, toast } from "../ui.js";
import { verifyCommitment } from "../verify.js";
import { nextActions, rematchOffer } from "./finish.js";
import { hintsTaken } from "./hint.js";
import { accuracyText, loadAnalysis, lossText } from "./analysis.js";
import { seedChosenNote } from "./parts.js";
import { changeText, deltaText, racerName } from "./player-parts.js";
import { Replay } from "./replay.js";

/** Remember the commitment this browser saw before the race ended, to check against later. */
export function rememberCommitment(model) {
  if (!model.commitment || model.status === "finished") return;
  const key = `solrace:commit:${model.race}`;
  if (!localStorage.getItem(key)) localStorage.setItem(key, model.commitment);
}

function seenCommitment(race) {
  return localStorage.getItem(`solrace:commit:${race}`);
}

/** A racer's rating change in the standings: "1500 → 1563 (+63)", or "…" while scoring. */
function ratingCell(change, scored) {
  if (!change) return h("td.num.rating-change", {}, scored ? "–" : "…");
  const cls = change.bot ? "" : change.delta > 0 ? "up" : change.delta < 0 ? "down" : "";
  return h("td.num.rating-change", { class: cls, title: change.bot ? "A house bot's rating is fixed" :
    `${deltaText(change.delta)}${change.provisional ? ", provisional" : ""}` }, changeCells(change));
}

/** "1500 → 1563? (+63)" in parts, so that a phone may leave out where it came from. */
function changeCells(change) {
  if (change.bot && change.before === change.after) return changeText(change);
  return [h("span.rc-from", {}, `${Math.round(change.before)} → `),
    h("span.rc-to", {}, `${Math.round(change.after)}${change.provisional ? "?" : ""}`),
    h("span.rc-delta", {}, ` (${deltaText(change.delta ?? change.after - change.before)})`)];
}

/** The par line: what the solver says of the deal. */
export function parText(par, revealed) {
  if (par?.verdict === "won") return `Par: ${par.moves} moves (the solver's winning line).`;
  if (par?.verdict === "lost") return "Par: unwinnable (proved by the solver).";
  if (par?.verdict === "unknown") return "Par: not found by the solver.";
  return revealed ? "Par: the solver is working on it…" : "";
}

/** Why the race ended, as far as the model tells: "done" (every racer finished or resigned),
 * "time" (the time limit), "abandoned" (every racer still racing left for two minutes), or
 * null. The server's `reason`, when it sends one, wins. */
export function overReason(model) {
  if (model.status !== "finished") return null;
  if (model.reason) return model.reason;
  const rows = model.standings || [];
  if (!rows.length) return null;
  if (rows.every((s) => s.resigned || (s.time_ms !== null && s.time_ms !== undefined))) return "done";
  const end = model.finished_at ?? model.overAt;
  if (model.ends_at && end && end < model.ends_at - 1500) return "abandoned";
  return "time";
}

const REASONS = {
  abandoned: "The race ended early: every racer still racing had been offline for two minutes. " +
    "The standings are as they stood then.",
  time: "Time is up: the racers who had not finished are ranked by cards home.",
  idle: "Everyone else was done, and the last one racing stopped making moves: the race ended " +
    "there, as if its time had run out, with his cards home as they stood.",
  humans_done: "Every human racer had finished or resigned, so the race ended there: the bots " +
    "still playing are ranked by the cards they had home.",
  claimed: "A racer claimed the race: every other racer still racing had been offline for a minute. " +
    "The standings are as they stood then.",
  resigned: "Every other racer resigned, so the last one racing won. A resign is a loss.",
  no_show: "Your opponent never took the seat: the race did not take place (nothing is rated).",
};

/** Why a race meant to be rated did not change ratings (the `ratings` message's `casual`), and
 * what to do about it (docs/protocol.md, "Rated play"). */
export const CASUAL = {
  guest: "Casual: guests play casual races. Set a password (the menu under your name) to make " +
    "your name an account: your next races are rated.",
  aborted: "Unrated for you: you made fewer than three moves, so the race is aborted for you.",
  too_few: "Unrated: fewer than two racers played it out (an opponent left before his third move, " +
    "or was a guest).",
  same_network: "Casual: two racers played from the same network. Rated races are between players " +
    "on networks of their own.",
  repeat_pair: "Casual: you two have had three rated races together today already. Race someone else " +
    "for rating points.",
  not_all_accounts: "Casual: a custom race is rated only when every racer is an account (a name with a " +
    "password) on a network of his own.",
  closed: "Unrated: a racer's account was closed for fair play.",
};

/** The racer's own outcome in words: "Won", "Lost (resigned)", "Aborted…", "2nd of 3". */
export function outcomeText(model) {
  const mine = (model.standings || []).find((s) => s.player === model.you);
  if (!mine || model.role !== "racer") return "";
  const n = model.standings.length;
  if (mine.resigned) return "Lost (resigned)";
  const shared = model.standings.filter((s) => s.place === mine.place).length > 1;
  if (mine.place === 1 && n > 1 && !shared) {
    return overReason(model) === "resigned" ? "Won: every other racer resigned" : "Won";
  }
  if (mine.aborted) return "Aborted: fewer than three moves — this race does not count for you";
  if (mine.place === 1 && shared) return "Shared first place";
  return n > 1 ? `${ordinal(mine.place)} of ${n}${shared ? " (shared)" : ""}` : "";
}

export function mountResults(el, session) {
  const model = session.model;
  const race = model.race;
  const standingsEl = h("div.standings");
  const verifyEl = h("div.verify", { "aria-live": "polite" });
  const replayEl = h("section.panel.replay", { "aria-labelledby": "replay-title" });
  const reasonEl = h("p.over-reason");
  const parEl = h("p.par-line", { "aria-live": "polite" });
  const analysisEl = h("div.analysis-lines", { hidden: true });
  const ratingEl = h("p.rating-line", { "aria-live": "polite", hidden: true });
  const outcomeEl = h("p.you-outcome", { hidden: true });
  const actions = nextActions(session);
  const offer = rematchOffer(session);
  let resultsGrid = null;
  replace(el,
    offer.el,
    resultsGrid = h("div.results", {},
      h("section.panel.results-main", { "aria-labelledby": "results-title" },
        h("div.results-head", {}, h("h2#results-title", {}, "Results"), actions.el),
        outcomeEl,
        reasonEl,
        ratingEl,
        standingsEl,
        parEl,
        analysisEl),
      h("section.panel.deal", { "aria-labelledby": "deal-title" },
        h("h2#deal-title", {}, "The deal"),
        seedChosenNote(model),
        verifyEl),
      replayEl));

  let summary = null;
  let replay = null;
  let destroyed = false;

  function renderStandings() {
    const me = model.you;
    const reason = overReason(model);
    reasonEl.textContent = REASONS[reason] || "";
    reasonEl.hidden = !reasonEl.textContent;
    outcomeEl.textContent = outcomeText(model);
    outcomeEl.hidden = !outcomeEl.textContent;
    const mine = (model.standings || []).find((s) => s.player === me);
    outcomeEl.dataset.outcome = mine?.resigned ? "resigned" : /^Won/.test(outcomeEl.textContent) ? "won"
      : mine?.aborted ? "aborted" : "placed";
    const par = model.par?.verdict === "won" ? model.par.moves : null;
    const hints = !!model.options?.hints || (model.standings || []).some((s) => s.hints);
    parEl.textContent = parText(model.par, model.seed !== null && model.seed !== undefined);
    parEl.hidden = !parEl.textContent;
    // Ratings: a rated race shows each racer's change once it is scored (the `ratings` message,
    // or the snapshot's field), and says it waits for it until then.
    const ratings = model.ratings;
    const changes = new Map((ratings?.changes || []).map((c) => [c.player, c]));
    const rated = ratings ? !!ratings.rated : !!model.options?.rated;
    renderRatingLine(ratings, changes.get(me), rated);
    resultsGrid.classList.toggle("rated", rated);
    const rows = (model.standings || []).map((s) => {
      const p = s.progress || {};
      const status = (s.time_ms !== null && s.time_ms !== undefined ? "finished" : s.resigned ? "lost (resigned)"
        : reason === "abandoned" ? "left" : reason === "humans_done" ? "stopped"
        : reason === "claimed" ? "offline" : reason === "resigned" ? "won"
        : reason === "no_show" ? "no race"
        : "time up") + (s.aborted ? " · aborted" : "");
      // A hint costs a finisher time, shown beside his time, and anyone else a card home,
      // shown beside his cards (the standings' order counts both: docs/protocol.md).
      const finished = s.time_ms !== null && s.time_ms !== undefined;
      const penalty = finished && s.penalty_ms ? h("span.penalty", { title: hintsTaken(s.hints, true) },
        ` +${Math.round(s.penalty_ms / 1000)} s`) : null;
      const cardCost = !finished && s.hints ? h("span.penalty.card-cost", { title: hintsTaken(s.hints, false) },
        ` (−${s.hints} for ${s.hints === 1 ? "a hint" : `${s.hints} hints`})`) : null;
      return h("tr", { class: s.player === me ? "is-you" : "", dataset: { player: s.player } },
        h("td.place", {}, h("span.medal", { dataset: { place: s.place } }, ordinal(s.place))),
        h("td", {}, racerName({ ...model.players.get(s.player), ...s }), s.player === me ? h("span.muted", {}, " (you)") : null,
          h("span.status-inline.muted", { "aria-hidden": "true" }, status)),
        h("td.num", {}, s.time_ms !== null && s.time_ms !== undefined ? formatTime(s.time_ms) : "–", penalty),
        h("td.num.cards", {}, `${p.foundation ?? 0} / ${p.total ?? "?"}`, cardCost),
        h("td.num.moves", {}, p.moves ?? 0, par !== null ? h("span.par-note", {}, ` / par ${par}`) : null),
        hints ? h("td.num.hints", {}, s.hints ?? 0) : null,
        rated ? ratingCell(changes.get(s.player), !!ratings) : null,
        h("td.status", {}, status));
    });
    replace(standingsEl,
      h("table.standings-table", {},
        h("caption.sr-only", {}, "Standings"),
        h("thead", {}, h("tr", {},
          ["Place", "Racer", "Time", "Cards home", "Moves", hints ? "Hints" : null, rated ? "Rating" : null, ""]
            .filter((t) => t !== null).map((t) => h("th", { scope: "col", class: t === "Moves" ? "col-moves" : t ? "" : "col-status" }, t)))),
        h("tbody", {}, rows)));
  }

  function renderRatingLine(ratings, mine, rated) {
    ratingEl.hidden = !(model.options?.rated || ratings || model.options?.casual) || model.role !== "racer";
    if (ratingEl.hidden) return;
    const game = gameTitle(model.game);
    const guest = !!player.player && !(player.player.account ?? player.player.password);
    const mineRow = (model.standings || []).find((s) => s.player === model.you);
    if (ratings?.held) {
      ratingEl.textContent = "Rated, held for review: a result of this race was flagged by the fair-play " +
        "checks. A moderator looks at it; then the ratings change.";
    } else if (!rated) {
      const why = guest ? "guest" : mineRow?.aborted ? "aborted" : ratings?.casual;
      ratingEl.textContent = CASUAL[why] || "Casual race: ratings do not change.";
      ratingEl.dataset.casual = why || "";
    } else if (!ratings) {
      ratingEl.textContent = "Rated race: working out the new ratings…";
    } else if (mine) {
      replace(ratingEl, `Your ${game} rating: `, h("strong", {}, changeText(mine)),
        mine.provisional ? h("span.muted", {}, " — ? while provisional: a few more races settle it") : null);
      ratingEl.dataset.delta = Math.sign(mine.delta ?? 0);
    } else {
      ratingEl.textContent = "Your rating did not change in this race.";
    }
  }

  async function renderVerify() {
    if ((model.seed === null || model.seed === undefined) && model.options?.kind === "daily") {
      replace(verifyEl, h("p.muted.reveal-wait", {}, "Everyone plays today's deal: its seed and salt are revealed, " +
        "and can be checked, once the day is over. ", h("a", { href: `/daily/${encodeURIComponent(model.game)}`,
          "data-link": true }, "Today's table")));
      return;
    }
    if ((model.seed === null || model.seed === undefined) && model.tournament) {
      replace(verifyEl, h("p.muted.reveal-wait", {}, `Every race of round ${model.tournament.round} plays this deal: ` +
        "seed and salt are revealed, and checked here, when the last of them ends."));
      return;
    }
    const seen = seenCommitment(race);
    const commitment = seen || model.commitment || summary?.commitment;
    const facts = h("dl.facts", {},
      h("dt", {}, "Game"), h("dd", {}, gameTitle(model.game)),
      h("dt", {}, "Seed"), h("dd", {}, h("code#seed-value", {}, model.seed ?? "–")),
      h("dt", {}, "Salt"), h("dd", {}, h("code.wrap", {}, model.salt ?? "–")),
      h("dt", {}, seen ? "Commitment (seen here before the end)" : "Commitment"),
      h("dd", {}, h("code.wrap#commitment-value", {}, commitment ?? "–")));
    const outcome = h("p.verify-result", { id: "verify-result" }, "Checking…");
    const again = h("button.small", { type: "button", onclick: () => check() }, "Verify deal");
    replace(verifyEl, facts, h("div.verify-row", {}, again, outcome),
      h("p.hint", {}, "The server published SHA-256(game:seed:salt) before the start. Your browser recomputes it " +
        "from the revealed seed and salt: a match proves the deal was fixed in advance."));
    async function check() {
      outcome.textContent = "Checking…";
      outcome.dataset.ok = "";
      if (model.seed === null || model.salt === null || !commitment) {
        outcome.textContent = "Seed, salt or commitment missing.";
        outcome.dataset.ok = "false";
        return;
      }
      const r = await verifyCommitment({ game: model.game, seed: model.seed, salt: model.salt, commitment });
      outcome.dataset.ok = String(r.ok);
      replace(outcome,
        r.ok ? "✓ Verified: the deal matches the commitment." : "✗ Mismatch: the deal does NOT match the commitment!",
        h("br"),
        h("small.muted", {}, `SHA-256("${r.input}") = `, h("code.wrap", {}, r.computed)));
    }
    await check();
  }

  async function loadSummary() {
    // Today's deal stays secret until the day is over: nothing to ask the API for yet.
    if (model.options?.kind === "daily" && (model.seed === null || model.seed === undefined)) {
      renderReplay();
      return;
    }
    try {
      summary = await fetchJSON(`/api/races/${encodeURIComponent(race)}`);
    } catch {
      summary = null;
    }
    if (destroyed) return;
    renderReplay();
  }

  function renderReplay() {
    if (model.seed === null || model.seed === undefined) {
      replace(replayEl, h("h2#replay-title", {}, "Replay"),
        h("p.muted", {}, model.options?.kind === "daily" ? "Replays of today's deal open when the day is over."
          : "Replays open when every race of the round has ended."));
      return;
    }
    const players = (model.standings || []).map((s) => ({ player: s.player, name: s.name }));
    if (!players.length) {
      replace(replayEl, h("h2#replay-title", {}, "Replay"), h("p.muted", {}, "Nobody raced."));
      return;
    }
    replay?.destroy();
    replay = new Replay(replayEl, race, players, model.you);
    const asked = new URLSearchParams(location.search);
    if (asked.has("replay")) replay.focus(asked.get("replay"), Number(asked.get("at")) || 0);
    renderAnalyses(players);
  }

  /** One line per racer from his analysis, asked one racer at a time (the server works out a
   * few at once per client). */
  async function renderAnalyses(players) {
    const items = new Map(players.map((p) => [p.player, h("li", { dataset: { player: p.player } },
      h("strong", {}, p.name || p.player), ": ", h("span.muted", {}, "analysing…"))]));
    replace(analysisEl, h("h3", {}, "Where each race was lost or won, and what kept it, by the solver"), h("ul.analysis-list", {}, [...items.values()]));
    analysisEl.hidden = false;
    for (const p of players) {
      let report = null;
      let failure = "";
      try {
        report = await loadAnalysis(race, p.player);
      } catch (err) {
        failure = `no analysis (${err.message})`;
      }
      if (destroyed) return;
      const li = items.get(p.player);
      const loss = report?.lost_at;
      const link = loss ? h("a.analysis-link", { href: `/race/${encodeURIComponent(race)}?replay=${encodeURIComponent(p.player)}&at=${loss.at}`,
        onclick: (e) => {
          if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
          e.preventDefault();
          history.replaceState(history.state, "", e.currentTarget.getAttribute("href"));
          replay?.focus(p.player, loss.at);
        } }, "see the move in the replay") : null;
      const accuracy = accuracyText(report);
      replace(li, h("strong", {}, p.name || p.player), ": ", report ? lossText(report) : failure, link ? " " : null, link,
        accuracy ? [" ", h("span.accuracy", {}, accuracy)] : null);
      li.dataset.kind = loss ? "lost" : report ? "kept" : "none";
    }
  }

  let shownSeed;
  function update() {
    renderStandings();
    actions.update();
    offer.update();
    if (model.seed !== shownSeed) { // the first time, and when a tournament round reveals its deal
      shownSeed = model.seed;
      renderVerify();
      loadSummary();
    }
  }

  rememberCommitment(model);
  update();
  // A quick race the opponent never came to: back to the queue at once (the server keeps the
  // racer's place at its head for a minute).
  if (overReason(model) === "no_show" && model.options?.kind === "quick" && model.role === "racer") {
    toast("Your opponent did not come: looking for another", "info", 4000);
    navigate("/", { seek: { game: model.game, time_limit: model.options.time_limit ?? 300 } });
  }
  // New ratings: the top bar's chips follow.
  const onRatings = () => player.load();
  session.addEventListener("ratings", onRatings);

  return {
    update,
    destroy() {
      destroyed = true;
      session.removeEventListener("ratings", onRatings);
      replay?.destroy();
    },
  };
}
