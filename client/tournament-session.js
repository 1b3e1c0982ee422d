// One tournament as this browser follows it (docs/protocol.md, "Tournaments"). `TournamentSession`
// resumes the entrant with his token (or watches) after every (re)connect, keeps the tournament
// model current from the `tournament` views and the numbered `standings` / `tournament_over`
// events (a gap in `v` asks for the view again), and passes on the entrant's seats (`round`):
// each seat's racer token is kept like any racer's (storage.js), so that the race page resumes it.
// The host's tools are requests with the host token. Pages render from `session.model`.

import { Connection, ProtocolError, withTimeout } from "./net.js";
import { store } from "./storage.js";
import { fetchJSON } from "./ui.js";
import { UnitSession } from "./unit-session.js";

// After a race's end only `standings` arrive; the rounds' results (which race is over, in which
// order) come with the next full view, fetched over HTTP this long after the last standings.
const REFRESH_MS = 400;

/**
 * Events: "change" (the model changed), "seat" (detail: {seat, fresh}: the entrant's seat in a
 * race; `fresh` when this browser has not opened that race yet), "standings" (detail: the
 * event, after a race's end), "over" (the tournament ended), "status" (connection status).
 */
export class TournamentSession extends UnitSession {
  constructor(tid) {
    super({ tid });
    this.tid = tid;
    this.refreshTimer = 0;
  }

  close() {
    clearTimeout(this.refreshTimer);
    this.conn.close();
  }

  get hostToken() {
    return store.tournamentHost(this.tid);
  }

  get isHost() {
    return !!this.hostToken;
  }

  get entrant() {
    return store.entrant(this.tid);
  }

  /** The whole view again: resume the entrant with his token, or watch. */
  async resync() {
    if (!this.conn.open) return;
    const me = this.model.replaced ? null : this.entrant;
    try {
      if (me) {
        const joined = await this.conn.request({ type: "tournament_join", tournament: this.tid, token: me.token });
        this.model.you = joined.entrant;
      } else {
        await this.conn.request({ type: "tournament_watch", tournament: this.tid });
      }
    } catch (err) {
      if (err.code === "forbidden" && me) {
        store.forgetEntrant(this.tid); // a token this server does not know (a fresh database)
        return this.resync();
      }
      if (err.code === "not_found") {
        this.model.notFound = true;
        this.changed();
      }
    }
  }

  /** Take the entrant back on this page after another tab or window took him (`replaced`). */
  takeOver() {
    this.model.replaced = false;
    this.changed();
    return this.resync();
  }

  /** Enter the tournament as `name` (with the entry `code` if it needs one). */
  async join(name, code = "") {
    const msg = { type: "tournament_join", tournament: this.tid, name };
    if (code) msg.code = code;
    const joined = await this.conn.request(msg);
    store.setEntrant(this.tid, { entrant: joined.entrant, token: joined.token, name: joined.name });
    store.setName(name);
    store.rememberTournament(this.tid, this.model.view?.name, "entered");
    this.model.you = joined.entrant;
    this.changed();
    return joined;
  }

  /** A host tool: `action` is the part after `tournament_` (start, next, entry, pause, remove,
   * redeal, finish), `fields` its own fields. Rejects with the server's error. */
  host(action, fields = {}) {
    const token = this.hostToken;
    if (!token) return Promise.reject(new ProtocolError("forbidden", "Only the host can do that."));
    return this.conn.request({ type: `tournament_${action}`, tournament: this.tid, token, ...fields });
  }

  onMessage(msg) {
    if (!msg || this.common(msg, this.tid)) return;
    const m = this.model;
    if (msg.tournament !== this.tid) return;
    switch (msg.type) {
      case "tournament":
        // A full view: it never leaves a gap, but an older one is stale.
        if (msg.v < m.v) return;
        this.applyView(msg);
        break;
      case "standings":
      case "tournament_over":
        if (msg.v <= m.v) return;
        if (msg.v > m.v + 1) {
          this.resync(); // missed events: the view has them all
          return;
        }
        m.v = msg.v;
        this.applyStandings(msg);
        break;
      case "round":
        this.seat(msg);
        break;
      default:
        return;
    }
    this.changed();
  }

  applyView(view) {
    const m = this.model;
    m.loaded = true;
    m.notFound = false;
    m.v = view.v;
    m.view = view;
    m.standings = view.standings || [];
    if (view.you) m.you = view.you;
    if (this.isHost || m.you) store.rememberTournament(this.tid, view.name, m.you ? "entered" : "created");
  }

  applyStandings(ev) {
    const m = this.model;
    m.standings = ev.standings || m.standings;
    if (!m.view) return;
    const view = { ...m.view, standings: m.standings };
    if (ev.type === "tournament_over") {
      Object.assign(view, { status: "finished", next_at: null });
      this.dispatchEvent(new Event("over"));
    } else {
      Object.assign(view, { status: ev.status ?? view.status, next_at: ev.next_at ?? null });
      if (ev.round_over) {
        view.rounds = view.rounds.map((r) => (r.round === ev.round ? { ...r, status: "over" } : r));
      }
    }
    m.view = view;
    this.dispatchEvent(new CustomEvent("standings", { detail: ev }));
    this.refreshSoon();
  }

  /** Fetch the outsiders' view over HTTP for the rounds' results; the socket's view wins when
   * it is newer. */
  refreshSoon() {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(async () => {
      let view;
      try {
        view = await withTimeout(fetchJSON(`/api/tournaments/${encodeURIComponent(this.tid)}`), 8000, "No answer");
      } catch {
        return;
      }
      if (!view || view.v < this.model.v) return;
      this.applyView({ ...view, you: this.model.you });
      this.changed();
    }, REFRESH_MS);
  }

  /** The entrant's seat in a race: its racer token is kept for the race page. */
  seat(msg) {
    const known = store.racer(msg.race);
    const fresh = !known?.opened;
    store.setRacer(msg.race, {
      player: msg.player, token: msg.token, name: this.entrant?.name || "", tournament: this.tid,
      opened: !fresh,
    });
    this.model.seat = { round: msg.round, race: msg.race, game: msg.game };
    this.dispatchEvent(new CustomEvent("seat", { detail: { seat: this.model.seat, fresh } }));
  }
}

/** Mark a seat's race as opened by this browser (it is not opened for him again) and say
 * where to go. */
export function openSeat(seat) {
  const racer = store.racer(seat.race);
  if (racer) store.setRacer(seat.race, { ...racer, opened: true });
  store.remember(seat.race, seat.game, "raced");
  return `/race/${encodeURIComponent(seat.race)}`;
}

/** Create a tournament; resolves with the `tournament_created` reply. Keeps the host token. */
export async function createTournament(settings) {
  const conn = new Connection();
  conn.connect();
  try {
    await withTimeout(conn.whenOpen(), 8000, "Could not reach the server");
    const created = await withTimeout(conn.request({ type: "tournament_create", ...settings }), 8000, "No answer");
    store.setTournamentHost(created.tournament, created.host_token);
    store.rememberTournament(created.tournament, settings.name, "created");
    return created;
  } finally {
    conn.close();
  }
}
