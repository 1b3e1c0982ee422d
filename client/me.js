// Who this browser is (docs/protocol.md, "Who you are"): the player the server knows by its
// `sr_player` cookie, which this code never sees (HttpOnly). `me` is loaded from GET /api/me and
// kept current by the `me` replies of `set_name` and `set_password`; signing in on this device
// trades a single-use ticket for a new cookie, signing out forgets the cookie, and both reload the
// page so that every connection opens again as the new player.

import { Connection, ProtocolError, withTimeout } from "./net.js";
import { store } from "./storage.js";
import { fetchJSON } from "./ui.js";

/**
 * Events: "change" (the player changed: loaded, renamed, a password set, new ratings).
 * `player` is null until the server has created the player (his first name, seek, bot race or
 * daily deal); `anonymous` is true for a browser without the cookie (it is never a player).
 */
class Me extends EventTarget {
  constructor() {
    super();
    this.player = null;
    this.anonymous = false;
    this.loaded = false;
    this.loading = null;
  }

  /** The player's name, or "" while he has none. */
  get name() {
    return this.player?.name || "";
  }

  /** The player's rating in `game` ({rating, deviation, provisional, races}), or null. */
  rating(game) {
    return this.player?.ratings?.[game] ?? null;
  }

  /** Ask the server again (GET /api/me); resolves with this object. Calls made while a load is
   * on its way share it. */
  load() {
    if (!this.loading) {
      this.loading = fetchJSON("/api/me")
        .then((reply) => this.apply(reply))
        .catch(() => {}) // an older server, or none: no player area
        .finally(() => {
          this.loading = null;
        });
    }
    return this.loading.then(() => this);
  }

  apply(reply) {
    if (!reply || typeof reply !== "object") return;
    this.player = reply.player ?? null;
    this.anonymous = !!reply.anonymous;
    this.loaded = true;
    if (this.player?.name) store.setName(this.player.name);
    this.dispatchEvent(new Event("change"));
  }

  /** One request on a connection of its own (opened with this browser's cookie). */
  async request(msg) {
    const conn = new Connection();
    conn.connect();
    try {
      await withTimeout(conn.whenOpen(), 8000, "Could not reach the server");
      return await withTimeout(conn.request(msg), 8000, "No answer from the server");
    } finally {
      conn.close();
    }
  }

  /** Rename the player (creating him if needed); rejects with `name_taken`. */
  async setName(name) {
    const reply = await this.request({ type: "set_name", name });
    this.apply(reply);
    return reply;
  }

  /** Set the password, or change it (`old`: the current one). Rejects with `forbidden` when
   * `old` is wrong. */
  async setPassword(password, old = "") {
    const msg = { type: "set_password", password };
    if (old) msg.old = old;
    const reply = await this.request(msg);
    this.apply(reply);
    return reply;
  }

  /** Become, in this browser, the player `name` protected by `password`, then reload. */
  async signIn(name, password) {
    const { ticket } = await this.request({ type: "sign_in", name, password });
    const res = await fetch("/api/session", { headers: { "X-Solrace-Ticket": ticket } });
    if (res.status !== 204) {
      throw new ProtocolError("forbidden", "The server did not accept the sign-in: try again.");
    }
    store.setName(name);
    location.reload();
  }

  /** Forget this browser's key (the next page gets a new, anonymous one), then reload. */
  async signOut() {
    const res = await fetch("/api/signout", { headers: { "X-Solrace-Signout": "1" } });
    if (!res.ok) throw new ProtocolError("unavailable", "Signing out did not work: try again.");
    store.setName("");
    location.reload();
  }
}

export const me = new Me();
