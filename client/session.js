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
//
// This file holds the connection: (re)join or watch, resync, the messages routed to the model,
// and the racer's requests. The race model's methods are in race-model.js, the racer's own game
// (actions drawn at once, confirmed in order) in race-actions.js; both are put on RaceSession's
// prototype below (`mixin`), so that a session is one object to the pages and the tests.

import { RETRY_MS, RaceActions } from "./race-actions.js";
import { CLAIM_AFTER_MS, RaceModel, emptyModel } from "./race-model.js";
import { Connection } from "./net.js";
import { settings, store } from "./storage.js";

export { CLAIM_AFTER_MS };

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

  reject(err) {
    this.dispatchEvent(new CustomEvent("rejected", {
      detail: { code: err.code, message: err.message, move: err.move },
    }));
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
}

/** Put the methods (and getters) of `parts`' classes on `cls`'s prototype, as its own would be
 * (not enumerable): one class, written in files of one concept each. */
function mixin(cls, ...parts) {
  for (const part of parts) {
    const props = Object.getOwnPropertyDescriptors(part.prototype);
    delete props.constructor;
    for (const [name, prop] of Object.entries(props)) {
      if (Object.hasOwn(cls.prototype, name)) throw new Error(`${cls.name}.${name} is defined twice`);
      Object.defineProperty(cls.prototype, name, { ...prop, enumerable: false });
    }
  }
}

mixin(RaceSession, RaceModel, RaceActions);
