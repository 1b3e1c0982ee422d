// Race page, /race/{race}: the join form and lobby, then the racer's own board with the opponents
// beside it, then the results. Wires a RaceSession (protocol) to BoardViews (rendering + intents),
// inside the shell it shares with the spectator page.

import { BoardView } from "../board.js";
import { fitBoard } from "../fit.js";
import { cardFace, cardShort, gameTitle, prettyCards } from "../cards.js";
import { me } from "../me.js";
import { normaliseMove, parseMove } from "../moves.js";
import { rulesPanel } from "../rules.js";
import { play } from "../sounds.js";
import { store } from "../storage.js";
import { announce, formatTime, h, ordinal, raceLink, replace, setHidden } from "../ui.js";
import { FinishMoment, liveStandings, nextActions } from "./finish.js";
import { HintControl } from "./hint.js";
import { optionTags } from "./lobby.js";
import { lobbyList, PlayerCards, seedChosenNote } from "./parts.js";
import { soundSwitch } from "./settings.js";
import { hiddenCardsNote, mountShell } from "./shell.js";
import { YourStrip } from "./strip.js";

export function mount(root, { race, autojoin = null }) {
  return mountShell(root, {
    race,
    title: `Race ${race} — solrace`,
    middle: ({ session, model }) => racePart(race, session, model, autojoin),
  });
}

function racePart(race, session, model, autojoin) {
  // --- lobby: join form, ready / start, racers list, share link ---
  const nameInput = h("input#racer-name", { type: "text", maxlength: 32, required: true, value: me.name || store.name(),
    placeholder: "Your name", autocomplete: "nickname" });
  // The name the server keeps for this player, once known (unless the racer typed one).
  const prefill = () => {
    if (me.name && !nameInput.matches(":focus") && (!nameInput.value || nameInput.value === nameInput.defaultValue)) {
      nameInput.value = me.name;
      nameInput.defaultValue = me.name;
    }
  };
  me.addEventListener("change", prefill);
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
      // A player races under his name: a new one typed here renames him first.
      if (me.player && name !== me.name) await me.setName(name);
      await session.join(name);
    } catch (err) {
      joinMsg.textContent = err.code === "name_taken"
        ? `“${name}” belongs to another player: choose another name.` : err.message;
    } finally {
      joinBtn.disabled = false;
    }
  }

  // Refusals of ready/start are said next to those buttons (the race's own message line is
  // not on screen in the lobby).
  const lobbyMsg = h("p.form-msg.lobby-msg", { role: "alert" });
  const lobbyError = (err) => {
    lobbyMsg.textContent = err.message || String(err);
  };
  const readyBtn = h("button#ready.primary", { type: "button",
    onclick: () => { lobbyMsg.textContent = ""; session.ready().catch(lobbyError); } }, "I'm ready");
  const startBtn = h("button#start.primary", { type: "button",
    onclick: () => { lobbyMsg.textContent = ""; session.startRace().catch(lobbyError); } }, "Start race");
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
  const lobbyRules = h("div.lobby-rules");
  const share = h("div.share", {}, h("label", {}, "Share this link with the other racers"), shareInput);
  const lobby = h("section.panel.lobby", { "aria-label": "Lobby" },
    lobbyIntro,
    lobbyActions,
    lobbyMsg,
    share,
    lobbyPlayers,
    lobbyRules,
    commitmentBox);

  // --- the race: own board, controls, opponents ---
  const boardEl = h("div");
  const ownView = new BoardView(boardEl, {
    player: "own",
    interactive: true,
    pileNames: true,
    label: "Your board",
    onMove: (text) => session.move(text),
    onAnnounce: (text) => announce(text, { assertive: true }),
    onEscape: () => {
      if (!session.queued) return false;
      session.cancelPremove();
      announce("Premove cancelled.");
      return true;
    },
  });
  const countdownEl = h("div.countdown", { "aria-live": "assertive" });
  const boardWrap = h("div.own-board-wrap", {}, boardEl, countdownEl);
  const finishMoment = new FinishMoment(document.body);
  const takeOverBtn = h("button#take-over.small", { type: "button", onclick: () => session.takeOver() },
    "Play here");
  const claimBtn = h("button#claim.small", { type: "button", onclick: () => session.claim() },
    "End the race now");
  const banner = h("div.banner", { role: "status" });
  // The last one racing: the time he has left to make a move (the banner says why, once).
  const lastLeft = h("span.last-left", { "aria-hidden": "true" });
  const lastOne = () => model.status === "running" && !!model.you && model.lastRacer?.player === model.you
    && !model.replaced;
  const strip = new YourStrip();
  const baseRank = h("p.base-rank", { hidden: true });
  const message = h("p.move-msg", { role: "alert" });
  const actionLine = h("p.action-line", { "aria-live": "polite" });
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
    placeholder: "Move, e.g. t3>f1", "aria-label": "Type a move (pile names as shown on the board)" });
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
  const hint = new HintControl(session);
  const controls = h("div.controls", {}, undoBtn, hint.button, resignBtn, soundSwitch(), moveForm);
  const raceRules = h("div.race-rules");
  const playPanel = h("div.play-panel", {},
    baseRank,
    boardWrap,
    controls,
    hint.line,
    actionLine,
    message,
    // With a mouse and keys, or on a touch screen: style.css shows the one that fits the screen.
    h("p.hint.for-pointer", {}, "Click a card, then a highlighted pile; or drag it. Double-click sends a card home. " +
      "Moves show at once; you need not wait for the server. " +
      "When a move turns up a card not shown yet, you can already pick the next one (a premove). " +
      "Keys: Tab to the board, arrows between piles, Enter to pick and drop, type pile names (t3 then f1), " +
      "U to undo, H for a hint (when the race allows them), Esc to cancel."),
    h("p.hint.for-touch", {}, "Tap a card, then a highlighted pile; or drag it. Tap a card twice quickly to " +
      "send it to a foundation. Moves show at once; while a turned-up card is on its way you can " +
      "already pick the next one (a premove)."),
    raceRules);

  // After the racer is done (finished or resigned) while others still race.
  const doneTitle = h("h2.done-title");
  const doneStandings = h("div.standings");
  const doneActions = nextActions(session, { watch: true });
  const donePanel = h("section.panel.done-panel", { "aria-labelledby": "done-title", hidden: true },
    h("div.done-head", {}, doneTitle, doneActions.el),
    h("p.muted", {}, "The race goes on: the standings and the other boards follow it live. " +
      "Rematch is open once the race is over."),
    doneStandings);
  doneTitle.id = "done-title";

  const ownPanel = h("section.own-panel", { "aria-label": "Your game" }, banner, strip.el, playPanel, donePanel);
  const opponentsEl = h("div.opponents-list");
  const opponents = new PlayerCards(opponentsEl, { exclude: () => model.you });
  const aside = h("aside.opponents", { "aria-label": "Opponents" }, h("h2.aside-title", {}, "Opponents"), opponentsEl);
  const raceLayout = h("div.race-layout", {}, ownPanel, aside);
  const note = hiddenCardsNote({ racer: true });
  aside.insertBefore(note.el, opponentsEl);
  let lastLegalKey = "";
  let autojoinDone = false;
  let rulesGame = null;

  function showError(err) {
    message.textContent = err.message || String(err);
    message.classList.add("shake");
    setTimeout(() => message.classList.remove("shake"), 400);
  }

  let lastCount = null;
  let lowWarned = false;
  function clock(c) {
    setHidden(countdownEl, c.phase !== "countdown");
    const text = c.phase === "countdown" ? c.clock : "";
    if (countdownEl.textContent !== text) countdownEl.textContent = text;
    // Sounds: a tick per second of the countdown, a higher one at the start, one at 30 s left.
    if (c.phase === "countdown" && text !== lastCount) {
      lastCount = text;
      play("tick");
    } else if (c.phase === "running" && lastCount !== null) {
      lastCount = null;
      play("go");
    }
    if (lastOne()) {
      const left = formatTime(Math.max(0, model.lastRacer.ends_at - session.now()), { tenths: false });
      if (lastLeft.textContent !== `(${left} left)`) lastLeft.textContent = `(${left} left)`;
    }
    if (c.phase === "running" && c.low && !lowWarned && session.isRacer) {
      lowWarned = true;
      play("lowtime");
      announce("30 seconds left", { assertive: true });
    }
  }

  function hide() {
    lobby.hidden = true;
    raceLayout.hidden = true;
    finishMoment.hide();
  }

  function render() {
    const racer = !!(session.isRacer && model.you);
    const isHost = !!store.host(race);
    const running = model.status === "running";
    lobby.hidden = racer && model.status !== "lobby";
    raceLayout.hidden = !racer || model.status === "lobby";
    if (model.game && rulesGame !== model.game) {
      rulesGame = model.game;
      replace(lobbyRules, rulesPanel(model.game, { open: true, id: "rules" }));
      replace(raceRules, rulesPanel(model.game, { id: "race-rules" }));
    }

    // Lobby contents. A race of a tournament seats its entrants: they need not say ready, and
    // nobody else can join it.
    const tour = model.tournament;
    // A race of Quick race, Play a bot or the daily deal seats the racers it paired: it starts
    // as soon as they sat, with no ready or start.
    const seated = !!session.credentials?.kind;
    share.hidden = !!tour || seated;
    replace(lobbyPlayers, lobbyList(model));
    commitmentEl.textContent = model.commitment || "";
    const full = model.options && model.order.length >= model.options.players;
    if (racer) {
      const me = model.players.get(model.you);
      replace(lobbyIntro,
        h("h2", {}, `You're in, ${me?.name || "racer"}.`),
        h("p.muted", {}, tour ? `Round ${tour.round} of ${tour.name}: the race starts as soon as every seated ` +
          "entrant is here, or when the grace time runs out."
          : seated ? seatedText(model)
            : isHost ? "Start the race when everyone has joined, or wait until every racer is ready."
              : "The race starts when the host starts it, or when every racer is ready."),
        optionTags(model.options),
        seedChosenNote(model));
      readyBtn.disabled = !!me?.ready;
      readyBtn.textContent = me?.ready ? "Ready ✓" : "I'm ready";
      setChildren(lobbyActions, tour || seated ? [] : [readyBtn, isHost ? startBtn : null]);
    } else if (!running) {
      replace(lobbyIntro,
        h("h2", {}, `${gameTitle(model.game)} race`),
        h("p.muted", {}, model.status === "countdown" && !tour ? "Starting now — join quickly!" : optionsText(model.options)),
        optionTags(model.options),
        seedChosenNote(model));
      if (tour) {
        setChildren(lobbyActions, [h("p.seated-note", {}, `This race seats the entrants of ${tour.name} (round ${tour.round}). `,
          watchLink(race))]);
      } else {
        setChildren(lobbyActions, [full ? h("p", {}, "This race is full. ", watchLink(race)) : joinForm,
          isHost && model.status === "lobby" ? startBtn : null]);
      }
      if (autojoin && !autojoinDone && !full && !tour) {
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
    const done = !!(me.finished || me.resigned);
    const live = running && !done && !model.replaced;
    const pending = session.pendingMove;
    hint.update(model, live && model.connection === "open"); // first: a spent hint leaves the board
    ownView.set({
      board: running || own?.seq ? own?.board ?? null : null,
      legal: own?.legal || [],
      disabled: !live,
      premove: !!own?.awaiting, // a card the last move turned up is on its way: picks are premoves
      queued: session.queued?.kind === "move" ? session.queued.move : null,
      hint: live ? hint.move : null,
      motion: session.motion,
    });
    ownView.schedule.flush(); // this render is already in a frame: draw the board in it too
    const base = model.game === "quadruple-canfield" ? ownView.baseRank : null;
    baseRank.hidden = !base;
    if (base) baseRank.textContent = `Base rank ${cardFace(`${base}S`).rank}: every foundation starts ` +
      `at ${cardFace(`${base}S`).rank} and builds up in its suit (♣ f1–f4, ♠ f5–f8, ♥ f9–f12, ♦ f13–f16), K→A wraps.`;
    const legalKey = (own?.legal || []).join(",");
    if (legalKey !== lastLegalKey) {
      lastLegalKey = legalKey;
      replace(legalList, (own?.legal || []).map((t) => h("option", { value: t })));
    }
    undoBtn.hidden = !model.options?.undo;
    undoBtn.disabled = !live || !own || own.seq === 0;
    resignBtn.disabled = !live || model.connection !== "open";
    moveInput.disabled = !live;
    actionLine.textContent = actionText(session, model);
    actionLine.hidden = !actionLine.textContent;
    strip.update(model, session.now());

    if (model.replaced) setBanner("warn", "You are racing this race in another tab or window.", takeOverBtn);
    else if (me.finished) setBanner("good", `You finished ${ordinal(me.place)} in ${formatTime(me.time_ms)}!`);
    else if (me.resigned) setBanner("bad", "You resigned. The others race on.");
    else if (model.connection === "offline") setBanner("warn", "You are offline — play resumes by itself when the network is back.");
    else if (model.connection !== "open" && model.connection !== "connecting") setBanner("warn", "Connection lost — reconnecting…");
    else if (running && own && !own.legal.length && !own.awaiting && !pending
      && own.progress.foundation < own.progress.total) setBanner("warn", "No moves left. Undo if you can, or resign.");
    else if (lastOne()) {
      setBanner("warn", "You're the last one racing: the race ends if you make no move for " +
        `${Math.round(model.lastRacer.idle_ms / 1000)} s.`, lastLeft);
    } else if (session.claimable()) setBanner("warn", "Everyone else still racing has been offline for a minute.", claimBtn);
    else setBanner("", "");

    // Done while the race goes on: standings and the other boards take the board's place.
    playPanel.hidden = done;
    donePanel.hidden = !done;
    raceLayout.classList.toggle("after-finish", done);
    if (done) {
      doneTitle.textContent = "Live standings";
      replace(doneStandings, liveStandings(model));
      doneActions.update();
    }
    opponents.update(model);
    aside.hidden = opponents.cards.size === 0;
    note.update(model);
    fit(); // last: the banner and the strip above the board are drawn
  }

  // The board and the controls under it stay in the window: the board gets the height left.
  function fit() {
    if (!raceLayout.hidden && !playPanel.hidden) fitBoard(boardEl, { below: controls });
  }
  window.addEventListener("resize", fit);

  function setBanner(kind, text, action = null) {
    const cls = `banner ${kind ? `banner-${kind}` : ""}`;
    if (banner.className === cls && banner.firstChild?.textContent === text && !action) return;
    banner.className = cls;
    replace(banner, text, action ? " " : null, action);
    banner.hidden = !text;
  }

  session.addEventListener("rejected", (e) => {
    const { move } = e.detail;
    const text = prettyCards(e.detail.message || e.detail.code);
    showError({ message: text });
    play("refused");
    announce(`Refused: ${text}`, { assertive: true });
    const mv = move ? parseMove(move) : null;
    if (mv) ownView.flash(mv.to === "w" || mv.to === "s" ? mv.from : mv.to, text);
  });
  session.addEventListener("played", (e) => {
    message.textContent = ""; // the next action clears the last refusal (not a resync after it)
    const mv = e.detail.kind === "move" && e.detail.move ? parseMove(e.detail.move) : null;
    play(mv?.to.startsWith("f") ? "home" : "move");
  });
  session.addEventListener("premove-dropped", (e) => {
    const mv = parseMove(e.detail.move);
    const text = `Premove ${e.detail.move} cancelled: not legal after your last move`;
    if (mv) ownView.flash(mv.from, "Premove cancelled");
    announce(text);
  });
  session.addEventListener("finisher", (e) => {
    if (e.detail.player !== model.you) return;
    finishMoment.show(e.detail);
    play("finish");
  });

  // Keys anywhere on the page (outside text fields) drive the board.
  function keydown(e) {
    if (e.target.closest?.("input, textarea, select, summary")) return; // typing
    if (e.ctrlKey || e.metaKey || e.altKey || raceLayout.hidden) return;
    // U and H work on the board too: no pile's name starts with either.
    if ((e.key === "u" || e.key === "U") && model.options?.undo && !undoBtn.disabled) {
      e.preventDefault();
      session.undo();
      return;
    }
    if ((e.key === "h" || e.key === "H") && model.options?.hints && !hint.button.hidden) {
      e.preventDefault();
      hint.ask();
      return;
    }
    if (e.target.closest?.("[data-board]")) return; // the board's own keys
    ownView.handleKey(e);
  }

  return {
    nodes: [lobby, raceLayout],
    clock,
    hide,
    render,
    keydown,
    destroy: () => {
      window.removeEventListener("resize", fit);
      finishMoment.hide();
      ownView.destroy();
      me.removeEventListener("change", prefill);
    },
  };
}

/** What the player's own moves are doing, when it is worth saying: drawn but waiting for the
 * connection or for the server's storage, a premove queued. */
function actionText(session, model) {
  const waiting = session.actions.filter((a) => !a.token);
  const queued = session.queued;
  const parts = [];
  if (waiting.length) {
    const first = waiting[0];
    const what = waiting.length > 1 ? `Your ${waiting.length} moves`
      : first.kind === "undo" ? "Your undo" : `Your move ${first.move}`;
    if (model.connection !== "open") parts.push(`${what} will be sent when the connection is back.`);
    else if (session.paused) parts.push(`${what} could not be saved yet — trying again.`);
  }
  if (queued) {
    const mv = queued.kind === "move" ? parseMove(queued.move) : null;
    const card = mv ? cardAtTop(model.own?.board, mv.from, mv.count) : null;
    parts.push(queued.kind === "undo" ? "Undo queued." :
      `Premove: ${queued.move}${card ? ` (${cardShort(card)})` : ""} — sent if still legal, Esc cancels.`);
  }
  return parts.join(" ");
}

function cardAtTop(board, pile, count) {
  const cards = board?.piles.find((p) => p.pile === pile)?.cards || [];
  return cards[cards.length - count] || null;
}

function setChildren(el, children) {
  const want = children.filter(Boolean);
  if (want.length === el.children.length && want.every((c, i) => el.children[i] === c)) return;
  el.replaceChildren(...want);
}

function watchLink(race) {
  return h("a", { href: `/race/${encodeURIComponent(race)}/watch`, "data-link": true }, "Watch it live.");
}

/** The lobby of a race the server paired: who against whom, and when it starts. */
function seatedText(model) {
  const kind = model.options?.kind;
  const rated = model.options?.rated ? "Rated" : "Casual";
  if (kind === "daily") return `Today's deal${model.options?.day ? ` (${model.options.day})` : ""}: ` +
    "alone against the clock. It starts in a moment.";
  if (kind === "bot") return `${rated} race against a house bot: it starts in a moment.`;
  // An arena's races are rated for its accounts only (a guest's are casual).
  if (kind === "arena") return `${model.options?.rated && me.player?.account ? "Rated" : "Casual"} race of ` +
    `${model.arena?.name || "an arena"}: it starts as soon as both racers are seated.`;
  return `${rated} quick race: it starts as soon as both racers are seated.`;
}

function optionsText(options) {
  if (!options) return "";
  const parts = [`up to ${options.players} racer${options.players === 1 ? "" : "s"}`];
  parts.push(`${Math.round(options.time_limit / 60)} min limit`);
  parts.push(options.undo ? "undo allowed" : "no undo");
  return parts.join(" · ");
}
