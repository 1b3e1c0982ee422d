// The shared core of the rules, as solrules/core.py: a game is declared by its piles (see the game
// modules), and laying out, reading and listing the legal moves of a position is the same for all.
//
// A position is a plain object, never changed once made (every function here returns a new one):
//   rules    the game's rules (from defineGame)
//   base     the foundations' base rank (0 = Ace; dealt in Quadruple Canfield)
//   piles    one array of cards per pile id, bottom to top, in the game's pile order (cards.js)
//   down     how many cards at the bottom of each pile are face down
//   home     cards on foundations
//   history  the moves that led here and how to take each back ({move, ops, prev}), or null
// Pile arrays are shared between positions for as long as a pile does not change: read only.

import {
  Fill, KING, Moves, RANKS, RANK_OF, TEXT_OF, UNSEEN, buildTables, cardKey, cardOf,
} from "./cards.js";

export const FOUNDATION = 0, RESERVE = 1, STOCK = 2, WASTE = 3, TABLEAU = 4;

/** The rules object of a game declared as solrules declares it (see scotch.js for the fields). */
export function defineGame(spec) {
  const fnd = { base: 0, suitGroups: false, giveBack: false, maxCards: 13, ...spec.foundations };
  const tab = { refill: false, flip: false, noun: "pile", ...spec.tableau };
  const ids = [], kinds = [];
  for (let i = 1; i <= fnd.count; i++) { ids.push(`f${i}`); kinds.push(FOUNDATION); }
  if (spec.reserve) { ids.push("r"); kinds.push(RESERVE); }
  if (spec.stockDeal) { ids.push("s", "w"); kinds.push(STOCK, WASTE); }
  const firstT = ids.length;
  for (let i = 1; i <= tab.count; i++) { ids.push(`t${i}`); kinds.push(TABLEAU); }
  const f = buildTables(fnd.build);
  const t = buildTables(tab.build);
  const emptyKeys = new Map();  // base rank -> keys an empty foundation takes, per foundation
  return {
    name: spec.name,
    title: spec.title,
    decks: spec.decks ?? 1,
    foundations: fnd,
    tableau: tab,
    stockDeal: spec.stockDeal ?? 0,
    safe: spec.safe,
    ids,
    kinds,
    index: new Map(ids.map((id, i) => [id, i])),
    nf: fnd.count,
    firstT,
    r: spec.reserve ? ids.indexOf("r") : -1,
    s: spec.stockDeal ? ids.indexOf("s") : -1,
    w: spec.stockDeal ? ids.indexOf("w") : -1,
    fkey: f.key, fwanted: f.wanted, tkey: t.key, twanted: t.wanted,
    texts: new Map(),
    /** Per foundation, the keys of the cards it takes while empty: its base rank (in its suit). */
    emptyKeys(base) {
      let keys = emptyKeys.get(base);
      if (!keys) {
        const per = fnd.count / 4;
        keys = [];
        for (let i = 0; i < fnd.count; i++) {
          const suits = fnd.suitGroups ? [Math.floor(i / per)] : [0, 1, 2, 3];
          const set = new Set(suits.map((s) => cardKey(fnd.build.match, base, s, s >= 2 ? 1 : 0)));
          keys.push([...set].sort((x, y) => x - y));
        }
        emptyKeys.set(base, keys);
      }
      return keys;
    },
  };
}

export function makePosition(rules, base, piles, down, history = null) {
  let home = 0;
  for (let f = 0; f < rules.nf; f++) home += piles[f].length;
  return { rules, base, piles, down, home, history, legalCache: undefined };
}

/** A position from a racer's own board as the server sends it ({game, base?, piles}): null cards
 * are face down (they lie at the bottom of their pile), every other card face up. */
export function positionFromBoard(rules, board) {
  const byId = new Map((board.piles ?? []).map((p) => [p.pile, p.cards]));
  const piles = [], down = [];
  for (const id of rules.ids) {
    const cards = byId.get(id);
    if (!Array.isArray(cards)) throw new Error(`${rules.name} board without pile ${id}`);
    const pile = [];
    let nulls = 0;
    for (const text of cards) {
      if (text === null) {
        if (pile.length > nulls) throw new Error(`${id}: a face-down card above a face-up one`);
        nulls += 1;
        pile.push(UNSEEN);
      } else {
        const card = cardOf(text);
        if (card < 0) throw new Error(`${id}: ${JSON.stringify(text)} is not a card`);
        pile.push(card);
      }
    }
    piles.push(pile);
    down.push(nulls);
  }
  return makePosition(rules, baseOf(rules, board.base), piles, down);
}

function baseOf(rules, text) {
  if (rules.foundations.base !== null) return rules.foundations.base;
  const base = RANKS.indexOf(text ?? "");
  if (typeof text !== "string" || text.length !== 1 || base < 0) {
    throw new Error(`${rules.name} needs the base rank of its foundations (base: "7")`);
  }
  return base;
}

/** A position from solrules' position text (`Game.position()`), every card known. Trusts its
 * input beyond the syntax: it is for tests and tools, which take their texts from solrules. */
export function positionFromText(rulesOf, text) {
  const [name, ...fields] = text.trim().split(/\s+/);
  const rules = rulesOf(name);
  let baseText = null;
  const byId = new Map();
  for (const field of fields) {
    if (field.startsWith("base=")) { baseText = field.slice(5); continue; }
    const colon = field.indexOf(":");
    byId.set(field.slice(0, colon), field.slice(colon + 1));
  }
  const piles = [], down = [];
  for (const id of rules.ids) {
    const cardsText = byId.get(id);
    if (cardsText === undefined) throw new Error(`${name}: no pile ${id} in the position`);
    const bar = cardsText.indexOf("|");
    const all = cardsText.replace("|", "");
    const pile = [];
    for (let i = 0; i < all.length; i += 2) {
      const card = cardOf(all.slice(i, i + 2));
      if (card < 0) throw new Error(`${id}: ${all.slice(i, i + 2)} is not a card`);
      pile.push(card);
    }
    piles.push(pile);
    down.push(bar < 0 ? 0 : bar / 2);
  }
  return makePosition(rules, baseOf(rules, baseText), piles, down);
}

/** The board a server sends for this position: face-down cards and cards not known yet are null. */
export function board(pos) {
  const { rules, piles, down } = pos;
  const out = { game: rules.name };
  if (rules.foundations.base === null) out.base = RANKS[pos.base];
  out.piles = rules.ids.map((id, p) => ({
    pile: id,
    cards: piles[p].map((c, i) => (i < down[p] || c < 0 ? null : TEXT_OF[c])),
  }));
  return out;
}

/** solrules' position text, with "??" for a card the engine does not know. */
export function positionText(pos) {
  const { rules, piles, down } = pos;
  const parts = [rules.name];
  if (rules.foundations.base === null) parts.push(`base=${RANKS[pos.base]}`);
  rules.ids.forEach((id, p) => {
    const cards = piles[p].map((c) => (c < 0 ? "??" : TEXT_OF[c]));
    if (down[p]) cards.splice(down[p], 0, "|");
    parts.push(`${id}:${cards.join("")}`);
  });
  return parts.join(" ");
}

/** The face-up cards of the position that are not known yet, as play() lists them in `turned`:
 * [{pile, index, id}], places in this position. */
export function awaited(pos) {
  const { rules, piles, down } = pos;
  const out = [];
  for (let p = 0; p < piles.length; p++) {
    const pile = piles[p];
    for (let i = down[p]; i < pile.length; i++) {
      if (pile[i] < 0) out.push({ pile: rules.ids[p], index: i, id: pile[i] });
    }
  }
  return out;
}

/** True when a face-up card of the position is not known yet (a move turned it up). */
export function awaitsReveal(pos) {
  const { piles, down } = pos;
  for (let p = 0; p < piles.length; p++) {
    const pile = piles[p];
    for (let i = down[p]; i < pile.length; i++) if (pile[i] < 0) return true;
  }
  return false;
}

/** How many cards from the top of tableau pile `p` may move together (every card known). */
export function movable(pos, p) {
  const pile = pos.piles[p];
  const free = pile.length - pos.down[p];
  if (free <= 0) return 0;
  const rule = pos.rules.tableau.moves;
  if (rule === Moves.ONE) return 1;
  if (rule === Moves.FACE_UP) return free;
  const { tkey, twanted } = pos.rules;
  let k = 1;
  while (k < free && tkey[pile[pile.length - k]] === twanted[pile[pile.length - k - 1]]) k++;
  return k;
}

function moveTextOf(rules, a, b, n) {
  const key = (a << 16) | (b << 8) | n;
  let text = rules.texts.get(key);
  if (text === undefined) {
    text = n > 1 ? `${rules.ids[a]}>${rules.ids[b]}/${n}` : `${rules.ids[a]}>${rules.ids[b]}`;
    rules.texts.set(key, text);
  }
  return text;
}

/** Foundation key -> the foundations that take a card with that key now, in pile order. */
function foundationWants(pos) {
  const { rules, piles } = pos;
  const wants = new Array(52);
  const empty = rules.emptyKeys(pos.base);
  const limit = rules.foundations.maxCards;
  for (let f = 0; f < rules.nf; f++) {
    const pile = piles[f];
    if (!pile.length) {
      for (const k of empty[f]) (wants[k] ??= []).push(f);
    } else if (pile.length < limit) {
      const k = rules.fwanted[pile[pile.length - 1]];
      if (k >= 0) (wants[k] ??= []).push(f);
    }
  }
  return wants;
}

/** Every legal move text, in solrules' order (Game._generate: tableau sources in pile order, each
 * to the foundations, then onto piles, then to spaces, one card before runs; then the reserve, the
 * waste and the foundations; then the stock). Every face-up card must be known. */
export function generate(pos) {
  const { rules, piles, down } = pos;
  const { fkey, tkey, twanted } = rules;
  const fwants = foundationWants(pos);
  const twants = new Array(52);
  let empties = [];
  for (let t = rules.firstT; t < piles.length; t++) {
    const pile = piles[t];
    if (pile.length) {
      const k = twanted[pile[pile.length - 1]];
      if (k >= 0) (twants[k] ??= []).push(t);
    } else {
      empties.push(t);
    }
  }
  const fill = rules.tableau.fill;
  if (fill === Fill.NEVER) empties = [];
  const kingOnly = fill === Fill.KING;
  const oneCard = rules.tableau.moves === Moves.ONE;
  const out = [];
  const no = [];
  for (let t = rules.firstT; t < piles.length; t++) {
    const pile = piles[t];
    const size = pile.length;
    if (size === down[t]) continue;
    let card = pile[size - 1];
    for (const f of fwants[fkey[card]] ?? no) out.push(moveTextOf(rules, t, f, 1));
    if (oneCard) {
      for (const d of twants[tkey[card]] ?? no) out.push(moveTextOf(rules, t, d, 1));
      if (empties.length && size > 1 && (!kingOnly || RANK_OF[card] === KING)) {
        for (const d of empties) out.push(moveTextOf(rules, t, d, 1));
      }
      continue;
    }
    const most = movable(pos, t);
    for (let n = 1; n <= most; n++) {
      card = pile[size - n];
      for (const d of twants[tkey[card]] ?? no) if (d !== t) out.push(moveTextOf(rules, t, d, n));
      if (empties.length && n < size && (!kingOnly || RANK_OF[card] === KING)) {
        for (const d of empties) out.push(moveTextOf(rules, t, d, n));
      }
    }
  }
  const singles = [rules.r, rules.w].filter((p) => p >= 0 && piles[p].length);
  if (rules.foundations.giveBack) {
    for (let f = 0; f < rules.nf; f++) if (piles[f].length) singles.push(f);
  }
  for (const p of singles) {
    const card = piles[p][piles[p].length - 1];
    if (p >= rules.nf) for (const f of fwants[fkey[card]] ?? no) out.push(moveTextOf(rules, p, f, 1));
    for (const d of twants[tkey[card]] ?? no) out.push(moveTextOf(rules, p, d, 1));
    if (empties.length && (!kingOnly || RANK_OF[card] === KING)) {
      for (const d of empties) out.push(moveTextOf(rules, p, d, 1));
    }
  }
  if (rules.s >= 0) {
    if (piles[rules.s].length) out.push(moveTextOf(rules, rules.s, rules.w, 1));
    else if (piles[rules.w].length) out.push(moveTextOf(rules, rules.w, rules.s, 1));
  }
  return out;
}
