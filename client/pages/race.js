// Race page, /race/{race}: the join form and lobby, then the racer's own board with the opponents
// beside it, then the results. Wires a RaceSession (protocol) to BoardViews (rendering + intents),
// inside the shell it shares with the spectator page.

import { BoardView } from "../board.js";
import { gameTitle } from "../cards.js";
import { normaliseMove } from "../moves.js";
import { store } from "../net.js";
import { announce, formatTime, h, ordinal, raceLink, replace } from "../ui.js";
import { lobbyList, PlayerCards, seedChosenNote } from "./parts.js";
import { hiddenCardsNote, mountShell } from "./shell.js";

export function mount(root, { race, autojoin = null }) {
  return mountShell(root, {
    race,
    title: `Race ${race} — solrace`,
    middle: ({ session, model }) => racePart(race, session, model, autojoin),
  });
}

function racePart(race, session, model, autojoin) {
  // --- lobby: join form, ready / start, racers list, share link ---
  const nameInput = h("input#racer-name", { type: "text", maxlength: 32, required: true, value: store.name(),
    placeholder: "Your name", autocomplete: "nickname" });
  const joinMsg = h("p.form-msg", { role: "alert" });
  const joinBtn = h("button.primary", { type: "submit" }, "Join race");
  const joinForm = h("form.join-form", {
    onsubmit: async (e) => {
      e.preventDefault();
      await join(nameInput.value.trim());
    },
  }, h("label", { for: "racer-name" }, "Your name"), h("div.inline", {}, nameInput, joinBtn), joinMsg);

  async function join(name) {
    if (!name) {
      joinMsg.textContent = "Enter a name to join.";
      return;
    }
    joinBtn.disabled = true;
    joinMsg.textContent = "";
    try {
      await session.join(name);
    } catch (err) {
      joinMsg.textContent = err.message;
    } finally {
      joinBtn.disabled = false;
    }
  }

  const readyBtn = h("button#ready.primary", { type: "button", onclick: () => session.ready().catch(showError) }, "I'm ready");
  const startBtn = h("button#start.primary", { type: "button", onclick: () => session.startRace().catch(showError) }, "Start race");
  const shareInput = h("input.share-link", { type: "text", readonly: true, value: raceLink(race), "aria-label": "Race link",
    onfocus: (e) => e.target.select() });
  const lobbyPlayers = h("div.lobby-players");
  const commitmentEl = h("code.wrap#lobby-commitment");
  const commitmentBox = h("details.commitment", {},
    h("summary", {}, "Deal commitment"),
    h("p.hint", {}, "SHA-256 of game, seed and a secret salt, fixed now and checked by your browser when " +
      "the race ends: nobody can change the deal after seeing it."),
    commitmentEl);
  const lobbyIntro = h("div.lobby-intro");
  const lobbyActions = h("div.lobby-actions");
  const lobby = h("section.panel.lobby", { "aria-label": "Lobby" },
    lobbyIntro,
    lobbyActions,
    h("div.share", {}, h("label", {}, "Share this link with the other racers"), shareInput),
    lobbyPlayers,
    commitmentBox);

  // --- the race: own board, controls, opponents ---
  const boardEl = h("div");
  const ownView = new BoardView(boardEl, {
    player: "own",
    interactive: true,
    label: "Your board",
    onMove: (text) => session.move(text),
    onAnnounce: (text) => announce(text, { assertive: true }),
  });
  const countdownEl = h("div.countdown", { "aria-live": "assertive" });
  const takeOverBtn = h("button#take-over.small", { type: "button", onclick: () => session.takeOver() },
    "Play here");
  const banner = h("div.banner", { role: "status" });
  const message = h("p.move-msg", { role: "alert" });
  const undoBtn = h("button#undo", { type: "button", onclick: () => session.undo(), title: "Undo (U)" }, "↶ Undo");
  let resignArmed = 0;
  const resignBtn = h("button#resign.danger", {
    type: "button",
    onclick: () => {
      if (!resignArmed) {
        resignBtn.textContent = "Really resign?";
        resignArmed = setTimeout(() => {
          resignArmed = 0;
          resignBtn.textContent = "Resign";
        }, 3000);
        return;
      }
      clearTimeout(resignArmed);
      resignArmed = 0;
      resignBtn.textContent = "Resign";
      session.resign();
    },
  }, "Resign");
  const moveInput = h("input#move-input", { type: "text", list: "legal-moves", autocomplete: "off", spellcheck: false,
    placeholder: "Move, e.g. t3>f1", "aria-label": "Type a move" });
  const legalList = h("datalist#legal-moves");
  const moveForm = h("form.move-form", {
    onsubmit: (e) => {
      e.preventDefault();
      const text = normaliseMove(moveInput.value);
      if (!text) return;
      moveInput.value = "";
      session.move(text);
    },
  }, moveInput, legalList, h("button", { type: "submit" }, "Play"));
  const controls = h("div.controls", {}, undoBtn, resignBtn, moveForm);
  const ownPanel = h("section.own-panel", { "aria-label": "Your game" },
    banner,
    h("div.own-board-wrap", {}, boardEl, countdownEl),
    controls,
    message,
    h("p.hint", {}, "Click a card, then a highlighted pile; or drag it. Double-click sends a card home. " +
      "Keys: Tab/arrows to a pile, Enter to pick and drop, type pile ids (t3 then f1), U to undo, Esc to cancel."));
  const opponentsEl = h("div.opponents-list");
  const opponents = new PlayerCards(opponentsEl, { exclude: () => model.you });
  const aside = h("aside.opponents", { "aria-label": "Opponents" }, h("h2.aside-title", {}, "Opponents"), opponentsEl);
  const raceLayout = h("div.race-layout", {}, ownPanel, aside);
  const note = hiddenCardsNote({ racer: true });
  aside.insertBefore(note.el, opponentsEl);
  let lastLegalKey = "";
  let autojoinDone = false;

  function showError(err) {
    message.textContent = err.message || String(err);
    message.classList.add("shake");
    setTimeout(() => message.classList.remove("shake"), 400);
  }

  function clock(c) {
    countdownEl.hidden = c.phase !== "countdown";
    const text = c.phase === "countdown" ? c.clock : "";
    if (countdownEl.textContent !== text) countdownEl.textContent = text;
  }

  function hide() {
    lobby.hidden = true;
    raceLayout.hidden = true;
  }

  function render() {
    const racer = !!(session.isRacer && model.you);
    const isHost = !!store.host(race);
    const running = model.status === "running";
    lobby.hidden = racer && model.status !== "lobby";
    raceLayout.hidden = !racer || model.status === "lobby";

    // Lobby contents
    replace(lobbyPlayers, lobbyList(model));
    commitmentEl.textContent = model.commitment || "";
    const full = model.options && model.order.length >= model.options.players;
    if (racer) {
      const me = model.players.get(model.you);
      replace(lobbyIntro,
        h("h2", {}, `You're in, ${me?.name || "racer"}.`),
        h("p.muted", {}, isHost ? "Start the race when everyone has joined, or wait until every racer is ready."
          : "The race starts when the host starts it, or when every racer is ready."),
        seedChosenNote(model));
      readyBtn.disabled = !!me?.ready;
      readyBtn.textContent = me?.ready ? "Ready ✓" : "I'm ready";
      setChildren(lobbyActions, [readyBtn, isHost ? startBtn : null]);
    } else if (!running) {
      replace(lobbyIntro,
        h("h2", {}, `${gameTitle(model.game)} race`),
        h("p.muted", {}, model.status === "countdown" ? "Starting now — join quickly!" : optionsText(model.options)),
        seedChosenNote(model));
      setChildren(lobbyActions, [full ? h("p", {}, "This race is full. ", watchLink(race)) : joinForm,
        isHost && model.status === "lobby" ? startBtn : null]);
      if (autojoin && !autojoinDone && !full) {
        autojoinDone = true;
        join(autojoin);
      }
    } else {
      replace(lobbyIntro, h("h2", {}, `${gameTitle(model.game)} race`),
        h("p", {}, "This race has started without you. ", watchLink(race)));
      setChildren(lobbyActions, []);
    }
    if (raceLayout.hidden) return;

    // Own board
    const me = model.players.get(model.you) || {};
    const own = model.own;
    const done = me.finished || me.resigned;
    const live = running && !done && model.connection === "open" && !model.replaced;
    ownView.set({
      board: running || own?.seq ? own?.board ?? null : null,
      legal: own?.legal || [],
      disabled: !live || session.pendingMove,
    });
    boardEl.classList.toggle("busy", session.pendingMove);
    const legalKey = (own?.legal || []).join(",");
    if (legalKey !== lastLegalKey) {
      lastLegalKey = legalKey;
      replace(legalList, (own?.legal || []).map((t) => h("option", { value: t })));
    }
    undoBtn.hidden = !model.options?.undo;
    undoBtn.disabled = !live || !own || own.seq === 0;
    resignBtn.disabled = !live;
    moveInput.disabled = !live;
    if (model.replaced) setBanner("warn", "You are racing this race in another tab or window.", takeOverBtn);
    else if (me.finished) setBanner("good", `You finished ${ordinal(me.place)} in ${formatTime(me.time_ms)}!`);
    else if (me.resigned) setBanner("bad", "You resigned. The others race on.");
    else if (model.connection !== "open" && model.connection !== "connecting") setBanner("warn", "Connection lost — reconnecting…");
    else if (running && own && !own.legal.length) setBanner("warn", "No moves left. Undo if you can, or resign.");
    else setBanner("", "");

    opponents.update(model);
    aside.hidden = opponents.cards.size === 0;
    note.update(model);
  }

  function setBanner(kind, text, action = null) {
    banner.className = `banner ${kind ? `banner-${kind}` : ""}`;
    replace(banner, text, action ? " " : null, action);
    banner.hidden = !text;
  }

  session.addEventListener("rejected", (e) => showError(e.detail));
  let lastSeq = -1;
  session.addEventListener("change", () => {
    // A new accepted state clears the last rejection message.
    const seq = model.own?.seq ?? -1;
    if (seq !== lastSeq) {
      lastSeq = seq;
      message.textContent = "";
    }
  });

  // Keys anywhere on the page (outside text fields) drive the board.
  function keydown(e) {
    if (e.target.closest?.("input, textarea, select, [data-board]")) return; // typing, or the board's own keys
    if (e.ctrlKey || e.metaKey || e.altKey || raceLayout.hidden) return;
    if ((e.key === "u" || e.key === "U") && model.options?.undo && !undoBtn.disabled) {
      e.preventDefault();
      session.undo();
      return;
    }
    ownView.handleKey(e);
  }

  return {
    nodes: [lobby, raceLayout],
    clock,
    hide,
    render,
    keydown,
    destroy: () => ownView.destroy(),
  };
}

function setChildren(el, children) {
  const want = children.filter(Boolean);
  if (want.length === el.children.length && want.every((c, i) => el.children[i] === c)) return;
  el.replaceChildren(...want);
}

function watchLink(race) {
  return h("a", { href: `/race/${encodeURIComponent(race)}/watch`, "data-link": true }, "Watch it live.");
}

function optionsText(options) {
  if (!options) return "";
  const parts = [`up to ${options.players} racer${options.players === 1 ? "" : "s"}`];
  parts.push(`${Math.round(options.time_limit / 60)} min limit`);
  parts.push(options.undo ? "undo allowed" : "no undo");
  return parts.join(" · ");
}
