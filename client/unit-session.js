// What a tournament's and an arena's sessions share (tournament-session.js, arena-session.js):
// a connection of their own whose every (re)connect follows the unit again (`resync`, each
// kind's own) and sets the server's clock, the model's common part, and the messages every
// unit's page handles alike (the service's status; this page replaced by another as the
// entrant). Pages render from `session.model`.

import { Connection } from "./net.js";

/** Events: "change" (the model changed), "status" (connection status); each kind adds its own. */
export class UnitSession extends EventTarget {
  /** `fields`: the model's fields of this kind (its id among them). */
  constructor(fields) {
    super();
    this.conn = new Connection();
    this.model = {
      loaded: false, notFound: false, connection: "connecting", service: "ok", v: -1, view: null,
      standings: [], you: null, replaced: false, seat: null, clockOffset: 0, ...fields,
    };
    this.conn.addEventListener("message", (e) => this.onMessage(e.detail));
    this.conn.addEventListener("clock", (e) => {
      this.model.clockOffset = e.detail.offset;
    });
    this.conn.addEventListener("status", (e) => {
      this.statusChanging(e.detail);
      this.model.connection = e.detail;
      if (e.detail === "open") {
        this.resync();
        this.syncClock();
      }
      this.dispatchEvent(new CustomEvent("status", { detail: e.detail }));
      this.changed();
    });
  }

  /** Told before the model takes the connection's new `status` (the old one is still there). */
  statusChanging(_status) {}

  /** Follow the unit (again): each kind's own. */
  async resync() {}

  /** The unit's messages: each kind's own, after `common`. */
  onMessage(_msg) {}

  start() {
    this.conn.connect();
    return this;
  }

  /** Milliseconds on the server's clock now. */
  now() {
    return Date.now() + this.model.clockOffset;
  }

  changed() {
    this.dispatchEvent(new Event("change"));
  }

  async syncClock() {
    const sent = Date.now();
    try {
      const pong = await this.conn.request({ type: "ping" });
      const rtt = Date.now() - sent;
      if (typeof pong.now === "number") this.model.clockOffset = pong.now - (sent + rtt / 2);
      this.changed();
    } catch {
      // the heartbeat's pongs set it later
    }
  }

  /** The service's status, and `replaced` for unit `id` (another tab or window follows it as
   * the entrant now): true if `msg` was one of them (handled). */
  common(msg, id) {
    if (msg.type === "service") {
      this.model.service = msg.status;
      this.changed();
      return true;
    }
    if (msg.type === "replaced" && msg.race === id) {
      this.model.replaced = true;
      this.replacedHere();
      this.changed();
      return true;
    }
    return false;
  }

  /** Told when this page's connection no longer speaks for the entrant (`replaced`). */
  replacedHere() {}
}
