// Board view: renders one board object and reports the player's intents. No rules here: what may
// move where comes only from the server's `legal` list of move texts.
//
//   const view = new BoardView(element, { player: "own", interactive: true, onMove: text => ... });
//   view.set({ board, legal });
//
// The element gets `data-board="own"` (or the player id); every pile carries `data-pile="t3"` and
// every face-up card `data-card="TH"`, so automation can read and drive the board.

import { cardFace, cardLabel, cardShort, pileLabel } from "./cards.js";
import { isHome, parseMove } from "./moves.js";
import { frameScheduler } from "./ui.js";

// Presentation per game: how tableau piles spread and what they are called. Unknown games fall
// back to columns. Pile kinds come from their ids (t tableau, f foundation, r reserve, s stock, w waste).
const GAME_LOOK = {
  scotch: { tableau: "fan", tableauName: "Fan", foundationMark: "A" },
  yukon: { tableau: "cascade", tableauName: "Column", foundationMark: "A" },
  "quadruple-canfield": { tableau: "cascade", tableauName: "Tableau" },
};

const SECTION_OF = { f: "foundations", t: "tableau", s: "talon", w: "talon", r: "talon" };
const SECTION_ORDER = ["talon", "foundations", "tableau", "other"];
const TALON_ORDER = { s: 0, w: 1, r: 2 };

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

export class BoardView {
  /**
   * @param {HTMLElement} el  container; its content is owned by the view
   * @param {object} opts  player ("own" or a player id), interactive, compact, label,
   *   onMove(text) for a chosen legal move, onAnnounce(text) for selection feedback
   */
  constructor(el, opts = {}) {
    this.el = el;
    this.opts = opts;
    this.board = null;
    this.legal = [];
    this.index = indexLegal([]);
    this.disabled = false;
    this.selected = null; // {pile, count}
    this.drag = null;
    this.suppressClick = false;
    this.keyBuffer = "";
    this.keyTimer = 0;
    this.pileEls = new Map();
    this.skeletonKey = "";
    el.classList.add("board");
    if (opts.compact) el.classList.add("compact");
    el.dataset.board = opts.player || "own";
    if (opts.label) el.setAttribute("aria-label", opts.label);
    el.setAttribute("role", "region");
    this.schedule = frameScheduler(() => this.render());
    if (opts.interactive) this.listen();
    this.schedule(); // first paint, even if `set` never changes anything
  }

  /** Update any of {board, legal, disabled}; redraws on the next animation frame. */
  set(patch) {
    let changed = false;
    if ("board" in patch && patch.board !== this.board) {
      this.board = patch.board;
      changed = true;
    }
    if ("legal" in patch && (patch.legal || []) !== this.legal) {
      this.legal = patch.legal || [];
      this.index = indexLegal(this.legal);
      changed = true;
    }
    if ("disabled" in patch && !!patch.disabled !== this.disabled) {
      this.disabled = !!patch.disabled;
      changed = true;
    }
    if (!changed) return;
    if (this.selected && !this.canSelect(this.selected.pile, this.selected.count)) this.selected = null;
    this.schedule();
  }

  destroy() {
    this.el.replaceChildren();
    this.pileEls.clear();
    this.removeListeners?.();
  }

  get look() {
    return GAME_LOOK[this.board?.game] || { tableau: "cascade", tableauName: "Pile" };
  }

  // --- selection logic (pure lookups in `legal`) ---

  canSelect(pile, count) {
    if (!this.opts.interactive || this.disabled) return false;
    return this.index.sources.get(pile)?.has(count) || false;
  }

  targetsOf(selection) {
    if (!selection) return new Map();
    const moves = this.index.sources.get(selection.pile)?.get(selection.count) || [];
    return new Map(moves.map((mv) => [mv.to, mv.text]));
  }

  stockAction() {
    if (!this.opts.interactive || this.disabled) return null;
    for (const text of ["s>w", "w>s"]) if (this.index.other.has(text)) return text;
    return null;
  }

  select(selection) {
    this.selected = selection;
    if (selection) {
      const targets = [...this.targetsOf(selection).keys()].map((p) => pileLabel(p, this.look.tableauName));
      const pile = this.board.piles.find((p) => p.pile === selection.pile);
      const card = pile?.cards[pile.cards.length - selection.count];
      const what = selection.count > 1 ? `${selection.count} cards from ${cardLabel(card)}` : cardLabel(card);
      this.opts.onAnnounce?.(`Selected ${what}. Can go to ${targets.join(", ") || "nowhere"}.`);
    }
    this.schedule();
  }

  send(text) {
    this.selected = null;
    this.schedule();
    this.opts.onMove?.(text);
  }

  /** A click or Enter on pile `pile`, on the card `depth` from the top (0: the pile itself). */
  activate(pile, depth) {
    if (!this.opts.interactive || this.disabled || !this.board) return;
    if (pile === "s") {
      const action = this.stockAction();
      if (action) this.send(action);
      return;
    }
    const targets = this.targetsOf(this.selected);
    if (this.selected && targets.has(pile)) {
      this.send(targets.get(pile));
      return;
    }
    if (depth && this.canSelect(pile, depth)) {
      const same = this.selected && this.selected.pile === pile && this.selected.count === depth;
      this.select(same ? null : { pile, count: depth });
      return;
    }
    if (this.selected) this.select(null);
  }

  /** Keyboard activation of a pile: select its top movable group, cycle deeper, or drop here. */
  activateByKey(pile) {
    if (pile === "s" || (this.selected && this.targetsOf(this.selected).has(pile))) {
      this.activate(pile, 0);
      return;
    }
    const counts = [...(this.index.sources.get(pile)?.keys() || [])].sort((a, b) => a - b);
    if (!counts.length || this.disabled) {
      if (this.selected) this.select(null);
      this.opts.onAnnounce?.(`${pileLabel(pile, this.look.tableauName)}: nothing to move from here.`);
      return;
    }
    let next = counts[0];
    if (this.selected?.pile === pile) {
      const i = counts.indexOf(this.selected.count);
      next = i + 1 < counts.length ? counts[i + 1] : null;
    }
    this.select(next ? { pile, count: next } : null);
  }

  /** Double click: send the card to a foundation when a legal move does that. */
  toFoundation(pile, depth) {
    if (!this.opts.interactive || this.disabled) return;
    const moves = this.index.sources.get(pile)?.get(depth) || [];
    const mv = moves.find(isHome);
    if (mv) this.send(mv.text);
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
      if (this.suppressClick) {
        this.suppressClick = false;
        return;
      }
      const h = hit(e.target);
      if (h) this.activate(h.pile, h.depth);
      else if (this.selected) this.select(null);
    };
    const onDbl = (e) => {
      const h = hit(e.target);
      if (h && h.depth) this.toFoundation(h.pile, h.depth);
    };
    const onKey = (e) => this.onKey(e, hit);
    const onDown = (e) => this.onPointerDown(e, hit);
    el.addEventListener("click", onClick);
    el.addEventListener("dblclick", onDbl);
    el.addEventListener("keydown", onKey);
    el.addEventListener("pointerdown", onDown);
    this.removeListeners = () => {
      el.removeEventListener("click", onClick);
      el.removeEventListener("dblclick", onDbl);
      el.removeEventListener("keydown", onKey);
      el.removeEventListener("pointerdown", onDown);
      this.endDrag();
    };
  }

  /** Keys from outside the board (page-wide shortcuts): pile ids and Escape. */
  handleKey(e) {
    if (this.opts.interactive) this.onKey(e, () => null);
  }

  onKey(e, hit) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const h = hit(e.target);
    if (e.key === "Escape") {
      if (this.selected) {
        this.select(null);
        e.preventDefault();
      }
      return;
    }
    if ((e.key === "Enter" || e.key === " ") && h) {
      e.preventDefault();
      this.activateByKey(h.pile);
      return;
    }
    const dirs = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    if (dirs[e.key] && h) {
      e.preventDefault();
      this.focusNeighbour(h.pileEl, ...dirs[e.key]);
      return;
    }
    // Pile keys: type a pile id ("t12", "f1", "s") to focus and activate it; "t3" then "f1" moves.
    if (/^[a-z0-9]$/i.test(e.key)) {
      const letter = /[a-z]/i.test(e.key);
      this.keyBuffer = letter ? e.key.toLowerCase() : this.keyBuffer + e.key;
      clearTimeout(this.keyTimer);
      const buffer = this.keyBuffer;
      const ids = [...this.pileEls.keys()];
      const exact = ids.includes(buffer);
      const longer = ids.some((id) => id !== buffer && id.startsWith(buffer));
      const fire = () => {
        this.keyBuffer = "";
        const pileEl = this.pileEls.get(buffer);
        if (!pileEl) return;
        pileEl.focus();
        this.activateByKey(buffer);
      };
      if (exact && !longer) fire();
      else if (exact) this.keyTimer = setTimeout(fire, 700);
      else if (!longer) this.keyBuffer = "";
      e.preventDefault();
    }
  }

  focusNeighbour(fromEl, dx, dy) {
    const a = fromEl.getBoundingClientRect();
    const ax = a.left + a.width / 2;
    const ay = a.top + Math.min(a.height, 60) / 2;
    let best = null;
    let bestScore = Infinity;
    for (const el of this.pileEls.values()) {
      if (el === fromEl) continue;
      const b = el.getBoundingClientRect();
      const bx = b.left + b.width / 2;
      const by = b.top + Math.min(b.height, 60) / 2;
      const along = (bx - ax) * dx + (by - ay) * dy;
      if (along <= 1) continue;
      const across = Math.abs((bx - ax) * dy) + Math.abs((by - ay) * dx);
      const score = along + across * 3;
      if (score < bestScore) {
        bestScore = score;
        best = el;
      }
    }
    best?.focus();
  }

  onPointerDown(e, hit) {
    if (e.button !== 0 || !this.opts.interactive || this.disabled) return;
    const h = hit(e.target);
    if (!h || !h.depth || !this.canSelect(h.pile, h.depth)) return;
    const start = { x: e.clientX, y: e.clientY, pile: h.pile, depth: h.depth, id: e.pointerId };
    const move = (ev) => {
      if (ev.pointerId !== start.id) return;
      if (!this.drag) {
        if (Math.hypot(ev.clientX - start.x, ev.clientY - start.y) < 6) return;
        this.beginDrag(start, h.pileEl);
      }
      this.drag.ghost.style.transform =
        `translate(${ev.clientX - this.drag.dx}px, ${ev.clientY - this.drag.dy}px)`;
      this.markDropTarget(ev.clientX, ev.clientY);
    };
    const up = (ev) => {
      if (ev.pointerId !== start.id) return;
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", up);
      window.removeEventListener("pointercancel", up);
      if (!this.drag) return;
      const dropPile = ev.type === "pointerup" ? this.pileAt(ev.clientX, ev.clientY) : null;
      this.endDrag();
      this.suppressClick = true;
      setTimeout(() => (this.suppressClick = false), 0);
      const targets = this.targetsOf({ pile: start.pile, count: start.depth });
      if (dropPile && targets.has(dropPile)) this.send(targets.get(dropPile));
      else this.schedule();
    };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
    window.addEventListener("pointercancel", up);
  }

  beginDrag(start, pileEl) {
    this.selected = { pile: start.pile, count: start.depth };
    this.render();
    const cards = [...pileEl.querySelectorAll("[data-depth]")].filter(
      (c) => Number(c.dataset.depth) <= start.depth,
    );
    const first = cards[0].getBoundingClientRect();
    const ghost = document.createElement("div");
    ghost.className = "drag-ghost board" + (this.opts.compact ? " compact" : "");
    ghost.setAttribute("aria-hidden", "true");
    const style = getComputedStyle(this.el);
    for (const prop of ["--cw", "--ch"]) ghost.style.setProperty(prop, style.getPropertyValue(prop));
    for (const c of cards) {
      const r = c.getBoundingClientRect();
      const clone = c.cloneNode(true);
      clone.removeAttribute("data-card");
      clone.removeAttribute("data-depth");
      clone.style.left = `${r.left - first.left}px`;
      clone.style.top = `${r.top - first.top}px`;
      clone.classList.remove("selected");
      ghost.append(clone);
      c.classList.add("dragging");
    }
    document.body.append(ghost);
    this.drag = { ghost, dx: start.x - first.left, dy: start.y - first.top };
    ghost.style.transform = `translate(${first.left}px, ${first.top}px)`;
  }

  pileAt(x, y) {
    const el = document.elementFromPoint(x, y)?.closest?.("[data-pile]");
    return el && this.el.contains(el) ? el.dataset.pile : null;
  }

  markDropTarget(x, y) {
    const pile = this.pileAt(x, y);
    for (const [id, el] of this.pileEls) el.classList.toggle("drop-hover", id === pile && el.classList.contains("target"));
  }

  endDrag() {
    if (!this.drag) return;
    this.drag.ghost.remove();
    this.drag = null;
    for (const el of this.pileEls.values()) el.classList.remove("drop-hover");
    this.el.querySelectorAll(".dragging").forEach((c) => c.classList.remove("dragging"));
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
    this.el.dataset.game = board.game;
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
      if (this.opts.interactive) pileEl.tabIndex = 0;
      sections.get(section).append(pileEl);
      this.pileEls.set(id, pileEl);
    }
    this.skeletonKey = skeletonKey(board);
  }

  render() {
    if (this.drag) return; // never redraw under the player's pointer; endDrag reschedules
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
    const targets = this.targetsOf(this.selected);
    for (const pile of board.piles) this.renderPile(pile, targets);
  }

  renderPile({ pile, cards }, targets) {
    const el = this.pileEls.get(pile);
    const look = this.look;
    const n = cards.length;
    const interactive = this.opts.interactive && !this.disabled;
    const sel = this.selected?.pile === pile ? this.selected.count : 0;
    const isTarget = targets.has(pile);
    const isStockClickable = pile === "s" && !!this.stockAction();
    el.classList.toggle("target", isTarget);
    el.classList.toggle("source", !!sel);
    el.classList.toggle("clickable", isTarget || isStockClickable);
    el.classList.toggle("empty", n === 0);

    // Which cards to draw: everything for tableau/foundations/waste; the top few for stock/reserve.
    const kind = pile[0];
    let first = 0;
    if (kind === "s") first = Math.max(0, n - 3);
    if (kind === "r") first = Math.max(0, n - 3);
    let spread = n;
    if (kind === "w") spread = Math.min(n, 3);

    const frag = document.createDocumentFragment();
    let down = 0;
    let up = 0;
    for (let i = first; i < n; i++) {
      const text = cards[i];
      const depth = n - i;
      const card = document.createElement("div");
      const face = cardFace(text);
      card.className = face ? `card ${face.red ? "red" : "black"}` : "card down";
      card.setAttribute("role", "img");
      card.setAttribute("aria-label", cardLabel(text));
      if (face) {
        card.dataset.card = text;
        const idx = `<b${face.rank === "10" ? ' class="ten"' : ""}>${face.rank}</b><i>${face.suit}</i>`;
        card.innerHTML =
          `<span class="idx" aria-hidden="true">${idx}</span>` +
          `<span class="pip" aria-hidden="true">${face.suit}</span>` +
          `<span class="idx idx-br" aria-hidden="true">${idx}</span>`;
      }
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
      if (interactive && this.canSelect(pile, depth)) card.classList.add("movable");
      if (sel && depth <= sel) card.classList.add("selected");
      frag.append(card);
    }
    if (kind === "s" || kind === "r" || (kind === "f" && n > 1)) {
      const badge = document.createElement("span");
      badge.className = "count";
      badge.setAttribute("aria-hidden", "true");
      badge.textContent = n;
      frag.append(badge);
    }
    if (n === 0) {
      const mark = document.createElement("span");
      mark.className = "pile-mark";
      mark.setAttribute("aria-hidden", "true");
      mark.textContent = kind === "f" ? look.foundationMark ?? "" : kind === "s" && isStockClickable ? "↻" : "";
      frag.append(mark);
    }
    el.replaceChildren(frag);
    el.style.setProperty("--n", Math.max(1, (kind === "w" ? spread : n - first)));
    el.style.setProperty("--gaps", Math.max(1, (kind === "w" ? spread : n - first) - 1));
    el.style.setProperty("--dn-total", down);
    el.style.setProperty("--up-total", Math.max(0, up - 1));

    // Screen-reader summary of the pile.
    const name = pileLabel(pile, look.tableauName);
    const top = n ? cardLabel(cards[n - 1]) : "empty";
    let label;
    if (kind === "s") label = `${name}: ${n} cards${isStockClickable ? ", activate to deal" : ""}`;
    else if (kind === "t" && n) {
      const faceUp = cards.filter(Boolean).map(cardShort).join(" ");
      label = `${name}: ${n} card${n === 1 ? "" : "s"}${down ? `, ${down} face down` : ""}; ${faceUp}; top ${top}`;
    } else label = `${name}: ${n ? `${n} card${n === 1 ? "" : "s"}, top ${top}` : "empty"}`;
    if (isTarget) label += ". Legal target";
    if (sel) label += ". Selected";
    el.setAttribute("aria-label", label);
  }
}
