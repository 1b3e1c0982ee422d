// Cards as small integers, as solrules/cards.py has them, but by type only: suit * 13 + rank, ranks
// A..K as 0..12, suits clubs, spades, hearts, diamonds (0..3). The deck number solrules adds to tell
// the four copies of a Quadruple Canfield card apart never matters to the rules, so it is dropped.
//
// Negative numbers are cards the engine does not know: UNSEEN (-1) for a face-down card it was never
// shown, and -2, -3, … (see nextToken) for a card turned face up by a move whose identity only the
// server can tell.

export const RANKS = "A23456789TJQK";
export const SUITS = "CSHD";
export const KING = 12;
export const UNSEEN = -1;

export const RANK_NAMES = ["Ace", "2", "3", "4", "5", "6", "7", "8", "9", "10", "Jack", "Queen", "King"];
export const SUIT_NAMES = ["clubs", "spades", "hearts", "diamonds"];

export const RANK_OF = Int8Array.from({ length: 52 }, (_, c) => c % 13);
export const SUIT_OF = Int8Array.from({ length: 52 }, (_, c) => Math.floor(c / 13));
export const RED_OF = Int8Array.from({ length: 52 }, (_, c) => (c >= 26 ? 1 : 0));
export const TEXT_OF = Array.from({ length: 52 }, (_, c) => RANKS[c % 13] + SUITS[Math.floor(c / 13)]);

/** The card number of a text such as "TH"; -1 if it is not a card. */
export function cardOf(text) {
  if (typeof text !== "string" || text.length !== 2) return -1;
  const r = RANKS.indexOf(text[0]);
  const s = SUITS.indexOf(text[1]);
  return r < 0 || s < 0 ? -1 : s * 13 + r;
}

// Tokens are unique for the life of the page, so a card keeps its token wherever later moves and
// undos take it, and one reveal finds it there.
let lastToken = UNSEEN;
export function nextToken() {
  lastToken -= 1;
  return lastToken;
}

/** Python's % for a modulus of 13: never negative. */
export function mod13(x) {
  return ((x % 13) + 13) % 13;
}

export const Match = Object.freeze({ ANY: "any suit", ALT_COLOUR: "alternate colour", SUIT: "same suit" });
export const Moves = Object.freeze({ ONE: "one", RUN: "run", FACE_UP: "face-up" });
export const Fill = Object.freeze({ NEVER: "never", KING: "king", ANY: "any" });

/** What a card is compared by under `match` (solrules.piles.card_key). */
export function cardKey(match, rank, suit, red) {
  if (match === Match.ANY) return rank;
  if (match === Match.ALT_COLOUR) return rank * 2 + red;
  return rank * 4 + suit;
}

/** `{key, wanted}` of a build {step, match, wrap}: card c fits on top t when key[c] === wanted[t].
 * One integer comparison per card, as in solrules.piles, keeps legal() a lookup per source. */
export function buildTables(build) {
  const key = new Int16Array(52);
  const wanted = new Int16Array(52);
  for (let c = 0; c < 52; c++) {
    const rank = RANK_OF[c], suit = SUIT_OF[c], red = RED_OF[c];
    key[c] = cardKey(build.match, rank, suit, red);
    let next = rank + build.step;
    if (build.wrap) next = mod13(next);
    wanted[c] = next < 0 || next >= 13 ? -1 : cardKey(build.match, next, suit, 1 - red);
  }
  return { key, wanted };
}

/** "down by one in alternate colour, wrapping" (solrules.piles.Build.describe). */
export function describeBuild(build) {
  const direction = build.step > 0 ? "up" : "down";
  return `${direction} by one in ${build.match}${build.wrap ? ", wrapping" : ""}`;
}
