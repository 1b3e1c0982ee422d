// Spectator page, /race/{race}/watch: every racer's live board and progress in a grid, then the results.

import { fitBoard } from "../fit.js";
import { announce, h, replace, setHidden } from "../ui.js";
import { lobbyList, PlayerCards, seedChosenNote } from "./parts.js";
import { hiddenCardsNote, mountShell } from "./shell.js";

export function mount(root, { race }) {
  // A spectator never uses a racer token, even when this browser holds one for the race.
  return mountShell(root, {
    race,
    spectator: true,
    title: `Watching ${race} — solrace`,
    className: ".watch-page",
    middle: ({ model }) => {
      const grid = h("div.watch-grid", { "aria-label": "Racers" });
      // One racer's board may be shown large, first in the grid and fitted to the window (at
      // the top of the page, as the racer's own board is).
      const fitLarge = () => {
        const card = cards.large && cards.cards.get(cards.large);
        if (card) fitBoard(card.boardEl, { below: card.el });
      };
      const cards = new PlayerCards(grid, {
        enlarge: true,
        onLarge: (card) => {
          if (!card) {
            announce("All boards shown small.");
            return;
          }
          fitLarge();
          window.scrollTo(0, 0);
          announce(`${card.view.el.getAttribute("aria-label")} shown large. Escape shows every board.`);
        },
      });
      window.addEventListener("resize", fitLarge);
      const countdownEl = h("div.countdown.countdown-inline", { "aria-live": "assertive" });
      const lobby = h("section.panel.lobby");
      const note = hiddenCardsNote();
      return {
        nodes: [countdownEl, lobby, note.el, grid],
        clock(c) {
          setHidden(countdownEl, c.phase !== "countdown");
          const text = c.phase === "countdown" ? `Starting in ${c.clock}` : "";
          if (countdownEl.textContent !== text) countdownEl.textContent = text;
        },
        hide() {
          lobby.hidden = true;
          grid.hidden = true;
          note.el.hidden = true;
        },
        render() {
          grid.dataset.count = model.order.length;
          lobby.hidden = model.status !== "lobby";
          if (!lobby.hidden) {
            replace(lobby, h("h2", {}, "Waiting for the start"),
              h("p.muted", {}, "You are watching. Boards appear when the race starts."),
              seedChosenNote(model),
              lobbyList(model));
          }
          grid.hidden = model.status === "lobby";
          if (!grid.hidden) cards.update(model);
          note.update(model);
        },
        keydown(e) {
          if (e.key === "Escape" && cards.large) {
            e.preventDefault();
            const card = cards.cards.get(cards.large);
            cards.toggleLarge(null);
            card?.enlarge.focus();
          }
        },
        destroy() {
          window.removeEventListener("resize", fitLarge);
        },
      };
    },
  });
}
