// Board view: renders one board object and reports the player's intents. No rules here: what may
// move where comes only from the `legal` list of move texts it is given (the server's, or the same
// list worked out by the session's rules engine).
//
//   const view = new BoardView(element, { player: "own", interactive: true, onMove: text => ... });
//   view.set({ board, legal, premove, pending, queued, hint, motion });
//
// The element gets `data-board="own"` (or the player id); every pile carries `data-pile="t3"` and
// every face-up card `data-card="TH"`, so automation can read and drive the board.
//
// Intents: a card that a legal move starts from is "movable" and shows where it may go. Any other
// face-up card can still be picked up and dropped: that move is reported too, and the refusal
// says why (the board never decides what is legal). With `premove` set (the legal moves cannot be
// listed yet), picking and dropping report the next move, which the session judges or queues.
//
// Motion: `motion` ({from, to, count, n}, a new `n` each time) says which cards the new board
// moved. The board is drawn in its new state at once; the moved cards then slide from where they
// were (FLIP, at most MOTION_MS), unless the player asked for reduced motion or dragged them there.

import { cardFace, cardLabel, cardShort, pileLabel } from "./cards.js";
import { PileTyping, onBoardKey } from "./board-keys.js";
import { DragController } from "./drag.js";
import { isHome, moveText, parseMove } from "./moves.js";
import { frameScheduler } from "./ui.js";

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

/** Index the legal moves: sources[pile] = Map(count -> [moves]), plus stock actions. */
function indexLegal(legal) {
  const sources = new Map();
  const other = new Set();
  for (const text of legal || []) {
    const mv = parseMove(text);
    if (!mv) continue;
    if ((mv.from === "s" && mv.to === "w") || (mv.from === "w" && mv.to === "s")) {
      other.add(text);
      continue;
    }
    if (!sources.has(mv.from)) sources.set(mv.from, new Map());
    const byCount = sources.get(mv.from);
    if (!byCount.has(mv.count)) byCount.set(mv.count, []);
    byCount.get(mv.count).push(mv);
  }
  return { sources, other };
}

/** The base rank of a board whose foundations start from a dealt card (Quadruple Canfield):
 * the bottom card of any non-empty foundation, since every foundation builds up from it. */
export function foundationBase(board) {
  for (const p of board?.piles || []) {
    if (p.pile[0] === "f" && p.cards.length && p.cards[0]) return p.cards[0][0];
  }
  return null;
}

export class BoardView {
  /**
   * @param {HTMLElement} el  container; its content is owned by the view
   * @param {object} opts  player ("own" or a player id), interactive, compact, label, pileNames,
   *   onMove(text) for a chosen move (legal or not: the server judges), onAnnounce(text) for
   *   selection feedback, onPick() when the player starts choosing a move
   */
  constructor(el, opts = {}) {
    this.el = el;
    this.opts = opts;
    this.board = null;
    this.legal = [];
    this.index = indexLegal([]);
    this.disabled = false;
    this.premove = false;
    this.pending = null;
    this.queued = null;
    this.hint = null; // a move text suggested by the server's solver: its cards and target are marked
    this.motion = null; // {from, to, count, n}: cards to slide at the next redraw
    this.motionSeen = 0;
    this.dropped = null; // {from, to} of the last drop: those cards are already where they land
    this.selected = null; // {pile, count, tentative}
    this.baseRank = null;
    this.typing = new PileTyping(this); // a pile's name being typed (board-keys.js)
    this.pileEls = new Map();
    this.pileSigs = new Map(); // pile -> what it was last drawn from (see renderPile)
    this.focusPile = null; // the one pile in the tab order (roving focus)
    this.skeletonKey = "";
    this.dragger = new DragController(this);
    el.classList.add("board");
    if (opts.compact) el.classList.add("compact");
    if (opts.pileNames) el.classList.add("named");
    el.dataset.board = opts.player || "own";
    if (opts.label) el.setAttribute("aria-label", opts.label);
    el.setAttribute("role", "region");
    this.schedule = frameScheduler(() => this.render());
    if (opts.interactive) this.listen();
    this.schedule(); // first paint, even if `set` never changes anything
  }

  /** Update any of {board, legal, disabled, premove, pending, queued, hint}; redraws on the next
   * animation frame. `pending`/`queued`: the move text in flight / the premove; `hint`: a
   * suggested move. */
  set(patch) {
    let changed = false;
    if ("board" in patch && patch.board !== this.board) {
      this.board = patch.board;
      // The server may say the base rank (`base`, Quadruple Canfield); else it is read off a foundation.
      const base = this.board?.base ? String(this.board.base).replace("10", "T") : foundationBase(this.board);
      if (base) this.baseRank = base; // remembered: a foundation may be emptied later
      changed = true;
    }
    if ("legal" in patch && (patch.legal || []) !== this.legal) {
      this.legal = patch.legal || [];
      this.index = indexLegal(this.legal);
      changed = true;
    }
    for (const key of ["disabled", "premove"]) {
      if (key in patch && !!patch[key] !== this[key]) {
        this[key] = !!patch[key];
        changed = true;
      }
    }
    for (const key of ["pending", "queued", "hint"]) {
      if (key in patch && (patch[key] || null) !== this[key]) {
        this[key] = patch[key] || null;
        changed = true;
      }
    }
    if (patch.motion && patch.motion.n !== this.motionSeen) {
      this.motionSeen = patch.motion.n;
      this.motion = patch.motion;
      changed = true;
    }
    if ("label" in patch && patch.label !== this.el.getAttribute("aria-label")) {
      this.el.setAttribute("aria-label", patch.label);
    }
    if (!changed) return;
    if (this.selected && !this.canPick(this.selected.pile, this.selected.count)) this.selected = null;
    if (this.selected) this.selected.tentative = !this.isMovable(this.selected.pile, this.selected.count);
    this.schedule();
  }

  destroy() {
    this.typing.cancel();
    this.el.replaceChildren();
    this.pileEls.clear();
    this.pileSigs.clear();
    this.removeListeners?.();
  }

  get look() {
    return GAME_LOOK[this.board?.game] || { tableau: "cascade", tableauName: "Pile" };
  }

  pileName(pile) {
    return pileLabel(pile, this.look.tableauName);
  }

  // --- what may be picked up: lookups in `legal`, and which cards are face up ---

  /** A legal move starts with these `count` cards of `pile`. */
  isMovable(pile, count) {
    if (!this.opts.interactive || this.disabled || this.premove) return false;
    return this.index.sources.get(pile)?.has(count) || false;
  }

  /** The player may pick these cards up: any face-up group (the server judges the move). */
  canPick(pile, count) {
    if (!this.opts.interactive || this.disabled || !this.board || pile === "s") return false;
    const cards = this.board.piles.find((p) => p.pile === pile)?.cards || [];
    return count >= 1 && count <= cards.length && !!cards[cards.length - count];
  }

  targetsOf(selection) {
    if (!selection || this.premove) return new Map();
    const moves = this.index.sources.get(selection.pile)?.get(selection.count) || [];
    return new Map(moves.map((mv) => [mv.to, mv.text]));
  }

  stockAction() {
    if (!this.opts.interactive || this.disabled) return null;
    for (const text of ["s>w", "w>s"]) if (this.index.other.has(text)) return text;
    return null;
  }

  cardAt(pile, depth) {
    const cards = this.board?.piles.find((p) => p.pile === pile)?.cards || [];
    return cards[cards.length - depth] ?? null;
  }

  /** Select a group; `quiet`: no announcement (a drag says nothing until the drop). */
  pick(selection, { quiet = false } = {}) {
    if (selection) selection.tentative = !this.isMovable(selection.pile, selection.count);
    this.selected = selection;
    if (selection) {
      this.opts.onPick?.();
      const card = this.cardAt(selection.pile, selection.count);
      const what = selection.count > 1 ? `${selection.count} cards from ${cardLabel(card)}` : cardLabel(card);
      if (!quiet) {
        if (this.premove) {
          this.opts.onAnnounce?.(`Premove: selected ${what}. Choose where it goes next.`);
        } else if (selection.tentative) {
          this.opts.onAnnounce?.(`Selected ${what}. No legal move for it now.`);
          this.flash(selection.pile, `No legal move for ${cardShort(card)} now`);
        } else {
          const targets = [...this.targetsOf(selection).keys()].map((p) => this.pileName(p));
          this.opts.onAnnounce?.(`Selected ${what}. Can go to ${targets.join(", ")}.`);
        }
      }
    }
    this.schedule();
  }

  send(text) {
    this.selected = null;
    // The move first: a page that redraws the board for it in its own frame then draws it once.
    this.opts.onMove?.(text);
    this.schedule();
  }

  /** A drop of the top `count` cards of `from` on `to` (null: outside the board). */
  drop(from, count, to) {
    if (!to || to === from) {
      this.selected = null;
      this.schedule();
      return;
    }
    const legal = this.targetsOf({ pile: from, count });
    this.dropped = { from, to, at: performance.now() };
    this.send(legal.get(to) || moveText(from, to, count));
  }

  /** A click or Enter on pile `pile`, on the card `depth` from the top (0: the pile itself). */
  activate(pile, depth) {
    if (!this.opts.interactive || this.disabled || !this.board) return;
    if (pile === "s") {
      // Deal or turn the waste over; as a premove, whichever the stock's cards call for.
      const stock = this.board.piles.find((p) => p.pile === "s");
      this.send(this.premove ? (stock?.cards.length ? "s>w" : "w>s") : this.stockAction() || "s>w");
      return;
    }
    const sel = this.selected;
    if (sel) {
      if (pile === sel.pile) {
        const deeper = depth && depth !== sel.count && this.canPick(pile, depth);
        this.pick(deeper ? { pile, count: depth } : null);
        return;
      }
      const targets = this.targetsOf(sel);
      if (targets.has(pile)) {
        this.send(targets.get(pile));
        return;
      }
      if (depth && this.isMovable(pile, depth)) {
        this.pick({ pile, count: depth }); // another card that can move: the player changed his mind
        return;
      }
      this.send(moveText(sel.pile, pile, sel.count)); // the server accepts it, or says why not
      return;
    }
    if (depth && this.canPick(pile, depth)) this.pick({ pile, count: depth });
  }

  /** Keyboard activation of a pile: select its top group, cycle deeper, or drop here. */
  activateByKey(pile) {
    if (pile === "s" || (this.selected && this.selected.pile !== pile)) {
      this.activate(pile, 0);
      return;
    }
    const cards = this.board?.piles.find((p) => p.pile === pile)?.cards || [];
    let counts;
    if (this.premove) counts = cards.map((_, i) => i + 1).filter((c) => this.canPick(pile, c));
    else counts = [...(this.index.sources.get(pile)?.keys() || [])].sort((a, b) => a - b);
    if (!counts.length && !this.premove && this.canPick(pile, 1)) counts = [1];
    if (!counts.length || this.disabled) {
      if (this.selected) this.pick(null);
      this.opts.onAnnounce?.(`${this.pileName(pile)}: nothing to move from here.`);
      return;
    }
    let next = counts[0];
    if (this.selected?.pile === pile) {
      const i = counts.indexOf(this.selected.count);
      next = i + 1 < counts.length ? counts[i + 1] : null;
    }
    this.pick(next ? { pile, count: next } : null);
  }

  /** Double click: send the card to a foundation when a legal move does that. */
  toFoundation(pile, depth) {
    if (!this.opts.interactive || this.disabled || this.premove) return;
    const moves = this.index.sources.get(pile)?.get(depth) || [];
    const mv = moves.find(isHome);
    if (mv) this.send(mv.text);
  }

  /** A short note beside a pile (a refusal, a dropped premove), gone after a moment. */
  flash(pile, text, ms = 2600) {
    const pileEl = this.pileEls.get(pile);
    if (!pileEl || !text) return;
    this.el.querySelectorAll(`.flash[data-for="${pile}"]`).forEach((n) => n.remove());
    const note = document.createElement("div");
    note.className = "flash";
    note.dataset.for = pile;
    note.setAttribute("aria-hidden", "true"); // the page's live region says it
    note.textContent = text;
    const boardBox = this.el.getBoundingClientRect();
    const box = pileEl.getBoundingClientRect();
    const left = Math.max(4, Math.min(box.left - boardBox.left, boardBox.width - 200));
    note.style.setProperty("left", `${left}px`);
    note.style.setProperty("top", `${Math.max(0, box.top - boardBox.top - 6)}px`);
    this.el.append(note);
    setTimeout(() => note.classList.add("flash-out"), ms);
    setTimeout(() => note.remove(), ms + 300);
  }

  // --- events ---

  listen() {
    const el = this.el;
    const hit = (target) => {
      const pileEl = target.closest?.("[data-pile]");
      if (!pileEl || !el.contains(pileEl)) return null;
      const cardEl = target.closest("[data-depth]");
      return { pile: pileEl.dataset.pile, depth: cardEl ? Number(cardEl.dataset.depth) : 0, pileEl };
    };
    const onClick = (e) => {
      if (this.dragger.suppressClick) {
        this.dragger.suppressClick = false;
        return;
      }
      const h = hit(e.target);
      if (h) this.activate(h.pile, h.depth);
      else if (this.selected) this.pick(null);
    };
    const onDbl = (e) => {
      const h = hit(e.target);
      if (h && h.depth) this.toFoundation(h.pile, h.depth);
    };
    const onKey = (e) => onBoardKey(this, e, hit);
    const onDown = (e) => this.dragger.onPointerDown(e, hit);
    const onFocus = (e) => {
      const h = hit(e.target);
      if (h && h.pileEl === e.target) this.rove(h.pile);
    };
    el.addEventListener("click", onClick);
    el.addEventListener("dblclick", onDbl);
    el.addEventListener("keydown", onKey);
    el.addEventListener("pointerdown", onDown);
    el.addEventListener("focusin", onFocus);
    this.removeListeners = () => {
      el.removeEventListener("click", onClick);
      el.removeEventListener("dblclick", onDbl);
      el.removeEventListener("keydown", onKey);
      el.removeEventListener("pointerdown", onDown);
      el.removeEventListener("focusin", onFocus);
      this.dragger.end();
    };
  }

  /** Roving focus: the board is one stop in the tab order, the pile that had focus last. */
  rove(pile) {
    if (!this.pileEls.has(pile)) return;
    this.focusPile = pile;
    for (const [id, el] of this.pileEls) el.tabIndex = id === pile ? 0 : -1;
  }

  /** Keys from outside the board (page-wide shortcuts): pile ids and Escape. */
  handleKey(e) {
    if (this.opts.interactive) onBoardKey(this, e, () => null);
  }

  // --- rendering ---

  buildSkeleton() {
    const board = this.board;
    const look = this.look;
    const sections = new Map();
    const ids = board.piles.map((p) => p.pile);
    ids.sort((a, b) => {
      const sa = SECTION_ORDER.indexOf(SECTION_OF[a[0]] || "other");
      const sb = SECTION_ORDER.indexOf(SECTION_OF[b[0]] || "other");
      if (sa !== sb) return sa - sb;
      if (a[0] !== b[0]) return (TALON_ORDER[a[0]] ?? 9) - (TALON_ORDER[b[0]] ?? 9);
      return pileNumber(a) - pileNumber(b);
    });
    this.el.replaceChildren();
    this.pileEls.clear();
    this.pileSigs.clear();
    this.el.dataset.game = board.game;
    if (!ids.includes(this.focusPile)) this.focusPile = ids.find((id) => id[0] === "t") || ids[0];
    for (const id of ids) {
      const section = SECTION_OF[id[0]] || "other";
      if (!sections.has(section)) {
        const s = document.createElement("div");
        s.className = `section section-${section}`;
        sections.set(section, s);
        this.el.append(s);
      }
      const pileEl = document.createElement("div");
      const kind = id[0] === "t" ? look.tableau : { f: "stack", r: "stack", s: "stack", w: "waste" }[id[0]] || "stack";
      pileEl.className = `pile pile-${kind} pile-${id[0]}`;
      pileEl.dataset.pile = id;
      pileEl.setAttribute("role", "group");
      if (this.opts.interactive) pileEl.tabIndex = id === this.focusPile ? 0 : -1;
      sections.get(section).append(pileEl);
      this.pileEls.set(id, pileEl);
    }
    this.skeletonKey = skeletonKey(board);
  }

  render() {
    if (this.dragger.active) return; // never redraw under the player's pointer; the drop redraws
    const board = this.board;
    if (!board) {
      if (this.skeletonKey !== "empty") {
        this.el.replaceChildren();
        this.pileEls.clear();
        const p = document.createElement("p");
        p.className = "board-empty";
        p.textContent = this.opts.emptyText || "The deal appears when the race starts.";
        this.el.append(p);
        this.skeletonKey = "empty";
      }
      return;
    }
    if (this.skeletonKey !== skeletonKey(board)) this.buildSkeleton();
    this.el.classList.toggle("disabled", this.disabled || !this.opts.interactive);
    this.el.classList.toggle("premoving", this.premove);
    const targets = this.targetsOf(this.selected);
    const marks = {
      pending: this.pending ? parseMove(this.pending) : null,
      queued: this.queued ? parseMove(this.queued) : null,
      hint: this.hint ? parseMove(this.hint) : null,
    };
    const flight = this.takeOff();
    for (const pile of board.piles) this.renderPile(pile, targets, marks);
    // The deepest column, for the stylesheet to close up long columns (board.css).
    let down = 0;
    let up = 0;
    for (const { pile, cards } of board.piles) {
      if (pile[0] !== "t") continue;
      const hidden = cards.filter((c) => !c).length;
      down = Math.max(down, hidden);
      up = Math.max(up, cards.length - hidden - 1);
    }
    this.el.style.setProperty("--max-dn", down);
    this.el.style.setProperty("--max-up", up);
    if (flight) this.land(flight);
  }

  /** Before a redraw: where the cards of `motion` are now (null: nothing to animate). */
  takeOff() {
    const motion = this.motion;
    this.motion = null;
    if (!motion || reducedMotion?.matches || document.hidden) return null;
    const dropped = this.dropped;
    if (dropped && dropped.from === motion.from && dropped.to === motion.to
      && performance.now() - dropped.at < 1000) {
      this.dropped = null;
      return null;
    }
    const from = this.pileEls.get(motion.from);
    if (!from || !this.pileEls.has(motion.to)) return null;
    const cards = [...from.querySelectorAll(":scope > .card")].slice(-motion.count);
    const pileBox = from.getBoundingClientRect();
    const boxes = cards.map((c) => c.getBoundingClientRect());
    while (boxes.length < motion.count) boxes.unshift(boxes[0] || pileBox);
    return { motion, boxes };
  }

  /** After the redraw: slide the moved cards from where they were to where they are now. */
  land({ motion, boxes }) {
    const cards = [...this.pileEls.get(motion.to).querySelectorAll(":scope > .card")].slice(-motion.count);
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

  renderPile({ pile, cards }, targets, marks) {
    const el = this.pileEls.get(pile);
    const look = this.look;
    const n = cards.length;
    const interactive = this.opts.interactive && !this.disabled;
    const sel = this.selected?.pile === pile ? this.selected.count : 0;
    const isTarget = targets.has(pile);
    const isStockClickable = pile === "s" && (!!this.stockAction() || (interactive && this.premove));
    const { pending, queued, hint } = marks;
    const pendingCount = pending?.from === pile ? pending.count : 0;
    const queuedCount = queued?.from === pile ? queued.count : 0;
    const hintCount = hint?.from === pile ? hint.count : 0;
    // A pile is drawn again only when something it shows changed: a move touches two piles,
    // and drawing all of them (every card of a 208-card board, on every board of the page, at
    // every move of any racer) cost the page most of its time.
    const movable = interactive && !this.premove ? [...(this.index.sources.get(pile)?.keys() || [])].join(".") : "";
    const sig = [cards.join(","), isTarget, sel, this.selected?.tentative, isStockClickable, pendingCount,
      pending?.to === pile, queuedCount, queued?.to === pile, hintCount, hint?.to === pile, movable,
      this.baseRank].join("|");
    if (this.pileSigs.get(pile) === sig) return;
    this.pileSigs.set(pile, sig);
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
      if (interactive && this.isMovable(pile, depth)) card.classList.add("movable");
      if (sel && depth <= sel) card.classList.add("selected", ...(this.selected.tentative ? ["tentative"] : []));
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
        mark.textContent = `${this.baseRank ? cardFace(`${this.baseRank}${suit}`).rank : ""}${SUIT_GLYPH[suit]}`;
      } else {
        mark.textContent = kind === "f" ? look.foundationMark ?? "" : kind === "s" && isStockClickable ? "↻" : "";
      }
      frag.append(mark);
    }
    if (this.opts.pileNames) {
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
    let name = `${this.pileName(pile)} (${pile})`;
    if (suit) name += `, ${cardFace(`A${suit}`).label.replace("Ace of ", "")}${this.baseRank ? ` from ${cardFace(`${this.baseRank}${suit}`).label.split(" of ")[0]}` : ""}`;
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
}
