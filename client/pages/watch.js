// Spectator page, /race/{race}/watch: every racer's live board and progress in a grid, then the results.

import { RaceSession } from "../net.js";
import { frameScheduler, h, replace, setConnectionState } from "../ui.js";
import { announceFinisher, lobbyList, PlayerCards, ProgressAnnouncer, RaceHeader } from "./parts.js";
import { mountResults, rememberCommitment } from "./results.js";

export function mount(root, { race }) {
  document.title = `Watching ${race} — solrace`;
  // A spectator never uses a racer token, even when this browser holds one for the race.
  const session = new RaceSession(race, { spectator: true });
  window.solrace.session = session;
  const model = session.model;
  const header = new RaceHeader(race, { watching: true });
  const announcer = new ProgressAnnouncer();
  const grid = h("div.watch-grid", { "aria-label": "Racers" });
  const cards = new PlayerCards(grid);
  const countdownEl = h("div.countdown.countdown-inline", { "aria-live": "assertive" });
  const lobby = h("section.panel.lobby");
  const resultsHost = h("div.results-host");
  const notFound = h("section.panel.narrow", { hidden: true },
    h("h2", {}, "Race not found"),
    h("p", {}, "Check the code or the link. ", h("a", { href: "/", "data-link": true }, "Start a new race.")));
  replace(root, h("div.race-page.watch-page", {}, header.el, notFound, countdownEl, lobby, grid, resultsHost));

  let results = null;

  function renderClock() {
    const clock = header.update(model, session.now());
    countdownEl.hidden = clock.phase !== "countdown";
    const text = clock.phase === "countdown" ? `Starting in ${clock.clock}` : "";
    if (countdownEl.textContent !== text) countdownEl.textContent = text;
  }

  function render() {
    renderClock();
    setConnectionState(model.connection === "open" ? "" : model.connection);
    notFound.hidden = !model.notFound;
    rememberCommitment(model);
    grid.dataset.count = model.order.length;
    if (model.status === "finished") {
      lobby.hidden = true;
      grid.hidden = true;
      if (!results) results = mountResults(resultsHost, session);
      else results.update();
      return;
    }
    lobby.hidden = !model.loaded || model.status !== "lobby";
    if (!lobby.hidden) {
      replace(lobby, h("h2", {}, "Waiting for the start"),
        h("p.muted", {}, "You are watching. Boards appear when the race starts."),
        lobbyList(model));
    }
    grid.hidden = !model.loaded || model.status === "lobby";
    if (!grid.hidden) cards.update(model);
    if (model.status === "running") announcer.update(model);
  }

  const schedule = frameScheduler(render);
  session.addEventListener("change", schedule);
  session.addEventListener("finisher", (e) => announceFinisher(e.detail, null));
  const tick = setInterval(() => {
    if (model.status === "countdown" || model.status === "running") renderClock();
  }, 100);
  session.start();
  schedule();
  return () => {
    clearInterval(tick);
    session.close();
    results?.destroy();
  };
}
