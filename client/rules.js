// The rules of each game in plain words, for players (the exact rules are docs/rules.md, and the
// server's `legal` list is what counts). Pile names are the ones the keys and the move box use.

import { h } from "./ui.js";

export const RULES = {
  scotch: {
    title: "Scotch Patience",
    goal: "Put all 52 cards on the four foundations.",
    layout: "18 fans of three cards (t1–t18; the last fan has one), every card face up, and four " +
      "foundations (f1–f4).",
    rules: [
      "Only the top card of a fan moves, one card at a time.",
      "A fan takes a card one rank lower, of any suit: a 6 on a 7.",
      "A foundation starts with any Ace, then builds up in alternate colours (red, black, red…); " +
        "the suit does not matter, only the colour.",
      "An empty fan stays empty.",
      "The top card of a foundation may come back onto a fan.",
    ],
    tip: "Colour is the whole rule on the foundations: the four-colour deck in Settings helps you " +
      "tell red from red.",
    moves: "t3>f1 moves the top card of fan 3 to foundation 1, t3>t7 onto fan 7.",
  },
  yukon: {
    title: "Yukon",
    goal: "Put all 52 cards on the four foundations.",
    layout: "Seven columns (t1–t7): column k has k−1 face-down cards under five face-up ones (t1 " +
      "holds one card); four foundations (f1–f4).",
    rules: [
      "A column takes a card one rank lower of the other colour: a red 6 on a black 7.",
      "Any face-up card moves, together with every card on top of it, even if they are not in order.",
      "An empty column takes only a King (with whatever lies on it).",
      "A face-down card that ends up on top of its column turns face up.",
      "Foundations start with an Ace and build up in suit. Cards never come back from them.",
    ],
    tip: "Uncover face-down cards early: they are what blocks a Yukon deal.",
    moves: "t3>f1 moves one card, t2>t5/3 the top three as one.",
  },
  "quadruple-canfield": {
    title: "Quadruple Canfield",
    goal: "Put all 208 cards (four decks) on the 16 foundations.",
    layout: "Reserve r (39 cards, only the top one face up and playable), stock s and waste w, " +
      "eight tableau piles (t1–t8) and 16 foundations: f1–f4 clubs, f5–f8 spades, f9–f12 hearts, " +
      "f13–f16 diamonds.",
    rules: [
      "The first card dealt goes to the first foundation of its suit and sets the base rank of all " +
        "16: each one starts with that rank in its suit and builds up in suit, going on from King " +
        "to Ace, 13 cards at most.",
      "The tableau builds down in alternate colours, going on from Ace to King; a run from the top " +
        "moves as one.",
      "A tableau pile emptied by a move is filled at once from the reserve; once the reserve is " +
        "empty, any card or run may fill a space.",
      "s>w turns up to three stock cards onto the waste; w>s turns the waste over when the stock " +
        "is empty, as often as you like. Only the waste's top card plays.",
      "The top card of a foundation may come back.",
    ],
    tip: "The base rank is shown on the empty foundations and above the board.",
    moves: "t3>f1 moves one card, t2>t5/3 the top three as one, s>w deals, w>s turns the waste over.",
  },
};

// How to play with a mouse and keys, or on a touch screen: style.css shows the one that fits
// the screen (`.for-pointer`, `.for-touch`).
const KEYS_TEXT = "Keys: Tab to the board, arrows between piles, Enter to pick up and to drop, or type " +
  "pile names (t3 then f1). U undoes, Esc cancels.";
const TOUCH_TEXT = "Tap a card, then a highlighted pile, or drag it; tap a card twice quickly to send " +
  "it to a foundation.";

/** A collapsible panel with the rules of `game`; `open`: shown unfolded. */
export function rulesPanel(game, { open = false, id = null } = {}) {
  const r = RULES[game];
  if (!r) return null;
  return h("details.rules-panel", { open, id, dataset: { rules: game } },
    h("summary", {}, `How to play ${r.title}`),
    h("div.rules-body", {},
      h("p", {}, h("strong", {}, "Goal. "), r.goal),
      h("p", {}, h("strong", {}, "Layout. "), r.layout),
      h("ul", {}, r.rules.map((line) => h("li", {}, line))),
      h("p.hint", {}, r.tip),
      h("p.hint", {}, `Moves as text (the move box, and what replays show): ${r.moves}`),
      h("p.hint.for-pointer", {}, KEYS_TEXT),
      h("p.hint.for-touch", {}, TOUCH_TEXT)));
}
