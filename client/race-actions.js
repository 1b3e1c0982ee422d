// The racer's own game in a RaceSession (session.js): actions drawn at once and confirmed in
// order. A move the racer's board shows to be legal (the rules engine, engine/), an undo, an
// auto-move, is drawn at once and sent with its `seq`; several may be on their way, in order,
// each confirmed by its `state`: a lean one names only the cards it turned face up, a full one
// gives the whole position, which this board checks itself against. A refusal takes the board
// back to the position before the refused action, exactly; a move the board cannot judge yet
// (it depends on a card the server has not shown) waits as the premove. Answers that mean "not
// now" (`unavailable`, `rate_limited`, a lost socket) keep the actions, sent again with the same
// `seq` later. `model.own` is the racer's game as drawn (refreshOwn).
//
// These are RaceSession's methods (`this` is the session; its constructor holds their state),
// in a file of their own because they are one concept: the optimistic move queue and its
// reconciliation with the server, apart from the connection (session.js) and the race model
// (race-model.js). session.js puts them on its class.

import * as E from "./engine/index.js";
import { parseMove } from "./moves.js";
import { settings } from "./storage.js";

// Answers that mean "not now" rather than "no": the action stays and goes again later.
export const RETRY_MS = [1000, 2000, 3000, 5000];
const AUTO_MOVE_DELAY_MS = 150;
// Where a board that disagrees with the server's is worth a console warning (an engine bug).
const DEV = ["localhost", "127.0.0.1", "[::1]"].includes(location.hostname);

/** RaceSession's methods for the racer's actions (see session.js, `mixin`). */
export class RaceActions {
  /** True while an action drawn here waits for the server's confirmation. */
  get pendingMove() {
    return this.actions.length > 0;
  }

  /** The oldest action the server has not confirmed yet, or null. */
  get inflight() {
    return this.actions[0] ?? null;
  }

  /** The racer's position as drawn: after the last action in flight, else the server's. null
   * while an action in flight has an outcome the engine could not work out (an undo with no
   * history here, answered by the server alone). */
  get position() {
    const last = this.actions.at(-1);
    return last ? last.after : this.base;
  }

  /** The seq of the last action drawn (the confirmed one when nothing is in flight). */
  get seq() {
    return this.actions.length ? this.actions.at(-1).seq : this.baseSeq;
  }

  /** The racer may act: the race runs, he races, this tab plays it, and his board is known. */
  get live() {
    const m = this.model;
    const me = m.players.get(m.you);
    return !!this.base && m.status === "running" && !m.replaced && !me?.finished && !me?.resigned;
  }

  /** Play a move text. A move the racer's board shows to be legal is drawn at once and sent;
   * one that is not is refused here, in the server's words; one that depends on a card the
   * server has not shown yet becomes the premove (replacing any earlier one), played once the
   * card is known if it is legal then. Resolves with the server's `state` once the move is
   * confirmed, or null if it was refused, rolled back, dropped or replaced. */
  move(text, { auto = false } = {}) {
    if (!this.base) return Promise.resolve(null);
    if (!this.live) {
      if (!auto) this.reject({ code: "race_not_running", message: "You are not racing now.", move: text });
      return Promise.resolve(null);
    }
    const pos = this.position;
    const verdict = pos ? E.isLegal(pos, text) : null;
    if (verdict === null) return auto ? Promise.resolve(null) : this.enqueue({ kind: "move", move: text });
    if (!verdict) {
      if (!auto) this.reject({ code: "illegal_move", message: E.refusal(pos, text), move: text });
      return Promise.resolve(null);
    }
    const { pos: after, turned } = E.play(pos, text);
    return this.act({ kind: "move", move: text, auto, after, turned });
  }

  /** Take back the last move: drawn at once when this board remembers it (it does for every
   * move made since the page joined), else sent and drawn when the server answers. */
  undo() {
    if (!this.base) return Promise.resolve(null);
    if (!this.live) {
      this.reject({ code: "race_not_running", message: "You are not racing now." });
      return Promise.resolve(null);
    }
    if (this.model.options?.undo === false) {
      this.reject({ code: "forbidden", message: "this race does not allow undo" });
      return Promise.resolve(null);
    }
    const pos = this.position;
    if (!pos) return this.enqueue({ kind: "undo" });
    const after = E.undo(pos);
    if (after) {
      const undone = E.moves(pos).at(-1);
      return this.act({ kind: "undo", undone, after, turned: E.awaited(after) });
    }
    if (this.complete || this.seq === 0) {
      this.reject({ code: "illegal_move", message: "there is no move to undo" });
      return Promise.resolve(null);
    }
    return this.act({ kind: "undo", after: null, turned: [] });
  }

  enqueue(premove) {
    this.queued?.resolve(null);
    return new Promise((resolve) => {
      this.queued = { ...premove, resolve };
      this.changed();
    });
  }

  /** Forget the premove (Escape, or the player changed his mind). */
  cancelPremove() {
    if (!this.queued) return;
    this.queued.resolve(null);
    this.queued = null;
    this.changed();
  }

  /** Drop every action and go back to the server's position (the race is over, or another
   * tab plays it now). */
  dropActions() {
    this.cancelPremove();
    for (const a of this.actions.splice(0)) a.resolve(null);
    this.paused = false;
    clearTimeout(this.retryTimer);
  }

  /** Draw an action now and send it (behind those already on their way). */
  act(action) {
    clearTimeout(this.autoTimer);
    return new Promise((resolve) => {
      Object.assign(action, { seq: this.seq + 1, resolve, token: null, tries: 0, waiting: null });
      this.actions.push(action);
      this.setMotion(action.kind === "undo" ? reverse(action.undone) : parseMove(action.move));
      this.dispatchEvent(new CustomEvent("played", {
        detail: { kind: action.kind, move: action.move ?? action.undone ?? null, auto: !!action.auto },
      }));
      this.changed();
      this.transmit();
      this.maybeAutoMove();
    });
  }

  /** What moved last, for the board's animation: {from, to, count, n} (n counts motions). */
  setMotion(mv) {
    this.motion = mv ? { from: mv.from, to: mv.to, count: mv.count, n: ++this.motions } : null;
  }

  /** Send every action not on its way yet, in order, each with its `seq`. Not while the socket
   * is down (the rejoin sends them), a rejoin is being answered, or the server asked to wait. */
  transmit() {
    if (this.paused || this.joining || !this.conn.open) return;
    for (const action of this.actions) {
      if (action.token) continue;
      const token = {};
      action.token = token;
      action.tries++;
      const msg = action.kind === "move"
        ? { type: "move", race: this.race, move: action.move, seq: action.seq }
        : { type: "undo", race: this.race, seq: action.seq };
      // The reply, a `state`, is taken in order with every message (applyState).
      this.conn.request(msg).catch((err) => this.failed(action, token, err));
    }
  }

  failed(action, token, err) {
    const i = this.actions.indexOf(action);
    if (i < 0 || action.token !== token) return; // rolled back, or sent again since
    if (err.code === "disconnected" || err.code === "offline" || err.code === "closed") {
      action.token = null; // the rejoin sends it again
      this.changed();
      return;
    }
    if (err.code === "unavailable" || err.code === "rate_limited") {
      // Nothing was applied; this action and those behind it (refused as skipping ahead, or
      // about to be) go again with the same seqs a little later.
      for (const a of this.actions.slice(i)) a.token = null;
      action.waiting = err.code;
      this.paused = true;
      clearTimeout(this.retryTimer);
      this.retryTimer = setTimeout(() => this.resume(), RETRY_MS[Math.min(action.tries - 1, RETRY_MS.length - 1)]);
      this.changed();
      return;
    }
    // Refused: back to the position before it, exactly; what was drawn after it goes too.
    if (action.auto) this.autoRefused = `${action.seq}:${action.move}`; // not again by itself
    this.rollback(i);
    if (!action.auto || err.code !== "race_not_running") {
      const message = err.code === "bad_seq"
        ? "Your board was out of step with the server: here is its position." : err.message;
      this.reject({ code: err.code, message, move: action.move });
    }
    // The server refused what this board took for legal: check this board against its own.
    if (err.code === "bad_seq" || err.code === "illegal_move" || err.code === "internal") this.resync();
  }

  resume() {
    clearTimeout(this.retryTimer);
    this.paused = false;
    this.transmit();
  }

  /** Take back the actions from index `i` on (refused, or built on one that was). */
  rollback(i) {
    const dropped = this.actions.splice(i);
    const last = dropped.length === 1 ? dropped[0] : null;
    this.setMotion(last?.kind === "move" ? reverse(last.move) : last?.undone ? parseMove(last.undone) : null);
    for (const a of dropped) a.resolve(null);
    this.cancelPremove();
    this.changed();
  }

  /** After a position changed: the premove if it can be judged now, else an auto-move. */
  next() {
    const queued = this.queued;
    const pos = this.position;
    if (queued && pos && this.live) {
      const verdict = queued.kind === "undo" ? true : E.isLegal(pos, queued.move);
      if (verdict !== null) {
        this.queued = null;
        if (verdict) {
          (queued.kind === "undo" ? this.undo() : this.move(queued.move)).then(queued.resolve);
          return;
        }
        this.dispatchEvent(new CustomEvent("premove-dropped", { detail: { move: queued.move } }));
        queued.resolve(null);
        this.changed();
      }
    }
    this.maybeAutoMove();
  }

  /** With the player's auto-move setting on, play the first of the position's `safe` moves (the
   * server's list, worked out here), one at a time, through the same path as any move. */
  maybeAutoMove() {
    clearTimeout(this.autoTimer);
    if (!settings.get("autoMove") || this.queued || !this.live) return;
    const own = this.model.own;
    if (!own?.safe?.length) return;
    const seq = own.seq;
    this.autoTimer = setTimeout(() => {
      const now = this.model.own;
      if (this.queued || !now || now.seq !== seq || !settings.get("autoMove")) return;
      const text = now.safe.find((t) => now.legal.includes(t));
      if (text && this.autoRefused !== `${now.seq + 1}:${text}`) this.move(text, { auto: true });
    }, AUTO_MOVE_DELAY_MS);
  }

  /** A `state`: the server's verdict on the racer's actions, in the order they were sent. A full
   * one (with `board`) is the server's position: at the race start, after a (re)join, or for a
   * seq sent again that was already applied. A lean one (`lean: true`) names only the cards the
   * action turned face up: this board works out the rest. Either confirms every action up to its
   * `seq`. */
  applyState(st) {
    if (st.board) this.fullState(st);
    else if (st.lean) this.leanState(st);
    else return;
    this.changed();
    this.next();
  }

  fullState(st) {
    const m = this.model;
    const S = st.seq;
    const i = this.actions.findIndex((a) => a.seq === S);
    let ours = S === this.baseSeq ? this.base : i >= 0 ? this.actions[i].after : null;
    let told = null;
    if (ours) {
      // The cards this board still awaits lie in the server's board at the same places.
      const turned = E.awaited(ours);
      if (turned.length) {
        const cards = turned.map((t) => ({ ...t, card: pileCards(st.board, t.pile)?.[t.index] ?? null }));
        told = { turned, cards };
        ours = E.reveal(ours, turned, cards);
      }
    }
    const agrees = ours && sameBoard(E.board(ours), st.board)
      && (!st.legal?.length || sameList(E.legal(ours) || [], st.legal));
    const confirmed = this.actions.splice(0, i + 1);
    if (agrees) {
      this.base = ours;
      if (told) for (const a of this.actions) if (a.after) a.after = E.reveal(a.after, told.turned, told.cards);
    } else {
      if (ours) this.diverged("full state", st, ours);
      this.base = E.fromState(st.board.game || m.game, st.board);
      this.complete = S === 0;
      // What was drawn after it was built on another position: the server's answers to it
      // (refusals, or states of seqs this board no longer has) are ignored or resync.
      for (const a of this.actions.splice(0)) a.resolve(a.seq <= S ? st : null);
      this.cancelPremove();
      this.setMotion(null);
    }
    this.baseSeq = S;
    for (const a of confirmed) a.resolve(st);
    // Everyone starts from the same deal: until an opponent's own board arrives, show the deal.
    if (S === 0) {
      for (const p of m.players.values()) {
        if (!p.board) p.board = st.board;
        // A lobby snapshot counts 0 cards home; a deal may start with one (Quadruple Canfield).
        if (!p.progress || !p.progress.moves) p.progress = { ...st.progress, moves: 0 };
      }
    }
  }

  leanState(st) {
    const S = st.seq;
    const i = this.actions.findIndex((a) => a.seq === S);
    if (i < 0 || !this.base) {
      if (S > this.baseSeq) this.resync(); // an answer this board cannot place: fetch the position
      return;
    }
    const action = this.actions[i];
    if (!action.after) {
      // An undo this board could not work out: the server's position comes with a rejoin.
      this.resync();
      return;
    }
    const cards = st.turned || [];
    for (const a of this.actions.slice(i)) if (a.after) a.after = E.reveal(a.after, action.turned, cards);
    const confirmed = this.actions.splice(0, i + 1);
    this.base = confirmed.at(-1).after;
    this.baseSeq = S;
    for (const a of confirmed) a.resolve(st);
    if (E.awaitsReveal(this.base) || E.progress(this.base).foundation !== st.progress?.foundation) {
      this.diverged("lean state", st, this.base);
      this.resync();
    }
  }

  diverged(what, st, pos) {
    this.divergences++;
    if (DEV) console.warn(`solrace: this board did not match the server's ${what} (seq ${st.seq})`, E.position(pos), st);
  }

  /** Work out `model.own` (what the pages draw of the racer's own game) from the position drawn:
   * {seq, confirmed, board, legal, safe, progress, awaiting} — the fields of the server's `state`,
   * `confirmed` the seq the server confirmed, `awaiting` while a card it turned up is not known
   * (legal and safe are then empty, and the board takes premoves). */
  refreshOwn() {
    const m = this.model;
    if (!this.base) return;
    let shown = this.position;
    if (!shown) shown = [...this.actions].reverse().find((a) => a.after)?.after ?? this.base;
    const live = this.live;
    const seq = this.seq;
    const key = this.shown;
    if (!key || key.pos !== shown || key.live !== live || key.seq !== seq || key.confirmed !== this.baseSeq) {
      const legal = this.position ? E.legal(shown) : null;
      m.own = {
        seq,
        confirmed: this.baseSeq,
        board: key?.pos === shown ? m.own.board : E.board(shown),
        legal: live && legal ? legal : [],
        safe: live && legal ? E.safe(shown, legal) : [],
        progress: { ...E.progress(shown), moves: seq },
        awaiting: legal === null,
      };
      this.shown = { pos: shown, live, seq, confirmed: this.baseSeq };
    }
    const me = m.players.get(m.you);
    if (me && m.role === "racer") {
      me.progress = m.own.progress;
      me.board = m.own.board;
    }
  }
}

/** The move that takes back "a>b/n": {from: b, to: a, count: n} (null for the stock's moves). */
function reverse(text) {
  const mv = text ? parseMove(text) : null;
  if (!mv || mv.from === "s" || mv.to === "s") return null;
  return { from: mv.to, to: mv.from, count: mv.count };
}

function pileCards(board, pile) {
  return board.piles.find((p) => p.pile === pile)?.cards;
}

/** Two boards show the same cards in the same places (and the same base rank). */
function sameBoard(a, b) {
  if (a.base !== undefined && b.base !== undefined && String(a.base) !== String(b.base)) return false;
  if (a.piles.length !== b.piles.length) return false;
  return a.piles.every((p) => sameList(p.cards, pileCards(b, p.pile) || null));
}

function sameList(a, b) {
  return !!b && a.length === b.length && a.every((x, i) => x === b[i]);
}
