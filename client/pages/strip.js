// The racer's own standing above his board: place, cards home, moves, as clearly as the
// opponents' cards show theirs; on a phone the same strip also lists every opponent, compactly,
// so that the race can be followed without scrolling away from the board.

import { hintsTaken } from "./hint.js";
import { HINT_PENALTY_S } from "./lobby.js";
import { h, ordinal } from "../ui.js";
import { livePlaces } from "./parts.js";

export class YourStrip {
  constructor() {
    this.el = h("div.race-strip", { role: "list", "aria-label": "Standings" });
    this.chips = new Map();
  }

  chip(id) {
    if (!this.chips.has(id)) {
      const place = h("span.chip-place");
      const name = h("span.chip-name");
      const count = h("span.chip-count");
      const moves = h("span.chip-moves");
      const hints = h("span.chip-hints", { title: "Hints asked" });
      const fill = h("span.chip-fill");
      const el = h("div.chip", { role: "listitem", dataset: { chip: id } },
        place, name, count, hints, moves, h("span.chip-bar", { "aria-hidden": "true" }, fill));
      this.chips.set(id, { el, place, name, count, hints, moves, fill });
    }
    return this.chips.get(id);
  }

  update(model) {
    const places = livePlaces(model);
    const ids = [...model.order].sort((a, b) => (places.get(a) ?? 99) - (places.get(b) ?? 99));
    const n = ids.length;
    const want = [];
    for (const id of ids) {
      const p = model.players.get(id);
      if (!p) continue;
      const c = this.chip(id);
      const you = id === model.you;
      const pr = p.progress || {};
      const home = pr.foundation ?? 0;
      const total = pr.total ?? 0;
      const place = places.get(id);
      c.el.classList.toggle("is-you", you);
      c.el.classList.toggle("done", !!(p.finished || p.resigned));
      c.el.classList.toggle("offline", p.connected === false);
      setText(c.place, p.resigned ? "–" : you && n > 1 ? `${ordinal(place)} of ${n}` : ordinal(place));
      setText(c.name, you ? "You" : p.name || id);
      setText(c.count, total ? `${home}/${total}${you ? " home" : ""}` : "–");
      const moves = pr.moves ?? 0;
      setText(c.moves, you ? `${moves} move${moves === 1 ? "" : "s"}` : "");
      const hints = p.hints ?? 0;
      // What the hints cost him: time and a card while he races, the one that applies after.
      const done = p.finished || p.place ? true : model.status === "finished" || p.resigned ? false : null;
      setText(c.hints, hintsTaken(hints, done));
      c.hints.title = hints ? `Each hint costs ${HINT_PENALTY_S} s if you finish, or a card home if you don't` : "Hints asked";
      c.fill.style.setProperty("width", `${total ? Math.round((home / total) * 100) : 0}%`);
      c.el.setAttribute("aria-label", `${you ? "You" : p.name}: ${p.resigned ? "resigned" : ordinal(place)}, ` +
        `${home} of ${total} cards home, ${moves} moves${hints ? `, ${hintsTaken(hints, done)}` : ""}` +
        `${p.connected === false ? ", offline" : ""}`);
      want.push(c.el);
    }
    if (want.length !== this.el.children.length || want.some((el, i) => this.el.children[i] !== el)) {
      this.el.replaceChildren(...want);
    }
  }
}

function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}
