// The racer's Hint button (races created with `hints`): asks the server (`hint`), whose solver
// may think for a few seconds while the board stays playable; the suggested move is marked on the
// board (its cards and its target) and said in words, until the position changes. "No useful
// move" when there is none, "No winning line from here" when the solver proved the deal lost from
// this position. Every hint is counted, and everyone sees the count.

import { announce, h } from "../ui.js";
import { HINT_PENALTY_S } from "./lobby.js";
import { describeMove } from "./replay.js";

const REFUSALS = {
  forbidden: "Hints are not allowed in this race.",
  unavailable: "The solver is busy right now — try again in a moment.",
  rate_limited: "Too many requests — wait a moment and try again.",
  race_not_running: "No hints now: you are not racing.",
  limit_reached: "No more hints in this race.",
};

/** What a hint costs, said on the button before the click (docs/protocol.md, "Standings, ties
 * and hints"): time if you finish, a card home if you don't. */
export const HINT_LABEL = `Hint (+${HINT_PENALTY_S} s or −1 card)`;
const HINT_TITLE = `Hint (H): the solver suggests a move. Each hint costs ${HINT_PENALTY_S} s if you finish, ` +
  "or a card home if you don't.";

/** The cost of `n` hints: "+60 s" for a racer who finished, "−2 cards" for one who did not (his
 * race is over), both while he still races ("+60 s or −2 cards"). */
export function hintCost(n, finished = null) {
  const time = `+${HINT_PENALTY_S * n} s`;
  const cards = `−${n} card${n === 1 ? "" : "s"}`;
  return finished === true ? time : finished === false ? cards : `${time} or ${cards}`;
}

/** "2 hints (+60 s or −2 cards)": the hints a racer took and what they cost (see hintCost). */
export function hintsTaken(n, finished = null) {
  return n ? `${n} hint${n === 1 ? "" : "s"} (${hintCost(n, finished)})` : "";
}

export class HintControl {
  constructor(session) {
    this.session = session;
    this.asking = false;
    this.move = null; // the suggested move, shown while the position is the one it was for
    this.seq = null; // the position (seq) of the last hint asked
    this.button = h("button#hint", { type: "button", title: HINT_TITLE,
      "aria-keyshortcuts": "h", onclick: () => this.ask() }, HINT_LABEL);
    this.line = h("p.hint-line"); // read out through the page's live region (announce)
    this.line.hidden = true;
  }

  /** Ask for a hint at the current position (a second ask while one is on its way does nothing). */
  async ask() {
    const own = this.session.model.own;
    if (this.asking || !own || this.button.disabled) return;
    const seq = own.seq;
    this.asking = true;
    this.seq = seq;
    this.move = null;
    this.say("Thinking…", "thinking");
    // Said at once, not at the next redraw: a quick answer must not skip it.
    this.button.textContent = "Thinking…";
    this.session.changed();
    let reply = null;
    try {
      reply = await this.session.hint();
    } catch (err) {
      this.say(REFUSALS[err.code] || err.message || "No hint.", "refused");
      return;
    } finally {
      this.asking = false;
      this.session.changed();
    }
    if (this.session.model.own?.seq !== seq) {
      this.seq = this.session.model.own?.seq ?? null; // said until the next move
      this.say("That hint was for an earlier position — ask again.", "stale");
      return;
    }
    const board = this.session.model.own?.board;
    const words = reply.move ? moveWords(reply.move, board) : "";
    if (reply.lost) {
      this.move = reply.move || null;
      this.say(`No winning line from here.${words ? ` A move that keeps going: ${words}.` : ""}`, "lost");
    } else if (!reply.move) {
      this.say("No useful move.", "none");
    } else {
      this.move = reply.move;
      this.say(`Hint: ${words}${reply.source === "heuristic" ? " (a best guess)" : ""}.`, "move");
    }
    this.session.changed();
  }

  say(text, kind) {
    this.line.textContent = text;
    this.line.dataset.kind = kind;
    this.line.hidden = !text;
    if (kind !== "thinking") announce(text);
  }

  /** Keep the button and the line in step with the race: `live` while the racer may move. */
  update(model, live) {
    this.button.hidden = !model.options?.hints;
    this.button.disabled = !live || this.asking;
    this.button.classList.toggle("busy", this.asking);
    this.button.setAttribute("aria-busy", String(this.asking));
    this.button.textContent = this.asking ? "Thinking…" : HINT_LABEL;
    const me = model.players.get(model.you);
    this.button.title = me?.hints ? `${HINT_TITLE} Hints so far: ${hintsTaken(me.hints)}.` : HINT_TITLE;
    // The position moved on: the hint is spent.
    if (!this.asking && this.seq !== null && model.own?.seq !== this.seq) {
      this.seq = null;
      this.move = null;
      this.line.hidden = true;
      this.line.textContent = "";
    }
    if (!live && !this.asking) this.line.hidden = true;
  }
}

/** "7♥ from fan 3 to a foundation (t3>f1)"; the stock's moves in words. */
function moveWords(text, board) {
  if (text === "s>w") return "deal from the stock (s>w)";
  if (text === "w>s") return "turn the waste over (w>s)";
  return `${describeMove(text, board, null)} (${text})`;
}
