// Dragging on a board: a pointer press on a face-up card that moves away from where it started
// lifts that card and everything above it; the cards follow the pointer as a ghost of the same
// size, and a release over a pile reports the drop to the board, which turns it into a move text
// (or a premove). No rules here either: whether the drop is legal is the `legal` list's business,
// and a drop that is not legal is still reported, so that the session can say why.

const DRAG_THRESHOLD_PX = 6;

export class DragController {
  /** `view`: the BoardView; it answers canPick(pile, count) and takes drop(from, count, to). */
  constructor(view) {
    this.view = view;
    this.drag = null;
    this.suppressClick = false;
  }

  get active() {
    return !!this.drag;
  }

  onPointerDown(e, hit) {
    const view = this.view;
    if (e.button !== 0 || !view.opts.interactive || view.disabled) return;
    const h = hit(e.target);
    if (!h || !h.depth || !view.canPick(h.pile, h.depth)) return;
    const start = { x: e.clientX, y: e.clientY, pile: h.pile, depth: h.depth, id: e.pointerId };
    const move = (ev) => {
      if (ev.pointerId !== start.id) return;
      if (!this.drag) {
        if (Math.hypot(ev.clientX - start.x, ev.clientY - start.y) < DRAG_THRESHOLD_PX) return;
        if (!this.begin(start, h.pileEl)) return;
      }
      this.place(ev.clientX, ev.clientY);
      this.markDropTarget(ev.clientX, ev.clientY);
    };
    const up = (ev) => {
      if (ev.pointerId !== start.id) return;
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", up);
      window.removeEventListener("pointercancel", up);
      if (!this.drag) return;
      const dropPile = ev.type === "pointerup" ? this.pileAt(ev.clientX, ev.clientY) : null;
      this.end();
      // The click that follows a drag's release is not a click on a pile.
      this.suppressClick = true;
      setTimeout(() => (this.suppressClick = false), 0);
      view.drop(start.pile, start.depth, dropPile);
    };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
    window.addEventListener("pointercancel", up);
  }

  /** Lift the cards: a ghost copy at their size follows the pointer; the originals dim. */
  begin(start, pileEl) {
    const view = this.view;
    view.pick({ pile: start.pile, count: start.depth }, { quiet: true });
    view.render();
    const cards = [...pileEl.querySelectorAll("[data-depth]")].filter(
      (c) => Number(c.dataset.depth) <= start.depth,
    );
    if (!cards.length) return false;
    const first = cards[0].getBoundingClientRect();
    const ghost = document.createElement("div");
    ghost.className = "drag-ghost board" + (view.opts.compact ? " compact" : "");
    ghost.setAttribute("aria-hidden", "true");
    // The card size lives on the board's sections (container units), which the ghost, outside
    // the board, cannot resolve: give it the size the cards have now, in pixels.
    ghost.style.setProperty("--cw", `${first.width}px`);
    ghost.style.setProperty("--ch", `${first.height}px`);
    let right = first.right;
    let bottom = first.bottom;
    for (const c of cards) {
      const r = c.getBoundingClientRect();
      right = Math.max(right, r.right);
      bottom = Math.max(bottom, r.bottom);
      const clone = c.cloneNode(true);
      clone.removeAttribute("data-card");
      clone.removeAttribute("data-depth");
      clone.classList.remove("selected", "movable", "tentative", "premove", "pending");
      clone.style.setProperty("left", `${r.left - first.left}px`);
      clone.style.setProperty("top", `${r.top - first.top}px`);
      ghost.append(clone);
      c.classList.add("dragging");
    }
    ghost.style.setProperty("width", `${right - first.left}px`);
    ghost.style.setProperty("height", `${bottom - first.top}px`);
    document.body.append(ghost);
    this.drag = { ghost, dx: start.x - first.left, dy: start.y - first.top };
    return true;
  }

  place(x, y) {
    this.drag.ghost.style.transform = `translate(${x - this.drag.dx}px, ${y - this.drag.dy}px)`;
  }

  pileAt(x, y) {
    const el = document.elementFromPoint(x, y)?.closest?.("[data-pile]");
    return el && this.view.el.contains(el) ? el.dataset.pile : null;
  }

  markDropTarget(x, y) {
    const pile = this.pileAt(x, y);
    for (const [id, el] of this.view.pileEls) el.classList.toggle("drop-hover", id === pile);
  }

  end() {
    if (!this.drag) return;
    this.drag.ghost.remove();
    this.drag = null;
    for (const el of this.view.pileEls.values()) el.classList.remove("drop-hover");
    this.view.el.querySelectorAll(".dragging").forEach((c) => c.classList.remove("dragging"));
  }
}
