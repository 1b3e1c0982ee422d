// Playing a move, taking it back, and learning the cards a move turned up.
//
// As solrules' push/pop: a move records the operations it made (its forced effects included: a
// card turned face up, a space refilled from the reserve) and undo replays them backwards, so the
// position before a move comes back exactly. Cards travel with the operations rather than being
// copied into the record: a card the server revealed after the move is still known once the move
// is taken back (face down again, shown as null, as solrules' board() shows it) and needs no
// second reveal when it is turned up again.

import { UNSEEN, cardOf, nextToken } from "./cards.js";
import { TABLEAU, makePosition } from "./core.js";

const TRANSFER = 0, FLIP = 1, DEAL = 2, TURN = 3;

// The next position under construction: piles are copied the first time they change.
class Draft {
  constructor(pos) {
    this.rules = pos.rules;
    this.piles = pos.piles.slice();
    this.down = pos.down.slice();
    this.owned = new Uint8Array(this.piles.length);
    this.turned = [];
  }

  pile(p) {
    if (!this.owned[p]) {
      this.piles[p] = this.piles[p].slice();
      this.owned[p] = 1;
    }
    return this.piles[p];
  }

  transfer(a, b, n) {
    const src = this.pile(a), dst = this.pile(b);
    for (let i = src.length - n; i < src.length; i++) dst.push(src[i]);
    src.length -= n;
  }

  // A card now face up at (p, i): if the engine does not know it, give it a token (a new one for
  // a card never seen, its own again for one turned up by a move taken back before the reveal).
  faceUp(p, i) {
    let card = this.piles[p][i];
    if (card >= 0) return;
    if (card === UNSEEN) {
      card = nextToken();
      this.pile(p)[i] = card;
    }
    this.turned.push({ pile: this.rules.ids[p], index: i, id: card });
  }

  deal(k) {
    const { s, w } = this.rules;
    const stock = this.pile(s), waste = this.pile(w);
    for (let i = 0; i < k; i++) {
      waste.push(stock.pop());
      this.faceUp(w, waste.length - 1);
    }
    this.down[s] = stock.length;
  }

  undeal(k) {
    const { s, w } = this.rules;
    const stock = this.pile(s), waste = this.pile(w);
    for (let i = 0; i < k; i++) stock.push(waste.pop());
    this.down[s] = stock.length;
  }

  // The waste turned over is the stock (and back): its first card is the next one dealt.
  turnOver(from, to) {
    this.piles[to] = this.piles[from].slice().reverse();
    this.piles[from] = [];
    this.owned[from] = this.owned[to] = 1;
    this.down[this.rules.s] = this.piles[this.rules.s].length;
  }

  done(pos, history) {
    return makePosition(this.rules, pos.base, this.piles, this.down, history);
  }
}

/** Play the top `n` cards of pile index `a` onto `b` (already judged legal): solrules' _apply. */
export function apply(pos, text, a, b, n) {
  const rules = pos.rules;
  const d = new Draft(pos);
  const ops = [];
  if (a === rules.s) {
    const k = Math.min(rules.stockDeal, pos.piles[a].length);
    d.deal(k);
    ops.push([DEAL, k]);
  } else if (a === rules.w && b === rules.s) {
    d.turnOver(rules.w, rules.s);
    ops.push([TURN]);
  } else {
    d.transfer(a, b, n);
    ops.push([TRANSFER, a, b, n]);
    forcedEffects(d, a, ops);
  }
  return { pos: d.done(pos, { move: text, ops, prev: pos.history }), turned: d.turned };
}

function forcedEffects(d, a, ops) {
  const { rules, piles, down } = d;
  const { r } = rules;
  if (!piles[a].length && rules.kinds[a] === TABLEAU && rules.tableau.refill && r >= 0 && piles[r].length) {
    d.transfer(r, a, 1);
    ops.push([TRANSFER, r, a, 1]);
    a = r;
  }
  if (down[a] && down[a] === piles[a].length) {
    down[a] -= 1;
    ops.push([FLIP, a]);
    d.faceUp(a, down[a]);
  }
}

/** The position before the last move, exactly (forced effects undone too); null if none. */
export function undo(pos) {
  const last = pos.history;
  if (!last) return null;
  const d = new Draft(pos);
  for (let i = last.ops.length - 1; i >= 0; i--) {
    const op = last.ops[i];
    if (op[0] === TRANSFER) d.transfer(op[2], op[1], op[3]);
    else if (op[0] === FLIP) d.down[op[1]] += 1;
    else if (op[0] === DEAL) d.undeal(op[1]);
    else d.turnOver(pos.rules.s, pos.rules.w);
  }
  return d.done(pos, last.prev);
}

/** The moves that led to `pos` (since the position was built from a board), oldest first. */
export function moveList(pos) {
  const out = [];
  for (let h = pos.history; h; h = h.prev) out.push(h.move);
  return out.reverse();
}

/** `pos` with the cards that `turned` (from play) awaited, as the server tells them: `cards` is
 * a list of {pile, index, card} in the same frame as `turned` (the position right after that
 * move), matched by place; places the engine already knew are ignored. The cards are found
 * wherever they are now, so later moves and undos may come between play and reveal. */
export function reveal(pos, turned, cards) {
  const told = new Map();
  for (const c of cards ?? []) told.set(`${c.pile}:${c.index}`, c.card);
  const known = new Map();
  for (const t of turned ?? []) {
    const text = told.get(`${t.pile}:${t.index}`);
    if (text === undefined || text === null) continue;
    const card = cardOf(text);
    if (card < 0) throw new Error(`${t.pile}: ${JSON.stringify(text)} is not a card`);
    known.set(t.id, card);
  }
  if (!known.size) return pos;
  const d = new Draft(pos);
  d.piles.forEach((pile, p) => {
    if (!pile.some((c) => known.has(c))) return;
    d.piles[p] = pile.map((c) => known.get(c) ?? c);
  });
  return d.done(pos, pos.history);
}
