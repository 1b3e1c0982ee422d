// One race as this browser follows it (see docs/protocol.md). `RaceSession` (re)joins or watches
// after every (re)connect, keeps the race model current from server events, resyncs with a fresh
// snapshot when the event numbers `v` show a gap, and carries the racer's actions.
//
// The racer's own game runs here too, in the rules engine (engine/, move for move the server's
// rules): a move the racer's board shows to be legal, an undo, an auto-move, is drawn at once and
// sent with its `seq`; several may be on their way, in order, each confirmed by its `state`. The
// server's answer to a move names only the cards it turned face up (a lean `state`, asked for at
// `join`), or gives the whole position (a full `state`, which this board checks itself against).
// A refusal takes the board back to the position before the refused action, exactly, and says
// why; a move the board cannot judge yet (it depends on a card the server has not shown) waits as
// the premove. Actions are kept across disconnects and `unavailable` answers and sent again with
// the same `seq` until the server answers (a repeated `seq` is never applied twice). Pages render
// from `session.model`; `model.own` is the racer's game as drawn (refreshOwn).

import * as E from "./engine/index.js";
import { parseMove } from "./moves.js";
import { Connection } from "./net.js";
import { settings, store } from "./storage.js";

const EVENT_TYPES = new Set([
  "player_joined", "ready", "progress", "countdown", "started", "finished", "resigned", "race_over",
  "hinted", "reveal", "last_racer",
]);
// Answers that mean "not now" rather than "no": the action stays and goes again later.
const RETRY_MS = [1000, 2000, 3000, 5000];
const AUTO_MOVE_DELAY_MS = 150;
// Where a board that disagrees with the server's is worth a console warning (an engine bug).
const DEV = ["localhost", "127.0.0.1", "[::1]"].includes(location.hostname);

/**
 * Events: "change" (the model changed), "finisher" (detail: {player, name, place, time_ms}),
 * "over", "rejected" (detail: {code, message, move?}), "status" (connection status),
 * "played" (detail: {kind, move, auto}: an action drawn; for an undo, the move it takes back),
 * "premove-dropped" (detail: {move}),
 * "rematch" (detail: {next, by}; `next` null while a rematch in one click waits for the other
 * racer, or when he said no: `model.rematchWants`, `model.rematchDeclined`), "paired" (detail:
 * the racer's seat in the rematch both asked for), "ratings" (detail: the `ratings` message).
 */
export class RaceSession extends EventTarget {
  /** `spectator`: never use a racer token for this race, even if this browser holds one.
   * `conn`: a connection the page holds and shares (the home page's featured race): the session
   * follows the race on it and, when closed, leaves the race rather than closing the socket. */
  constructor(race, { spectator = false, conn = null } = {}) {
    super();
    this.race = race;
    this.spectator = spectator;
    this.shared = !!conn;
    this.conn = conn || new Connection();
    this.model = emptyModel(race);
    this.resyncing = false;
    this.joining = false; // a rejoin is on its way: actions wait for its answer
    // The racer's own game, in the rules engine: `base` is the position the server confirmed
    // (after `baseSeq` actions); `actions` are those drawn since, in order, each
    // {kind, move?, undone?, seq, after (the position it leads to), turned (cards it turned up
    // that the server will name), auto, token (set while on its way), tries, waiting, resolve}.
    this.base = null;
    this.baseSeq = -1;
    this.complete = false; // base's history goes back to the deal: it knows when nothing is left to undo
    this.actions = [];
    this.queued = null; // {kind: "move"|"undo", move?}: the premove, waiting for a card to be shown
    this.paused = false; // the server could not save: actions wait for the retry
    this.motion = null; // the last move drawn, for the board's animation (setMotion)
    this.motions = 0;
    this.shown = null; // what model.own was worked out from (refreshOwn)
    this.retryTimer = 0;
    this.autoTimer = 0;
    this.resyncs = 0; // snapshots asked for (connects and gaps), for tests and diagnostics
    this.divergences = 0; // full states that did not match this board (an engine bug), for tests
    this.autoRefused = null; // "seq:move" of an auto-move the server refused
    this.listeners = {
      message: (e) => this.onMessage(e.detail),
      clock: (e) => {
        this.model.clockOffset = e.detail.offset;
      },
      status: (e) => {
        this.model.connection = e.detail;
        if (e.detail === "open") this.resync();
        this.dispatchEvent(new CustomEvent("status", { detail: e.detail }));
        this.changed();
      },
    };
    for (const [type, fn] of Object.entries(this.listeners)) this.conn.addEventListener(type, fn);
    this.unsubscribe = settings.subscribe((name) => {
      if (name === "autoMove" || name === null) this.maybeAutoMove();
    });
  }

  start() {
    if (!this.shared) this.conn.connect();
    else if (this.conn.open) this.listeners.status({ detail: "open" });
    return this;
  }

  close() {
    this.dropActions();
    clearTimeout(this.autoTimer);
    this.unsubscribe();
    if (!this.shared) {
      this.conn.close();
      return;
    }
    for (const [type, fn] of Object.entries(this.listeners)) this.conn.removeEventListener(type, fn);
    if (this.conn.open) this.conn.request({ type: "leave", race: this.race }).catch(() => {});
  }

  get credentials() {
    return this.spectator ? null : store.racer(this.race);
  }

  get isRacer() {
    return !!this.credentials;
  }

  /** True while an action drawn here waits for the server's confirmation. */
  get pendingMove() {
    return this.actions.length > 0;
  }

  /** The oldest action the server has not confirmed yet, or null. */
  get inflight() {
    return this.actions[0] ?? null;
  }

  /** Ask for a full snapshot: join again with our token, or watch. After a rejoin, the action
   * the old connection left unanswered goes again with the same `seq`. */
  async resync() {
    if (!this.conn.open) return;
    this.resyncing = true;
    this.resyncs++;
    const cred = this.model.replaced ? null : this.credentials;
    try {
      if (cred) {
        this.joining = true;
        try {
          // lean: answers to moves and undos name only the cards they turned up (applyState).
          await this.conn.request({ type: "join", race: this.race, token: cred.token, lean: true });
        } finally {
          this.joining = false;
        }
        this.transmit(); // what the old connection left unanswered, with the same seqs
      } else {
        await this.conn.request({ type: "watch", race: this.race });
      }
    } catch (err) {
      this.resyncing = false;
      if (err.code === "forbidden" && cred) {
        // The token is no longer valid here (e.g. a fresh database): watch instead.
        store.forgetRacer(this.race);
        return this.resync();
      }
      if (err.code === "not_found") {
        this.model.notFound = true;
        this.changed();
        return;
      }
      if (err.code === "forbidden" && !cred) {
        // Nobody may watch this race (today's daily deal, until the day is over).
        this.model.refused = err.message || "This race cannot be watched.";
        this.changed();
        return;
      }
      if (err.code === "unavailable") {
        // The server cannot save right now (a join writes): try again shortly.
        clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(() => this.resync(), RETRY_MS[1]);
        return;
      }
      if (err.code !== "disconnected" && err.code !== "closed") this.reject(err);
    }
  }

  /** Play the race in this tab again after another one took it (see "replaced"). */
  takeOver() {
    this.model.replaced = false;
    this.changed();
    return this.resync();
  }

  /** Join as a new racer with `name`. */
  async join(name) {
    const joined = await this.conn.request({ type: "join", race: this.race, name, lean: true });
    store.setRacer(this.race, { player: joined.player, token: joined.token, name });
    store.setName(name);
    store.remember(this.race, this.model.game, "raced");
    this.model.you = joined.player;
    this.model.role = "racer";
    this.changed();
    return joined;
  }

  async ready() {
    return this.conn.request({ type: "ready", race: this.race });
  }

  async startRace() {
    const token = store.host(this.race);
    return this.conn.request({ type: "start", race: this.race, token });
  }

  /** Ask for a new race with the same settings; resolves with the new race's id — or null
   * for a rematch in one click between two players, which waits until the other racer asks too
   * (both then get their seat: "paired"). `want` false says no to one. */
  async rematch(want = true) {
    const msg = { type: "rematch", race: this.race };
    if (!want) msg.want = false;
    const reply = await this.conn.request(msg);
    if (!reply.next) {
      this.applyRematchWants(reply);
      this.changed();
      return null;
    }
    if (reply.host_token) store.setHost(reply.next, reply.host_token);
    this.model.rematch = { next: reply.next, by: this.model.players.get(this.model.you)?.name || null, mine: true };
    this.changed();
    return reply.next;
  }

  /** Who wants a rematch in one click (`wants`, by player), or who said no (`declined`). */
  applyRematchWants(msg) {
    const m = this.model;
    m.rematchWants = Array.isArray(msg.wants) ? msg.wants : [];
    m.rematchDeclined = msg.declined || null;
  }

  // --- actions: drawn at once, confirmed in order ---

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

  /** Ask for a hint at the racer's position: resolves with the `hint` reply ({move, source,
   * lost, hints}), rejects with the server's error (forbidden, unavailable, rate_limited…). */
  hint() {
    return this.conn.request({ type: "hint", race: this.race });
  }

  async resign() {
    try {
      return await this.conn.request({ type: "resign", race: this.race });
    } catch (err) {
      this.reject(err);
      return null;
    }
  }

  /** End the race now: every other racer still racing has been offline for a minute (the
   * server checks; see `claimable`). */
  async claim() {
    try {
      return await this.conn.request({ type: "claim", race: this.race });
    } catch (err) {
      this.reject(err);
      return null;
    }
  }

  /** May this racer claim the race: it runs, he races, and every other racer still racing
   * has been offline for CLAIM_AFTER_MS (by the server's clock)? */
  claimable() {
    const m = this.model;
    const me = m.players.get(m.you);
    if (m.status !== "running" || !me || me.finished || me.resigned || m.replaced) return false;
    const others = [...m.players.values()].filter((p) => p.player !== m.you && !p.finished && !p.resigned);
    const now = this.now();
    return others.length > 0 && others.every((p) => p.connected === false && p.offline_since != null
      && now - p.offline_since >= CLAIM_AFTER_MS);
  }

  reject(err) {
    this.dispatchEvent(new CustomEvent("rejected", {
      detail: { code: err.code, message: err.message, move: err.move },
    }));
  }

  /** Milliseconds on the server's clock now. */
  now() {
    return Date.now() + this.model.clockOffset;
  }

  changed() {
    this.refreshOwn();
    this.dispatchEvent(new Event("change"));
  }

  onMessage(msg) {
    if (!msg) return;
    if (msg.type === "service") {
      const was = this.model.service;
      this.model.service = msg.status;
      // Saving works again: what waited for it goes now rather than at its next retry.
      if (was === "degraded" && msg.status === "ok" && this.paused) this.resume();
      this.changed();
      return;
    }
    // A message of another race (this connection followed it once); the seat of this race's
    // rematch names the new race.
    if (msg.race !== undefined && msg.race !== this.race && msg.rematch !== this.race) return;
    const m = this.model;
    switch (msg.type) {
      case "snapshot":
        this.applySnapshot(msg);
        break;
      case "joined":
        m.you = msg.player;
        m.role = "racer";
        break;
      case "state":
        this.applyState(msg);
        break;
      case "error":
        if (msg.rid === undefined) this.reject(msg);
        return;
      case "board":
        // Unnumbered, throttled views of a racer's latest board. Our own board comes from
        // `state` (it carries `seq`), which a view may lag behind: keep ours.
        if (msg.player !== m.you || m.role !== "racer") this.player(msg.player).board = msg.board;
        break;
      case "presence": {
        const p = this.player(msg.player);
        p.connected = msg.connected;
        p.offline_since = msg.connected ? null : this.now(); // server time, as in snapshots
        break;
      }
      case "replaced":
        // The same racer opened this race in another tab or window, which now plays it. Stay
        // a spectator here until the player takes over again (takeOver), so that two tabs
        // never keep taking the racer from each other.
        m.replaced = true;
        this.dropActions();
        break;
      case "par":
        // The deal's par, worked out after the reveal (unnumbered).
        m.par = msg.par ?? m.par;
        break;
      case "ratings":
        // The race was scored (after race_over): each racer's rating before and after.
        m.ratings = msg;
        if (typeof msg.v === "number" && msg.v === m.v + 1) m.v = msg.v;
        this.dispatchEvent(new CustomEvent("ratings", { detail: msg }));
        break;
      case "rematch":
        if (msg.next && msg.rid === undefined) {
          if (!m.rematch || m.rematch.next !== msg.next) m.rematch = { next: msg.next, by: msg.by, mine: false };
          m.rematchWants = [];
          this.dispatchEvent(new CustomEvent("rematch", { detail: m.rematch }));
        } else if (!msg.next && msg.rid === undefined) {
          this.applyRematchWants(msg);
          this.dispatchEvent(new CustomEvent("rematch", { detail: { next: null, by: msg.by, declined: msg.declined } }));
        }
        break;
      case "paired":
        // The racer's seat in the rematch both racers asked for (only his connection gets it).
        if (msg.rematch === this.race) {
          m.rematchSeat = msg;
          this.dispatchEvent(new CustomEvent("paired", { detail: msg }));
        }
        break;
      default:
        if (typeof msg.v !== "number") return;
        if (this.resyncing) return; // the coming snapshot includes it
        if (msg.v <= m.v) return; // already seen (e.g. a reply racing a broadcast)
        if (msg.v > m.v + 1) {
          this.resync(); // missed numbered events: a fresh snapshot has them all
          return;
        }
        m.v = msg.v;
        this.applyEvent(msg);
    }
    this.changed();
  }

  applySnapshot(s) {
    const m = this.model;
    this.resyncing = false;
    m.loaded = true;
    m.notFound = false;
    m.v = s.v;
    m.game = s.game;
    m.status = s.status;
    m.options = s.options || m.options;
    m.commitment = s.commitment ?? m.commitment;
    m.seedChosen = !!s.seed_chosen;
    m.starts_at = s.starts_at ?? null;
    m.started_at = s.started_at ?? null;
    m.ends_at = s.ends_at ?? null;
    m.finished_at = s.finished_at ?? m.finished_at;
    if (s.reason !== undefined) m.reason = s.reason;
    if (typeof s.now === "number") m.clockOffset = s.now - Date.now();
    if (!m.replaced) { // replaced: still this racer's page, watching for now
      if (s.you !== undefined) m.you = s.you;
      if (s.role !== undefined) m.role = s.role;
    }
    if (s.standings) m.standings = s.standings;
    if (s.seed !== undefined) m.seed = s.seed;
    if (s.salt !== undefined) m.salt = s.salt;
    if (s.par) m.par = s.par;
    if (s.ratings) m.ratings = s.ratings;
    m.tournament = s.tournament ?? null;
    m.arena = s.arena ?? null;
    m.lastRacer = s.last_racer ?? null;
    if (s.rematch && !m.rematch) m.rematch = { next: s.rematch, by: null, mine: false };
    if (Array.isArray(s.rematch_wants)) m.rematchWants = s.rematch_wants;
    const old = m.players;
    m.players = new Map();
    for (const p of s.players || []) {
      const prev = old.get(p.player);
      m.players.set(p.player, { ...p, board: p.board ?? prev?.board ?? null });
    }
    m.order = (s.players || []).map((p) => p.player);
    if (m.status === "finished" && !m.overAt) m.overAt = s.finished_at ?? s.now ?? null;
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

  player(id) {
    const m = this.model;
    if (!m.players.has(id)) {
      m.players.set(id, { player: id, name: id, progress: null, board: null });
      m.order.push(id);
    }
    return m.players.get(id);
  }

  applyEvent(e) {
    const m = this.model;
    switch (e.type) {
      case "player_joined":
        Object.assign(this.player(e.player), { name: e.name, bot: !!e.bot, connected: true },
          // A player (not an anonymous racer) has an id; a rating and a house bot's level may come too.
          e.id !== undefined ? { id: e.id } : null, e.rating !== undefined ? { rating: e.rating } : null,
          e.level !== undefined ? { level: e.level } : null);
        break;
      case "ready":
        this.player(e.player).ready = true;
        break;
      case "resigned":
        this.player(e.player).resigned = true;
        break;
      case "progress":
        this.player(e.player).progress = e.progress;
        // The last one racing acted: he may stay idle that long again from now.
        if (m.lastRacer?.player === e.player) m.lastRacer = { ...m.lastRacer, ends_at: this.now() + m.lastRacer.idle_ms };
        break;
      case "last_racer":
        m.lastRacer = { player: e.player, ends_at: e.ends_at, idle_ms: e.idle_ms };
        break;
      case "hinted":
        this.player(e.player).hints = e.hints;
        break;
      case "countdown":
        m.status = "countdown";
        m.starts_at = e.starts_at;
        if (typeof e.now === "number") m.clockOffset = e.now - Date.now();
        break;
      case "started":
        m.status = "running";
        m.started_at = e.started_at ?? m.starts_at ?? this.now();
        m.ends_at = e.ends_at ?? (m.options?.time_limit ? m.started_at + m.options.time_limit * 1000 : null);
        // Each racer's progress at the start, when the server says (a deal may start with cards home).
        for (const [id, pr] of Array.isArray(e.progress) ? e.progress.map((x) => [x.player, x.progress])
          : Object.entries(e.progress || {})) if (pr && m.players.has(id)) this.player(id).progress = pr;
        queueMicrotask(() => this.maybeAutoMove()); // the first state may come before this event
        // A spectator has no board yet for racers who joined after its snapshot: fetch the
        // dealt boards. (A racer gets the deal in its own first `state`; see applyState.)
        if (!this.credentials && [...m.players.values()].some((p) => !p.board)) {
          queueMicrotask(() => this.resync());
        }
        break;
      case "finished": {
        const p = this.player(e.player);
        Object.assign(p, { finished: true, place: e.place, time_ms: e.time_ms, penalty_ms: e.penalty_ms ?? p.penalty_ms });
        // With hints (a penalty each) a later finisher may pass an earlier one: every
        // finisher's place as it stands now.
        for (const [id, place] of Object.entries(e.places || {})) if (m.players.has(id)) this.player(id).place = place;
        this.dispatchEvent(new CustomEvent("finisher", { detail: { ...e, name: p.name } }));
        break;
      }
      case "race_over":
        m.status = "finished";
        m.standings = e.standings;
        // A race of a tournament round that ends before the others: seed and salt come with `reveal`.
        m.seed = e.seed ?? null;
        m.salt = e.salt ?? null;
        if (e.par) m.par = e.par;
        m.overAt = this.now();
        if (e.reason !== undefined) m.reason = e.reason;
        this.dropActions();
        this.dispatchEvent(new Event("over"));
        break;
      case "reveal":
        Object.assign(m, { seed: e.seed, salt: e.salt, par: e.par ?? m.par });
        break;
      default:
        // An event this client does not know (a newer server): fetch the full picture.
        if (!EVENT_TYPES.has(e.type)) this.resync();
    }
  }
}

/** How long every other racer still racing must have been offline before a racer may claim
 * the race (the server's CLAIM_AFTER_MS). */
export const CLAIM_AFTER_MS = 60_000;

function emptyModel(race) {
  return {
    race,
    loaded: false,
    notFound: false,
    refused: null, // why this browser may not watch the race (the server's words), or null
    connection: "connecting",
    service: "ok",
    v: -1,
    game: null,
    status: null,
    options: null,
    commitment: null,
    seedChosen: false,
    replaced: false,
    starts_at: null,
    started_at: null,
    ends_at: null,
    finished_at: null,
    overAt: null,
    reason: null,
    clockOffset: 0,
    you: null,
    role: null,
    players: new Map(),
    order: [],
    own: null,
    standings: null,
    seed: null,
    salt: null,
    par: null, // {verdict: "won", moves} | {verdict: "lost"} | {verdict: "unknown"}, once revealed
    tournament: null, // {tournament, name, round} for a race of a tournament
    arena: null, // {arena, name} for a race of an arena
    rematch: null,
    rematchWants: [], // the racers who want a rematch in one click (player ids)
    rematchDeclined: null, // the name of the racer who said no to it
    rematchSeat: null, // the `paired` of this racer's seat in it
    ratings: null, // the `ratings` message once the race is scored: {rated, game, changes: [...]}
    lastRacer: null, // {player, ends_at, idle_ms}: the last one racing, and when idleness ends the race
  };
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
