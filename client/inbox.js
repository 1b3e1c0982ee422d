// The page's own connection for what reaches this player wherever he is (docs/protocol.md,
// "Challenges"): a challenge made for him, its answer, a seat. One socket per page, opened once
// the browser is a player (a visitor who is nobody yet cannot be challenged by name) or when a
// feature asks for it (a seek, a challenge), and kept across the app's navigations: the Quick
// race's seek (seek.js) and the challenges (challenges.js) speak over it, so a page holds one
// such socket whatever it does. A race page's own race connection (session.js) is another.

import { me } from "./me.js";
import { Connection, withTimeout } from "./net.js";

/**
 * Events: "message" (detail: every server message that arrives), "open" (the socket is open,
 * again after a reconnect: what the page shows of the player's challenges is asked again),
 * "status" (detail: the connection's status).
 */
class Inbox extends EventTarget {
  constructor() {
    super();
    this.conn = null;
  }

  /** The connection, opened now if the page has none yet. */
  ensure() {
    if (this.conn) return this.conn;
    const conn = new Connection();
    this.conn = conn;
    conn.addEventListener("message", (e) => this.dispatchEvent(new CustomEvent("message", { detail: e.detail })));
    conn.addEventListener("status", (e) => {
      this.dispatchEvent(new CustomEvent("status", { detail: e.detail }));
      if (e.detail === "open") this.dispatchEvent(new Event("open"));
    });
    conn.connect();
    return conn;
  }

  get open() {
    return !!this.conn?.open;
  }

  /** One request over the page's connection (opened if needed); rejects with the server's
   * error, or when it cannot be reached. */
  async request(msg, ms = 15000) {
    const conn = this.ensure();
    await withTimeout(conn.whenOpen(), 8000, "Could not reach the server");
    return withTimeout(conn.request(msg), ms, "No answer from the server");
  }

  /** Open the connection as soon as the browser is a player (now, or when he becomes one). */
  start() {
    const check = () => {
      if (me.player && !this.conn) this.ensure();
    };
    me.addEventListener("change", check);
    me.load().then(check);
  }
}

export const inbox = new Inbox();
