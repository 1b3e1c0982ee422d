// Keys on a board: arrows move the focus between piles (the board is one stop in the tab order,
// see BoardView.rove), Enter or Space picks up and drops, Home/End jump, Escape cancels, and
// typing a pile's name ("t12", "f1", "s") focuses and activates that pile, so "t3" then "f1"
// plays t3>f1 from the keyboard alone.

const PILE_KEY_WAIT_MS = 700;

export function onBoardKey(view, e, hit) {
  if (e.altKey || e.ctrlKey || e.metaKey) return;
  const h = hit(e.target);
  if (e.key === "Escape") {
    if (view.selected) {
      view.pick(null);
      e.preventDefault();
    } else if (view.opts.onEscape?.()) {
      e.preventDefault();
    }
    return;
  }
  if ((e.key === "Enter" || e.key === " ") && h) {
    e.preventDefault();
    view.activateByKey(h.pile);
    return;
  }
  const dirs = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
  if (dirs[e.key] && h) {
    e.preventDefault();
    focusNeighbour(view, h.pileEl, ...dirs[e.key]);
    return;
  }
  if ((e.key === "Home" || e.key === "End") && h) {
    e.preventDefault();
    const els = [...view.pileEls.values()];
    (e.key === "Home" ? els[0] : els[els.length - 1])?.focus();
    return;
  }
  // Pile keys: type a pile id ("t12", "f1", "s") to focus and activate it; "t3" then "f1" moves.
  if (/^[a-z0-9]$/i.test(e.key)) {
    const letter = /[a-z]/i.test(e.key);
    view.keyBuffer = letter ? e.key.toLowerCase() : view.keyBuffer + e.key;
    clearTimeout(view.keyTimer);
    const buffer = view.keyBuffer;
    const ids = [...view.pileEls.keys()];
    const exact = ids.includes(buffer);
    const longer = ids.some((id) => id !== buffer && id.startsWith(buffer));
    const fire = () => {
      view.keyBuffer = "";
      const pileEl = view.pileEls.get(buffer);
      if (!pileEl) return;
      pileEl.focus();
      view.activateByKey(buffer);
    };
    if (exact && !longer) fire();
    else if (exact) view.keyTimer = setTimeout(fire, PILE_KEY_WAIT_MS);
    else if (!longer) view.keyBuffer = "";
    e.preventDefault();
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
