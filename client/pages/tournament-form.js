// The home page's "New tournament" form: name, format (rounds of duplicate deals, or a knockout),
// the games in order (one per round, repeated; "Triathlon" = Scotch, Yukon, Quadruple Canfield),
// rounds or best-of, time limit, race size, grace, gap between rounds, entry code, most entrants,
// winnable deals only. It creates the tournament (tournament_create) and opens its page as host.

import { GAME_TITLES } from "../cards.js";
import { h, navigate, sentence } from "../ui.js";

const TRIATHLON = ["scotch", "yukon", "quadruple-canfield"];
const MINUTES = [[120, "2 minutes"], [300, "5 minutes"], [600, "10 minutes"], [900, "15 minutes"], [1800, "30 minutes"]];
const GRACE = [[15, "15 seconds"], [30, "30 seconds"], [60, "1 minute"], [120, "2 minutes"], [300, "5 minutes"]];
const GAPS = [[0, "none: I start each round"], [15, "15 seconds"], [30, "30 seconds"], [60, "1 minute"],
  [120, "2 minutes"], [300, "5 minutes"]];
const options = (list, selected) => list.map(([v, label]) => h("option", { value: v, selected: v === selected }, label));

export function tournamentForm() {
  const name = h("input#t-name", { type: "text", maxlength: 32, required: true, placeholder: "e.g. Friday Cup",
    autocomplete: "off" });
  const radio = (value, label, checked) => {
    const input = h(`input#t-format-${value}`, { type: "radio", name: "t-format", value, checked });
    return [input, h("label", { for: `t-format-${value}` }, label)];
  };
  const formatBox = h("fieldset.t-format", {},
    h("legend", {}, "Format"),
    h("div.radio", {}, radio("rounds", "Rounds: everyone plays the same deal each round", true)),
    h("div.radio", {}, radio("knockout", "Knockout: two-racer matches in a bracket", false)));

  const gameList = h("ol.t-games");
  const gameRow = (game) => {
    const select = h("select.t-game", {}, Object.entries(GAME_TITLES).map(([id, title]) =>
      h("option", { value: id, selected: id === game }, title)));
    const row = h("li.t-game-row", {}, select,
      h("button.small.t-game-remove", { type: "button", "aria-label": "Remove this game", title: "Remove this game",
        onclick: () => {
          if (gameList.children.length > 1) row.remove();
          relabel();
        } }, "✕"));
    return row;
  };
  const relabel = () => {
    [...gameList.children].forEach((row, i) => {
      row.querySelector("select").setAttribute("aria-label", `Game ${i + 1}`);
      row.querySelector(".t-game-remove").disabled = gameList.children.length === 1;
    });
    if (!roundsTouched) rounds.value = gameList.children.length;
  };
  const setGames = (games) => {
    gameList.replaceChildren(...games.map(gameRow));
    relabel();
  };
  const rounds = h("input#t-rounds", { type: "number", min: 1, max: 50, value: 1, required: true });
  let roundsTouched = false;
  rounds.addEventListener("input", () => {
    roundsTouched = true;
  });
  const bestOf = h("select#t-best-of", {}, [1, 3, 5, 7, 9].map((n) => h("option", { value: n }, n === 1 ? "1 game" : `${n} games`)));
  const timeLimit = h("select#t-time-limit", {}, options(MINUTES, 600));
  const raceSize = h("input#t-race-size", { type: "number", min: 2, max: 8, value: 8, required: true });
  const winnable = h("input#t-winnable", { type: "checkbox" });
  const grace = h("select#t-grace", {}, options(GRACE, 60));
  const gap = h("select#t-gap", {}, options(GAPS, 30));
  const code = h("input#t-code", { type: "text", maxlength: 64, placeholder: "none: anyone with the link", autocomplete: "off" });
  const maxEntrants = h("input#t-max", { type: "number", min: 2, max: 512, placeholder: "512" });
  const roundsField = h("div.field", {}, h("label", { for: "t-rounds" }, "Rounds"), rounds);
  const bestOfField = h("div.field", { hidden: true }, h("label", { for: "t-best-of" }, "Each match: best of"), bestOf);
  const sizeField = h("div.field", {}, h("label", { for: "t-race-size" }, "Most racers in one race"), raceSize);
  const msg = h("p.form-msg", { role: "alert" });
  const submit = h("button.primary", { type: "submit" }, "Create tournament");

  const knockout = () => formatBox.querySelector("input:checked")?.value === "knockout";
  formatBox.addEventListener("change", () => {
    roundsField.hidden = knockout();
    sizeField.hidden = knockout();
    bestOfField.hidden = !knockout();
  });

  const form = h("form.panel.t-create", {
    "aria-labelledby": "t-create-title",
    onsubmit: async (e) => {
      e.preventDefault();
      msg.textContent = "";
      const settings = {
        name: name.value.trim(),
        format: knockout() ? "knockout" : "rounds",
        games: [...gameList.querySelectorAll("select")].map((s) => s.value),
        time_limit: Number(timeLimit.value),
        grace: Number(grace.value),
        gap: Number(gap.value),
        winnable: winnable.checked,
      };
      if (!settings.name) {
        msg.textContent = "Give the tournament a name.";
        name.focus();
        return;
      }
      if (knockout()) settings.best_of = Number(bestOf.value);
      else Object.assign(settings, { rounds: Number(rounds.value) || settings.games.length, race_size: Number(raceSize.value) || 8 });
      if (code.value.trim()) settings.code = code.value.trim();
      if (maxEntrants.value) settings.max_entrants = Number(maxEntrants.value);
      submit.disabled = true;
      try {
        // Loaded on demand: a page load of the client is already many requests.
        const { createTournament } = await import("../tournament-session.js");
        const created = await createTournament(settings);
        navigate(`/tournament/${encodeURIComponent(created.tournament)}`);
      } catch (err) {
        msg.textContent = sentence(err.message || "Could not create the tournament");
        submit.disabled = false;
      }
    },
  },
  h("h2#t-create-title", {}, "New tournament"),
  h("p.hint.t-lead", {}, "A series of races you run as host: entrants join with the link, every round deals " +
    "the same secret deal to everyone, and the standings follow live."),
  h("div.t-create-grid", {},
    h("div", {},
      h("div.field", {}, h("label", { for: "t-name" }, "Name"), name),
      formatBox,
      h("div.field.t-games-field", { role: "group", "aria-labelledby": "t-games-label" },
        h("div.label-row", {}, h("span#t-games-label.label", {}, "Games, round by round"),
          h("button.small#t-triathlon", { type: "button", onclick: () => setGames(TRIATHLON),
            title: "Scotch Patience, Yukon, Quadruple Canfield" }, "Triathlon")),
        gameList,
        h("button.small#t-add-game", { type: "button", onclick: () => {
          gameList.append(gameRow("scotch"));
          relabel();
        } }, "+ Add a game"),
        h("p.hint", {}, "Round n plays game n; with more rounds than games the list starts again."))),
    h("div", {},
      h("div.field-row", {}, roundsField, bestOfField,
        h("div.field", {}, h("label", { for: "t-time-limit" }, "Time limit per race"), timeLimit)),
      sizeField,
      h("div.field.check", {}, winnable, h("label", { for: "t-winnable" }, "Winnable deals only (certified by the solver)")),
      h("details.t-more", {},
        h("summary", {}, "More settings"),
        h("div.field", {}, h("label", { for: "t-grace" }, "Grace: how long a race waits for its entrants"), grace),
        h("div.field", {}, h("label", { for: "t-gap" }, "Gap between rounds"), gap),
        h("div.field", {}, h("label", { for: "t-code" }, "Entry code"), code),
        h("div.field", {}, h("label", { for: "t-max" }, "Most entrants"), maxEntrants)))),
  submit, msg);
  setGames(["scotch"]);
  return form;
}
