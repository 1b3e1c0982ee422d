// Tournament page, /tournament/{id}: name, format, games and status; the join form for newcomers
// (the entrant is resumed with his stored token); the entrants before the start; the standings as
// they change (a column per round, your row marked), the knockout bracket, every round's races;
// the countdown to the next round; the host's tools in the host's browser. An entrant's seat in a
// new race (`round`) takes him to that race at once.

import { gameTitle } from "../cards.js";
import { store } from "../storage.js";
import { openSeat, TournamentSession } from "../tournament-session.js";
import {
  announce, copyText, formatTime, frameScheduler, h, navigate, replace, sentence, setConnectionState, setServiceState,
  setHidden, setText, toast,
} from "../ui.js";
import { currentRound, HostPanel } from "./tournament-host.js";
import { bracketView, entrantList, roundsList, standingsTable, tieBreakNote } from "./tournament-tables.js";

export function mount(root, { tournament: tid }) {
  document.title = "Tournament — solrace";
  const session = new TournamentSession(tid);
  window.solrace.tournament = session;
  const model = session.model;
  const link = `${location.origin}/tournament/${encodeURIComponent(tid)}`;

  const title = h("h1.t-title", {}, "Tournament");
  const facts = h("p.t-facts");
  const status = h("span.status-pill.t-status", { role: "status" });
  const clock = h("p.t-next", { role: "timer", "aria-live": "off" });
  const csv = h("a.small.button.t-csv", { href: `/api/tournaments/${encodeURIComponent(tid)}/standings.csv`,
    download: `tournament-${tid}.csv` }, "Standings (CSV)");
  const head = h("header.t-head", {},
    h("div.t-head-main", {}, title, facts),
    h("div.t-head-side", {}, status,
      h("button.small.copy", { type: "button", title: link,
        onclick: async () => toast((await copyText(link)) ? "Tournament link copied" : link, "info", 2500) }, "Copy link"),
      csv),
    clock);

  // --- you: join form, or who you are and where your race is ---
  const nameInput = h("input#entrant-name", { type: "text", maxlength: 32, required: true, value: store.name(),
    placeholder: "Your name", autocomplete: "nickname" });
  const codeInput = h("input#entry-code", { type: "text", maxlength: 64, placeholder: "Entry code", autocomplete: "off",
    spellcheck: false });
  const codeField = h("div.field", {}, h("label", { for: "entry-code" }, "Entry code"), codeInput);
  const joinMsg = h("p.form-msg", { role: "alert" });
  const joinBtn = h("button.primary", { type: "submit" }, "Join tournament");
  const joinForm = h("form.t-join", {
    "aria-labelledby": "you-title",
    onsubmit: async (e) => {
      e.preventDefault();
      const name = nameInput.value.trim();
      if (!name) {
        joinMsg.textContent = "Enter a name to join.";
        nameInput.focus();
        return;
      }
      joinBtn.disabled = true;
      joinMsg.textContent = "";
      try {
        await session.join(name, codeField.hidden ? "" : codeInput.value.trim());
        announce(`You're in, ${name}.`);
      } catch (err) {
        joinMsg.textContent = sentence(err.message || err.code);
      } finally {
        joinBtn.disabled = false;
      }
    },
  },
  h("div.field", {}, h("label", { for: "entrant-name" }, "Your name"), nameInput),
  codeField,
  joinBtn, joinMsg);
  const youBody = h("div.you-body");
  const youPanel = h("section.panel.you-panel", { "aria-labelledby": "you-title" }, h("h2#you-title", {}, "You"), youBody);

  const host = session.isHost ? new HostPanel(session) : null;
  const onRemove = host ? (row) => host.remove(row) : null;
  const entrantsPanel = h("section.panel.entrants-panel", { "aria-labelledby": "entrants-title" });
  const standingsPanel = h("section.panel.standings-panel", { "aria-labelledby": "standings-title" });
  const bracketPanel = h("section.panel.bracket-panel", { "aria-labelledby": "bracket-title" });
  const roundsPanel = h("section.panel.rounds-panel", { "aria-labelledby": "rounds-title" });
  const notFound = h("section.panel.narrow", { hidden: true },
    h("h2", {}, "Tournament not found"),
    h("p", {}, "Check the link. ", h("a", { href: "/", "data-link": true }, "Create one on the start page.")));
  const loading = h("p.muted.t-loading", {}, "Loading the tournament…");
  const replacedBanner = h("div.banner.banner-warn", { role: "status", hidden: true },
    "Your seats in this tournament now go to another tab or window. ",
    h("button.small", { type: "button", onclick: () => session.takeOver() }, "Follow here"));
  const page = h("div.tournament-page", {},
    head, replacedBanner,
    h("div.t-layout", {},
      h("div.t-side", {}, youPanel, host?.el),
      h("div.t-main", {}, entrantsPanel, standingsPanel, bracketPanel, roundsPanel)));
  replace(root, notFound, loading, page);

  function render() {
    setConnectionState(model.connection === "open" ? "" : model.connection);
    setServiceState(model.service);
    notFound.hidden = !model.notFound;
    loading.hidden = model.loaded || model.notFound;
    page.hidden = !model.loaded;
    if (!model.loaded) return;
    const view = model.view;
    document.title = `${view.name} — solrace tournament`;
    title.textContent = view.name;
    facts.textContent = factsText(view);
    status.textContent = statusText(view);
    status.dataset.phase = view.status === "running" && !view.paused ? "running" : view.status;
    replacedBanner.hidden = !model.replaced;
    renderYou(view);
    host?.update(model);
    tick();

    entrantsPanel.hidden = view.status !== "entry";
    if (!entrantsPanel.hidden) replace(entrantsPanel, entrantList(model, { onRemove }));
    standingsPanel.hidden = view.status === "entry";
    if (!standingsPanel.hidden) {
      replace(standingsPanel,
        h("h2#standings-title", {}, view.status === "finished" ? "Final table" : "Live standings"),
        view.status === "finished" ? winnerLine(model) : null,
        tieBreakNote(view),
        h("div.standings", {}, standingsTable(model, { onRemove })));
    }
    const bracket = view.format === "knockout" ? bracketView(model) : null;
    bracketPanel.hidden = !bracket;
    if (bracket) replace(bracketPanel, h("h2#bracket-title", {}, "Bracket"), bracket);
    const rounds = roundsList(model);
    roundsPanel.hidden = !rounds;
    if (rounds) {
      replace(roundsPanel, h("h2#rounds-title", {}, "Rounds and races"),
        h("p.hint", {}, view.format === "knockout" ? "Open any game to watch it; every game has a fresh deal."
          : "Open any race to watch it; every race of a round plays the same deal, revealed when the round is over."),
        rounds);
    }
  }

  function renderYou(view) {
    const me = session.entrant;
    const entrant = (view.entrants || []).find((e) => e.entrant === model.you);
    const parts = [];
    if (model.you && me) {
      parts.push(h("p.you-line", {}, "You're in as ", h("strong", {}, me.name), "."));
      if (entrant?.removed) parts.push(h("p.banner.banner-bad", {}, "The host removed you: you are not seated in later races."));
      const seat = model.seat;
      const cur = currentRound(view);
      if (seat && cur && cur.races.includes(seat.race) && cur.status !== "over" && !cur.results?.[seat.race]) {
        parts.push(h("p.seat-line", {}, `Round ${seat.round}: `,
          h("a.button.primary#go-race", { href: `/race/${encodeURIComponent(seat.race)}`, "data-link": true,
            onclick: () => openSeat(seat) }, "Go to your race")));
      } else if (view.status === "entry") {
        parts.push(h("p.muted", {}, "Keep this page open: when a round starts you are taken to your race."));
      } else if (view.status === "running") {
        parts.push(h("p.muted", {}, "Between races you come back here; the next race opens by itself."));
      }
    } else if (view.status === "entry" && view.entry_open) {
      codeField.hidden = !view.settings?.code;
      parts.push(joinForm);
    } else if (view.status === "entry") {
      parts.push(h("p", {}, "Entry is closed for now."), h("p.muted", {}, "You can watch: the races appear here."));
    } else {
      parts.push(h("p.muted", {}, view.status === "finished" ? "This tournament is over." :
        session.isHost ? "You are hosting (not racing). Open any race below to watch it."
          : "You are watching. Open any race below."));
    }
    if (youBody.children.length !== parts.length || parts.some((p, i) => youBody.children[i] !== p)) {
      // The join form is kept as it is (a half-typed name stays); everything else is redrawn.
      if (!(parts.length === 1 && parts[0] === joinForm && youBody.firstChild === joinForm)) {
        youBody.replaceChildren(...parts);
      }
    }
  }

  function tick() {
    if (!model.loaded) return;
    const text = nextText(model.view, session.now());
    setText(clock, text);
    setHidden(clock, !text);
  }

  const schedule = frameScheduler(render);
  session.addEventListener("change", schedule);
  session.addEventListener("seat", (e) => {
    const { seat, fresh } = e.detail;
    if (!fresh || model.replaced) {
      schedule();
      return;
    }
    toast(`Round ${seat.round}: your race is ready`, "good", 3000);
    navigate(openSeat(seat));
  });
  session.addEventListener("standings", (e) => {
    const lead = model.standings?.[0];
    if (e.detail.type === "standings" && e.detail.round_over && lead && model.view?.format === "rounds") {
      announce(`Round ${e.detail.round} is over. ${lead.name} leads with ${lead.points} point${lead.points === 1 ? "" : "s"}.`);
    }
  });
  session.addEventListener("over", () => {
    toast("The tournament is over", "info", 4000);
    announce("The tournament is over. Final table below.");
  });
  const timer = setInterval(tick, 250);
  session.start();
  schedule();
  return () => {
    clearInterval(timer);
    setServiceState("ok");
    session.close();
    window.solrace.tournament = null;
  };
}

function factsText(view) {
  const s = view.settings || {};
  const games = (s.games || []).map(gameTitle).join(" → ");
  const parts = [];
  if (view.format === "knockout") parts.push(`Knockout, best of ${s.best_of || 1}`);
  else parts.push(`${view.total_rounds} round${view.total_rounds === 1 ? "" : "s"}, duplicate deals (${games})`);
  if (view.format === "knockout") parts.push(games);
  parts.push(`${Math.round((s.time_limit || 0) / 60)} min a race`);
  if (view.format !== "knockout") parts.push(`up to ${s.race_size} racers a race`);
  if (s.winnable) parts.push("winnable deals only");
  if (s.code) parts.push("entry code");
  return parts.join(" · ");
}

function statusText(view) {
  if (view.status === "entry") return view.entry_open ? "Entry open" : "Entry closed";
  if (view.status === "finished") return "Finished";
  const cur = currentRound(view);
  if (view.paused) return "Paused";
  if (!cur) return "Starting";
  const what = view.format === "knockout" ? "Bracket round" : "Round";
  return `${what} ${cur.round} of ${view.total_rounds}${cur.status === "over" ? " · over" : ""}`;
}

/** The countdown line: when the next round starts, or why it waits. */
export function nextText(view, now) {
  if (view.status !== "running") return "";
  const cur = currentRound(view);
  if (cur && cur.status !== "over") return "";
  const what = view.format === "knockout" ? "The next games" : `Round ${(cur?.round || 0) + 1}`;
  if (view.paused) return `Paused by the host: ${what.charAt(0).toLowerCase() + what.slice(1)} will wait.`;
  if (view.next_at) return `${what} ${view.format === "knockout" ? "start" : "starts"} in ` +
    `${formatTime(Math.max(0, view.next_at - now), { tenths: false })}`;
  return `${what} ${view.format === "knockout" ? "start" : "starts"} when the host starts ${view.format === "knockout" ? "them" : "it"}.`;
}

function winnerLine(model) {
  const rows = model.standings || [];
  const first = rows[0];
  if (!first) return null;
  // Entrants equal on everything share first place: none of them is said to win alone.
  const winners = rows.filter((r) => r.place === first.place && !r.flagged);
  if (winners.length < 2) {
    return h("p.t-winner", {}, "♛ ", h("strong", {}, first.name), first.entrant === model.you ? " — that's you!" : " wins.");
  }
  const names = winners.flatMap((r, i) => [i === 0 ? null : i === winners.length - 1 ? " and " : ", ",
    h("strong", {}, r.name)]);
  return h("p.t-winner", {}, "♛ ", names, " share first place",
    winners.some((r) => r.entrant === model.you) ? " — you among them!" : ".");
}
