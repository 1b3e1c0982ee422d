// Yukon (solrules/games/yukon.py): seven columns over face-down cards; any face-up card moves with
// everything above it. The card a move uncovers is the one thing the client must learn from the
// server.

import { Fill, Match, Moves, RANK_OF, SUIT_OF } from "./cards.js";
import { defineGame } from "./core.js";

const OTHER = [[2, 3], [2, 3], [0, 1], [0, 1]];

/** solrules.solver_yukon.yukon_safe_moves: a card of rank r goes home when both cards of rank r-1
 * of the other colour are home (Aces always), judged against the foundations as they are now. */
function safe(pos) {
  const { rules, piles, down } = pos;
  const found = [0, 0, 0, 0], fof = [-1, -1, -1, -1];
  const free = [];
  for (let f = 0; f < rules.nf; f++) {
    if (piles[f].length) {
      const s = SUIT_OF[piles[f][0]];
      found[s] = piles[f].length;
      fof[s] = f;
    } else {
      free.push(f);
    }
  }
  const out = [];
  for (let t = rules.firstT; t < piles.length; t++) {
    const pile = piles[t];
    if (!pile.length || down[t] >= pile.length) continue;
    const card = pile[pile.length - 1];
    const s = SUIT_OF[card], r = RANK_OF[card];
    const [o1, o2] = OTHER[s];
    if (found[s] !== r || !(r === 0 || (found[o1] >= r && found[o2] >= r))) continue;
    if (r === 0) fof[s] = free.shift();
    out.push(`${rules.ids[t]}>${rules.ids[fof[s]]}`);
  }
  return out;
}

export const yukon = defineGame({
  name: "yukon",
  title: "Yukon",
  foundations: { count: 4, build: { step: 1, match: Match.SUIT } },
  tableau: {
    count: 7, build: { step: -1, match: Match.ALT_COLOUR }, moves: Moves.FACE_UP, fill: Fill.KING,
    flip: true, noun: "column",
  },
  safe,
});
