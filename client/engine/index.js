// The rules of the three games in the browser, move for move the same as solrules (the server's
// rules package): from a racer's own board the engine works out what the server's `state` says
// of it — the board, the `legal` list (same texts, same order), `safe` and `progress` — and plays
// a move at once, learning from the server only the cards that move turned up. See README.md.
//
//   fromState(game, board)     position from a racer's board ({game, base?, piles}; null = face down)
//   fromPosition(text)         position from solrules' position text (every card known)
//   legal(pos)                 legal move texts in the server's order; null while a card awaits reveal
//   safe(pos, legalList?)      the server's `safe` list (auto-moves); null while a card awaits reveal
//   progress(pos)              {foundation, total}
//   play(pos, text)            {pos, turned}: turned = [{pile, index, id}] cards awaiting reveal
//   reveal(pos, turned, cards) pos with those cards filled in from [{pile, index, card}]
//   undo(pos)                  the position before the last move, exactly; null if none
//   refusal(pos, text)         why not legal, in the server's words; null if legal
//   isLegal(pos, text)         true / false / null (depends on a card awaiting reveal)
//   awaited(pos)               the face-up cards not known yet: [{pile, index, id}], as `turned`
//   board(pos), position(pos), moves(pos), awaitsReveal(pos), GAMES, rulesOf(game), IllegalMoveError

import { parseMove, moveText } from "../moves.js";
import {
  awaited, awaitsReveal, board, generate, positionFromBoard, positionFromText, positionText,
} from "./core.js";
import { apply, moveList, reveal, undo } from "./play.js";
import { quadrupleCanfield } from "./quadruple-canfield.js";
import { WAIT, judge, parseStrict } from "./refusal.js";
import { scotch } from "./scotch.js";
import { yukon } from "./yukon.js";

export { awaited, awaitsReveal, board, moveText, parseMove, reveal, undo };

const RULES = new Map([scotch, quadrupleCanfield, yukon].map((r) => [r.name, r]));

/** The game names, as solrules.GAMES. */
export const GAMES = [...RULES.keys()];

/** What play() throws: `wait` is true when the move depends on a card not known yet. */
export class IllegalMoveError extends Error {
  constructor(message, wait = false) {
    super(message);
    this.name = "IllegalMoveError";
    this.wait = wait;
  }
}

const WAIT_WORDS = "that depends on a card the server has not shown yet";

export function rulesOf(game) {
  const rules = RULES.get(game);
  if (!rules) throw new Error(`no game ${JSON.stringify(game)} (one of ${GAMES.join(", ")})`);
  return rules;
}

/** The position of a racer's own board as the server sends it (docs/protocol.md, "Boards"). No
 * history: undo() of it is null (the server can still take a move back). */
export function fromState(game, b) {
  return positionFromBoard(rulesOf(game), b);
}

/** The position of solrules' position text ("yukon f1: … t4:5CAHAC|TC7H9HTSJD …"). */
export function fromPosition(text) {
  return positionFromText(rulesOf, text);
}

/** The legal move texts, exactly the server's `legal` for this position: content and order. null
 * while a face-up card is not known (a move turned it up and reveal has not come yet): the list
 * would depend on it. The array is shared: do not change it. */
export function legal(pos) {
  if (pos.legalCache === undefined) {
    pos.legalCache = awaitsReveal(pos) ? null : Object.freeze(generate(pos));
  }
  return pos.legalCache;
}

/** The server's `safe` list (solrace messages.safe_moves): foundation moves nothing could ever
 * need, worked out only when some legal move goes to a foundation; null when legal() is. */
export function safe(pos, legalList = legal(pos)) {
  if (!legalList || awaitsReveal(pos)) return null;
  return legalList.some((m) => m.includes(">f")) ? pos.rules.safe(pos) : [];
}

/** {foundation: cards on foundations, total: cards in the game}, as Game.progress(). */
export function progress(pos) {
  return { foundation: pos.home, total: 52 * pos.rules.decks };
}

function decide(pos, text) {
  const parsed = parseStrict(text);
  if (parsed.error) return parsed.error;
  const { from, to, count } = parsed.move;
  return judge(pos, from, to, count);
}

/** true if `text` is legal here, false if not, null if that depends on a card awaiting reveal. */
export function isLegal(pos, text) {
  const list = pos.legalCache ?? null;
  if (list) return list.includes(text);
  const why = decide(pos, text);
  return why === WAIT ? null : why === null;
}

/** Why `text` is not legal here, in the server's words (its `illegal_move` message); null if it
 * is legal. A move that depends on a card awaiting reveal gets a reason too: it cannot be played
 * yet. */
export function refusal(pos, text) {
  const why = decide(pos, text);
  return why === WAIT ? WAIT_WORDS : why;
}

/** Play `text`: `{pos, turned}`, the new position and the cards it turned up that the engine does
 * not know: [{pile, index, id}], each null in board(pos) until reveal(pos, turned, cards). Throws
 * IllegalMoveError if the move is not legal or depends on such a card. */
export function play(pos, text) {
  const list = pos.legalCache;
  if (!(list && list.includes(text))) {
    const why = decide(pos, text);
    if (why === WAIT) throw new IllegalMoveError(WAIT_WORDS, true);
    if (why !== null) throw new IllegalMoveError(why);
  }
  const { from, to, count } = parseMove(text);
  const { index } = pos.rules;
  return apply(pos, text, index.get(from), index.get(to), count);
}

/** The position text of solrules (Game.position()), "??" for a card the engine does not know. */
export function position(pos) {
  return positionText(pos);
}

/** The move texts played since the position was built, oldest first (what undo takes back). */
export function moves(pos) {
  return moveList(pos);
}
