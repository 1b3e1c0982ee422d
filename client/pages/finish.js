// After a racer's own finish: the moment itself (place, time, a short animation), the live
// standings while the others race on, and what to do next: watch, rematch, go home. The rematch
// offer (someone asked for a rematch of this finished race) is shown by the same pieces on the
// race page and on the results.

import { livePlaces } from "./parts.js";
import { playBot, takeSeat } from "../seek.js";
import { store } from "../storage.js";
import { formatTime, h, navigate, ordinal, replace, toast } from "../ui.js";
import { dailyPath, levelOf, racerName } from "./player-parts.js";

const MOMENT_MS = 4500;
const CONFETTI = ["♠", "♥", "♦", "♣"];

/** The overlay over the racer's board when he clears the deal; it goes by itself or on a click. */
export class FinishMoment {
  constructor(host) {
    this.host = host;
    this.el = null;
    this.timer = 0;
  }

  show({ place, time_ms: timeMs }) {
    this.hide();
    const bits = [];
    for (let i = 0; i < 18; i++) {
      const bit = h("span.confetti", { "aria-hidden": "true" }, CONFETTI[i % 4]);
      bit.style.setProperty("--x", `${(i * 37) % 100}%`);
      bit.style.setProperty("--d", `${(i % 6) * 0.12}s`);
      bit.style.setProperty("--r", `${(i % 2 ? 1 : -1) * (120 + i * 20)}deg`);
      if (i % 4 === 1 || i % 4 === 2) bit.classList.add("red");
      bits.push(bit);
    }
    this.el = h("div.finish-moment", { role: "presentation", onclick: () => this.hide() },
      bits,
      h("div.finish-card", {},
        h("div.finish-place", { dataset: { place } }, ordinal(place)),
        h("div.finish-time", {}, `Deal cleared in ${formatTime(timeMs)}`),
        h("div.finish-hint", {}, place === 1 ? "You won the race!" : "Well played!")));
    this.host.append(this.el);
    this.timer = setTimeout(() => this.hide(), MOMENT_MS);
  }

  hide() {
    clearTimeout(this.timer);
    this.el?.remove();
    this.el = null;
  }
}

/** The standings as they stand, for a racer who is done while others still race. */
export function liveStandings(model) {
  const places = livePlaces(model);
  const rows = model.order
    .map((id) => model.players.get(id))
    .filter(Boolean)
    .sort((a, b) => places.get(a.player) - places.get(b.player));
  const hints = !!model.options?.hints || rows.some((p) => p.hints);
  return h("table.live-standings", {},
    h("caption.sr-only", {}, "Standings so far"),
    h("thead", {}, h("tr", {}, ["Place", "Racer", "Cards home", "Moves", hints ? "Hints" : null, ""]
      .filter((t) => t !== null).map((t) => h("th", { scope: "col", class: t ? "" : "col-status" }, t)))),
    h("tbody", {}, rows.map((p) => {
      const pr = p.progress || {};
      const status = p.finished || p.place ? formatTime(p.time_ms) : p.resigned ? "resigned"
        : p.connected === false ? "offline" : "racing";
      return h("tr", { class: p.player === model.you ? "is-you" : "", dataset: { player: p.player } },
        h("td.place", {}, h("span.medal", { dataset: { place: places.get(p.player) } }, ordinal(places.get(p.player)))),
        // On a phone the status goes under the name (style.css), so that no column is cut off.
        h("td", {}, racerName({ ...p, name: p.name || p.player }), p.player === model.you ? h("span.muted", {}, " (you)") : null,
          h("span.status-inline.muted", { "aria-hidden": "true" }, status)),
        h("td.num", {}, `${pr.foundation ?? 0} / ${pr.total ?? "?"}`),
        h("td.num", {}, pr.moves ?? 0),
        hints ? h("td.num.hints", {}, p.hints ?? 0) : null,
        h("td.status", {}, status));
    })));
}

/** Is the rematch of this race made in one click (docs/protocol.md, `rematch`)? A race of two
 * players (each with his id; no bot) outside a tournament: both ask, then both are seated in the
 * new race at once. */
export function oneClick(model) {
  const racers = [...model.players.values()];
  return racers.length === 2 && !model.tournament && racers.every((p) => p.id && !p.bot);
}

/** The other racer of a race of two (for the rematch's words). */
function otherRacer(model) {
  return [...model.players.values()].find((p) => p.player !== model.you) || null;
}

/** The house bot of a race against one (its level), or null. */
function houseBot(model) {
  return [...model.players.values()].find((p) => p.bot && levelOf(p.level)) || null;
}

/** Where a racer goes from a finished race: rematch (once the race is over), home; and, while
 * the others still race, the spectator view. `watch`: show the "Watch live" button. After a
 * quick race, the next one; after a race against a house bot, the same bot again; after the
 * daily deal, the daily page. */
export function nextActions(session, { watch = false } = {}) {
  const model = session.model;
  const msg = h("p.form-msg", { role: "alert" });
  const nextQuick = h("button.primary.next-quick", {
    type: "button",
    onclick: () => navigate("/", { seek: { game: model.game, time_limit: model.options?.time_limit ?? 300 } }),
  }, "Next quick race");
  const botAgain = h("button.primary.bot-again", {
    type: "button",
    onclick: async () => {
      botAgain.disabled = true;
      msg.textContent = "";
      try {
        navigate(await playBot(model.game, houseBot(model)?.level ?? 1, model.options?.time_limit ?? 300));
      } catch (err) {
        msg.textContent = err.message;
        botAgain.disabled = false;
      }
    },
  }, "Play the bot again");
  const daily = h("a.button.primary.daily-back", { href: dailyPath(), "data-link": true }, "Today's deals");
  const rematchBtn = h("button.primary.rematch", {
    type: "button",
    onclick: async () => {
      rematchBtn.disabled = true;
      msg.textContent = "";
      try {
        if (oneClick(model) && model.role === "racer") {
          // "I want one": the new race comes once the other racer wants it too (his seat and
          // ours arrive as `paired`; an answer to a late click brings ours again).
          if (model.rematchSeat) goSeat(model.rematchSeat);
          else await session.rematch();
          return;
        }
        const next = model.rematch?.next || await session.rematch();
        goRematch(next, model);
      } catch (err) {
        msg.textContent = err.message;
        rematchBtn.disabled = false;
      }
    },
  }, "Rematch");
  // A race of a tournament: no rematch; the way on is back to the tournament.
  const back = h("a.button.primary.back-to-tournament", { href: "/", "data-link": true, hidden: true },
    "Back to the tournament");
  const el = h("div.next-actions", {},
    back,
    nextQuick,
    botAgain,
    daily,
    watch ? h("a.button.watch-live", { href: `/race/${encodeURIComponent(model.race)}/watch`, "data-link": true },
      "Watch live") : null,
    rematchBtn,
    h("a.button.go-home", { href: "/", "data-link": true }, "Home"),
    msg);
  return {
    el,
    update() {
      const over = model.status === "finished";
      const racer = model.role === "racer" && !model.replaced;
      const t = model.tournament;
      back.hidden = !t;
      if (t) {
        back.href = `/tournament/${encodeURIComponent(t.tournament)}`;
        back.title = t.name;
      }
      const kind = model.options?.kind;
      nextQuick.hidden = !racer || kind !== "quick";
      botAgain.hidden = !racer || kind !== "bot" || !over;
      daily.hidden = kind !== "daily";
      if (kind === "daily") daily.href = dailyPath(model.game);
      // A house bot does not come to a rematch, the daily deal is played once, and an arena
      // pairs its racers again by itself.
      rematchBtn.hidden = !racer || !!t || !!houseBot(model) || kind === "bot" || kind === "daily"
        || kind === "arena";
      const asked = oneClick(model) && (model.rematchWants || []).includes(model.you) && !model.rematch;
      rematchBtn.disabled = !over || asked;
      rematchBtn.title = !over ? "Once the race is over" : asked
        ? `Waiting for ${otherRacer(model)?.name || "the other racer"} to want it too`
        : "A new race with the same settings and a new deal";
      rematchBtn.textContent = model.rematch ? "Join the rematch" : asked ? "Rematch asked…" : "Rematch";
    },
  };
}

/** Join (a racer) or watch (anyone else) the rematch race `next`. */
export function goRematch(next, model) {
  const racer = model.role === "racer";
  const name = store.name() || model.players.get(model.you)?.name || "";
  if (racer) navigate(`/race/${encodeURIComponent(next)}`, name ? { autojoin: name } : null);
  else navigate(`/race/${encodeURIComponent(next)}/watch`);
}

/** Take the seat of a rematch both racers asked for (its `paired`), and go there. */
function goSeat(paired) {
  navigate(takeSeat(paired));
}

/** The banner offering a rematch someone else asked for: one click joins it. Between two
 * players (`oneClick`): "X wants a rematch — Rematch / No thanks", and once both want it, each
 * racer's page takes him to his seat in the new race. */
export function rematchOffer(session) {
  const model = session.model;
  const el = h("div.banner.banner-good.rematch-offer", { role: "status", hidden: true });
  let shown = null;
  session.addEventListener("paired", (e) => {
    toast(`Rematch: ${e.detail.opponents?.[0]?.name || "your opponent"} is in`, "good", 3000, { silent: true });
    goSeat(e.detail);
  });

  /** The one-click offer: what the other racer wants, or said. */
  function oneClickOffer() {
    const other = otherRacer(model);
    const wants = model.rematchWants || [];
    const key = `${wants.join(",")}|${model.rematchDeclined || ""}`;
    const theirs = other && wants.includes(other.player) && !wants.includes(model.you);
    const declined = model.rematchDeclined && model.rematchDeclined !== model.players.get(model.you)?.name;
    el.hidden = !theirs && !declined;
    el.classList.toggle("banner-good", !declined);
    if (el.hidden || shown === key) return;
    shown = key;
    if (declined) {
      replace(el, `${model.rematchDeclined} said no thanks to a rematch.`);
      return;
    }
    const yes = h("button.small.primary#accept-rematch", { type: "button", onclick: async () => {
      yes.disabled = no.disabled = true;
      try {
        await session.rematch();
      } catch (err) {
        toast(err.message, "bad", 4000);
        yes.disabled = no.disabled = false;
      }
    } }, "Rematch");
    const no = h("button.small#decline-rematch", { type: "button", onclick: async () => {
      yes.disabled = no.disabled = true;
      try {
        await session.rematch(false);
      } catch (err) {
        toast(err.message, "bad", 4000);
      }
    } }, "No thanks");
    replace(el, `${other.name} wants a rematch. `, h("span.rematch-buttons", {}, yes, " ", no));
    toast(`${other.name} wants a rematch`, "info", 4000);
  }

  return {
    el,
    update() {
      if (oneClick(model) && model.role === "racer" && !model.replaced) {
        if (!model.rematch) {
          oneClickOffer();
          return;
        }
        el.hidden = true; // both want it: each racer's seat takes him there
        return;
      }
      const offer = model.rematch;
      if (!offer || offer.mine) {
        el.hidden = true;
        return;
      }
      el.hidden = false;
      if (shown === offer.next) return;
      shown = offer.next;
      const racer = model.role === "racer";
      replace(el, `${offer.by || "A racer"} asked for a rematch. `,
        h("button.small.primary#join-rematch", { type: "button", onclick: () => goRematch(offer.next, model) },
          racer ? "Join the rematch" : "Watch the rematch"));
      toast(`${offer.by || "A racer"} asked for a rematch`, "info", 4000);
    },
  };
}
