// On the page of a race of a tournament (its snapshot carries `tournament`): a bar with the
// tournament's name, the round and a link back; and, for an entrant of that tournament (this
// browser holds his token), the tournament followed beside the race, so that the countdown to the
// next round shows here and his seat in the next race takes him there at once.

import { store } from "../storage.js";
import { openSeat, TournamentSession } from "../tournament-session.js";
import { h, navigate, replace, setHidden, toast } from "../ui.js";
import { nextText } from "./tournament.js";

export const tournamentPath = (t) => `/tournament/${encodeURIComponent(t.tournament)}`;

export class TournamentBar {
  constructor({ spectator = false } = {}) {
    this.spectator = spectator;
    this.el = h("nav.tournament-bar", { "aria-label": "Tournament", hidden: true });
    this.next = h("span.t-bar-next", { role: "timer" });
    this.shown = "";
    this.race = null;
    this.follower = null;
  }

  update(model) {
    const t = model.tournament;
    this.race = model.race;
    this.el.hidden = !t;
    if (!t) return;
    const key = `${t.tournament}|${t.name}|${t.round}`;
    if (key !== this.shown) {
      this.shown = key;
      replace(this.el,
        h("span.t-bar-mark", { "aria-hidden": "true" }, "♛"),
        h("a.t-bar-link", { href: tournamentPath(t), "data-link": true }, t.name),
        h("span.t-bar-round", {}, `Round ${t.round}`),
        this.next,
        h("a.small.button.t-bar-back", { href: tournamentPath(t), "data-link": true }, "Tournament page"));
    }
    if (!this.follower && !this.spectator && store.entrant(t.tournament)) this.follow(t.tournament);
    this.tick();
  }

  follow(tid) {
    const follower = new TournamentSession(tid);
    follower.addEventListener("seat", (e) => {
      const { seat, fresh } = e.detail;
      if (seat.race === this.race) openSeat(seat); // the race on this page: he is here already
      if (!fresh || seat.race === this.race) return;
      toast(`Round ${seat.round}: your next race is ready`, "good", 3000);
      navigate(openSeat(seat));
    });
    follower.addEventListener("change", () => this.tick());
    this.follower = follower.start();
  }

  /** The countdown to the next round, while the entrant's browser follows the tournament. */
  tick() {
    const view = this.follower?.model.view;
    const text = !view ? "" : view.status === "finished" ? "The tournament is over: see the final table."
      : nextText(view, this.follower.now());
    if (this.next.textContent !== text) this.next.textContent = text;
    setHidden(this.next, !text);
  }

  destroy() {
    this.follower?.close();
    this.follower = null;
  }
}
