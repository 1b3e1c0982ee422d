// The socket and the protocol (see docs/protocol.md). `Connection` keeps one WebSocket open,
// reconnecting with backoff, and matches replies to requests by `rid`. `RaceSession` follows one race:
// it (re)joins or watches after every (re)connect, keeps the race model current from server events and
// resyncs with a fresh snapshot when the event numbers `v` show a gap. Pages render from `session.model`.

const BACKOFF_MS = [250, 500, 1000, 2000, 4000, 8000];

export class ProtocolError extends Error {
  constructor(code, message) {
    super(message || code);
    this.code = code;
  }
}

export function socketUrl() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  // batch=1: the server may pack the messages of one of its loop turns into one frame (a JSON
  // array), which a busy spectator page parses far more cheaply than one frame per message.
  return `${scheme}//${location.host}/ws?batch=1`;
}

/**
 * One WebSocket with automatic reconnect. Events: "status" (detail: "connecting", "open",
 * "reconnecting", "closed") and "message" (detail: the parsed server message).
 */
export class Connection extends EventTarget {
  constructor(url = socketUrl()) {
    super();
    this.url = url;
    this.ws = null;
    this.nextRid = 1;
    this.pending = new Map();
    this.attempt = 0;
    this.closed = false;
    this.status = "connecting";
    this.retryTimer = 0;
    this.everOpened = false;
  }

  connect() {
    this.closed = false;
    this.setStatus(this.everOpened ? "reconnecting" : "connecting");
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch {
      this.scheduleRetry();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      this.attempt = 0;
      this.everOpened = true;
      this.setStatus("open");
    };
    ws.onmessage = (e) => {
      if (typeof e.data !== "string") return; // we only speak JSON text frames
      let msg;
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      if (Array.isArray(msg)) for (const m of msg) this.receive(m);
      else this.receive(msg);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.failPending(new ProtocolError("disconnected", "Connection lost"));
      if (this.closed) this.setStatus("closed");
      else this.scheduleRetry();
    };
    ws.onerror = () => {}; // onclose follows and handles it
  }

  scheduleRetry() {
    this.setStatus("reconnecting");
    const base = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    this.attempt++;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.connect(), base + Math.random() * base * 0.3);
  }

  /** Close for good (page left). */
  close() {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.failPending(new ProtocolError("closed", "Connection closed"));
    if (this.ws) this.ws.close();
    this.ws = null;
  }

  /** Force a reconnect now, e.g. to test the reconnecting state. */
  drop() {
    if (this.ws) this.ws.close();
  }

  get open() {
    return !!this.ws && this.ws.readyState === WebSocket.OPEN;
  }

  setStatus(status) {
    if (status === this.status) return;
    this.status = status;
    this.dispatchEvent(new CustomEvent("status", { detail: status }));
  }

  failPending(err) {
    for (const { reject } of this.pending.values()) reject(err);
    this.pending.clear();
  }

  receive(msg) {
    if (msg && msg.rid !== undefined && this.pending.has(msg.rid)) {
      const { resolve, reject } = this.pending.get(msg.rid);
      this.pending.delete(msg.rid);
      if (msg.type === "error") reject(new ProtocolError(msg.code, msg.message));
      else resolve(msg);
    }
    this.dispatchEvent(new CustomEvent("message", { detail: msg }));
  }

  /** Send a message; resolves with its direct reply, rejects with a ProtocolError. */
  request(msg) {
    if (!this.open) return Promise.reject(new ProtocolError("offline", "Not connected — reconnecting…"));
    const rid = this.nextRid++;
    return new Promise((resolve, reject) => {
      this.pending.set(rid, { resolve, reject });
      this.ws.send(JSON.stringify({ ...msg, rid }));
    });
  }

  /** Resolves once the socket is open. */
  whenOpen() {
    if (this.open) return Promise.resolve();
    return new Promise((resolve) => {
      const on = (e) => {
        if (e.detail === "open") {
          this.removeEventListener("status", on);
          resolve();
        }
      };
      this.addEventListener("status", on);
    });
  }
}

// --- tokens kept in this browser ---

const racerKey = (race) => `solrace:racer:${race}`;
const hostKey = (race) => `solrace:host:${race}`;

function readJSON(key) {
  try {
    return JSON.parse(localStorage.getItem(key) || "null");
  } catch {
    return null;
  }
}

export const store = {
  racer: (race) => readJSON(racerKey(race)),
  setRacer: (race, value) => localStorage.setItem(racerKey(race), JSON.stringify(value)),
  forgetRacer: (race) => localStorage.removeItem(racerKey(race)),
  host: (race) => localStorage.getItem(hostKey(race)),
  setHost: (race, token) => localStorage.setItem(hostKey(race), token),
  name: () => localStorage.getItem("solrace:name") || "",
  setName: (name) => localStorage.setItem("solrace:name", name),
  /** Races this browser created or joined, newest first (for the home page). */
  recent: () => readJSON("solrace:recent") || [],
  remember(race, game, what) {
    const list = this.recent().filter((r) => r.race !== race);
    list.unshift({ race, game, what, at: Date.now() });
    localStorage.setItem("solrace:recent", JSON.stringify(list.slice(0, 8)));
  },
};

/** Create a race; resolves with the `created` reply. Keeps the host token. */
export async function createRace(options) {
  const conn = new Connection();
  conn.connect();
  try {
    await withTimeout(conn.whenOpen(), 8000, "Could not reach the server");
    const created = await withTimeout(conn.request({ type: "create", ...options }), 8000, "No answer");
    store.setHost(created.race, created.host_token);
    store.remember(created.race, options.game, "created");
    return created;
  } finally {
    conn.close();
  }
}

function withTimeout(promise, ms, message) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new ProtocolError("timeout", message)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// --- one race ---

const EVENT_TYPES = new Set([
  "player_joined", "ready", "progress", "countdown", "started", "finished", "resigned", "race_over",
]);

/**
 * Follows one race as a racer (when this browser holds a token for it) or as a spectator.
 * Events: "change" (the model changed), "finisher" (detail: {player, name, place, time_ms}),
 * "over", "rejected" (detail: {code, message}), "status" (connection status).
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
    this.pendingMove = false;
    this.resyncs = 0; // snapshots asked for (connects and gaps), for tests and diagnostics
    this.conn.addEventListener("message", (e) => this.onMessage(e.detail));
    this.conn.addEventListener("status", (e) => {
      this.model.connection = e.detail;
      if (e.detail === "open") this.resync();
      this.dispatchEvent(new CustomEvent("status", { detail: e.detail }));
      this.changed();
    });
  }

  start() {
    this.conn.connect();
    return this;
  }

  close() {
    this.conn.close();
  }

  get credentials() {
    return this.spectator ? null : store.racer(this.race);
  }

  get isRacer() {
    return !!this.credentials;
  }

  /** Ask for a full snapshot: join again with our token, or watch. */
  async resync() {
    if (!this.conn.open) return;
    this.resyncing = true;
    this.resyncs++;
    const cred = this.model.replaced ? null : this.credentials;
    try {
      if (cred) {
        await this.conn.request({ type: "join", race: this.race, token: cred.token });
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

  /** Send a move text; the board only changes when the server's `state` says so. */
  async move(text) {
    return this.action({ type: "move", race: this.race, move: text });
  }

  async undo() {
    return this.action({ type: "undo", race: this.race });
  }

  async action(msg) {
    const own = this.model.own;
    if (this.pendingMove || !own) return null;
    this.pendingMove = true;
    this.changed();
    try {
      return await this.conn.request({ ...msg, seq: own.seq + 1 });
    } catch (err) {
      this.reject(err);
      return null;
    } finally {
      this.pendingMove = false;
      this.changed();
    }
  }

  async resign() {
    try {
      return await this.conn.request({ type: "resign", race: this.race });
    } catch (err) {
      this.reject(err);
      return null;
    }
  }

  reject(err) {
    this.dispatchEvent(new CustomEvent("rejected", { detail: { code: err.code, message: err.message } }));
  }

  /** Milliseconds on the server's clock now. */
  now() {
    return Date.now() + this.model.clockOffset;
  }

  changed() {
    this.dispatchEvent(new Event("change"));
  }

  onMessage(msg) {
    if (!msg || (msg.race !== undefined && msg.race !== this.race)) return;
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
      case "presence":
        this.player(msg.player).connected = msg.connected;
        break;
      case "replaced":
        // The same racer opened this race in another tab or window, which now plays it. Stay
        // a spectator here until the player takes over again (takeOver), so that two tabs
        // never keep taking the racer from each other.
        m.replaced = true;
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
    if (typeof s.now === "number") m.clockOffset = s.now - Date.now();
    if (!m.replaced) {  // replaced: still this racer's page, watching for now
      if (s.you !== undefined) m.you = s.you;
      if (s.role !== undefined) m.role = s.role;
    }
    if (s.standings) m.standings = s.standings;
    if (s.seed !== undefined) m.seed = s.seed;
    if (s.salt !== undefined) m.salt = s.salt;
    const old = m.players;
    m.players = new Map();
    for (const p of s.players || []) {
      const prev = old.get(p.player);
      m.players.set(p.player, { ...p, board: p.board ?? prev?.board ?? null });
    }
    m.order = (s.players || []).map((p) => p.player);
  }

  applyState(st) {
    const m = this.model;
    if (m.own && st.seq < m.own.seq) return;
    m.own = { seq: st.seq, board: st.board, legal: st.legal || [], progress: st.progress };
    const me = m.players.get(m.you);
    if (me) {
      me.progress = st.progress;
      me.board = st.board;
    }
    // Everyone starts from the same deal: until an opponent's own board arrives, show the deal.
    if (st.seq === 0) {
      for (const p of m.players.values()) {
        if (!p.board) p.board = st.board;
        if (!p.progress) p.progress = { foundation: 0, total: st.progress.total, moves: 0 };
      }
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
        Object.assign(this.player(e.player), { name: e.name, bot: !!e.bot, connected: true });
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
      case "countdown":
        m.status = "countdown";
        m.starts_at = e.starts_at;
        if (typeof e.now === "number") m.clockOffset = e.now - Date.now();
        break;
      case "started":
        m.status = "running";
        m.started_at = e.started_at ?? m.starts_at ?? this.now();
        m.ends_at = e.ends_at ?? (m.options?.time_limit ? m.started_at + m.options.time_limit * 1000 : null);
        // A spectator has no board yet for racers who joined after its snapshot: fetch the
        // dealt boards. (A racer gets the deal in its own first `state`; see applyState.)
        if (!this.credentials && [...m.players.values()].some((p) => !p.board)) {
          queueMicrotask(() => this.resync());
        }
        break;
      case "finished": {
        const p = this.player(e.player);
        Object.assign(p, { finished: true, place: e.place, time_ms: e.time_ms });
        this.dispatchEvent(new CustomEvent("finisher", { detail: { ...e, name: p.name } }));
        break;
      }
      case "race_over":
        m.status = "finished";
        m.standings = e.standings;
        m.seed = e.seed;
        m.salt = e.salt;
        this.dispatchEvent(new Event("over"));
        break;
      default:
        // An event this client does not know (a newer server): fetch the full picture.
        if (!EVENT_TYPES.has(e.type)) this.resync();
    }
  }
}

function emptyModel(race) {
  return {
    race,
    loaded: false,
    notFound: false,
    connection: "connecting",
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
    clockOffset: 0,
    you: null,
    role: null,
    players: new Map(),
    order: [],
    own: null,
    standings: null,
    seed: null,
    salt: null,
  };
}
