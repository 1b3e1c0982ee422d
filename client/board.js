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
// were (FLIP, at most MOTION_MS, board-draw.js), unless the player asked for reduced motion or dragged them there.
//
// This file holds the view's state and the player's intents (what may be picked up, where it may
// go, the move reported); drawing is in board-draw.js, keys in board-keys.js, drags in drag.js.

import { cardLabel, cardShort, pileLabel } from "./cards.js";
import { drawBoard, lookOf } from "./board-draw.js";
import { PileTyping, onBoardKey } from "./board-keys.js";
import { DragController } from "./drag.js";
import { isHome, moveText, parseMove } from "./moves.js";
import { frameScheduler } from "./ui.js";

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
    return lookOf(this.board?.game);
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

  // --- drawing (board-draw.js) ---

  /** Draw the board as it is now (on the next frame: schedule). */
  render() {
    drawBoard(this);
  }
}
