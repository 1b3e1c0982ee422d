"""WCAG 2 contrast of the text a page shows, measured in the browser: every element with text of
its own that is visible, against what is painted beneath it (its ancestors' backgrounds, and any
other element under the text, such as a progress bar's fill under its label)."""

from __future__ import annotations

from typing import Any

#: A page function: a list of {text, ratio, need, colour, background, where} for every piece of
#: visible text, its worst contrast ratio over a few points of it, and the ratio WCAG asks
#: (4.5, or 3 for large text: 24 px, or bold from 18.66 px).
MEASURE = r"""
() => {
  const parse = (c) => {
    const m = /rgba?\(([^)]+)\)/.exec(c || "");
    if (!m) return null;
    const p = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const lin = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = (c) => 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
  const ratio = (a, b) => {
    const x = lum(a), y = lum(b);
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  };
  const over = (top, under) =>
    [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3])).concat(1);
  // One measure reads the same elements' styles thousands of times (every layer under every
  // point of every text): each element's opacity and paints are worked out once.
  const opacities = new Map();
  const opacityOf = (el) => {
    if (!el) return 1;
    let o = opacities.get(el);
    if (o === undefined) {
      o = Number(getComputedStyle(el).opacity) * opacityOf(el.parentElement);
      opacities.set(el, o);
    }
    return o;
  };
  /** The colours an element paints: its background colour, then every colour stop of its
   * background images (a gradient may show any of them behind the text). */
  const painted = new Map();
  const paints = (el) => {
    let p = painted.get(el);
    if (!p) painted.set(el, (p = paintsOf(el)));
    return p;
  };
  const paintsOf = (el) => {
    const s = getComputedStyle(el);
    const o = opacityOf(el);
    const colour = parse(s.backgroundColor);
    const stops = s.backgroundImage === "none" ? []
      : [...s.backgroundImage.matchAll(/rgba?\([^)]+\)/g)].map((m) => parse(m[0]));
    const fade = (c) => c && [c[0], c[1], c[2], c[3] * o];
    return { colour: fade(colour), stops: stops.map(fade) };
  };
  /** Possible opaque colours behind a point of `el`: what lies beneath it there, composited
   * from the bottom (the canvas is the root's background). */
  const beneath = (el, x, y) => {
    const stack = document.elementsFromPoint(x, y);
    let i = stack.indexOf(el);
    if (i < 0) {
      // Clipped or covered here; or not hit-testable (pointer-events: none), then from its
      // nearest ancestor that is.
      if (getComputedStyle(el).pointerEvents !== "none") return null;
      let e = el.parentElement;
      while (e && !stack.includes(e)) e = e.parentElement;
      if (!e) return null;
      i = stack.indexOf(e) - 1;
    } else if (stack.slice(0, i).some((e) => !el.contains(e) && !e.contains(el) && opaqueAt(e))) {
      return null; // covered here (a card over another card's corner)
    }
    const layers = stack.slice(i + 1).reverse();
    let found = [[255, 255, 255, 1]];
    for (const e of layers) {
      const p = paints(e);
      let next = p.colour && p.colour[3] > 0 ? found.map((c) => over(p.colour, c)) : found;
      if (p.stops.length) next = next.flatMap((c) => p.stops.map((g) => over(g, c)));
      const seen = new Map(next.map((c) => [c.map(Math.round).join(), c]));
      found = [...seen.values()];
    }
    // The text element's own background, on top.
    const own = paints(el);
    if (own.colour && own.colour[3] > 0) found = found.map((c) => over(own.colour, c));
    if (own.stops.length) found = found.flatMap((c) => own.stops.map((g) => over(g, c)));
    return found;
  };
  const opaqueAt = (e) => {
    const p = paints(e);
    return (p.colour && p.colour[3] >= 0.9) || p.stops.some((c) => c[3] >= 0.9);
  };
  const results = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const owners = new Set();
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.textContent.trim()) owners.add(n.parentElement);
  }
  const fields = "input:not([type=hidden]):not([type=checkbox]):not([type=radio])" +
    ":not([type=range]), select";
  for (const el of document.querySelectorAll(fields)) {
    if (el.value) owners.add(el);
  }
  for (const el of owners) {
    if (el.closest(":disabled, [aria-disabled=true], .sr-only, noscript, option")) continue;
    if (!el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
    const s = getComputedStyle(el);
    const size = parseFloat(s.fontSize);
    const bold = Number(s.fontWeight) >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    const rects = el.matches("input, select") ? [el.getBoundingClientRect()]
      : [...el.childNodes].filter((c) => c.nodeType === 3 && c.textContent.trim()).flatMap((c) => {
        const r = document.createRange();
        r.selectNodeContents(c);
        return [...r.getClientRects()];
      });
    const colour = parse(s.color);
    const o = opacityOf(el);
    let worst = null;
    for (const r of rects) {
      if (r.width < 2 || r.height < 2) continue;
      const y = r.top + r.height / 2;
      const edge = Math.min(3, r.width / 2);
      for (const x of [r.left + edge, r.left + r.width / 2, r.right - edge]) {
        if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) continue;
        const under = beneath(el, x, y);
        if (!under) continue;
        for (const bg of under) {
          const fg = over([colour[0], colour[1], colour[2], colour[3] * o], bg);
          const value = ratio(fg, bg);
          if (!worst || value < worst.ratio) {
            worst = { ratio: value, colour: fg.slice(0, 3).map(Math.round),
              background: bg.slice(0, 3).map(Math.round) };
          }
        }
      }
    }
    if (!worst) continue;
    const tag = el.tagName.toLowerCase();
    const classes = typeof el.className === "string" ? el.className.trim().split(/\s+/) : [];
    const where = [tag, ...classes].filter(Boolean).join(".");
    const text = (el.matches("input, select") ? el.value : el.textContent).trim().slice(0, 40);
    results.push({ text, where, need, ...worst, ratio: Math.round(worst.ratio * 100) / 100 });
  }
  return results;
}
"""


def measure(page: Any) -> list[dict[str, Any]]:
    """Every visible text of ``page`` in the viewport, with its contrast ratio and the one it
    needs."""
    result: list[dict[str, Any]] = page.evaluate(MEASURE)
    return result


def failures(page: Any) -> list[dict[str, Any]]:
    """The texts of ``page`` in the viewport whose contrast is below what WCAG 2 AA asks."""
    return [r for r in measure(page) if r["ratio"] < r["need"]]


def whole_page_failures(page: Any) -> list[dict[str, Any]]:
    """``failures`` over the whole page: measured a screenful at a time, from the top down."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    height = page.evaluate("innerHeight")
    top = 0
    while True:
        page.evaluate("(y) => window.scrollTo(0, y)", top)
        page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        for r in failures(page):
            key = (r["where"], r["text"])
            if key not in found or r["ratio"] < found[key]["ratio"]:
                found[key] = r
        if top + height >= page.evaluate("document.scrollingElement.scrollHeight"):
            break
        top += height - 40
    page.evaluate("window.scrollTo(0, 0)")
    return sorted(found.values(), key=lambda r: r["ratio"])
