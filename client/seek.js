// One click to a race (docs/protocol.md, "One click to a race"): a quick race's seek, a race
// against a house bot and the daily deal. Each ends in `paired` {race, player, token, …}: the
// token is kept with this browser's racer tokens (storage.js, as a tournament's seat is) and the
// race page takes the seat with it; it never goes into a URL.

import { inbox } from "./inbox.js";
import { me } from "./me.js";
import { Connection, withTimeout } from "./net.js";
import { store } from "./storage.js";

/** Keep the seat of a `paired` reply and say where to go: the race page joins by token. */
export function takeSeat(paired) {
  store.setRacer(paired.race, {
    player: paired.player, token: paired.token, name: me.name, kind: paired.kind, opened: true,
  });
  // Today's deal is "daily" among this browser's races: the API shows nothing of it until the
  // day is over.
  store.remember(paired.race, paired.game, paired.kind === "daily" ? "daily" : "raced");
  return `/race/${encodeURIComponent(paired.race)}`;
}

/** A visitor who is not a player yet but typed a name once (to join a friend's race) becomes
 * the player of that name when he first needs one, rather than a guest; a name someone else has
 * leaves him a guest (he may rename himself later). */
export async function keepTypedName() {
  if (!me.loaded) await me.load();
  const typed = store.name();
  if (me.player || me.anonymous || !me.loaded || !typed) return;
  try {
    await me.setName(typed);
  } catch {
    // taken, or not a valid name: the server names him Guest-…
  }
}

/** One request on a connection of its own that answers `paired`; resolves with the race page's
 * path once the seat is kept. */
async function pairedBy(msg) {
  await keepTypedName();
  const conn = new Connection();
  conn.connect();
  try {
    await withTimeout(conn.whenOpen(), 8000, "Could not reach the server");
    const paired = await withTimeout(conn.request(msg), 15000, "No answer from the server");
    me.load(); // the player may have been created just now (a guest name)
    return takeSeat(paired);
  } finally {
    conn.close();
  }
}

/** A race against a house bot of `level` (1–5), starting at once. */
export function playBot(game, level, timeLimit = 300) {
  return pairedBy({ type: "play_bot", game, level: Number(level), time_limit: Number(timeLimit) });
}

/** Today's deal of `game` (the same race again if it was started today). */
export function playDaily(game) {
  return pairedBy({ type: "daily", game });
}

/** Why a rated request was made casual (the server's `casual`), in the page's words. */
export const CASUAL_REASONS = {
  guest: "Casual: set a password to play rated",
  opponent_guest: "Casual: your opponent is a guest",
};

const SEEK_KEY = "solrace:seek";

/** The seek this tab was making when it was reloaded ({game, time_limit}), if any. A seek the
 * server kept for the page that closed a moment ago is taken over by the next one (`resume`),
 * the time waited kept; one paired meanwhile comes back as its seat. */
export function seekBeforeReload() {
  try {
    return JSON.parse(sessionStorage.getItem(SEEK_KEY) || "null");
  } catch {
    return null;
  }
}

function keepSeek(seek) {
  try {
    if (seek) sessionStorage.setItem(SEEK_KEY, JSON.stringify(seek));
    else sessionStorage.removeItem(SEEK_KEY);
  } catch {
    // storage off: a reload starts a new seek
  }
}

/**
 * A quick race's seek, over the page's connection (inbox.js) while it waits. Events: "change"
 * (state, elapsed time, the bot's arrival), "paired" (detail: the race page's path, the seat
 * kept), "failed" (detail: the error; also when the server ends the seek: another tab of this
 * player seeks now, or a no-show). `state` is "idle", "seeking" or "paired"; `rated` and
 * `casual` (a reason, or null) as the server answered. A connection lost while seeking seeks
 * again once it is back, taking over the seek the server kept (`resume`); so does a reloaded
 * page (`start(game, time, { resume: true })`).
 */
export class Seeker extends EventTarget {
  constructor() {
    super();
    this.conn = null;
    this.state = "idle";
    this.seek = null; // {game, time_limit}
    this.since = 0; // when the seek began, on this browser's clock (ms)
    this.botAt = null; // when a bot takes the seat, on this browser's clock (ms), or null
    this.rated = true;
    this.casual = null;
    this.clockOffset = 0;
    this.resume = false;
    this.onMessage = (e) => this.received(e.detail);
    this.onStatus = (e) => {
      if (e.detail === "open" && this.state === "seeking") {
        this.resume = true; // the server kept the seek a few seconds: take it back
        this.send();
      }
      this.changed();
    };
  }

  /** Seek a race of `game` with `timeLimit` seconds; replaces a seek already running.
   * `resume`: take over the seek this player's page left a moment ago (a reload). */
  async start(game, timeLimit, { resume = false } = {}) {
    const seek = { game, time_limit: Number(timeLimit) };
    this.seek = seek;
    this.since = Date.now();
    this.botAt = null;
    this.rated = true;
    this.casual = null;
    this.resume = resume;
    this.state = "seeking";
    keepSeek(seek);
    this.changed();
    await keepTypedName();
    if (this.seek !== seek || this.state !== "seeking") return; // cancelled meanwhile
    if (!this.conn) {
      this.conn = inbox.ensure();
      inbox.addEventListener("message", this.onMessage);
      inbox.addEventListener("status", this.onStatus);
    }
    if (this.conn.open) this.send();
  }

  async send() {
    const seek = this.seek;
    const sent = Date.now();
    const msg = { type: "seek", ...seek };
    if (this.resume) msg.resume = true;
    try {
      const reply = await this.conn.request(msg);
      if (this.seek !== seek || this.state !== "seeking") return;
      if (reply.type === "paired") { // paired while the page reloaded: this is the seat
        this.received(reply);
        return;
      }
      const pong = await this.conn.request({ type: "ping" }).catch(() => null);
      if (pong && typeof pong.now === "number") this.clockOffset = pong.now - (sent + (Date.now() - sent) / 2);
      if (typeof reply.since === "number") this.since = Math.min(Date.now(), reply.since - this.clockOffset);
      this.botAt = typeof reply.bot_at === "number" ? reply.bot_at - this.clockOffset : null;
      this.rated = reply.rated !== false;
      this.casual = reply.casual || null;
      this.changed();
    } catch (err) {
      if (err.code === "disconnected" || err.code === "closed") return; // sent again once back
      if (this.seek !== seek) return;
      this.state = "idle";
      keepSeek(null);
      this.changed();
      this.dispatchEvent(new CustomEvent("failed", { detail: err }));
    }
  }

  received(msg) {
    if (msg?.type === "seek_ended" && this.state === "seeking") {
      this.state = "idle";
      this.seek = null;
      keepSeek(null);
      this.changed();
      this.dispatchEvent(new CustomEvent("failed", { detail: { code: msg.reason, message: msg.message } }));
      return;
    }
    // A quick race's seat (a challenge's or a rematch's comes with its own page).
    if (msg?.type !== "paired" || this.state !== "seeking" || msg.kind !== "quick" || msg.rematch) return;
    this.state = "paired";
    keepSeek(null);
    me.load();
    const path = takeSeat(msg);
    this.changed();
    this.dispatchEvent(new CustomEvent("paired", { detail: { path, paired: msg } }));
  }

  /** Leave the queue. */
  cancel() {
    if (this.state !== "seeking") return;
    this.state = "idle";
    this.seek = null;
    keepSeek(null);
    if (this.conn?.open) this.conn.request({ type: "cancel_seek" }).catch(() => {});
    this.changed();
  }

  /** Seconds waited so far, and seconds until a bot takes the seat (null: no bot). */
  waited() {
    const now = Date.now();
    return {
      seconds: Math.max(0, Math.floor((now - this.since) / 1000)),
      botIn: this.botAt === null ? null : Math.max(0, Math.ceil((this.botAt - now) / 1000)),
    };
  }

  get connection() {
    return this.conn?.status ?? "idle";
  }

  /** Leave the queue and stop listening (the page's connection stays, for the page). */
  close() {
    this.cancel();
    inbox.removeEventListener("message", this.onMessage);
    inbox.removeEventListener("status", this.onStatus);
    this.conn = null;
  }

  changed() {
    this.dispatchEvent(new Event("change"));
  }
}
