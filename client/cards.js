// Names and glyphs for cards and piles: presentation only, no rules.

const RANK_NAMES = {
  A: "Ace", 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven",
  8: "Eight", 9: "Nine", T: "Ten", J: "Jack", Q: "Queen", K: "King",
};
const SUITS = {
  S: { glyph: "♠", name: "Spades", red: false },
  H: { glyph: "♥", name: "Hearts", red: true },
  D: { glyph: "♦", name: "Diamonds", red: true },
  C: { glyph: "♣", name: "Clubs", red: false },
};

/** {rank: "10", suit: "♥", red: true, label: "Ten of Hearts"} for "TH"; null for a face-down card. */
export function cardFace(text) {
  if (!text) return null;
  const r = RANK_NAMES[text[0]] ? text[0] : "?";
  const s = SUITS[text[1]] || { glyph: "?", name: "an unknown suit", red: false };
  return {
    rank: r === "T" ? "10" : r,
    suit: s.glyph,
    red: s.red,
    label: `${RANK_NAMES[r] || r} of ${s.name}`,
  };
}

export function cardLabel(text) {
  return text ? cardFace(text).label : "face-down card";
}

/** Short text for a card, as a player would write it: "10♥". */
export function cardShort(text) {
  if (!text) return "▒";
  const f = cardFace(text);
  return f.rank + f.suit;
}

const PILE_KINDS = {
  t: ["Fan", "Column", "Tableau"],
  f: ["Foundation"],
  r: ["Reserve"],
  s: ["Stock"],
  w: ["Waste"],
};

/** "Fan 3", "Foundation 1", "Stock": `tableauName` depends on the game ("Fan" for Scotch). */
export function pileLabel(pile, tableauName = "Tableau") {
  const kind = pile[0];
  const num = pile.slice(1);
  const base = kind === "t" ? tableauName : (PILE_KINDS[kind] || [pile])[0];
  return num ? `${base} ${num}` : base;
}

export const GAME_TITLES = {
  scotch: "Scotch Patience",
  yukon: "Yukon",
  "quadruple-canfield": "Quadruple Canfield",
};

export function gameTitle(game) {
  return GAME_TITLES[game] || game;
}

/** A server message with its card texts as players write them: "3S does not go on 3H" reads
 * "3♠ does not go on 3♥". */
export function prettyCards(text) {
  return String(text).replace(/\b([A2-9TJQK])([SHDC])\b/g, (_, r, s) => cardShort(r + s));
}
