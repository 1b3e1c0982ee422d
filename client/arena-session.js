// One arena as this browser follows it (docs/protocol.md, "Arenas"), on a WebSocket of its own
// that outlives the page that opened it.
//
// Why it outlives pages: the server pauses an entrant as soon as no connection of his follows the
// arena (he is not paired again until he joins again). The arena page, the bar on the pages of
// his races and the call on any other page are one `ArenaSession` per arena, shared through
// `followArena(id)` / `release()`: going from the arena page to a race and back keeps the same
// connection, bound to him, so the server never sees him gone. A session nobody holds is kept
// while its entrant is in (he asked to be paired and is not paused), else closed after a short
// linger (the next page may take it up). Closing the tab closes it: then he is paused, as the
// server means.
//
// The model: the arena's view (`arena`), its table as it changes (`arena_standings`,
// `arena_over`: each carries the whole table's first rows, so an older `v` is ignored and none is
// missed), the entrant's own row (`arena_you`, or his row in the table, whichever is newer), and
// his seat in the race he is paired in (`paired`, kind "arena"): its racer token is kept like any
// racer's (storage.js) so that the race page takes the seat.

import { me } from "./me.js";
import { withTimeout } from "./net.js";
import { store } from "./storage.js";
import { fetchJSON } from "./ui.js";
import { UnitSession } from "./unit-session.js";

/** How long a session nobody holds stays open for the next page (ms). */
const LINGER_MS = 5000;

/**
 * Events: "change" (the model changed), "seat" (detail: {seat, fresh}: the entrant's seat in a
 * race; `fresh` when this browser has not opened that race yet), "over" (the arena ended),
 * "status" (connection status).
 */
export class ArenaSession extends UnitSession {
  constructor(aid) {
    super({
      aid, entrants: 0, youV: -1, seatV: -1,
      bound: false, // this connection speaks for the entrant: the server counts it (he is not paused)
    });
    this.aid = aid;
    this.holders = 0;
    this.closed = false;
    this.lingerTimer = 0;
    // He was in (and not paused) when the connection was lost: once it is back the session joins
    // again at once (the server paused him when it closed). A page opened anew only follows, and
    // joins for him if the table shows him in: an entrant the server paused meanwhile sees Resume.
    this.wasIn = false;
  }

  statusChanging(status) {
    if (this.model.connection === "open" && status !== "open") this.wasIn = this.entered;
    if (status !== "open") this.model.bound = false;
  }

  replacedHere() {
    this.model.bound = false;
  }

  /** A page (or the bar) uses this session from now on. */
  hold() {
    this.holders++;
    clearTimeout(this.lingerTimer);
    this.lingerTimer = 0;
    return this;
  }

  /** The page that held it is gone: kept for an entrant who is in, else closed a little later. */
  release() {
    this.holders = Math.max(0, this.holders - 1);
    this.settle();
  }

  settle() {
    if (this.holders > 0 || this.closed || this.lingerTimer) return;
    if (this.entered) return; // held by the app: his pairings reach him on any page
    this.lingerTimer = setTimeout(() => {
      this.lingerTimer = 0;
      if (this.holders === 0 && !this.entered) this.close();
    }, LINGER_MS);
  }

  close() {
    this.closed = true;
    clearTimeout(this.lingerTimer);
    this.conn.close();
    if (followed.get(this.aid) === this) followed.delete(this.aid);
  }

  /** The arena's status now: "upcoming", "running" (pairing), "closing" (its time is up, the
   * last races finish) or "finished". */
  phase() {
    const view = this.model.view;
    if (!view) return "";
    if (view.status === "finished") return "finished";
    const now = this.now();
    if (now < view.starts_at) return "upcoming";
    return now < view.ends_at ? "running" : "closing";
  }

  /** The player this browser is, as far as the arena knows him. */
  get myId() {
    return me.player?.id ?? this.model.you?.player ?? null;
  }

  /** The viewer's row, `race` and `racing` from his seat: his row in the table when he is in its
   * first rows and it is the newer, else his own `you`; null when he is not in. */
  get mine() {
    const id = this.myId;
    if (!id) return null;
    const m = this.model;
    const you = m.you && m.you.player === id ? m.you : null;
    const row = m.standings.find((r) => r.player === id);
    const base = row && (!you || m.v >= m.youV) ? { ...row, race: you?.race ?? null } : you;
    if (!base) return null;
    return m.seat ? { ...base, racing: true, race: m.seat.race } : base;
  }

  /** He is in and not paused: the session stays open for him, whatever page he is on. */
  get entered() {
    const mine = this.mine;
    return !!mine && !mine.paused && !this.model.replaced && this.model.view?.status !== "finished";
  }

  changed() {
    if (this.holders === 0) this.settle();
    super.changed();
  }

  /** Follow the arena again (after every (re)connect): as the entrant if he was in when the
   * connection was lost, else as a watcher who, if the table shows him in, follows as himself. */
  async resync() {
    if (!this.conn.open) return;
    const rejoin = this.wasIn;
    this.wasIn = false;
    try {
      if (rejoin) {
        try {
          await this.entrantJoin();
          return;
        } catch (err) {
          if (err.code !== "tournament_over") throw err;
        }
      }
      await this.conn.request({ type: "arena_watch", arena: this.aid });
      await this.adopt();
    } catch (err) {
      if (err.code === "not_found") {
        this.model.notFound = true;
        this.changed();
      }
    }
  }

  /** A page opened by an entrant who is in and not paused binds its connection to him (so the
   * server counts it); one the server paused meanwhile waits for his Resume. */
  async adopt() {
    if (this.model.replaced || this.model.view?.status === "finished") return;
    if (!me.loaded) await me.load();
    const id = me.player?.id;
    if (!id) return;
    let row = this.model.standings.find((r) => r.player === id);
    if (!row && this.model.entrants > this.model.standings.length) {
      // Not in the first rows the socket carries: the whole table is one request away.
      try {
        const view = await withTimeout(fetchJSON(`/api/arenas/${encodeURIComponent(this.aid)}`), 8000, "No answer");
        row = (view?.standings || []).find((r) => r.player === id);
        if (row) {
          this.you({ ...row, race: null }, view.v);
          this.changed();
        }
      } catch {
        return;
      }
    }
    if (!row || row.paused) return;
    await this.entrantJoin();
  }

  /** `arena_join`: the connection speaks for the entrant from now on (and he is in, unpaused). */
  async entrantJoin() {
    await this.conn.request({ type: "arena_join", arena: this.aid });
    this.model.bound = true;
  }

  /** Enter the arena, or come back after a pause. Rejects with the server's error. */
  async join() {
    await this.entrantJoin();
    if (!me.player) me.load(); // the server made him a guest player just now
    this.mark({ paused: false }); // the view that says so comes within a second
  }

  /** Not paired again until `join` (the race under way goes on). */
  async pause() {
    await this.conn.request({ type: "arena_pause", arena: this.aid });
    this.mark({ paused: true });
  }

  /** Say at once in his own row what his command changed (the next view says it too). */
  mark(fields) {
    const m = this.model;
    const id = this.myId;
    if (m.you && m.you.player === id) m.you = { ...m.you, ...fields };
    m.standings = m.standings.map((r) => (r.player === id ? { ...r, ...fields } : r));
    this.changed();
  }

  /** Follow as the entrant here again after another tab or window took him (`replaced`). */
  takeOver() {
    this.model.replaced = false;
    this.wasIn = true;
    this.changed();
    return this.resync();
  }

  onMessage(msg) {
    if (!msg || this.common(msg, this.aid)) return;
    const m = this.model;
    if (msg.arena !== this.aid) return;
    switch (msg.type) {
      case "arena":
        if (msg.v < m.v) return; // an older view: each carries the whole table as it stood
        m.loaded = true;
        m.notFound = false;
        m.v = msg.v;
        m.view = msg;
        m.standings = msg.standings || [];
        m.entrants = msg.entrants ?? m.standings.length;
        if (msg.you !== undefined) this.you(msg.you, msg.v);
        break;
      case "arena_standings":
      case "arena_over":
        if (msg.v < m.v || !m.view) return;
        m.v = msg.v;
        m.standings = msg.standings || [];
        m.entrants = msg.entrants ?? m.standings.length;
        if (msg.type === "arena_over") {
          m.view = { ...m.view, status: "finished" };
          m.seat = null;
          this.dispatchEvent(new Event("over"));
        }
        break;
      case "arena_you":
        this.you(msg.you, msg.v);
        break;
      case "paired":
        this.seat(msg); // it says what changed itself
        return;
      default:
        return;
    }
    this.changed();
  }

  /** His own row (sent to him only). A row newer than his seat that names no race, or another,
   * says the seat's race is over. */
  you(row, v) {
    const m = this.model;
    if (v < m.youV) return;
    m.you = row;
    m.youV = v;
    if (m.seat && v > m.seatV && row?.race !== m.seat.race) m.seat = null;
  }

  /** The entrant's seat in a race: its racer token is kept for the race page. */
  seat(msg) {
    const known = store.racer(msg.race);
    const fresh = !known?.opened;
    store.setRacer(msg.race, {
      player: msg.player, token: msg.token, name: me.name, kind: "arena", arena: this.aid, opened: !fresh,
    });
    const seat = { race: msg.race, game: msg.game, rated: msg.rated, opponents: msg.opponents || [] };
    this.model.seat = seat;
    this.model.seatV = this.model.v;
    const unheld = this.holders === 0; // before the pages hear of it (one may leave for the race)
    this.changed();
    this.dispatchEvent(new CustomEvent("seat", { detail: { seat, fresh } }));
    if (fresh && unheld) {
      // No page of this arena is open: the app calls him wherever he is.
      arenaCalls.dispatchEvent(new CustomEvent("call", { detail: { session: this, seat } }));
    }
  }
}

/** Mark a seat's race as opened by this browser (it is not opened for him again) and say where
 * to go. */
export function openArenaSeat(seat) {
  const racer = store.racer(seat.race);
  if (racer) store.setRacer(seat.race, { ...racer, opened: true });
  store.remember(seat.race, seat.game, "raced");
  return `/race/${encodeURIComponent(seat.race)}`;
}

/** "call" (detail: {session, seat}): an entrant's race is ready while no page of its arena is
 * open (app.js says so on whatever page he is). */
export const arenaCalls = new EventTarget();

const followed = new Map(); // arena id -> its ArenaSession

/** The arena's session, held by the caller until its `release()`. */
export function followArena(aid) {
  let session = followed.get(aid);
  if (!session || session.closed) {
    session = new ArenaSession(aid).start();
    followed.set(aid, session);
  }
  return session.hold();
}

export const arenaPath = (aid) => `/arena/${encodeURIComponent(aid)}`;
