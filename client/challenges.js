// Challenges (docs/protocol.md, "Challenges"): this player's open ones, made for him and by him,
// kept current over the page's connection (inbox.js), and the banner under the top bar that
// shows them on every page: a challenge for him with Accept and Decline, and what became of
// his own (accepted: his seat, with a way to the race; declined; expired). The model redraws
// the banner from itself; pages that show a challenge of their own (the home page's and a
// player page's Challenge panel, the challenge page) listen to its events.

import { gameTitle } from "./cards.js";
import { inbox } from "./inbox.js";
import { me } from "./me.js";
import { keepTypedName, takeSeat } from "./seek.js";
import { announce, h, navigate, replace, toast } from "./ui.js";

const minutes = (s) => `${Math.round(s / 60)} min`;

/** "Scotch Patience · 5 min · rated" for a challenge (its options as the players see them). */
export function challengeTerms(c) {
  return `${gameTitle(c.game)} · ${minutes(c.time_limit)} · ${c.rated ? "rated if you both have accounts" : "casual"}`;
}

/** The challenge page of `id` (its link), on this site. */
export function challengeUrl(id) {
  return `${location.origin}/challenge/${encodeURIComponent(id)}`;
}

/**
 * Events: "change" (anything it holds changed), "paired" (detail: {paired, path}: a challenge of
 * this player's was accepted, or he accepted one, and the seat is kept), "answer" (detail:
 * {kind: "declined"|"expired", challenge, by?, open?}: what became of one of his own).
 * `incoming` and `outgoing` map a challenge's id to its view; `news` holds what to tell him
 * about his own challenges: [{challenge, kind, text, race?}].
 */
class Challenges extends EventTarget {
  constructor() {
    super();
    this.incoming = new Map();
    this.outgoing = new Map();
    this.news = [];
    this.busy = new Set(); // ids whose answer is on its way (their buttons wait)
    this.el = null;
    this.started = false;
  }

  start() {
    if (this.started) return;
    this.started = true;
    inbox.addEventListener("message", (e) => this.received(e.detail));
    inbox.addEventListener("open", () => this.refresh());
    if (inbox.open) this.refresh();
    this.el = h("section.challenge-inbox", { "aria-label": "Challenges", hidden: true });
    document.getElementById("service")?.after(this.el);
    this.render();
  }

  /** Ask the server for this player's open challenges (when the page's connection opens). */
  async refresh() {
    try {
      const list = await inbox.request({ type: "challenges" });
      this.incoming = new Map(list.incoming.map((c) => [c.challenge, c]));
      this.outgoing = new Map(list.outgoing.map((c) => [c.challenge, c]));
      this.changed();
    } catch {
      // the next open asks again
    }
  }

  /** Challenge `to` (a name), or anyone with the link (`to` empty). Resolves with the view. */
  async create({ to = "", game, timeLimit, rated = true }) {
    const msg = { type: "challenge", game, time_limit: Number(timeLimit), rated };
    if (to) msg.to = to;
    await keepTypedName(); // a visitor who typed a name once challenges under it
    const made = await inbox.request(msg);
    me.load(); // he may be a player since just now (a guest)
    this.outgoing.set(made.challenge, made);
    this.changed();
    return made;
  }

  /** Accept `id`: resolves with the race page's path once the seat is kept (and goes there). */
  async accept(id, { go = true } = {}) {
    this.busy.add(id);
    this.changed();
    try {
      await keepTypedName();
      const paired = await inbox.request({ type: "challenge_accept", challenge: id });
      me.load();
      this.incoming.delete(id);
      const path = takeSeat(paired);
      this.dispatchEvent(new CustomEvent("paired", { detail: { paired, path } }));
      if (go) navigate(path);
      return path;
    } finally {
      this.busy.delete(id);
      this.changed();
    }
  }

  async decline(id) {
    await inbox.request({ type: "challenge_decline", challenge: id });
    this.incoming.delete(id);
    this.changed();
  }

  async cancel(id) {
    this.outgoing.delete(id);
    this.changed();
    await inbox.request({ type: "challenge_cancel", challenge: id });
  }

  received(msg) {
    switch (msg?.type) {
      case "challenge":
        if (msg.rid !== undefined) return; // an answer to challenge_get
        this.incoming.set(msg.challenge, msg);
        toast(`${msg.by.name} challenges you`, "info", 5000, { silent: true });
        announce(`${msg.by.name} challenges you to a race: ${challengeTerms(msg)}. Accept or decline it under the top bar.`);
        break;
      case "challenge_ended":
        this.incoming.delete(msg.challenge);
        break;
      case "challenge_declined": {
        const mine = this.outgoing.get(msg.challenge);
        if (!msg.open) this.outgoing.delete(msg.challenge);
        const who = msg.by || "Someone";
        const text = msg.open ? `${who} declined your challenge; its link stays open for others.`
          : `${who} declined your challenge.`;
        this.tell(msg.challenge, "declined", text);
        this.dispatchEvent(new CustomEvent("answer", { detail: { ...msg, kind: "declined", mine } }));
        break;
      }
      case "challenge_expired": {
        const mine = this.outgoing.get(msg.challenge);
        this.outgoing.delete(msg.challenge);
        const text = mine?.to ? `${mine.to.name} did not answer your challenge: it expired.`
          : "Nobody took your challenge: it expired.";
        this.tell(msg.challenge, "expired", text);
        this.dispatchEvent(new CustomEvent("answer", { detail: { ...msg, kind: "expired", mine } }));
        break;
      }
      case "paired":
        if (!msg.challenge || msg.rid !== undefined || !this.outgoing.has(msg.challenge)) return;
        this.accepted(msg);
        break;
      default:
        return;
    }
    this.changed();
  }

  /** One of this player's challenges was accepted: his seat is kept; the page that waits for
   * it takes him to the race, any other page offers the way there. */
  accepted(paired) {
    this.outgoing.delete(paired.challenge);
    const path = takeSeat(paired);
    const other = paired.opponents?.[0]?.name || "Your opponent";
    const event = new CustomEvent("paired", { detail: { paired, path }, cancelable: true });
    this.dispatchEvent(event);
    if (event.defaultPrevented) return; // a page took him there
    this.tell(paired.challenge, "accepted", `${other} accepted your challenge.`, path);
  }

  tell(id, kind, text, path = null) {
    this.news = [...this.news.filter((n) => n.challenge !== id), { challenge: id, kind, text, path }];
    announce(text);
  }

  dismiss(id) {
    this.news = this.news.filter((n) => n.challenge !== id);
    this.changed();
  }

  changed() {
    this.render();
    this.dispatchEvent(new Event("change"));
  }

  /** The banner under the top bar: each challenge for this player, and news of his own. */
  render() {
    const el = this.el;
    if (!el) return;
    const rows = [];
    for (const c of this.incoming.values()) {
      const busy = this.busy.has(c.challenge);
      rows.push(h("div.banner.banner-warn.challenge-offer", { dataset: { challenge: c.challenge }, role: "group",
        "aria-label": `Challenge from ${c.by.name}` },
      h("span.challenge-text", {}, h("strong", {}, `${c.by.name} challenges you`), h("span.challenge-terms", {}, challengeTerms(c))),
      h("span.challenge-buttons", {},
        h("button.small.primary.challenge-accept", { type: "button", disabled: busy,
          onclick: () => this.accept(c.challenge).catch((err) => this.failed(c, err)) }, "Accept"),
        h("button.small.challenge-decline", { type: "button", disabled: busy,
          onclick: () => this.decline(c.challenge).catch((err) => this.failed(c, err)) }, "Decline"))));
    }
    for (const n of this.news) {
      rows.push(h(`div.banner.${n.kind === "accepted" ? "banner-good" : "banner-bad"}.challenge-news`,
        { dataset: { challenge: n.challenge, kind: n.kind }, role: "status" },
        h("span.challenge-text", {}, n.text),
        h("span.challenge-buttons", {},
          n.path ? h("a.button.small.primary.challenge-go", { href: n.path, "data-link": true,
            onclick: () => this.dismiss(n.challenge) }, "Go to the race") : null,
          h("button.small.challenge-dismiss", { type: "button", "aria-label": "Dismiss",
            onclick: () => this.dismiss(n.challenge) }, "OK"))));
    }
    el.hidden = rows.length === 0;
    replace(el, rows);
  }

  failed(c, err) {
    this.incoming.delete(c.challenge);
    this.changed();
    toast(err.message || "That did not work", "bad", 5000);
  }
}

export const challenges = new Challenges();
