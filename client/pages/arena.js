// Arena page, /arena/{id}: the arena's name, game, races' time limit, rated or casual, the house's
// or a player's; the countdown to its start, then to its end; the live table (streaks, form,
// who races, who is paused; your row marked, or shown under the table when you are not in its
// first rows); one button that says what it does (Join the arena, Pause, Resume); your race one
// click away; the podium and the final table at the end.
//
// The page follows the arena through the shared ArenaSession (arena-session.js): an entrant's
// seat in a new race takes him to that race at once (once per race: a seat sent again when he
// comes back shows a "Go to your race" link), and the race page's bar keeps the same connection
// so that he is never seen gone between his races.

import { gameTitle } from "../cards.js";
import { arenaPath, followArena, openArenaSeat } from "../arena-session.js";
import { me } from "../me.js";
import {
  announce, copyText, frameScheduler, h, navigate, replace, sentence, setConnectionState, setHidden,
  setServiceState, setText, toast,
} from "../ui.js";
import { arenaTable, clockText, podium, RULES, standingText, streakMark } from "./arena-table.js";

const PHASE_WORDS = { upcoming: "Starts soon", running: "Running", closing: "Last races", finished: "Finished" };
const PILL = { upcoming: "countdown", running: "running", closing: "running", finished: "finished" };

export function mount(root, { arena: aid }) {
  document.title = "Arena — solrace";
  const session = followArena(aid);
  window.solrace.arena = session;
  const model = session.model;
  const link = `${location.origin}${arenaPath(aid)}`;

  const title = h("h1.a-title", {}, "Arena");
  const facts = h("p.a-facts");
  const status = h("span.status-pill.a-status", { role: "status" });
  const clock = h("p.a-clock", { role: "timer", "aria-live": "off" });
  const head = h("header.a-head", {},
    h("div.a-head-main", {}, title, facts),
    h("div.a-head-side", {}, status,
      h("button.small.copy", { type: "button", title: link,
        onclick: async () => toast((await copyText(link)) ? "Arena link copied" : link, "info", 2500) }, "Copy link")),
    clock);

  // --- you: where you stand, the one button, your race ---
  const msg = h("p.form-msg", { role: "alert" });
  let busy = false;
  const actionBtn = h("button#arena-join", {
    type: "button",
    onclick: async () => {
      const mine = session.mine;
      const pausing = !!mine && !mine.paused;
      busy = true;
      msg.textContent = "";
      schedule();
      try {
        if (pausing) await session.pause();
        else await session.join();
        announce(pausing ? "Paused: you are not paired until you resume."
          : "You're in: you are paired as soon as an opponent is free.");
      } catch (err) {
        msg.textContent = sentence(err.message || err.code);
      } finally {
        busy = false;
        schedule();
      }
    },
  });
  const youLine = h("p.you-line");
  const youState = h("div.you-state");
  const guestNote = h("p.hint.a-guest-note");
  const keepNote = h("p.hint", {}, "Keep a page of solrace open while you are in: when every page of yours is closed " +
    "you are paused.");
  const youPanel = h("section.panel.you-panel", { "aria-labelledby": "you-title" },
    h("h2#you-title", {}, "You"), youLine, youState, h("div.a-actions", {}, actionBtn), msg, guestNote, keepNote);

  const podiumPanel = h("section.panel.podium-panel", { "aria-labelledby": "podium-title", hidden: true });
  const tableTitle = h("h2#table-title");
  const tableNote = h("p.hint.table-note");
  const tableBox = h("div.standings");
  const youBelow = h("div.you-below", { hidden: true });
  const tablePanel = h("section.panel.table-panel", { "aria-labelledby": "table-title" },
    tableTitle, h("p.hint#arena-rules", {}, RULES), tableBox, tableNote, youBelow);
  const notFound = h("section.panel.narrow", { hidden: true },
    h("h2", {}, "Arena not found"),
    h("p", {}, "Check the link. ", h("a", { href: "/", "data-link": true }, "Go to the start page.")));
  const loading = h("p.muted.a-loading", {}, "Loading the arena…");
  const replacedBanner = h("div.banner.banner-warn", { role: "status", hidden: true },
    "You follow this arena in another tab or window now. ",
    h("button.small", { type: "button", onclick: () => session.takeOver() }, "Follow here"));
  const page = h("div.arena-page", { hidden: true },
    head, replacedBanner,
    h("div.a-layout", {},
      h("div.a-side", {}, youPanel),
      h("div.a-main", {}, podiumPanel, tablePanel)));
  replace(root, notFound, loading, page);

  let shownPhase = "";
  let drawn = "";
  let youStateKey = "";

  function render() {
    setConnectionState(model.connection === "open" ? "" : model.connection);
    setServiceState(model.service);
    setHidden(notFound, !model.notFound);
    setHidden(loading, model.loaded || model.notFound);
    setHidden(page, !model.loaded);
    if (!model.loaded) return;
    const view = model.view;
    const phase = session.phase();
    document.title = `${view.name} — solrace arena`;
    setText(title, view.name);
    setText(facts, factsText(view));
    setHidden(replacedBanner, !model.replaced);
    tick();
    renderYou(phase);
    // The table is drawn again only when what it shows changed (a redraw every second would
    // lose a keyboard user's place in it). The phase is the clock's: the start can come after
    // the last message (the pairing's view reached this page before its clock passed the
    // start), and the title must still turn from "Entrants" to "Live table".
    const myId = session.myId;
    const key = JSON.stringify([model.v, phase, myId, model.standings, session.mine]);
    if (key === drawn) return;
    drawn = key;
    renderTable(phase, myId);
  }

  function renderYou(phase) {
    const view = model.view;
    const mine = session.mine;
    const over = phase === "finished";
    if (mine && phase === "upcoming") {
      const n = model.entrants;
      replace(youLine, "You're in. ", h("span.muted", {}, `${n} entrant${n === 1 ? "" : "s"} so far.`));
    } else if (mine) {
      replace(youLine, over ? "You finished: " : "You're in: ", h("strong", {}, standingText(mine, model.entrants)),
        streakMark(mine));
    } else {
      replace(youLine, over ? "This arena is over." : "You are not in this arena.");
    }
    // Redrawn only when it says something else: a keyboard user on "Go to your race" keeps it.
    const stateKey = JSON.stringify([phase, mine && [mine.racing, mine.race, mine.paused], model.seat?.race]);
    if (stateKey !== youStateKey) {
      youStateKey = stateKey;
      replace(youState, ...youStateParts(phase, mine));
    }
    // One button that says what it does.
    const show = !over && phase !== "closing" && !model.replaced && view;
    setHidden(actionBtn, !show);
    const label = !mine ? "Join the arena" : mine.paused ? "Resume" : "Pause";
    setText(actionBtn, label);
    actionBtn.className = label === "Pause" ? "" : "primary";
    actionBtn.disabled = busy || model.connection !== "open";
    setText(guestNote, over ? "" : !view.rated ? "A casual arena: no rating changes."
      : me.player?.account ? "Rated: your races here change your rating."
        : "As a guest your races here are casual: set a password (the menu under your name) to play rated.");
    setHidden(guestNote, !guestNote.textContent);
    setHidden(keepNote, over || !mine || mine.paused);
  }

  function youStateParts(phase, mine) {
    const seat = model.seat;
    if (phase === "finished") return [];
    if (mine?.racing && seat && seat.race === mine.race) {
      return [h("p.seat-line", {}, "Your race is ready — ",
        h("a.button.primary#arena-go", { href: `/race/${encodeURIComponent(seat.race)}`, "data-link": true,
          onclick: () => openArenaSeat(seat) }, "Go to your race"))];
    }
    if (mine?.racing) return [h("p.muted", {}, "You are racing.")];
    if (mine?.paused) return [h("p.muted", {}, "You are paused: you are not paired until you resume. Your points are kept.")];
    if (mine) {
      return [h("p.muted", {}, phase === "upcoming" ? "You are paired as soon as it starts: your race opens by itself."
        : phase === "running" ? "Waiting for an opponent: your next race opens by itself."
          : "Its time is up: no more pairings.")];
    }
    if (phase === "closing") return [h("p.muted", {}, "Its time is up: nobody joins now.")];
    return [h("p.muted", {}, "Join to race head to head: after every race you are paired again, until the end.")];
  }

  function renderTable(phase, myId) {
    const over = phase === "finished";
    const rows = model.standings;
    setHidden(podiumPanel, !over);
    if (over) replace(podiumPanel, h("h2#podium-title", {}, "Podium"), podium(rows, myId));
    setText(tableTitle, over ? "Final table" : phase === "upcoming" ? `Entrants (${model.entrants})` : "Live table");
    replace(tableBox, rows.length ? arenaTable(rows, { myId, caption: over ? "Final table" : "Table" })
      : h("p.muted.a-empty", {}, phase === "upcoming" ? "Nobody has joined yet. Share the link!" : "Nobody has joined."));
    setText(tableNote, model.entrants > rows.length ? `The first ${rows.length} of ${model.entrants} racers.` : "");
    setHidden(tableNote, !tableNote.textContent);
    // Your row, when it is not among the rows shown.
    const mine = session.mine;
    const below = !!mine && !rows.some((r) => r.player === mine.player);
    setHidden(youBelow, !below);
    if (below) replace(youBelow, h("h3", {}, "Your row"), arenaTable([mine], { myId, caption: "Your row" }));
  }

  function tick() {
    if (!model.loaded) return;
    const phase = session.phase();
    const text = phase === "finished" ? "" : clockText(session); // the status says Finished
    setText(clock, text);
    setHidden(clock, !text);
    setText(status, PHASE_WORDS[phase] || "");
    status.dataset.phase = PILL[phase] || "";
    if (shownPhase && phase !== shownPhase) {
      if (phase === "running") announce(`${model.view.name} has started.`);
      if (phase === "closing") announce("The arena's time is up: the last races are finishing.");
      schedule(); // the words of the panels change with it
    }
    shownPhase = phase;
  }

  const schedule = frameScheduler(render);
  const onSeat = (e) => {
    const { seat, fresh } = e.detail;
    if (!fresh || model.replaced) {
      schedule();
      return;
    }
    toast("Your race is ready", "good", 3000);
    navigate(openArenaSeat(seat));
  };
  const onOver = () => {
    toast("The arena is over", "info", 4000);
    announce("The arena is over. The podium and the final table are below.");
  };
  session.addEventListener("change", schedule);
  session.addEventListener("seat", onSeat);
  session.addEventListener("over", onOver);
  me.addEventListener("change", schedule);
  const timer = setInterval(tick, 250);
  schedule();
  return () => {
    clearInterval(timer);
    setServiceState("ok");
    session.removeEventListener("change", schedule);
    session.removeEventListener("seat", onSeat);
    session.removeEventListener("over", onOver);
    me.removeEventListener("change", schedule);
    session.release();
    window.solrace.arena = null;
  };
}

function factsText(view) {
  const parts = [gameTitle(view.game), `races of ${Math.round(view.time_limit / 60)} min`,
    view.rated ? "rated" : "casual", view.house ? "by the house" : "made by a player"];
  const at = (ms) => new Date(ms).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  parts.push(`${at(view.starts_at)}–${at(view.ends_at)}`);
  return parts.join(" · ");
}
