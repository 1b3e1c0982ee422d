// Drawing a board (BoardView's render, board.js): the piles laid out in their sections, each pile
// drawn again only when what it shows changed, its cards' marks (movable, selected, in flight,
// premove, hint) and its spoken label, and the moved cards' slide (FLIP). Kept apart from the
// view's state and the player's intents (board.js), keys (board-keys.js) and drags (drag.js):
// these functions read the view and write its element, and decide nothing about moves.

import { cardFace, cardLabel, cardShort } from "./cards.js";
import { parseMove } from "./moves.js";

// Presentation per game: how tableau piles spread and what they are called, and what empty
// foundations show. Unknown games fall back to columns. Pile kinds come from their ids (t tableau,
// f foundation, r reserve, s stock, w waste).
const QC_SUITS = "CCCCSSSSHHHHDDDD";
const GAME_LOOK = {
  scotch: { tableau: "fan", tableauName: "Fan", foundationMark: "A" },
  yukon: { tableau: "cascade", tableauName: "Column", foundationMark: "A" },
  "quadruple-canfield": {
    tableau: "cascade",
    tableauName: "Tableau",
    // f1–f4 clubs, f5–f8 spades, f9–f12 hearts, f13–f16 diamonds (docs/rules.md).
    foundationSuit: (pile) => QC_SUITS[pileNumber(pile) - 1] || null,
  },
};

const SECTION_OF = { f: "foundations", t: "tableau", s: "talon", w: "talon", r: "talon" };
const SECTION_ORDER = ["talon", "foundations", "tableau", "other"];
const TALON_ORDER = { s: 0, w: 1, r: 2 };
const SUIT_GLYPH = { C: "♣", S: "♠", H: "♥", D: "♦" };
export const MOTION_MS = 120;
const reducedMotion = window.matchMedia?.("(prefers-reduced-motion: reduce)");

function skeletonKey(board) {
  return `${board.game}|${board.piles.map((p) => p.pile).sort().join(",")}`;
}

function pileNumber(id) {
  return Number(id.slice(1)) || 0;
}

/** How a game's board looks: its tableau's spread and name, its empty foundations' marks. */
export function lookOf(game) {
  return GAME_LOOK[game] || { tableau: "cascade", tableauName: "Pile" };
}

/** Draw the view's board as it is now (its piles, the marks of the selection, the move in
 * flight, the premove and the hint), then slide the cards that moved. */
export function drawBoard(view) {
  if (view.dragger.active) return; // never redraw under the player's pointer; the drop redraws
  const board = view.board;
  if (!board) {
    if (view.skeletonKey !== "empty") {
      view.el.replaceChildren();
      view.pileEls.clear();
      const p = document.createElement("p");
      p.className = "board-empty";
      p.textContent = view.opts.emptyText || "The deal appears when the race starts.";
      view.el.append(p);
      view.skeletonKey = "empty";
    }
    return;
  }
  if (view.skeletonKey !== skeletonKey(board)) buildSkeleton(view);
  view.el.classList.toggle("disabled", view.disabled || !view.opts.interactive);
  view.el.classList.toggle("premoving", view.premove);
  const targets = view.targetsOf(view.selected);
  const marks = {
    pending: view.pending ? parseMove(view.pending) : null,
    queued: view.queued ? parseMove(view.queued) : null,
    hint: view.hint ? parseMove(view.hint) : null,
  };
  const flight = takeOff(view);
  for (const pile of board.piles) renderPile(view, pile, targets, marks);
  // The deepest column, for the stylesheet to close up long columns (board.css).
  let down = 0;
  let up = 0;
  for (const { pile, cards } of board.piles) {
    if (pile[0] !== "t") continue;
    const hidden = cards.filter((c) => !c).length;
    down = Math.max(down, hidden);
    up = Math.max(up, cards.length - hidden - 1);
  }
  view.el.style.setProperty("--max-dn", down);
  view.el.style.setProperty("--max-up", up);
  if (flight) land(view, flight);
}

/** Before a redraw: where the cards of `motion` are now (null: nothing to animate). */

/** The sections and an element per pile, in their order: built again only for another game or
 * another set of piles. */
function buildSkeleton(view) {
  const board = view.board;
  const look = view.look;
  const sections = new Map();
  const ids = board.piles.map((p) => p.pile);
  ids.sort((a, b) => {
    const sa = SECTION_ORDER.indexOf(SECTION_OF[a[0]] || "other");
    const sb = SECTION_ORDER.indexOf(SECTION_OF[b[0]] || "other");
    if (sa !== sb) return sa - sb;
    if (a[0] !== b[0]) return (TALON_ORDER[a[0]] ?? 9) - (TALON_ORDER[b[0]] ?? 9);
    return pileNumber(a) - pileNumber(b);
  });
  view.el.replaceChildren();
  view.pileEls.clear();
  view.pileSigs.clear();
  view.el.dataset.game = board.game;
  if (!ids.includes(view.focusPile)) view.focusPile = ids.find((id) => id[0] === "t") || ids[0];
  for (const id of ids) {
    const section = SECTION_OF[id[0]] || "other";
    if (!sections.has(section)) {
      const s = document.createElement("div");
      s.className = `section section-${section}`;
      sections.set(section, s);
      view.el.append(s);
    }
    const pileEl = document.createElement("div");
    const kind = id[0] === "t" ? look.tableau : { f: "stack", r: "stack", s: "stack", w: "waste" }[id[0]] || "stack";
    pileEl.className = `pile pile-${kind} pile-${id[0]}`;
    pileEl.dataset.pile = id;
    pileEl.setAttribute("role", "group");
    if (view.opts.interactive) pileEl.tabIndex = id === view.focusPile ? 0 : -1;
    sections.get(section).append(pileEl);
    view.pileEls.set(id, pileEl);
  }
  view.skeletonKey = skeletonKey(board);
}

function takeOff(view) {
  const motion = view.motion;
  view.motion = null;
  if (!motion || reducedMotion?.matches || document.hidden) return null;
  const dropped = view.dropped;
  if (dropped && dropped.from === motion.from && dropped.to === motion.to
    && performance.now() - dropped.at < 1000) {
    view.dropped = null;
    return null;
  }
  const from = view.pileEls.get(motion.from);
  if (!from || !view.pileEls.has(motion.to)) return null;
  const cards = [...from.querySelectorAll(":scope > .card")].slice(-motion.count);
  const pileBox = from.getBoundingClientRect();
  const boxes = cards.map((c) => c.getBoundingClientRect());
  while (boxes.length < motion.count) boxes.unshift(boxes[0] || pileBox);
  return { motion, boxes };
}

/** After the redraw: slide the moved cards from where they were to where they are now. */

function land(view, { motion, boxes }) {
  const cards = [...view.pileEls.get(motion.to).querySelectorAll(":scope > .card")].slice(-motion.count);
  if (cards.length !== boxes.length) return;
  cards.forEach((card, i) => {
    const now = card.getBoundingClientRect();
    const dx = boxes[i].left - now.left;
    const dy = boxes[i].top - now.top;
    if (!dx && !dy) return;
    card.classList.add("flying");
    const flight = card.animate(
      [{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "translate(0, 0)" }],
      { duration: MOTION_MS, easing: "cubic-bezier(0.2, 0.7, 0.3, 1)" },
    );
    flight.onfinish = flight.oncancel = () => card.classList.remove("flying");
  });
}

/** Draw one pile: its cards, marks and badges, and its label for screen readers. */
function renderPile(view, { pile, cards }, targets, marks) {
  const el = view.pileEls.get(pile);
  const look = view.look;
  const n = cards.length;
  const interactive = view.opts.interactive && !view.disabled;
  const sel = view.selected?.pile === pile ? view.selected.count : 0;
  const isTarget = targets.has(pile);
  const isStockClickable = pile === "s" && (!!view.stockAction() || (interactive && view.premove));
  const { pending, queued, hint } = marks;
  const pendingCount = pending?.from === pile ? pending.count : 0;
  const queuedCount = queued?.from === pile ? queued.count : 0;
  const hintCount = hint?.from === pile ? hint.count : 0;
  // A pile is drawn again only when something it shows changed: a move touches two piles,
  // and drawing all of them (every card of a 208-card board, on every board of the page, at
  // every move of any racer) cost the page most of its time.
  const movable = interactive && !view.premove ? [...(view.index.sources.get(pile)?.keys() || [])].join(".") : "";
  const sig = [cards.join(","), isTarget, sel, view.selected?.tentative, isStockClickable, pendingCount,
    pending?.to === pile, queuedCount, queued?.to === pile, hintCount, hint?.to === pile, movable,
    view.baseRank].join("|");
  if (view.pileSigs.get(pile) === sig) return;
  view.pileSigs.set(pile, sig);
  el.classList.toggle("target", isTarget);
  el.classList.toggle("source", !!sel);
  el.classList.toggle("clickable", isTarget || isStockClickable);
  el.classList.toggle("empty", n === 0);
  el.classList.toggle("pending-target", pending?.to === pile && pile !== "s");
  el.classList.toggle("premove-target", queued?.to === pile && pile !== "s");
  el.classList.toggle("hint-source", !!hintCount);
  el.classList.toggle("hint-target", hint?.to === pile);

  // Which cards to draw: everything for tableau/foundations/waste; the top few for stock/reserve.
  const kind = pile[0];
  let first = 0;
  if (kind === "s") first = Math.max(0, n - 3);
  if (kind === "r") first = Math.max(0, n - 3);
  let spread = n;
  if (kind === "w") spread = Math.min(n, 3);

  // Cards still in place keep their elements, where they are in the page: a card taken out
  // of the page between the press and the release of a click (even to be put back at once)
  // loses the click, and a double-click with it.
  const old = [...el.querySelectorAll(":scope > .card")];
  for (const child of [...el.children]) if (!child.classList.contains("card")) child.remove();
  const keeps = (slot, text, bare) => old[slot]?.cardText === text && old[slot].bare === bare;
  const bareAt = (i) => kind === "f" && n - i > 3;
  old.forEach((card, slot) => {
    const i = slot + first;
    if (i >= n || !keeps(slot, cards[i], bareAt(i))) card.remove();
  });
  let cursor = null; // the card element drawn last: the next one goes after it
  let down = 0;
  let up = 0;
  for (let i = first; i < n; i++) {
    const text = cards[i];
    const depth = n - i;
    const face = cardFace(text);
    // A foundation shows its top card only: those under the top three are bare elements
    // (a Quadruple Canfield board holds up to 208 foundation cards, eight elements each
    // when drawn in full, and every board of the page pays for each one's style and layout).
    const bare = bareAt(i);
    let card;
    if (keeps(i - first, text, bare)) {
      card = old[i - first];
      card.className = card.classList.contains("flying") ? "flying" : "";
      card.classList.add(...(face ? ["card", face.red ? "red" : "black", `suit-${text[1]}`] : ["card", "down"]));
    } else {
      card = document.createElement("div");
      card.cardText = text;
      card.bare = bare;
      card.className = face ? `card ${face.red ? "red" : "black"} suit-${text[1]}` : "card down";
      card.setAttribute("role", "img");
      card.setAttribute("aria-label", cardLabel(text));
      if (face) card.dataset.card = text;
      if (face && !bare) {
        const idx = `<b${face.rank === "10" ? ' class="ten"' : ""}>${face.rank}</b><i>${face.suit}</i>`;
        card.innerHTML =
          `<span class="idx" aria-hidden="true">${idx}</span>` +
          `<span class="pip" aria-hidden="true">${face.suit}</span>` +
          `<span class="idx idx-br" aria-hidden="true">${idx}</span>`;
      }
      el.insertBefore(card, cursor ? cursor.nextSibling : el.firstChild);
    }
    cursor = card;
    card.dataset.depth = depth;
    if (kind === "w") {
      // Waste: cards under the top three lie square beneath them.
      card.style.setProperty("--i", Math.max(0, i - (n - spread)));
    } else {
      card.style.setProperty("--i", i - first);
    }
    card.style.setProperty("--dn", down);
    card.style.setProperty("--up", up);
    if (text) up++;
    else down++;
    if (interactive && view.isMovable(pile, depth)) card.classList.add("movable");
    if (sel && depth <= sel) card.classList.add("selected", ...(view.selected.tentative ? ["tentative"] : []));
    if (depth <= pendingCount) card.classList.add("pending");
    if (depth <= queuedCount) card.classList.add("premove");
    if (depth <= hintCount) card.classList.add("hinted");
  }
  const frag = document.createDocumentFragment();
  if (kind === "s" || kind === "r" || (kind === "f" && n > 1)) {
    const badge = document.createElement("span");
    badge.className = "count";
    badge.setAttribute("aria-hidden", "true");
    badge.textContent = n;
    frag.append(badge);
  }
  const suit = kind === "f" ? look.foundationSuit?.(pile) : null;
  if (n === 0) {
    const mark = document.createElement("span");
    mark.className = "pile-mark";
    mark.setAttribute("aria-hidden", "true");
    if (suit) {
      mark.classList.add("suit-mark", `suit-${suit}`);
      mark.textContent = `${view.baseRank ? cardFace(`${view.baseRank}${suit}`).rank : ""}${SUIT_GLYPH[suit]}`;
    } else {
      mark.textContent = kind === "f" ? look.foundationMark ?? "" : kind === "s" && isStockClickable ? "↻" : "";
    }
    frag.append(mark);
  }
  if (view.opts.pileNames) {
    const tag = document.createElement("span");
    tag.className = "pile-name";
    tag.setAttribute("aria-hidden", "true");
    tag.textContent = suit ? `${pile} ${SUIT_GLYPH[suit]}` : pile;
    frag.append(tag);
  }
  el.append(frag);
  el.style.setProperty("--n", Math.max(1, (kind === "w" ? spread : n - first)));
  el.style.setProperty("--gaps", Math.max(1, (kind === "w" ? spread : n - first) - 1));
  el.style.setProperty("--dn-total", down);
  el.style.setProperty("--up-total", Math.max(0, up - 1));

  // Screen-reader summary of the pile; its id is part of it, as the keys and move box use it.
  let name = `${view.pileName(pile)} (${pile})`;
  if (suit) name += `, ${cardFace(`A${suit}`).label.replace("Ace of ", "")}${view.baseRank ? ` from ${cardFace(`${view.baseRank}${suit}`).label.split(" of ")[0]}` : ""}`;
  const top = n ? cardLabel(cards[n - 1]) : "empty";
  let label;
  if (kind === "s") label = `${name}: ${n} cards${isStockClickable ? ", activate to deal" : ""}`;
  else if (kind === "t" && n) {
    const faceUp = cards.filter(Boolean).map(cardShort).join(" ");
    label = `${name}: ${n} card${n === 1 ? "" : "s"}${down ? `, ${down} face down` : ""}; ${faceUp}; top ${top}`;
  } else label = `${name}: ${n ? `${n} card${n === 1 ? "" : "s"}, top ${top}` : "empty"}`;
  if (isTarget) label += ". Legal target";
  if (sel) label += ". Selected";
  if (queuedCount || queued?.to === pile) label += ". Premove";
  if (hintCount) label += ". Hint: move from here";
  if (hint?.to === pile) label += ". Hint: move here";
  el.setAttribute("aria-label", label);
}
