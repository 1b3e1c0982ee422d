// The home page's one click to a race: Quick race (a seek per game and time limit, with the
// waiting state: time waited, when a bot takes the seat, Cancel) and Play a bot (game and level,
// starting at once). Both end on the race page, seated by token (seek.js).

import { GAME_TITLES, gameTitle } from "../cards.js";
import { me } from "../me.js";
import { CASUAL_REASONS, playBot, Seeker } from "../seek.js";
import { announce, h, navigate, replace, setHidden, setText, toast } from "../ui.js";
import { LEVELS, QUICK_TIMES, ratingChip } from "./player-parts.js";

const GAMES = Object.keys(GAME_TITLES);
const minutes = (s) => `${Math.round(s / 60)} min`;

/** A row of radio buttons drawn as a segmented control: [value, label] pairs. */
export function segmented(name, legend, choices, value) {
  return h("fieldset.segmented", {},
    h("legend", {}, legend),
    h("div.segments", {}, choices.map(([v, label]) => {
      const id = `${name}-${v}`;
      return h("span.segment", {},
        h(`input#${id}`, { type: "radio", name, value: String(v), checked: v === value }),
        h("label", { for: id }, label));
    })));
}

/** Is this browser's player an account (a name with a password)? Only accounts play rated. */
export function isAccount() {
  const p = me.player;
  return !!p && !!(p.account ?? p.password);
}

/** The line that says whether races from here are rated, and for a guest how to make them so. */
export function ratedNote() {
  const el = h("p.hint.rated-note");
  const show = () => {
    el.dataset.rated = String(isAccount());
    el.textContent = isAccount() ? "Rated."
      : "Casual: guests play casual races. Set a password (the menu under your name) to play rated.";
  };
  me.addEventListener("change", show);
  show();
  return { el, destroy: () => me.removeEventListener("change", show) };
}

function checkedValue(root, name) {
  return root.querySelector(`input[name="${name}"]:checked`)?.value;
}

/** The Quick race panel; `destroy()` leaves the queue. */
export function quickRacePanel() {
  const seeker = new Seeker();
  const times = segmented("quick-time", "Time limit", QUICK_TIMES.map((s) => [s, minutes(s)]), 300);
  const msg = h("p.form-msg", { role: "alert" });
  const buttons = new Map();
  const gameButtons = h("div.quick-games", {}, GAMES.map((game) => {
    const rating = h("span.quick-rating");
    const btn = h("button.quick-btn", {
      type: "button",
      dataset: { game },
      onclick: () => {
        msg.textContent = "";
        const time = Number(checkedValue(times, "quick-time") || 300);
        seeker.start(game, time);
        cancelBtn.focus();
        announce(`Looking for an opponent: ${gameTitle(game)}, ${minutes(time)}.`);
      },
    }, h("span.quick-game", {}, gameTitle(game)), rating);
    buttons.set(game, { btn, rating });
    return btn;
  }));
  const waitTitle = h("p.seek-title");
  const waitClock = h("span.seek-clock", { role: "timer", "aria-label": "Time waited" });
  const botNote = h("p.seek-bot.muted");
  const casualNote = h("p.seek-casual.muted");
  const cancelBtn = h("button#cancel-seek", { type: "button", onclick: () => {
    const game = seeker.seek?.game;
    seeker.cancel();
    announce("Search cancelled.");
    buttons.get(game)?.btn.focus();
  } }, "Cancel");
  const waiting = h("div.seeking", { hidden: true },
    h("div.seek-head", {}, h("span.spinner", { "aria-hidden": "true" }), h("p.seek-status", { role: "status" },
      "Looking for an opponent…"), waitClock),
    waitTitle,
    casualNote,
    botNote,
    cancelBtn);
  const choose = h("div.quick-choose", {}, times, gameButtons);
  const rated = ratedNote();
  const el = h("section.panel.quick-race", { "aria-labelledby": "quick-title" },
    h("h2#quick-title", {}, "Quick race"),
    h("p.hint.panel-lead", {}, "Paired with another player of your strength in seconds — or a bot of about " +
      "your level if nobody comes."),
    rated.el,
    choose,
    waiting,
    msg);

  function showRatings() {
    for (const [game, { rating }] of buttons) replace(rating, ratingChip(me.rating(game)) || "");
  }

  function render() {
    const seeking = seeker.state !== "idle";
    // Four times a second while seeking: only what changed is written (see ui.setText).
    setHidden(choose, seeking);
    setHidden(waiting, !seeking);
    if (!seeking) return;
    const { seconds, botIn } = seeker.waited();
    setText(waitClock, `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`);
    const s = seeker.seek;
    if (s) setText(waitTitle, `${gameTitle(s.game)} · ${minutes(s.time_limit)} · ${seeker.rated ? "rated" : "casual"}`);
    setText(casualNote, CASUAL_REASONS[seeker.casual] || "");
    setText(botNote, seeker.state === "paired" ? "Opponent found — taking your seat…"
      : seeker.connection !== "open" ? "Reconnecting…"
        : botIn === null ? "" : botIn > 0 ? `Nobody yet? A bot joins in ${botIn} s.` : "A bot is taking the seat…");
  }

  seeker.addEventListener("change", render);
  seeker.addEventListener("paired", (e) => {
    const who = (e.detail.paired.opponents || []).map((o) => (o.bot ? `${o.name} (a bot)` : o.name)).join(", ");
    const text = who ? `Paired with ${who}` : "Opponent found";
    toast(text, "good", 3000, { silent: true });
    announce(`${text}.`);
    navigate(e.detail.path);
  });
  seeker.addEventListener("failed", (e) => {
    msg.textContent = e.detail.message || "Could not start the search.";
  });
  me.addEventListener("change", showRatings);
  showRatings();
  const tick = setInterval(() => {
    if (seeker.state === "seeking") render();
  }, 250);
  render();
  return {
    el,
    seeker,
    /** Take the seek back after a reload (the server kept it a few seconds: same seek, same
     * time waited; paired meanwhile, its seat). */
    resume({ game, time_limit: timeLimit }) {
      const box = times.querySelector(`input[value="${Number(timeLimit)}"]`);
      if (box) box.checked = true;
      seeker.start(game, Number(timeLimit), { resume: true });
      announce(`Still looking for an opponent: ${gameTitle(game)}, ${minutes(Number(timeLimit))}.`);
    },
    /** Seek at once (the results page's "Next quick race"). */
    seek(game, timeLimit) {
      const box = times.querySelector(`input[value="${Number(timeLimit)}"]`);
      if (box) box.checked = true;
      buttons.get(game)?.btn.click();
    },
    destroy() {
      clearInterval(tick);
      me.removeEventListener("change", showRatings);
      rated.destroy();
      seeker.close();
    },
  };
}

/** The Play a bot panel: game, level (with its rating), time limit; one click starts. */
export function botPanel() {
  const game = h("select#bot-game", { name: "bot-game" }, GAMES.map((g) => h("option", { value: g }, gameTitle(g))));
  const levels = h("fieldset.levels", {},
    h("legend", {}, "Level"),
    LEVELS.map((l) => {
      const id = `bot-level-${l.level}`;
      return h("div.level", {},
        h(`input#${id}`, { type: "radio", name: "bot-level", value: String(l.level), checked: l.level === 2 }),
        h("label", { for: id },
          h("span.level-name", {}, `${l.level} ${l.name}`),
          h("span.level-rating", { title: l.about }, String(l.rating))));
    }));
  const time = h("select#bot-time", { name: "bot-time" },
    QUICK_TIMES.map((s) => h("option", { value: s, selected: s === 300 }, minutes(s))));
  const msg = h("p.form-msg", { role: "alert" });
  const go = h("button.primary#play-bot", { type: "submit" }, "Play the bot");
  const rated = ratedNote();
  const el = h("form.panel.bot-panel", {
    "aria-labelledby": "bot-title",
    onsubmit: async (e) => {
      e.preventDefault();
      msg.textContent = "";
      go.disabled = true;
      try {
        navigate(await playBot(game.value, Number(checkedValue(levels, "bot-level") || 1), Number(time.value)));
      } catch (err) {
        msg.textContent = err.message || "Could not start the race.";
        go.disabled = false;
      }
    },
  },
  h("h2#bot-title", {}, "Play a bot"),
  h("div.field-row", {},
    h("div.field", {}, h("label", { for: "bot-game" }, "Game"), game),
    h("div.field", {}, h("label", { for: "bot-time" }, "Time limit"), time)),
  levels,
  rated.el,
  go,
  msg);
  return { el, destroy: rated.destroy };
}
