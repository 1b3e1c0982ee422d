// Keys on a board: arrows move the focus between piles (the board is one stop in the tab order,
// see BoardView.rove), Enter or Space picks up and drops, Home/End jump, Escape cancels, and
// typing a pile's name ("t12", "f1", "s") focuses and activates that pile, so "t3" then "f1"
// plays t3>f1 from the keyboard alone.
//
// A name is read as a whole, never greedily: "t1" on a board that also has t10–t18 (Scotch), or
// "f1" beside f10–f16 (Quadruple Canfield), waits for what comes next. It is taken at once only
// when no longer name starts with it; else a digit extends it, and anything else (a letter that
// starts the next name, Enter or Space, an arrow, a pause of PILE_KEY_WAIT_MS) takes it as it
// is. Escape drops it. What is being typed shows beside the pile it names.

const PILE_KEY_WAIT_MS = 700;
const MODIFIERS = new Set(["Shift", "CapsLock", "NumLock", "Dead"]);

/** The pile name being typed on one board (`view.typing`). */
export class PileTyping {
  constructor(view) {
    this.view = view;
    this.text = "";
    this.timer = 0;
    this.note = null;
  }

  /** A letter or digit typed. */
  type(key) {
    const ch = key.toLowerCase();
    const letter = /[a-z]/.test(ch);
    if (letter && this.text) this.resolve(); // "t1" then "f": t1 was the whole name
    const text = letter ? ch : this.text + ch;
    if (!text || /^\d/.test(text)) return;
    const ids = [...this.view.pileEls.keys()];
    const exact = ids.includes(text);
    const longer = ids.some((id) => id !== text && id.startsWith(text));
    if (!exact && !longer) {
      // "t19" on a board of 18 fans: say so, rather than take "t1" for it. A lone letter that
      // names no pile (U undoes, H asks a hint) is the page's business.
      if (!letter) this.view.opts.onAnnounce?.(`No pile ${text}.`);
      this.cancel();
      return;
    }
    this.text = text;
    clearTimeout(this.timer);
    if (exact && !longer) {
      this.resolve();
      return;
    }
    if (exact) this.timer = setTimeout(() => this.resolve(), PILE_KEY_WAIT_MS);
    this.show(ids);
  }

  /** Take what has been typed as a whole name: that pile is focused and activated. False when
   * nothing named a pile. */
  resolve() {
    const text = this.text;
    this.cancel();
    const pileEl = this.view.pileEls.get(text);
    if (!pileEl) return false;
    pileEl.focus();
    this.view.activateByKey(text);
    return true;
  }

  /** Forget what has been typed. */
  cancel() {
    clearTimeout(this.timer);
    this.text = "";
    this.note?.remove();
  }

  /** The typed text over the first pile whose name starts with it ("t1" over t1, while
   * t10–t18 are still possible); inside that pile, so that it follows the layout. */
  show(ids) {
    const pileEl = this.view.pileEls.get(ids.find((id) => id.startsWith(this.text)));
    if (!pileEl) return;
    if (!this.note) {
      this.note = document.createElement("div");
      this.note.className = "typed-name";
      this.note.setAttribute("aria-hidden", "true"); // the selection that follows is announced
    }
    this.note.textContent = this.text;
    if (this.note.parentNode !== pileEl) pileEl.append(this.note);
  }
}

export function onBoardKey(view, e, hit) {
  if (e.altKey || e.ctrlKey || e.metaKey) return;
  const typing = view.typing;
  const h = hit(e.target);
  if (e.key === "Escape") {
    if (typing.text) {
      typing.cancel();
      e.preventDefault();
    } else if (view.selected) {
      view.pick(null);
      e.preventDefault();
    } else if (view.opts.onEscape?.()) {
      e.preventDefault();
    }
    return;
  }
  // Pile keys: type a pile id ("t12", "f1", "s") to focus and activate it; "t3" then "f1" moves.
  if (/^[a-z0-9]$/i.test(e.key)) {
    typing.type(e.key);
    e.preventDefault();
    return;
  }
  if (e.key === "Enter" || e.key === " ") {
    // A name typed in full ("t1", with t10 possible) is what Enter means, not the focused pile.
    if (typing.text && typing.resolve()) {
      e.preventDefault();
      return;
    }
    if (h) {
      e.preventDefault();
      view.activateByKey(h.pile);
    }
    return;
  }
  // Any other key (an arrow, Tab, Home) ends the name first: "t1" then an arrow moves from t1.
  if (typing.text && e.key.length > 1 && !MODIFIERS.has(e.key)) typing.resolve();
  const dirs = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
  if (dirs[e.key] && h) {
    e.preventDefault();
    const focused = [...view.pileEls.values()].find((el) => el === document.activeElement);
    focusNeighbour(view, focused || h.pileEl, ...dirs[e.key]);
    return;
  }
  if ((e.key === "Home" || e.key === "End") && h) {
    e.preventDefault();
    const els = [...view.pileEls.values()];
    (e.key === "Home" ? els[0] : els[els.length - 1])?.focus();
  }
}

function focusNeighbour(view, fromEl, dx, dy) {
  const a = fromEl.getBoundingClientRect();
  const ax = a.left + a.width / 2;
  const ay = a.top + Math.min(a.height, 60) / 2;
  let best = null;
  let bestScore = Infinity;
  for (const el of view.pileEls.values()) {
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
