// Why a move is not legal, in the words solrules uses (Game.refusal, and the server's refusal of a
// text that is not written as listed: solrace.room). Also decides moves in a position where a card
// turned up by the last move is not known yet: a move that depends on it is neither legal nor
// illegal until the server says which card it is (WAIT).

import { parseMove } from "../moves.js";
import { KING, RANK_NAMES, RANK_OF, SUIT_NAMES, TEXT_OF, describeBuild, Fill, Moves } from "./cards.js";
import { FOUNDATION, RESERVE, STOCK, TABLEAU, WASTE } from "./core.js";

/** What judge() returns for a move that depends on a card not known yet. */
export const WAIT = Symbol("wait for the server");

const KIND_NOUN = ["foundation", "reserve", "stock", "waste"];

// Python's repr() of a text, as solrules.Move.from_text quotes it.
function pyRepr(text) {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  const body = text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/\r/g, "\\r")
    .replace(/\t/g, "\\t").replaceAll(quote, `\\${quote}`);
  return quote + body + quote;
}

/** `{move}` ({from, to, count, text}) for a text written exactly as solrules writes it, else
 * `{error}` with the server's words (Move.from_text, then "write the move as listed"). */
export function parseStrict(text) {
  if (typeof text !== "string") return { error: "a move is a text such as 't3>f1'" };
  const trimmed = text.trim();
  const move = parseMove(trimmed);
  if (!move) {
    return { error: `${pyRepr(text)} is not a move: write SOURCE>DESTINATION, e.g. 't3>f1' or 't2>t5/3'` };
  }
  const digits = trimmed.includes("/") ? trimmed.slice(trimmed.indexOf("/") + 1) : null;
  if (digits !== null && (move.count < 2 || digits.length > 3)) {
    return { error: `${pyRepr(text)}: a card count after '/' must be 2 or more` };
  }
  const canonical = move.count > 1 ? `${move.from}>${move.to}/${move.count}` : `${move.from}>${move.to}`;
  if (canonical !== text) return { error: `write the move as listed: ${canonical}` };
  return { move };
}

function noun(rules, p) {
  return rules.kinds[p] === TABLEAU ? rules.tableau.noun : KIND_NOUN[rules.kinds[p]];
}

/** null if moving the top `n` cards of `src` onto `dst` is legal, WAIT if that depends on a card
 * not known yet, else why not (solrules' Game.refusal, check for check, word for word). */
export function judge(pos, src, dst, n) {
  const { rules, piles, down } = pos;
  const a = rules.index.get(src);
  const b = rules.index.get(dst);
  if (a === undefined) return `${rules.title} has no pile ${src}`;
  if (b === undefined) return `${rules.title} has no pile ${dst}`;
  const ka = rules.kinds[a], kb = rules.kinds[b];
  if (ka === STOCK) {
    if (kb !== WASTE || n !== 1) return "the stock only deals to the waste: s>w";
    if (!piles[a].length) return "the stock is empty: turn the waste over with w>s";
    return null;
  }
  if (ka === WASTE && kb === STOCK) {
    if (n !== 1) return "the waste turns over as a whole: w>s";
    if (piles[a].length && !piles[b].length) return null;
    if (!piles[a].length) return "the waste is empty";
    return "deal the whole stock before turning the waste over";
  }
  if (a === b) return `${src} cannot move onto itself`;
  const pile = piles[a];
  if (!pile.length) return `${src} is empty`;
  if (kb === STOCK || kb === WASTE || kb === RESERVE) return `nothing can be played onto the ${KIND_NOUN[kb]}`;
  if (ka === FOUNDATION) {
    if (!rules.foundations.giveBack) return "cards never come back from a foundation";
    if (kb === FOUNDATION) return "cards do not move from one foundation to another";
  }
  if (n > 1) {
    if (ka !== TABLEAU) return `only the top card of the ${noun(rules, a)} moves`;
    if (n > pile.length) return `${src} holds only ${pile.length} cards`;
    const why = runRefusal(pos, a, n);
    if (why !== null) return why;
  } else if (down[a] >= pile.length) {
    return `the top card of ${src} is face down`;
  }
  const card = pile[pile.length - n];
  if (card < 0) return WAIT;
  if (kb === FOUNDATION) {
    if (n !== 1) return "cards go to a foundation one at a time";
    return foundationRefusal(pos, b, card);
  }
  const dest = piles[b];
  if (!dest.length) {
    const fill = rules.tableau.fill;
    const tnoun = rules.tableau.noun;
    if (fill === Fill.NEVER) return `an empty ${tnoun} is never filled again`;
    if (fill === Fill.KING && RANK_OF[card] !== KING) return `only a King may fill an empty ${tnoun}`;
    if (ka === TABLEAU && n === pile.length) return `moving all of ${src} onto an empty ${tnoun} changes nothing`;
    return null;
  }
  const top = dest[dest.length - 1];
  if (top < 0) return WAIT;
  if (rules.tkey[card] !== rules.twanted[top]) return `${TEXT_OF[card]} does not go on ${TEXT_OF[top]}`;
  return null;
}

// solrules: `n > self._movable(a)`, reading only the cards it needs, so that an unknown card
// below the run does not stop the judgement.
function runRefusal(pos, a, n) {
  const { rules, piles, down } = pos;
  const pile = piles[a];
  const free = Math.max(0, pile.length - down[a]);
  const rule = rules.tableau.moves;
  const src = rules.ids[a];
  if (rule === Moves.ONE) return "only one card moves at a time";
  if (rule === Moves.FACE_UP) return n > free ? `${src} has only ${free} face-up cards` : null;
  const notRun = `the top ${n} cards of ${src} are not a sequence ${describeBuild(rules.tableau.build)}`;
  let k = 1;
  while (k < free && k < n) {
    const upper = pile[pile.length - k], lower = pile[pile.length - k - 1];
    if (upper < 0 || lower < 0) return WAIT;
    if (rules.tkey[upper] !== rules.twanted[lower]) break;
    k++;
  }
  return k < n ? notRun : null;
}

function foundationRefusal(pos, f, card) {
  const { rules } = pos;
  const pile = pos.piles[f];
  const fid = rules.ids[f];
  const fnd = rules.foundations;
  if (!pile.length) {
    if (rules.emptyKeys(pos.base)[f].includes(rules.fkey[card])) return null;
    const rank = RANK_NAMES[pos.base];
    if (fnd.suitGroups) {
      const suit = SUIT_NAMES[Math.floor(f / (fnd.count / 4))];
      return `empty ${fid} takes only a ${rank} of ${suit}, not ${TEXT_OF[card]}`;
    }
    const article = rank === "Ace" || rank === "8" ? "an" : "a";
    return `empty ${fid} takes only ${article} ${rank}, not ${TEXT_OF[card]}`;
  }
  if (pile.length >= fnd.maxCards) return `${fid} is complete`;
  const top = pile[pile.length - 1];
  if (rules.fkey[card] !== rules.fwanted[top]) return `${TEXT_OF[card]} does not go on ${TEXT_OF[top]}`;
  return null;
}
