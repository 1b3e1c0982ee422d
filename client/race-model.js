// The race model of a RaceSession (session.js), kept current from the server's snapshots and
// numbered events: the race's status and times, its players and their progress and boards, the
// standings, the rematch, the revealed seed. Pages render from `session.model`, built here from
// `emptyModel`. These are RaceSession's methods (`this` is the session), in a file of their own
// because they are one concept: what the race is, as opposed to the connection that carries it
// (session.js) and the racer's own moves (race-actions.js). session.js puts them on its class.

const EVENT_TYPES = new Set([
  "player_joined", "ready", "progress", "countdown", "started", "finished", "resigned", "race_over",
  "hinted", "reveal", "last_racer",
]);

/** How long every other racer still racing must have been offline before a racer may claim
 * the race (the server's CLAIM_AFTER_MS). */
export const CLAIM_AFTER_MS = 60_000;

/** RaceSession's methods for the race model (see session.js, `mixin`). */
export class RaceModel {
  /** A `snapshot` (after a join, a watch, a resync): the whole race, players' boards kept. */
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

  /** A numbered event, the next one in order (onMessage checks `v`). */
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

  player(id) {
    const m = this.model;
    if (!m.players.has(id)) {
      m.players.set(id, { player: id, name: id, progress: null, board: null });
      m.order.push(id);
    }
    return m.players.get(id);
  }

  /** Who wants a rematch in one click (`wants`, by player), or who said no (`declined`). */
  applyRematchWants(msg) {
    const m = this.model;
    m.rematchWants = Array.isArray(msg.wants) ? msg.wants : [];
    m.rematchDeclined = msg.declined || null;
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

  /** Milliseconds on the server's clock now. */
  now() {
    return Date.now() + this.model.clockOffset;
  }
}

/** A race's model before its first snapshot. */
export function emptyModel(race) {
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
