// Post-race analysis of a racer, from GET /api/races/{race}/analysis/{player} (docs/protocol.md,
// "Post-race analysis"): where the deal was lost (the first move after which the solver proved
// that no line wins, knowing every card) and the move that would have kept it, an accuracy
// figure, the longest thinks, the moves against par. The server
// works it out in its solver's process once the deal is revealed; while it does, it answers 202
// and the page asks again when told. One request per racer and page, shared by the results and
// the replay.

import { pileLabel } from "../cards.js";
import { parseMove } from "../moves.js";
import { formatTime, h } from "../ui.js";

const TABLEAU_NAME = { scotch: "fan", yukon: "column", "quadruple-canfield": "tableau" };

/** A move's text with its piles in words, no cards (the report has no board): "t3>t1 (fan 3 to
 * fan 1)". */
export function moveWords(text, game) {
  const mv = parseMove(text || "");
  if (!mv) return text || "";
  const name = (pile) => pile.startsWith("f") ? "a foundation"
    : pileLabel(pile, TABLEAU_NAME[game] || "pile").toLowerCase();
  const what = mv.from === "s" ? "deal from the stock" : mv.from === "w" && mv.to === "s" ? "turn the waste over"
    : `${mv.count > 1 ? `${mv.count} cards ` : ""}${name(mv.from)} to ${name(mv.to)}`;
  return `${text} (${what})`;
}

/** The better move at a loss, as a sentence, or "" when the solver gave none. */
export function betterText(loss, game) {
  if (!loss?.best) return "";
  return loss.winnable_at === loss.at - 1
    ? `Better: ${moveWords(loss.best, game)} instead, which kept the deal winnable.`
    : `Better, after action ${loss.winnable_at}: ${moveWords(loss.best, game)}, which kept the deal winnable.`;
}

/** "Accuracy 93 %: 40 of 43 moves made from a winnable position kept it winnable; his line 57
 * moves against par 50 (×1.14)." Only the moves whose outcome the solver decided count. */
export function accuracyText(report) {
  const a = report?.accuracy;
  if (!a || a.share === null || a.share === undefined) return "";
  let text = `Accuracy ${Math.round(a.share * 100)} %: ${a.kept} of ${a.judged} move${a.judged === 1 ? "" : "s"} ` +
    `made from a winnable position kept it winnable`;
  if (a.line !== undefined && a.par) text += `; his line ${a.line} moves against par ${a.par} (×${a.par_ratio.toFixed(2)})`;
  return `${text}.`;
}

/** How many times a page asks for one analysis before giving up (202, 429 and 503 all say when
 * to ask again: about two minutes in all). */
const TRIES = 60;

const cache = new Map();

/** The analysis of `player` in `race`: a promise of the report, shared by every caller. */
export function loadAnalysis(race, player) {
  const key = `${race}/${player}`;
  if (!cache.has(key)) {
    const p = fetchAnalysis(race, player);
    cache.set(key, p);
    p.catch(() => cache.delete(key)); // asked again next time
  }
  return cache.get(key);
}

async function fetchAnalysis(race, player) {
  const url = `/api/races/${encodeURIComponent(race)}/analysis/${encodeURIComponent(player)}`;
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(url, { headers: { accept: "application/json" } });
    if (res.status === 200) return res.json();
    const waiting = res.status === 202 || res.status === 429 || res.status === 503;
    if (!waiting || attempt >= TRIES) {
      let message = `${res.status} ${res.statusText}`;
      try {
        message = (await res.json()).message || message;
      } catch { /* not JSON */ }
      const err = new Error(message);
      err.status = res.status;
      throw err;
    }
    const after = Number(res.headers.get("retry-after")) || 2;
    await new Promise((resolve) => setTimeout(resolve, after * 1000 * (1 + Math.random() * 0.25)));
  }
}

/** One sentence for a racer: where he lost the deal, or that he never did. */
export function lossText(report) {
  if (!report) return "";
  const loss = report.lost_at;
  if (report.deal === "lost") return "The deal could not be won from the start (proved by the solver).";
  if (loss) {
    const when = loss.time !== null && loss.time !== undefined ? ` at ${formatTime(loss.time)}` : "";
    const how = loss.exact ? "winnable just before it" : loss.winnable_at !== null && loss.winnable_at !== undefined
      ? `it was still winnable after move ${loss.winnable_at}; the moves between were not decided`
      : "no earlier position was proved winnable";
    const back = loss.recovered_at !== null && loss.recovered_at !== undefined
      ? ` He took it back: winnable again after action ${loss.recovered_at}.` : "";
    const better = betterText(loss, report.game);
    return `The deal was lost with action ${loss.at} (${loss.move})${when}: ${how}.${better ? ` ${better}` : ""}${back}`;
  }
  if (report.end === "won") return report.actions ? "The deal stayed winnable to the end." : "No move made; the deal was winnable.";
  if (report.incomplete) return "The solver could not decide every position in its budget: no loss found.";
  return "No loss proved by the solver.";
}

/** "Moves: 40 made, 3 taken back; par 35 (+2)…" */
export function movesText(report) {
  const m = report?.moves;
  if (!m) return "";
  const parts = [`${m.moves} move${m.moves === 1 ? "" : "s"} made`];
  if (m.undos) parts.push(`${m.undos} taken back`);
  let text = `Moves: ${parts.join(", ")}`;
  if (m.par !== null && m.par !== undefined) {
    text += `; the solver's line from the deal: ${m.par}`;
    if (m.over_par !== undefined) text += ` (his line: ${m.kept}, ${m.over_par >= 0 ? "+" : ""}${m.over_par})`;
  }
  if (m.after_loss) text += `; ${m.after_loss} made after the deal was lost`;
  return `${text}.`;
}

/** The analysis of one racer as a small block: the loss (with buttons to show it and the better
 * move), the accuracy, the longest thinks (each a button), the moves. `go(at)` shows the position
 * after action `at`. */
export function analysisBlock(report, { go } = {}) {
  const loss = report.lost_at;
  const lossLine = h("p.analysis-loss", { dataset: { kind: loss ? "lost" : report.deal === "lost" ? "never" : "kept" } },
    loss ? h("span.loss-mark", { "aria-hidden": "true" }, "✗ ") : null, lossText(report), " ",
    loss && go ? h("button.small.link-button", { type: "button", onclick: () => go(loss.at),
      "aria-label": `Show the losing move, action ${loss.at}` }, "Show it") : null,
    loss?.best && go ? [" ", h("button.small.link-button.show-better", { type: "button", onclick: () => go(loss.winnable_at),
      "aria-label": `Show the better move, ${loss.best}, on the board after action ${loss.winnable_at}` },
    "Show the better move")] : null);
  const accuracy = accuracyText(report);
  const thinks = (report.thinks || []).filter((t) => t.ms > 0);
  const thinkList = thinks.length ? h("p.analysis-thinks", {}, "Longest thinks: ",
    thinks.map((t, k) => [k ? ", " : "",
      go ? h("button.small.link-button", { type: "button", onclick: () => go(t.at),
        "aria-label": `Show action ${t.at}, after a think of ${formatTime(t.ms)}` },
      `${formatTime(t.ms)} before ${t.move === "undo" ? "an undo" : t.move}`) :
        `${formatTime(t.ms)} before ${t.move}`])) : null;
  const hidden = loss && report.game !== "scotch" ? h("p.analysis-note.muted", {},
    "The solver knows every card: with cards face down that he could not see, a losing move may not have looked like one.") : null;
  const note = report.incomplete ? h("p.analysis-note.muted", {},
    `Some positions were not decided within the solver's budget (${report.solves} solved).`) : null;
  return h("div.analysis", { dataset: { player: report.player } },
    lossLine, accuracy ? h("p.analysis-accuracy", {}, accuracy) : null, hidden, thinkList, h("p.analysis-moves", {}, movesText(report)), note);
}

/** The loss whose last winnable position is after action `i`, with a better move, or null. */
export function lossFrom(report, i) {
  return report?.losses?.find((l) => l.winnable_at === i && l.best) || null;
}

/** The loss in effect at action `i` (the last one at or before it, not yet taken back), or null:
 * where "Play on" goes back to. */
export function lossBefore(report, i) {
  let found = null;
  for (const l of report?.losses || []) {
    if (l.at <= i && (l.recovered_at === null || l.recovered_at === undefined || l.recovered_at > i)) found = l;
  }
  return found;
}

/** What the replay says of the position after action `i`, from the report's verdicts; `hint`:
 * the better move to mark on the board, at the last winnable position before a loss.
 * `words(move, at)`: the move in words on the board after action `at`. */
export function verdictAt(report, i, words = (move) => move) {
  if (!report) return null;
  const loss = report.losses?.find((l) => l.at === i);
  if (loss) {
    const better = loss.best ? ` Better: ${words(loss.best, loss.winnable_at)}` +
      `${loss.exact ? " instead" : ` after action ${loss.winnable_at}`}.` : "";
    return { kind: "lost-here", text: `✗ The deal was lost here (${loss.move}): no line wins from this position.${better}` };
  }
  const from = lossFrom(report, i);
  if (from) {
    return { kind: "better", hint: from.best,
      text: `✓ Still winnable. Better here: ${words(from.best, i)}, marked on the board; ` +
        (from.exact ? `his next move, ${from.move}, lost the deal.` : `the deal was lost by action ${from.at}.`) };
  }
  const v = report.verdicts?.[i];
  if (v === "w") return { kind: "winnable", text: "✓ Still winnable from here." };
  if (v === "l") return { kind: "lost", text: "Lost: no line wins from here." };
  return { kind: "unknown", text: "Not decided by the solver." };
}
