// One race as this browser follows it (see docs/protocol.md). `RaceSession` (re)joins or watches
// after every (re)connect, keeps the race model current from server events, resyncs with a fresh
// snapshot when the event numbers `v` show a gap, and carries the racer's actions: one move in
// flight at a time, kept across disconnects and `unavailable` answers and sent again with the same
// `seq` until the server answers it (a repeated `seq` is never applied twice), and one premove
// queued behind it, sent when the reply comes if the new `legal` list has it. Pages render from
// `session.model`. No rules here: what is legal comes only from the server.

import { Connection } from "./net.js";
import { settings, store } from "./storage.js";

const EVENT_TYPES = new Set([
  "player_joined", "ready", "progress", "countdown", "started", "finished", "resigned", "race_over",
  "hinted", "reveal",
]);
// Answers that mean "not now" rather than "no": the action stays and goes again later.
const RETRY_MS = [1000, 2000, 3000, 5000];
// A move not in `legal` is still sent when the player tries it (a refused click or drop), so
// that the server says why; at most this many such tries a second stay far under its rate limit.
const REFUSALS_PER_SECOND = 8;
const AUTO_MOVE_DELAY_MS = 150;

/**
 * Events: "change" (the model changed), "finisher" (detail: {player, name, place, time_ms}),
 * "over", "rejected" (detail: {code, message, move?}), "status" (connection status),
 * "accepted" (detail: {kind, move, auto}), "premove-dropped" (detail: {move}),
 * "rematch" (detail: {next, by}), "ratings" (detail: the `ratings` message).
 */
export class RaceSession extends EventTarget {
  /** `spectator`: never use a racer token for this race, even if this browser holds one. */
  constructor(race, { spectator = false } = {}) {
    super();
    this.race = race;
    this.spectator = spectator;
    this.conn = new Connection();
    this.model = emptyModel(race);
    this.resyncing = false;
    this.inflight = null; // {msg, seq, auto, tries}: the action the server has not answered yet
    this.queued = null; // {kind: "move"|"undo", move?}: the premove
    this.retryTimer = 0;
    this.autoTimer = 0;
    this.refusals = [];
    this.resyncs = 0; // snapshots asked for (connects and gaps), for tests and diagnostics
    this.conn.addEventListener("message", (e) => this.onMessage(e.detail));
    this.conn.addEventListener("clock", (e) => {
      this.model.clockOffset = e.detail.offset;
    });
    this.conn.addEventListener("status", (e) => {
      this.model.connection = e.detail;
      if (e.detail === "open") this.resync();
      this.dispatchEvent(new CustomEvent("status", { detail: e.detail }));
      this.changed();
    });
    this.unsubscribe = settings.subscribe((name) => {
      if (name === "autoMove" || name === null) this.maybeAutoMove();
    });
  }

  start() {
    this.conn.connect();
    return this;
  }

  close() {
    this.dropActions();
    clearTimeout(this.autoTimer);
    this.unsubscribe();
    this.conn.close();
  }

  get credentials() {
    return this.spectator ? null : store.racer(this.race);
  }

  get isRacer() {
    return !!this.credentials;
  }

  /** True while an action waits for the server's answer (the board takes premoves then). */
  get pendingMove() {
    return !!this.inflight;
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
        await this.conn.request({ type: "join", race: this.race, token: cred.token });
        if (this.inflight && !this.inflight.sent) this.transmit();
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
    const joined = await this.conn.request({ type: "join", race: this.race, name });
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

  /** Ask for a new race with the same settings; resolves with the new race's id. */
  async rematch() {
    const reply = await this.conn.request({ type: "rematch", race: this.race });
    if (reply.host_token) store.setHost(reply.next, reply.host_token);
    this.model.rematch = { next: reply.next, by: this.model.players.get(this.model.you)?.name || null, mine: true };
    this.changed();
    return reply.next;
  }

  // --- actions: one in flight, one queued ---

  /** Play a move text. While another action is in flight it becomes the premove instead
   * (replacing any earlier one). Resolves with the server's `state` once the move is answered,
   * or null if it was refused, dropped or replaced. */
  move(text, { auto = false } = {}) {
    if (!this.model.own) return Promise.resolve(null);
    if (this.inflight) return auto ? Promise.resolve(null) : this.enqueue({ kind: "move", move: text });
    const legal = this.model.own.legal || [];
    if (!legal.includes(text) && !this.mayProbe()) {
      this.reject({ code: "illegal_move", message: "Not a legal move here.", move: text });
      return Promise.resolve(null);
    }
    return this.act({ type: "move", race: this.race, move: text }, auto);
  }

  undo() {
    if (!this.model.own) return Promise.resolve(null);
    if (this.inflight) return this.enqueue({ kind: "undo" });
    return this.act({ type: "undo", race: this.race });
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

  /** Drop every action (the race is over, or another tab plays it now). */
  dropActions() {
    this.inflight?.resolve(null);
    this.queued?.resolve(null);
    this.inflight = null;
    this.queued = null;
    clearTimeout(this.retryTimer);
  }

  mayProbe() {
    const now = performance.now();
    this.refusals = this.refusals.filter((t) => now - t < 1000);
    if (this.refusals.length >= REFUSALS_PER_SECOND) return false;
    this.refusals.push(now);
    return true;
  }

  act(msg, auto = false) {
    clearTimeout(this.autoTimer);
    return new Promise((resolve) => {
      this.inflight = { msg, seq: this.model.own.seq + 1, auto, tries: 0, sent: false, resolve };
      this.changed();
      this.transmit();
    });
  }

  /** Send the action in flight, with its `seq`; when the connection is down it waits for the
   * rejoin (resync), which sends it again. */
  transmit() {
    const action = this.inflight;
    clearTimeout(this.retryTimer);
    if (!action || !this.conn.open) {
      if (action) action.sent = false;
      return;
    }
    action.sent = true;
    action.tries++;
    this.conn.request({ ...action.msg, seq: action.seq }).then(
      (reply) => this.answered(action, reply),
      (err) => this.failed(action, err),
    );
  }

  answered(action, reply) {
    if (this.inflight !== action) return;
    this.inflight = null;
    const moved = reply?.type === "state" && reply.seq >= action.seq;
    if (moved) {
      this.dispatchEvent(new CustomEvent("accepted", {
        detail: { kind: action.msg.type, move: action.msg.move, auto: action.auto },
      }));
    }
    action.resolve(reply);
    this.next();
  }

  failed(action, err) {
    if (this.inflight !== action) return;
    if (err.code === "disconnected" || err.code === "offline" || err.code === "closed") {
      action.sent = false; // the rejoin sends it again
      this.changed();
      return;
    }
    if (err.code === "unavailable" || err.code === "rate_limited") {
      // Nothing was applied; the same message with the same seq goes again a little later.
      action.sent = false;
      action.waiting = err.code;
      const delay = RETRY_MS[Math.min(action.tries - 1, RETRY_MS.length - 1)];
      this.retryTimer = setTimeout(() => this.transmit(), delay);
      this.changed();
      return;
    }
    this.inflight = null;
    if (!action.auto) this.reject({ code: err.code, message: err.message, move: action.msg.move });
    if (err.code === "bad_seq") this.resync();
    action.resolve(null);
    this.next();
  }

  /** After an answer: the premove if the new position allows it, else an auto-move. */
  next() {
    const queued = this.queued;
    this.queued = null;
    if (queued && this.model.own && this.model.status === "running") {
      if (queued.kind === "undo") {
        this.act({ type: "undo", race: this.race }).then(queued.resolve);
        return;
      }
      if ((this.model.own.legal || []).includes(queued.move)) {
        this.act({ type: "move", race: this.race, move: queued.move }).then(queued.resolve);
        return;
      }
      this.dispatchEvent(new CustomEvent("premove-dropped", { detail: { move: queued.move } }));
    }
    queued?.resolve(null);
    this.changed();
    this.maybeAutoMove();
  }

  /** With the player's auto-move setting on, play the first of the server's `safe` moves,
   * one at a time, through the same path as any move. */
  maybeAutoMove() {
    clearTimeout(this.autoTimer);
    if (!settings.get("autoMove") || this.inflight || this.queued) return;
    const own = this.model.own;
    if (!own?.safe?.length || this.model.status !== "running" || this.model.replaced) return;
    const seq = own.seq;
    this.autoTimer = setTimeout(() => {
      const now = this.model.own;
      if (this.inflight || this.queued || now.seq !== seq || !settings.get("autoMove")) return;
      const text = (now.safe || []).find((t) => (now.legal || []).includes(t));
      if (text) this.move(text, { auto: true });
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
    this.dispatchEvent(new Event("change"));
  }

  onMessage(msg) {
    if (!msg) return;
    if (msg.type === "service") {
      const was = this.model.service;
      this.model.service = msg.status;
      // Saving works again: what waited for it goes now rather than at its next retry.
      if (was === "degraded" && msg.status === "ok" && this.inflight && !this.inflight.sent) this.transmit();
      this.changed();
      return;
    }
    if (msg.race !== undefined && msg.race !== this.race) return;
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
          this.dispatchEvent(new CustomEvent("rematch", { detail: m.rematch }));
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
    if (s.rematch && !m.rematch) m.rematch = { next: s.rematch, by: null, mine: false };
    const old = m.players;
    m.players = new Map();
    for (const p of s.players || []) {
      const prev = old.get(p.player);
      m.players.set(p.player, { ...p, board: p.board ?? prev?.board ?? null });
    }
    m.order = (s.players || []).map((p) => p.player);
    if (m.status === "finished" && !m.overAt) m.overAt = s.finished_at ?? s.now ?? null;
  }

  applyState(st) {
    const m = this.model;
    if (m.own && st.seq < m.own.seq) return;
    m.own = {
      seq: st.seq, board: st.board, legal: st.legal || [], safe: st.safe || [], progress: st.progress,
    };
    const me = m.players.get(m.you);
    if (me) {
      me.progress = st.progress;
      me.board = st.board;
    }
    // Everyone starts from the same deal: until an opponent's own board arrives, show the deal.
    if (st.seq === 0) {
      for (const p of m.players.values()) {
        if (!p.board) p.board = st.board;
        // A lobby snapshot counts 0 cards home; a deal may start with one (Quadruple Canfield).
        if (!p.progress || !p.progress.moves) p.progress = { ...st.progress, moves: 0 };
      }
    }
    if (!this.inflight) queueMicrotask(() => this.maybeAutoMove());
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

/** Why the race ended, as far as the model tells: "done" (every racer finished or resigned),
 * "time" (the time limit), "abandoned" (every racer still racing left for two minutes), or
 * null. The server's `reason`, when it sends one, wins. */
export function overReason(model) {
  if (model.status !== "finished") return null;
  if (model.reason) return model.reason;
  const rows = model.standings || [];
  if (!rows.length) return null;
  if (rows.every((s) => s.resigned || (s.time_ms !== null && s.time_ms !== undefined))) return "done";
  const end = model.finished_at ?? model.overAt;
  if (model.ends_at && end && end < model.ends_at - 1500) return "abandoned";
  return "time";
}

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
    rematch: null,
    ratings: null, // the `ratings` message once the race is scored: {rated, game, changes: [...]}
  };
}
