// Quadruple Canfield (solrules/games/quadruple_canfield.py): four decks, 16 foundations from a
// dealt base rank, a 39-card reserve, a stock dealt by three. The client learns from the server
// the stock cards a deal turns up (the first time round: after that it has seen them) and the
// reserve's new top card.

import { Fill, Match, Moves, RANK_OF, SUIT_OF, mod13 } from "./cards.js";
import { defineGame } from "./core.js";

/** solrules.solver_canfield._safe_type: conditions (1) and (3) of the safe rule for `card`, with
 * `fh` the foundations' heights (see solrules.solver.safe_moves for why this is safe). */
function safeType(fh, per, base, card) {
  const g = SUIT_OF[card];
  const col = g >= 2 ? 1 : 0;
  const p = mod13(RANK_OF[card] - base);
  const group = (s) => fh.slice(s * per, (s + 1) * per);
  if (Math.min(...group(g)) < p) return false;
  const q0 = mod13(p - 1);
  for (const og of col ? [0, 1] : [2, 3]) if (Math.min(...group(og)) <= q0) return false;
  const maxh = [Math.max(...fh.slice(0, 2 * per)), Math.max(...fh.slice(2 * per))];
  for (let wg = 0; wg < 4; wg++) {
    const cw = wg >= 2 ? 1 : 0;
    const lo = Math.min(...group(wg));
    for (let q = 0; q < 13; q++) {
      if (lo > q) continue;
      const k = mod13(p - 1 - q);
      if (cw !== (col ^ ((k + 1) & 1))) continue;
      let chain = true;
      for (let i = 1; i <= k && chain; i++) chain = maxh[col ^ (i & 1)] > mod13(p - i);
      if (chain) return false;
    }
  }
  return true;
}

/** solrules.solver_canfield.canfield_safe_moves: sources whose move refills nothing from the
 * reserve, each card onto the first foundation of its suit at its height. */
function safe(pos) {
  const { rules, piles, base } = pos;
  const nf = rules.nf, per = nf / 4;
  const fh = piles.slice(0, nf).map((p) => p.length);
  const now = fh.slice();
  const { r, w } = rules;
  const reserveLeft = piles[r].length;
  const sources = [];
  if (reserveLeft === 1) sources.push(r);
  if (piles[w].length) sources.push(w);
  for (let t = rules.firstT; t < piles.length; t++) {
    if (piles[t].length > 1 || (piles[t].length && !reserveLeft)) sources.push(t);
  }
  const out = [];
  for (const src of sources) {
    const card = piles[src][piles[src].length - 1];
    const g = SUIT_OF[card], p = mod13(RANK_OF[card] - base);
    let target = -1;
    for (let f = g * per; f < (g + 1) * per; f++) if (fh[f] === p) { target = f; break; }
    if (target < 0 || !safeType(now, per, base, card)) continue;
    fh[target] += 1;
    out.push(`${rules.ids[src]}>${rules.ids[target]}`);
  }
  return out;
}

export const quadrupleCanfield = defineGame({
  name: "quadruple-canfield",
  title: "Quadruple Canfield",
  decks: 4,
  foundations: {
    count: 16, build: { step: 1, match: Match.SUIT, wrap: true }, base: null, suitGroups: true,
    giveBack: true,
  },
  tableau: {
    count: 8, build: { step: -1, match: Match.ALT_COLOUR, wrap: true }, moves: Moves.RUN,
    fill: Fill.ANY, refill: true, noun: "tableau pile",
  },
  reserve: true,
  stockDeal: 3,
  safe,
});
