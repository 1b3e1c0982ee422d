// "Play on from here": a solo game from any position of a replay, against a clock, in the browser
// alone. Once the deal is revealed every card is known (the replay's `deal` is solrules' position
// text of the deal, face-down cards included), so client/engine plays the racer's actions up to
// the chosen moment and then every move the player makes: no server round trip, nothing recorded.
// Practice, not a race: unrated, and the page says so. Started at the last winnable position
// before a loss, it has the solver's winning line from there (the analysis's): "Solver's move"
// marks its next move on the board while the player keeps to it.

import { BoardView } from "../board.js";
import * as E from "../engine/index.js";
import { announce, formatTime, h, replace, setText } from "../ui.js";

const TICK_MS = 100;

/** The engine's position after the first `count` actions (move texts and "undo") from `deal`. */
export function positionAfter(deal, actions, count) {
  let pos = E.fromPosition(deal);
  for (const action of actions.slice(0, count)) {
    pos = action === "undo" ? E.undo(pos) ?? pos : E.play(pos, action).pos;
  }
  return pos;
}

export class Practice {
  /**
   * @param {HTMLElement} el  where the game is drawn (its content is replaced)
   * @param {object} opts  deal (position text), actions (the racer's), at (actions played),
   *   name (the racer's), raceTime (his race time there, ms, or null), line (the solver's
   *   winning line from there, or null), onClose()
   */
  constructor(el, { deal, actions, at, name, raceTime = null, line = null, onClose }) {
    this.el = el;
    this.line = line?.length ? line : null;
    this.path = []; // the practice moves from the start, as the board stands (undo pops one)
    this.hint = null; // the solver's move shown
    this.start = positionAfter(deal, actions, at);
    this.pos = this.start;
    this.history = [];
    this.path = [];
    this.hint = null; // positions before each practice move, for Undo (never before the start)
    this.onClose = onClose;
    this.startedAt = performance.now();
    this.stoppedAt = null;
    this.moves = 0;
    this.clock = h("span.practice-clock", { role: "timer", "aria-label": "Practice clock" }, "0:00");
    this.status = h("p.practice-status", { "aria-live": "polite" });
    const boardEl = h("div", { dataset: { practice: "1" } });
    this.view = new BoardView(boardEl, { player: "practice", interactive: true, compact: false,
      label: "Practice board", onMove: (text) => this.move(text) });
    this.undoBtn = h("button#practice-undo", { type: "button", onclick: () => this.undo() }, "Undo");
    this.heading = h("h2#practice-title", { tabindex: "-1" }, 
      `Practice from ${name}'s action ${at}${this.line ? ", the last position that could still be won" : ""}`);
    replace(el,
      this.heading,
      h("p.practice-note", {}, h("strong", {}, "Practice, not a race: "),
        "unrated, played in your browser alone, nothing is sent to the server.",
        raceTime !== null ? ` ${name} stood here at ${formatTime(raceTime)} of the race.` : ""),
      h("div.practice-bar", {},
        h("span.practice-clock-label", {}, "Clock "), this.clock,
        this.undoBtn,
        this.line ? h("button#practice-solver", { type: "button", onclick: () => this.solverMove(),
          title: "The next move of the solver's winning line from where the practice started" }, "Solver's move") : null,
        h("button#practice-restart", { type: "button", onclick: () => this.restart() }, "Restart"),
        h("button#practice-close", { type: "button", onclick: () => this.close() }, "Back to the replay")),
      this.status,
      boardEl);
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.draw();
    this.heading.focus();
  }

  tick() {
    const end = this.stoppedAt ?? performance.now();
    // Whole seconds, written only when they change: like the race's clock (pages/parts.js).
    setText(this.clock, formatTime(end - this.startedAt, { tenths: false }));
  }

  draw() {
    const legal = E.legal(this.pos) || [];
    this.view.set({ board: E.board(this.pos), legal, hint: this.hint });
    this.undoBtn.disabled = !this.history.length || this.stoppedAt !== null;
    const { foundation, total } = E.progress(this.pos);
    this.el.dataset.cards = String(foundation);
    if (foundation === total) {
      this.stop();
      this.say(`Cleared in ${formatTime(this.stoppedAt - this.startedAt)} and ${this.moves} moves.`, "won");
    } else if (!legal.length) {
      this.say("No move left: the game is stuck here. Undo or restart.", "stuck");
    }
    this.tick();
  }

  say(text, kind = "") {
    this.status.textContent = text;
    this.status.dataset.kind = kind;
    if (text) announce(text);
  }

  /** Mark the solver's next move, while the moves played from the start follow its line. */
  solverMove() {
    if (!this.line || this.stoppedAt !== null) return;
    const on = this.path.every((m, k) => m === this.line[k]);
    const next = on ? this.line[this.path.length] : null;
    this.hint = next || null;
    this.say(next ? `The solver plays ${next} here (marked on the board).`
      : "You left the solver's line: Undo back to it, or Restart.", next ? "solver" : "off-line");
    this.draw();
  }

  move(text) {
    if (this.stoppedAt !== null) return;
    const why = E.refusal(this.pos, text);
    if (why) {
      this.say(why, "refused");
      return;
    }
    this.hint = null;
    this.path.push(text);
    this.history.push(this.pos);
    this.pos = E.play(this.pos, text).pos;
    this.moves++;
    this.say("");
    this.draw();
  }

  undo() {
    if (!this.history.length || this.stoppedAt !== null) return;
    this.pos = this.history.pop();
    this.path.pop();
    this.hint = null;
    this.moves++;
    this.say("");
    this.draw();
  }

  restart() {
    this.pos = this.start;
    this.history = [];
    this.path = [];
    this.hint = null;
    this.moves = 0;
    this.startedAt = performance.now();
    this.stoppedAt = null;
    this.say("");
    this.draw();
  }

  stop() {
    if (this.stoppedAt === null) this.stoppedAt = performance.now();
  }

  close() {
    this.destroy();
    this.onClose?.();
  }

  destroy() {
    clearInterval(this.timer);
    this.view.destroy();
  }
}
