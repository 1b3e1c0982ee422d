// Challenges on the pages (docs/protocol.md, "Challenges"): the Challenge panel — by name (the
// home page, a player's page) or "Get a link" — with its waiting state (the time left, the link
// to send, Cancel) and what became of it (accepted: to the race at once; declined; expired);
// and the challenge's own page, /challenge/{id}, which anyone with the link may open: who
// challenges, to what, rated or not, and Accept / Decline (the challenger sees his waiting
// challenge there). The model and the banner of every page: challenges.js.

import { GAME_TITLES, gameTitle } from "../cards.js";
import { challengeUrl, challenges } from "../challenges.js";
import { inbox } from "../inbox.js";
import { copyText, h, navigate, replace, setText, toast } from "../ui.js";
import { isAccount, segmented } from "./play-now.js";
import { QUICK_TIMES } from "./player-parts.js";

const GAMES = Object.keys(GAME_TITLES);
const minutes = (s) => `${Math.round(s / 60)} min`;

/** "1:54" until `at` (this browser's clock, ms). */
function left(at) {
  const s = Math.max(0, Math.ceil((at - Date.now()) / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** What a race from a challenge will be, in words, for this player. */
function ratedLine(c, viewer = "challenger") {
  if (!c.rated) {
    return viewer === "challenger" && !isAccount()
      ? "Casual: guests play casual races. Set a password (the menu under your name) to play rated."
      : "Casual: it changes no rating.";
  }
  return "Rated if you both have accounts and play from two different networks; casual otherwise " +
    "(and after three rated races between the same two in a day).";
}

/**
 * The Challenge panel: `to` a player's name (a player's page: only game and time to choose), or
 * none (the home page: a name, or a link). `destroy()` stops listening (an open challenge stays:
 * the banner tells what becomes of it).
 */
export function challengePanel({ to = "" } = {}) {
  const uid = to ? "challenge-player" : "challenge-home";
  const name = to ? null : h(`input#${uid}-name`, { type: "text", name: "to", maxlength: 32, autocomplete: "off",
    spellcheck: false, placeholder: "A player's name" });
  const game = h(`select#${uid}-game`, { name: "game" }, GAMES.map((g) => h("option", { value: g }, gameTitle(g))));
  const times = segmented(`${uid}-time`, "Time limit", QUICK_TIMES.map((s) => [s, minutes(s)]), 300);
  const msg = h("p.form-msg", { role: "alert" });
  const byName = h("button.primary.challenge-send", { type: "submit" }, to ? `Challenge ${to}` : "Challenge");
  const byLink = to ? null : h("button.challenge-link-btn", { type: "button", onclick: () => send("") }, "Get a link");
  const form = h("form.challenge-form", {
    onsubmit: (e) => {
      e.preventDefault();
      const who = to || name.value.trim();
      if (!who) {
        msg.textContent = "Type the name of the player to challenge, or get a link to send.";
        name.focus();
        return;
      }
      send(who);
    },
  },
  name ? h("div.field", {}, h("label", { for: `${uid}-name` }, "Player"), name) : null,
  h("div.field", {}, h("label", { for: `${uid}-game` }, "Game"), game),
  times,
  h("div.buttons", {}, byName, byLink));

  // The waiting state: one challenge of this player's at a time here.
  let current = null;
  const waitTitle = h("p.challenge-wait-title");
  const waitStatus = h("p.challenge-wait-status", { role: "status" });
  const waitRated = h("p.hint.challenge-wait-rated");
  const linkBox = h(`input#${uid}-link.challenge-link`, { type: "text", readonly: true, "aria-label": "The challenge's link" });
  const copyBtn = h("button.small.challenge-copy", { type: "button", onclick: async () => {
    const ok = await copyText(linkBox.value);
    toast(ok ? "Link copied" : "Copy the link by hand", ok ? "good" : "bad", 2500);
  } }, "Copy");
  const linkRow = h("div.challenge-link-row", { hidden: true }, linkBox, copyBtn);
  const cancelBtn = h("button.challenge-cancel", { type: "button", onclick: async () => {
    const c = current;
    show(null);
    msg.textContent = "Challenge cancelled.";
    byName.focus();
    if (c) await challenges.cancel(c.challenge).catch(() => {});
  } }, "Cancel");
  const waiting = h("div.challenge-waiting", { hidden: true }, waitTitle, waitStatus, waitRated, linkRow, cancelBtn);
  const el = h("section.panel.challenge-panel", { "aria-labelledby": `${uid}-title` },
    h(`h2#${uid}-title`, {}, to ? "Challenge" : "Challenge a friend"),
    h("p.hint.panel-lead", {}, to ? `A race of two against ${to}, on a new secret deal, as soon as ${to} accepts.`
      : "By name — the player sees it on any page — or with a link you send to anyone."),
    form, waiting, msg);

  async function send(who) {
    msg.textContent = "";
    byName.disabled = true;
    if (byLink) byLink.disabled = true;
    try {
      const made = await challenges.create({ to: who, game: game.value, timeLimit: Number(times.querySelector("input:checked")?.value || 300) });
      show(made);
      (made.to ? cancelBtn : copyBtn).focus();
    } catch (err) {
      msg.textContent = err.message || "Could not send the challenge.";
    } finally {
      byName.disabled = false;
      if (byLink) byLink.disabled = false;
    }
  }

  function show(c) {
    current = c;
    form.hidden = !!c;
    waiting.hidden = !c;
    if (!c) return;
    msg.textContent = "";
    setText(waitTitle, `${gameTitle(c.game)} · ${minutes(c.time_limit)}`);
    waitRated.textContent = ratedLine(c);
    linkRow.hidden = !!c.to;
    linkBox.value = challengeUrl(c.challenge);
    tick();
  }

  function tick() {
    if (!current) return;
    const c = current;
    setText(waitStatus, c.to ? `Waiting for ${c.to.name} to answer… ${left(c.expires_at)} left`
      : `Send this link to a friend: the first to accept races you. ${left(c.expires_at)} left`);
  }

  const onPaired = (e) => {
    if (!current || e.detail.paired.challenge !== current.challenge) return;
    e.preventDefault(); // this page takes him to the race
    current = null;
    toast(`${e.detail.paired.opponents?.[0]?.name || "Your opponent"} accepted`, "good", 3000, { silent: true });
    navigate(e.detail.path);
  };
  const onAnswer = (e) => {
    const d = e.detail;
    if (!current || d.challenge !== current.challenge) return;
    if (d.kind === "declined" && d.open) {
      setText(waitStatus, `${d.by || "Someone"} declined; the link stays open for others.`);
      return;
    }
    show(null);
    msg.textContent = d.kind === "declined" ? `${d.by || "The player"} declined your challenge.`
      : "Nobody answered: the challenge expired.";
    challenges.dismiss(d.challenge); // said here already
  };
  // A page opened again (a reload) finds its open challenge and waits on.
  const onChange = () => {
    if (current && !challenges.outgoing.has(current.challenge)) return;
    if (current) return;
    const mine = [...challenges.outgoing.values()].filter((c) => (to ? c.to?.name === to : true));
    if (mine.length) show(mine[mine.length - 1]);
  };
  challenges.addEventListener("paired", onPaired);
  challenges.addEventListener("answer", onAnswer);
  challenges.addEventListener("change", onChange);
  onChange();
  const timer = setInterval(tick, 1000);
  return {
    el,
    destroy() {
      clearInterval(timer);
      challenges.removeEventListener("paired", onPaired);
      challenges.removeEventListener("answer", onAnswer);
      challenges.removeEventListener("change", onChange);
    },
  };
}

/** /challenge/{id}: the challenge a link leads to. */
export function mount(root, { challenge: id }) {
  document.title = "A challenge — solrace";
  let closed = false;
  let panel = null;
  replace(root, h("section.panel.narrow.challenge-page", { "aria-busy": "true" }, h("p.muted", {}, "Loading…")));

  inbox.request({ type: "challenge_get", challenge: id })
    .then((c) => {
      if (!closed) show(c);
    })
    .catch((err) => {
      if (!closed) gone(err.code === "not_found" ? null : err.message);
    });

  function gone(problem) {
    replace(root, h("section.panel.narrow.challenge-page", { dataset: { state: "gone" } },
      h("h1", {}, problem ? "This page did not load" : "This challenge is no longer open"),
      h("p", {}, problem || "It was taken, cancelled, or it expired. Ask your friend for a new one — or race someone now."),
      h("p", {}, h("a.button.primary", { href: "/", "data-link": true }, "Go to the start page"))));
  }

  function show(c) {
    if (c.you === "challenger") {
      panel = challengePanel({});
      replace(root, h("section.challenge-page", { dataset: { state: "mine" } },
        h("h1.page-title", {}, "Your challenge"), panel.el));
      return;
    }
    const msg = h("p.form-msg", { role: "alert" });
    const accept = h("button.primary.challenge-accept#challenge-accept", { type: "button", onclick: async () => {
      accept.disabled = decline.disabled = true;
      msg.textContent = "";
      try {
        await challenges.accept(c.challenge);
      } catch (err) {
        msg.textContent = err.message || "Could not accept the challenge.";
        accept.disabled = decline.disabled = false;
      }
    } }, "Accept");
    const decline = h("button.challenge-decline#challenge-decline", { type: "button", onclick: async () => {
      accept.disabled = decline.disabled = true;
      try {
        await challenges.decline(c.challenge);
        replace(root, h("section.panel.narrow.challenge-page", { dataset: { state: "declined" } },
          h("h1", {}, "Challenge declined"),
          h("p", {}, `${c.by.name} has been told. Maybe another time!`),
          h("p", {}, h("a.button", { href: "/", "data-link": true }, "Go to the start page"))));
      } catch (err) {
        msg.textContent = err.message || "Could not decline the challenge.";
        accept.disabled = decline.disabled = false;
      }
    } }, "Decline");
    const guest = !isAccount() && c.rated;
    const expires = h("p.muted.challenge-expires");
    const tick = () => setText(expires, `Open for ${left(c.expires_at)} more.`);
    tick();
    const timer = setInterval(tick, 1000);
    panel = { destroy: () => clearInterval(timer) };
    replace(root, h("section.panel.narrow.challenge-page", { dataset: { state: "open" }, "aria-labelledby": "challenge-title" },
      h("h1#challenge-title", {}, `${c.by.name} challenges ${c.to ? c.to.name : "you"} to a race`),
      h("p.challenge-terms-big", {}, `${gameTitle(c.game)} · ${minutes(c.time_limit)}`),
      h("p.hint", {}, "A race of two on a new secret deal: it starts as soon as you both take your seats."),
      h("p.hint.challenge-rated", {}, guest
        ? "Casual for you: guests play casual races (set a password, in the menu under your name, to play rated)."
        : ratedLine(c, "challenged")),
      c.you === "other" && c.to ? h("p.banner.banner-warn", {}, `This challenge is for ${c.to.name}.`) : null,
      h("div.buttons", {}, accept, decline),
      expires,
      msg));
    accept.focus();
  }

  return () => {
    closed = true;
    panel?.destroy();
  };
}
