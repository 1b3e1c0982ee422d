// The socket (see docs/protocol.md). `Connection` keeps one WebSocket open, reconnecting with
// backoff, matches replies to requests by `rid`, and notices a dead connection by itself: a
// network that vanished without a close (a phone going out of range, a laptop lid, a browser set
// offline) leaves the socket "open" for minutes, so it pings the server (`ping`/`pong`) whenever
// it has heard nothing for a while or a request goes unanswered, and gives the socket up when no
// answer comes. The race model lives in race-model.js (a RaceSession, session.js).

import { store } from "./storage.js";

const BACKOFF_MS = [250, 500, 1000, 2000, 3000, 5000];
const OFFLINE_RETRY_MS = 30000;
// Liveness: ping after this long without a frame, or this long after an unanswered request, and
// give the socket up when the pong has not come this long after the ping. A dead connection is
// thus noticed within about 1.5 + 3 seconds (and a tick) of a move, or 8.5 s when idle.
const HEARTBEAT_TICK_MS = 500;
export const PING_IDLE_MS = 5000;
export const PING_BUSY_MS = 1500;
export const PONG_TIMEOUT_MS = 3000;

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
 * "reconnecting", "offline", "closed"), "message" (detail: the parsed server message) and
 * "clock" (detail: {offset, rtt}: the server's clock minus ours, from a pong).
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
    this.lastHeard = 0;
    this.ping = null; // {rid, at} of the heartbeat ping waiting for its pong
    this.pingCount = 0;
    this.deaths = 0; // sockets given up as dead (for tests and diagnostics)
    this.heartbeat = 0;
    this.onOnline = () => {
      // The network is back: try now rather than at the end of the backoff.
      if (!this.closed && !this.ws) {
        this.attempt = 0;
        clearTimeout(this.retryTimer);
        this.connect();
      }
    };
    this.onOffline = () => {
      if (!this.closed && this.ws) this.giveUp(this.ws);
      else if (!this.closed) this.setStatus("offline");
    };
    window.addEventListener("online", this.onOnline);
    window.addEventListener("offline", this.onOffline);
  }

  connect() {
    this.closed = false;
    this.setStatus(this.everOpened ? this.downStatus() : "connecting");
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
      this.lastHeard = performance.now();
      this.ping = null;
      this.startHeartbeat();
      this.setStatus("open");
    };
    ws.onmessage = (e) => {
      if (typeof e.data !== "string") return; // we only speak JSON text frames
      this.lastHeard = performance.now();
      this.ping = null; // any frame proves the connection lives
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
      this.lost();
    };
    ws.onerror = () => {}; // onclose follows and handles it
  }

  downStatus() {
    return navigator.onLine === false ? "offline" : "reconnecting";
  }

  /** The socket is gone (closed, or given up as dead): fail what waits, try again. */
  lost() {
    this.ws = null;
    this.stopHeartbeat();
    this.failPending(new ProtocolError("disconnected", "Connection lost"));
    if (this.closed) this.setStatus("closed");
    else this.scheduleRetry();
  }

  /** Stop listening to a socket that no longer answers; a dead socket's close may take
   * minutes, so nothing waits for it. */
  giveUp(ws) {
    if (this.ws !== ws) return;
    this.deaths++;
    ws.onopen = ws.onmessage = ws.onclose = null;
    try {
      ws.close(4000, "no answer");
    } catch {
      // already closing
    }
    this.lost();
  }

  startHeartbeat() {
    this.stopHeartbeat();
    this.heartbeat = setInterval(() => this.checkAlive(), HEARTBEAT_TICK_MS);
  }

  stopHeartbeat() {
    clearInterval(this.heartbeat);
    this.heartbeat = 0;
    this.ping = null;
  }

  checkAlive() {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    const now = performance.now();
    if (this.ping) {
      if (now - this.ping.at > PONG_TIMEOUT_MS) this.giveUp(ws);
      return;
    }
    let oldest = Infinity;
    for (const p of this.pending.values()) oldest = Math.min(oldest, p.at);
    if (now - this.lastHeard > PING_IDLE_MS || now - oldest > PING_BUSY_MS) {
      const rid = `hb${++this.pingCount}`;
      this.ping = { rid, at: now, wall: Date.now() };
      this.sendRaw({ type: "ping", rid });
    }
  }

  scheduleRetry() {
    this.setStatus(this.downStatus());
    clearTimeout(this.retryTimer);
    if (navigator.onLine === false) {
      // Attempts cannot succeed (and each one logs an error): wait for the "online" event, with
      // a slow try in case the browser's idea of being offline is wrong.
      this.retryTimer = setTimeout(() => this.connect(), OFFLINE_RETRY_MS);
      return;
    }
    const base = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    this.attempt++;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.connect(), base + Math.random() * base * 0.3);
  }

  /** Close for good (page left). */
  close() {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.stopHeartbeat();
    window.removeEventListener("online", this.onOnline);
    window.removeEventListener("offline", this.onOffline);
    this.failPending(new ProtocolError("closed", "Connection closed"));
    if (this.ws) {
      const ws = this.ws;
      ws.onopen = ws.onmessage = ws.onclose = null;
      ws.close();
    }
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
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const { reject } of waiting) reject(err);
  }

  receive(msg) {
    if (msg?.type === "pong" && typeof msg.rid === "string" && msg.rid.startsWith("hb")) {
      if (this.lastPingWall && typeof msg.now === "number") {
        const rtt = Date.now() - this.lastPingWall;
        this.dispatchEvent(new CustomEvent("clock", {
          detail: { offset: msg.now - (this.lastPingWall + rtt / 2), rtt },
        }));
      }
      return;
    }
    if (msg && msg.rid !== undefined && this.pending.has(msg.rid)) {
      const { resolve, reject } = this.pending.get(msg.rid);
      this.pending.delete(msg.rid);
      if (msg.type === "error") reject(new ProtocolError(msg.code, msg.message));
      else resolve(msg);
    }
    this.dispatchEvent(new CustomEvent("message", { detail: msg }));
  }

  sendRaw(msg) {
    if (msg.type === "ping") this.lastPingWall = Date.now();
    this.ws.send(JSON.stringify(msg));
  }

  /** Send a message; resolves with its direct reply, rejects with a ProtocolError. */
  request(msg) {
    if (!this.open) return Promise.reject(new ProtocolError("offline", "Not connected — reconnecting…"));
    const rid = this.nextRid++;
    return new Promise((resolve, reject) => {
      this.pending.set(rid, { resolve, reject, at: performance.now() });
      this.sendRaw({ ...msg, rid });
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

export function withTimeout(promise, ms, message) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new ProtocolError("timeout", message)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
