// The shell shared by the race page and the spectator page: one RaceSession, the header with
// status and clock, the bar of a tournament's or an arena's race, "race not found", the results once
// the race is over, the clock tick, the finisher toasts and the progress announcer. A page gives it its middle part:
//
//   mountShell(root, { race, spectator, title, className, middle(ctx) -> part })
//
// where `part` is {nodes: [...], clock(c)?, render(), hide(), keydown(e)?, destroy()?} and `ctx`
// is {session, model}. The shell redraws from the model, once per animation frame.

import { RaceSession } from "../session.js";
import { frameScheduler, h, loadStyle, replace, sentence, setConnectionState, setServiceState, toast } from "../ui.js";
import { announceFinisher, ProgressAnnouncer, RaceHeader } from "./parts.js";
import { mountResults, rememberCommitment } from "./results.js";

export function mountShell(root, { race, spectator = false, title, className = "", middle }) {
  document.title = title;
  const session = new RaceSession(race, { spectator });
  window.solrace.session = session;
  const model = session.model;
  const header = new RaceHeader(race, { watching: spectator });
  const announcer = new ProgressAnnouncer();
  const bar = raceBars({ spectator });
  const resultsHost = h("div.results-host");
  const notFound = h("section.panel.narrow", { hidden: true },
    h("h2", {}, "Race not found"),
    h("p", {}, "Check the code or the link. ", h("a", { href: "/", "data-link": true }, "Start a new race.")));
  const refusedText = h("p");
  const refused = h("section.panel.narrow.race-refused", { hidden: true },
    h("h2", {}, "You cannot watch this race"),
    refusedText,
    h("p", {}, h("a", { href: "/", "data-link": true }, "Go to the start page.")));
  const part = middle({ session, model });
  replace(root, h(`div.race-page${className}`, {}, header.el, bar.el, notFound, refused, ...part.nodes, resultsHost));

  let results = null;

  function clock() {
    part.clock?.(header.update(model, session.now()));
    bar.tick();
  }

  function render() {
    clock();
    setConnectionState(model.connection === "open" ? "" : model.connection);
    setServiceState(model.service);
    notFound.hidden = !model.notFound;
    refused.hidden = !model.refused;
    refusedText.textContent = sentence(model.refused || "");
    if (!model.loaded) {
      part.hide();
      return;
    }
    rememberCommitment(model);
    bar.update(model, schedule);
    if (model.status === "finished") {
      part.hide();
      if (!results) results = mountResults(resultsHost, session);
      else results.update();
      return;
    }
    part.render();
    if (model.status === "running") announcer.update(model);
  }

  const schedule = frameScheduler(render);
  session.addEventListener("change", schedule);
  session.addEventListener("finisher", (e) => announceFinisher(e.detail, model.you));
  if (!spectator) session.addEventListener("over", () => toast("Race over", "info", 3000));
  let claimable = false;
  const tick = setInterval(() => {
    if (model.status === "countdown" || model.status === "running") clock();
    else bar.tick(); // the next round's countdown, after the race
    // The minute the others have been away runs out without any message: redraw then.
    if (!spectator && session.claimable() !== claimable) {
      claimable = !claimable;
      schedule();
    }
  }, 100);
  const onKey = part.keydown ? (e) => part.keydown(e) : null;
  if (onKey) document.addEventListener("keydown", onKey);

  session.start();
  schedule();
  return () => {
    clearInterval(tick);
    setServiceState("ok");
    if (onKey) document.removeEventListener("keydown", onKey);
    session.close();
    bar.destroy();
    part.destroy?.();
    results?.destroy();
  };
}

/** The bars of a race that belongs to something bigger: a tournament's (pages/tournament-bar.js)
 * or an arena's (pages/arena-bar.js), each loaded with its stylesheet once the race's snapshot
 * says it is one: most races are neither. */
function raceBars({ spectator }) {
  const bars = [
    lazyBar((m) => m.tournament, () => Promise.all([import("./tournament-bar.js"), loadStyle("tournament.css")])
      .then(([{ TournamentBar }]) => new TournamentBar({ spectator }))),
    lazyBar((m) => m.arena, () => Promise.all([import("./arena-bar.js"), loadStyle("arena.css")])
      .then(([{ ArenaBar }]) => new ArenaBar({ spectator }))),
  ];
  return {
    el: h("div.race-bars", {}, bars.map((b) => b.el)),
    update: (model, redraw) => bars.forEach((b) => b.update(model, redraw)),
    tick: () => bars.forEach((b) => b.tick()),
    destroy: () => bars.forEach((b) => b.destroy()),
  };
}

function lazyBar(wanted, make) {
  const el = h("div.race-bar-host");
  let bar = null;
  let loading = false;
  let closed = false;
  return {
    el,
    update(model, redraw) {
      if (bar) bar.update(model);
      else if (wanted(model) && !loading) {
        loading = true;
        make().then((made) => {
          if (closed) {
            made.destroy();
            return;
          }
          bar = made;
          el.append(bar.el);
          redraw();
        });
      }
    },
    tick: () => bar?.tick(),
    destroy() {
      closed = true;
      bar?.destroy();
    },
  };
}

/** The one note that explains the backs on other racers' boards; `update(model)` shows it
 * while any board shown has a hidden card (never in Scotch, which is dealt face up). */
export function hiddenCardsNote({ racer = false } = {}) {
  const text = racer
    ? "Cards you have not uncovered yourself show as backs on the other boards until the end."
    : "Cards a racer still racing has not uncovered are hidden until the end.";
  const el = h("p.hint.hidden-note", { dataset: { note: "hidden-cards" }, hidden: true }, text);
  return {
    el,
    update(model) {
      el.hidden = !(model.status === "running" && [...model.players.values()].some(
        (p) => p.player !== model.you && p.board?.piles.some((pile) => pile.cards.includes(null))));
    },
  };
}
