// On the page of a race of an arena (its snapshot carries `arena` {arena, name}): a bar with the
// arena's name linking back, the racer's points and place; and, for the racer this browser is,
// the arena followed as that entrant on the connection the arena page used (arena-session.js), so
// that the server never finds him gone and pauses him while he races. After the race it says
// "Next pairing…" under which the results stay, until his seat in the next race (`paired`) takes
// him there.

import { arenaPath, followArena, openArenaSeat } from "../arena-session.js";
import { store } from "../storage.js";
import { h, navigate, replace, sentence, setHidden, setText, toast } from "../ui.js";
import { standingText, streakMark, untilText } from "./arena-table.js";

export class ArenaBar {
  constructor({ spectator = false } = {}) {
    this.spectator = spectator;
    this.link = h("a.a-bar-link", { "data-link": true });
    this.you = h("span.a-bar-you");
    this.clock = h("span.a-bar-clock", { role: "timer", "aria-live": "off" });
    this.next = h("span.a-bar-next", { role: "status" });
    this.msg = h("span.a-bar-msg", { role: "alert" });
    this.resume = h("button.small.primary.a-bar-resume", {
      type: "button", hidden: true,
      onclick: () => {
        this.msg.textContent = "";
        this.session?.join().catch((err) => {
          this.msg.textContent = sentence(err.message || err.code);
        });
      },
    }, "Resume");
    this.go = h("a.small.button.primary.a-bar-go", { "data-link": true, hidden: true,
      onclick: () => this.model?.seat && openArenaSeat(this.model.seat) }, "Go to your next race");
    this.back = h("a.small.button.a-bar-back", { "data-link": true }, "Arena page");
    this.el = h("nav.arena-bar", { "aria-label": "Arena", hidden: true },
      h("span.a-bar-mark", { "aria-hidden": "true" }, "⚑"),
      this.link, this.you, this.clock, this.next, this.resume, this.go, this.msg, this.back);
    this.aid = null;
    this.race = null;
    this.raceOver = false;
    this.session = null;
    this.shownYou = "";
    this.onSeat = (e) => this.seat(e.detail);
    this.onChange = () => this.tick();
  }

  get model() {
    return this.session?.model ?? null;
  }

  update(model) {
    const a = model.arena;
    this.el.hidden = !a;
    if (!a) return;
    this.race = model.race;
    this.raceOver = model.status === "finished";
    if (a.arena !== this.aid) {
      this.aid = a.arena;
      this.link.href = arenaPath(a.arena);
      this.back.href = arenaPath(a.arena);
    }
    setText(this.link, a.name);
    // The racer this browser is (it holds the seat's token): followed as the arena's entrant.
    const racer = store.racer(model.race);
    if (!this.session && !this.spectator && racer?.arena === a.arena) this.follow(a.arena);
    this.tick();
  }

  follow(aid) {
    this.session = followArena(aid);
    this.session.addEventListener("seat", this.onSeat);
    this.session.addEventListener("change", this.onChange);
  }

  seat({ seat, fresh }) {
    if (seat.race === this.race) {
      openArenaSeat(seat); // the race on this page: he is here already
      return;
    }
    if (!fresh) {
      this.tick();
      return;
    }
    toast("Your next race is ready", "good", 3000);
    navigate(openArenaSeat(seat));
  }

  /** Points, place and what comes next, from the arena as this browser follows it. */
  tick() {
    const s = this.session;
    const mine = s?.mine;
    const phase = s?.phase() ?? "";
    const you = mine ? standingText(mine, s.model.entrants) : "";
    if (you + (mine?.streak ?? "") !== this.shownYou) {
      this.shownYou = you + (mine?.streak ?? "");
      replace(this.you, you, streakMark(mine));
    }
    setHidden(this.you, !you);
    let next = "";
    let clock = "";
    let resume = false;
    let go = false;
    if (!s || !s.model.loaded) {
      next = "";
    } else if (phase === "finished") {
      next = "The arena is over: see the final table.";
    } else if (!this.raceOver) {
      if (phase === "running") clock = `Arena ends in ${untilText(s.model.view.ends_at - s.now())}`;
      else if (phase === "closing") clock = "Arena time is up: this is your last race";
    } else if (s.model.replaced) {
      next = "This arena now follows you in another tab or window.";
    } else if (!mine) {
      next = "";
    } else if (mine.paused) {
      next = "You are paused: not paired again until you resume.";
      resume = phase === "running";
    } else if (mine.racing && s.model.seat && s.model.seat.race !== this.race) {
      next = "Your next race is ready.";
      go = true;
      this.go.href = `/race/${encodeURIComponent(s.model.seat.race)}`;
    } else if (phase === "closing") {
      next = "The arena's time is up: no more pairings.";
    } else {
      next = "Next pairing…";
    }
    setText(this.clock, clock);
    setHidden(this.clock, !clock);
    setText(this.next, next); // a live region: kept in place, empty when there is nothing to say
    setHidden(this.resume, !resume);
    this.el.dataset.entrant = String(!!s?.model.bound); // for tests and the curious: followed as him
    setHidden(this.go, !go);
  }

  destroy() {
    if (!this.session) return;
    this.session.removeEventListener("seat", this.onSeat);
    this.session.removeEventListener("change", this.onChange);
    this.session.release();
    this.session = null;
  }
}
