// Start page: above the fold, how many players are online and races running, one click to a race
// (Quick race, Play a bot), the featured race live, the arenas, the open races, the daily deal and
// the leaderboards; below, create a race or a tournament, join or watch one by link or code, and
// the races and tournaments this browser knows.

import { GAME_TITLES, gameTitle } from "../cards.js";
import { me } from "../me.js";
import { createRace } from "../net.js";
import { RULES, rulesPanel } from "../rules.js";
import { seekBeforeReload } from "../seek.js";
import { store } from "../storage.js";
import { fetchJSON, h, navigate, replace } from "../ui.js";
import { LiveStrip } from "./live.js";
import { HINT_PENALTY_S, OpenRaces, YourRaces, yourTournaments } from "./lobby.js";
import { challengePanel } from "./challenge.js";
import { botPanel, quickRacePanel } from "./play-now.js";
import { dailyPath, leaderboardPath } from "./player-parts.js";
import { tournamentForm } from "./tournament-form.js";

const TIME_LIMITS = [
  [120, "2 minutes"],
  [300, "5 minutes"],
  [600, "10 minutes"],
  [900, "15 minutes"],
  [1800, "30 minutes"],
  [3600, "1 hour"],
];

/** A race id from what a person pasted: a code, or a link like https://host/race/abc/watch. */
export function raceFromInput(text) {
  const t = text.trim();
  if (!t) return "";
  const m = /\/race\/([^/?#\s]+)/.exec(t);
  return decodeURIComponent(m ? m[1] : t.replace(/^#/, ""));
}

export function mount(root, { seek = null } = {}) {
  document.title = "solrace — patience races";
  const gameSelect = h("select#game", { name: "game", required: true },
    Object.entries(GAME_TITLES).map(([id, title]) => h("option", { value: id }, title)));
  fetchJSON("/api/games")
    .then((games) => {
      if (!Array.isArray(games) || !games.length) return;
      const current = gameSelect.value;
      replace(gameSelect, games.map((g) => h("option", { value: g.game }, g.title || gameTitle(g.game))));
      if (games.some((g) => g.game === current)) gameSelect.value = current;
      readyDeals = new Map(games.map((g) => [g.game, g.winnable ?? 0]));
      showReady();
    })
    .catch(() => {});
  // How many winnable deals the server has solved and ready, per game (its private pool).
  let readyDeals = null;
  const readyNote = h("p.hint.winnable-ready", { "aria-live": "polite" });
  const showReady = () => {
    const n = readyDeals?.get(gameSelect.value);
    readyNote.textContent = n === undefined ? "" : n > 0
      ? `The server keeps fresh winnable deals solved in advance (${n} ready).`
      : "No winnable deal of this game is ready yet: the server is solving some, try again in a minute.";
  };
  gameSelect.addEventListener("change", showReady);

  const racers = h("input#racers", { type: "number", name: "players", min: 1, max: 8, value: 2, required: true });
  const timeLimit = h("select#time-limit", { name: "time_limit" },
    TIME_LIMITS.map(([s, label]) => h("option", { value: s, selected: s === 600 }, label)));
  const undo = h("input#undo", { type: "checkbox", name: "undo", checked: true });
  const isPublic = h("input#public", { type: "checkbox", name: "public" });
  const hints = h("input#hints", { type: "checkbox", name: "hints" });
  const winnable = h("input#winnable", { type: "checkbox", name: "winnable" });
  const seed = h("input#seed", { type: "text", name: "seed", inputmode: "numeric", pattern: "[0-9]*",
    placeholder: "random", autocomplete: "off" });
  winnable.addEventListener("change", () => {
    seed.disabled = winnable.checked;
  });
  const createMsg = h("p.form-msg", { role: "alert" });
  const createBtn = h("button.primary", { type: "submit" }, "Create race");

  const createForm = h("form.panel.create", {
    "aria-labelledby": "create-title",
    onsubmit: async (e) => {
      e.preventDefault();
      createMsg.textContent = "";
      createBtn.disabled = true;
      const options = {
        game: gameSelect.value,
        players: Math.max(1, Math.min(8, Number(racers.value) || 2)),
        time_limit: Number(timeLimit.value),
        undo: undo.checked,
        public: isPublic.checked,
        hints: hints.checked,
      };
      // A winnable deal is drawn by the server from its private pool: no seed then.
      if (winnable.checked) options.winnable = true;
      else if (seed.value.trim()) options.seed = seed.value.trim();
      try {
        const created = await createRace(options);
        navigate(`/race/${encodeURIComponent(created.race)}`, { created: true });
      } catch (err) {
        createMsg.textContent = err.message || "Could not create the race.";
        createBtn.disabled = false;
      }
    },
  },
  h("h2#create-title", {}, "New race"),
  h("div.field", {}, h("label", { for: "game" }, "Game"), gameSelect),
  h("div.field-row", {},
    h("div.field", {}, h("label", { for: "racers" }, "Racers"), racers),
    h("div.field", {}, h("label", { for: "time-limit" }, "Time limit"), timeLimit)),
  h("div.field.check", {}, undo, h("label", { for: "undo" }, "Allow undo")),
  h("div.field.check", {}, isPublic, h("label", { for: "public" }, "Public: list it under open races")),
  h("p.hint.public-hint", {}, "A private race is reached only by its link."),
  h("div.field.check", {}, hints, h("label", { for: "hints" }, `Hints allowed (each adds ${HINT_PENALTY_S} s to the racer's time)`)),
  h("div.field.check", {}, winnable, h("label", { for: "winnable" }, "Winnable deal (certified by the solver)")),
  readyNote,
  h("details.more", {},
    h("summary", {}, "Choose the deal"),
    h("div.field", {}, h("label", { for: "seed" }, "Deal number (seed)"), seed),
    h("p.hint", {}, "Leave empty for a secret random deal, revealed and verifiable when the race ends. " +
      "A winnable deal is always a secret one.")),
  createBtn,
  createMsg);

  const code = h("input#code", { type: "text", name: "code", placeholder: "Race code or link", autocomplete: "off",
    required: true, spellcheck: false });
  const name = h("input#join-name", { type: "text", name: "name", placeholder: "Your name", maxlength: 32,
    value: me.name || store.name(), autocomplete: "nickname" });
  // The name the server keeps for this player, once known (unless the visitor typed one).
  const prefill = () => {
    if (me.name && !name.matches(":focus") && (!name.value || name.value === name.defaultValue)) {
      name.value = me.name;
      name.defaultValue = me.name;
    }
  };
  me.addEventListener("change", prefill);
  const joinMsg = h("p.form-msg", { role: "alert" });
  const go = (suffix, state) => {
    const tournament = /\/tournament\/([^/?#\s]+)/.exec(code.value);
    if (tournament) {
      navigate(`/tournament/${tournament[1]}`);
      return;
    }
    const race = raceFromInput(code.value);
    if (!race) {
      joinMsg.textContent = "Enter a race code or paste a race link.";
      code.focus();
      return;
    }
    navigate(`/race/${encodeURIComponent(race)}${suffix}`, state);
  };
  const joinForm = h("form.panel.join", {
    "aria-labelledby": "join-title",
    onsubmit: (e) => {
      e.preventDefault();
      const n = name.value.trim();
      go("", n ? { autojoin: n } : null);
    },
  },
  h("h2#join-title", {}, "Join or watch"),
  h("div.field", {}, h("label", { for: "code" }, "Race or tournament"), code),
  h("div.field", {}, h("label", { for: "join-name" }, "Name"), name),
  h("div.buttons", {},
    h("button.primary", { type: "submit" }, "Join"),
    h("button", { type: "button", onclick: () => go("/watch") }, "Watch")),
  joinMsg);

  const openRaces = new OpenRaces();
  const yourRaces = new YourRaces(store.recent());
  const rulesList = h("section.panel.rules-list", { "aria-labelledby": "rules-title", id: "rules" },
    h("h2#rules-title", {}, "The games"),
    Object.keys(RULES).map((game) => rulesPanel(game)));
  const rulesLink = h("a.rules-link", { href: "#rules", onclick: (e) => {
    e.preventDefault();
    const panel = rulesList.querySelector(`[data-rules="${gameSelect.value}"]`);
    if (panel) {
      panel.open = true;
      panel.scrollIntoView({ block: "start" });
      panel.querySelector("summary")?.focus();
    }
  } }, "How to play");

  const quick = quickRacePanel();
  const bots = botPanel();
  const live = new LiveStrip();
  const challenge = challengePanel();
  replace(root,
    h("section.hero.hero-compact", {},
      h("h1", {}, "Race the same deal."),
      h("p.lead", {}, "Everyone gets the same shuffled patience deal; the server checks every move. " +
        "Fair by construction: the deal is committed before the start and verifiable afterwards."),
      live.counts),
    h("div.play-grid", {}, quick.el, bots.el,
      h("div.play-side", {}, live.featured.el, live.arenas.el, openRaces.el)),
    homeLinks(),
    h("h2.home-section-title", {}, "Race your friends"),
    challenge.el,
    h("div.home-grid", {}, createForm, joinForm),
    tournamentForm(),
    yourRaces.el,
    yourTournaments(store.tournaments()),
    rulesList);
  const gameLabel = gameSelect.parentElement.querySelector("label");
  const labelRow = h("div.label-row");
  gameLabel.replaceWith(labelRow);
  labelRow.append(gameLabel, rulesLink);
  openRaces.start();
  live.start();
  yourRaces.load();
  if (seek?.game) {
    history.replaceState(null, ""); // going back here later must not seek again
    quick.seek(seek.game, seek.time_limit);
  } else if (seekBeforeReload()?.game) {
    quick.resume(seekBeforeReload()); // the page was reloaded while it sought: the same seek
  }
  return () => {
    openRaces.stop();
    live.stop();
    quick.destroy();
    bots.destroy();
    challenge.destroy();
    me.removeEventListener("change", prefill);
  };
}

/** Today's deal and the leaderboards, one click away. */
function homeLinks() {
  return h("nav.home-links", { "aria-label": "Daily deal and leaderboards" },
    h("a.daily-link", { href: dailyPath(), "data-link": true },
      h("span.daily-star", { "aria-hidden": "true" }, "★"),
      h("span", {}, h("strong", {}, "Today's deal"),
        h("span.muted", {}, " — one deal a day per game, the same for everyone: beat the clock, keep your streak"))),
    h("p.leaderboard-links", {}, h("span.muted", {}, "Leaderboards: "),
      Object.entries(GAME_TITLES).map(([game, title], i) => [i ? " · " : null,
        h("a", { href: leaderboardPath(game), "data-link": true }, title)])));
}
