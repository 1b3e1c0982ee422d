// Scotch Patience (solrules/games/scotch.py): 18 open fans, foundations in alternate colours, one
// card at a time. Every card is dealt face up: a move never turns up a card the client cannot know.

import { Fill, Match, Moves, RANK_OF, RED_OF } from "./cards.js";
import { defineGame } from "./core.js";

/** solrules.solver_scotch.scotch_safe_moves: a card of rank r goes home when every foundation
 * holds at least r cards (Aces always), onto the first foundation that takes it. */
function safe(pos) {
  const { rules, piles } = pos;
  const nf = rules.nf;
  const heights = [], ace = [];
  for (let f = 0; f < nf; f++) {
    heights.push(piles[f].length);
    ace.push(piles[f].length ? RED_OF[piles[f][0]] : 0);
  }
  const lowest = Math.min(...heights);
  const out = [];
  for (let t = rules.firstT; t < piles.length; t++) {
    const pile = piles[t];
    if (!pile.length) continue;
    const card = pile[pile.length - 1];
    const r = RANK_OF[card], red = RED_OF[card];
    if (r > lowest) continue;
    for (let f = 0; f < nf; f++) {
      const h = heights[f];
      // The colour a foundation wants alternates from its Ace's.
      if (h === r && (h === 0 || (ace[f] ^ (h & 1)) === red)) {
        if (h === 0) ace[f] = red;
        heights[f] += 1;
        out.push(`${rules.ids[t]}>${rules.ids[f]}`);
        break;
      }
    }
  }
  return out;
}

export const scotch = defineGame({
  name: "scotch",
  title: "Scotch Patience",
  foundations: { count: 4, build: { step: 1, match: Match.ALT_COLOUR }, giveBack: true },
  tableau: { count: 18, build: { step: -1, match: Match.ANY }, moves: Moves.ONE, fill: Fill.NEVER, noun: "fan" },
  safe,
});
