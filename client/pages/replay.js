// Replay of a finished race: two racers' boards side by side at the same moment of the race
// (the replay API gives the race time of every action), stepped action by action or played in
// race time, each move shown as text and in words ("7♥ from fan 3 to a foundation"). Each racer's
// post-race analysis (analysis.js) marks his timeline — winnable, lost, the move that lost the
// deal, his longest thinks — and says of every position whether it could still be won, marking
// the better move on the board at the last winnable position before a loss; "Play on" starts a
// practice game (practice.js) from the last winnable position when the one shown is lost, with
// the solver's line to show its next move, or from the position shown.

import { BoardView } from "../board.js";
import { cardShort, pileLabel } from "../cards.js";
import { parseMove } from "../moves.js";
import { fetchJSON, formatTime, h, replace } from "../ui.js";
import { analysisBlock, loadAnalysis, lossBefore, verdictAt } from "./analysis.js";
import { Practice } from "./practice.js";

const TABLEAU_NAME = { scotch: "fan", yukon: "column", "quadruple-canfield": "tableau" };
const TICK_MS = 100;

const svg = (d) => `<svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true"><path fill="currentColor" d="${d}"/></svg>`;
const ICONS = {
  first: svg("M3 2h2v12H3zM14 2v12L6 8z"),
  prev: svg("M12 2v12L4 8z"),
  next: svg("M4 2v12l8-6z"),
  last: svg("M11 2h2v12h-2zM2 2v12l8-6z"),
};

function pileCards(board, pile) {
  return board?.piles.find((p) => p.pile === pile)?.cards || [];
}

/** A move in words, from the boards before and after it (the card is read off the boards; no
 * rules): "7♥ from fan 3 to a foundation", "dealt 3 cards to the waste", "undo". */
export function describeMove(text, before, after) {
  if (text === "undo") return "took back the last move";
  const mv = parseMove(text);
  if (!mv) return text;
  const name = (pile) => pileLabel(pile, TABLEAU_NAME[before?.game] || "pile").toLowerCase();
  if (mv.from === "s" && mv.to === "w") {
    const n = pileCards(after, "w").length - pileCards(before, "w").length;
    return `dealt ${n > 0 ? n : "the"} card${n === 1 ? "" : "s"} to the waste`;
  }
  if (mv.from === "w" && mv.to === "s") return "turned the waste over";
  const src = pileCards(before, mv.from);
  let card = src[src.length - mv.count];
  if (!card) {
    const dst = pileCards(after, mv.to);
    card = dst[dst.length - mv.count];
  }
  const what = card ? cardShort(card) : "a card";
  const group = mv.count > 1 ? ` and ${mv.count - 1} more` : "";
  const to = mv.to.startsWith("f") ? "a foundation" : name(mv.to);
  return `${what}${group} from ${name(mv.from)} to ${to}`;
}

/** Two boards stepping through two racers' moves together, by race time. */
export class Replay {
  constructor(el, race, players, you) {
    this.el = el;
    this.race = race;
    this.players = players;
    this.cache = new Map();
    this.practice = null; // the practice game being played, if any
    this.step = 0; // index into this.points
    this.points = [0]; // race times (ms) at which either shown racer acted, and the start
    this.time = 0; // the race time shown
    this.timer = 0;
    const first = players.find((p) => p.player === you) || players[0];
    const second = players.find((p) => p.player !== first.player) || first;
    this.sides = [this.side("a", first.player), this.side("b", second.player)];
    this.slider = h("input#replay-step", { type: "range", min: 0, max: 0, value: 0, "aria-label": "Replay step",
      oninput: () => this.go(Number(this.slider.value)) });
    this.stepText = h("span.step-text", { "aria-live": "polite" });
    this.playBtn = h("button#replay-play", { type: "button", onclick: () => this.toggle() }, "▶ Play");
    this.speed = h("select", { "aria-label": "Speed" },
      [[1, "1×"], [2, "2×"], [5, "5×"], [10, "10×"]].map(([x, l]) => h("option", { value: x, selected: x === 5 }, l)));
    const btn = (label, title, fn) => {
      const b = h("button.small.icon", { type: "button", title, "aria-label": title, onclick: fn });
      b.innerHTML = label;
      return b;
    };
    this.timeline = h("div.replay-timeline", { role: "group", "aria-label": "Where the deal was lost" });
    this.main = h("div.replay-main", {},
      h("p.hint", {}, "Both boards show the same moment of the race; Play runs in race time. " +
        "Under the controls, each racer's line: green while the solver, knowing every card, could still " +
        "win the deal from his position, red once it could not."),
      h("div.replay-controls", {},
        btn(ICONS.first, "First position", () => this.go(0)),
        btn(ICONS.prev, "Previous move", () => this.go(this.step - 1)),
        this.playBtn,
        btn(ICONS.next, "Next move", () => this.go(this.step + 1)),
        btn(ICONS.last, "Last position", () => this.go(this.points.length - 1)),
        this.slider, this.stepText, this.speed),
      this.timeline,
      h("div.replay-boards", {}, this.sides.map((s) => s.el)));
    this.practiceHost = h("section.practice", { hidden: true, "aria-labelledby": "practice-title" });
    replace(el, h("h2#replay-title", {}, "Replay"), this.main, this.practiceHost);
    this.onKey = (e) => {
      if (this.practice) return; // the practice board has the keys
      if (e.target.closest?.("input:not([type=range]), select, textarea")) return;
      if (e.key === "ArrowRight") this.go(this.step + 1);
      else if (e.key === "ArrowLeft") this.go(this.step - 1);
      else return;
      e.preventDefault();
    };
    el.addEventListener("keydown", this.onKey);
    for (const s of this.sides) this.load(s, s.player);
  }

  side(key, player) {
    const select = h("select", { "aria-label": `Racer ${key.toUpperCase()}` },
      this.players.map((p) => h("option", { value: p.player, selected: p.player === player }, p.name)));
    const boardEl = h("div", { dataset: { replay: key } });
    const view = new BoardView(boardEl, { player, compact: false, emptyText: "Loading…", label: "Replay board" });
    const caption = h("p.replay-move");
    const words = h("p.replay-words");
    const verdict = h("p.replay-verdict");
    const analysisEl = h("div.replay-analysis", { "aria-live": "polite" });
    const side = { key, player, select, view, boardEl, caption, words, verdict, analysisEl, data: null,
      analysis: null, i: 0, loading: null };
    side.playOn = h("button.small.play-on", { type: "button", disabled: true, onclick: () => this.playOn(side),
      title: "A practice game against a clock: unrated, in your browser alone" },
    "Play on from here");
    // Shown when the position is lost: the practice game from it, not from the last winnable one.
    side.playHere = h("button.small.play-here", { type: "button", hidden: true,
      onclick: () => this.playOn(side, { here: true }),
      title: "A practice game from the lost position shown" }, "or from here");
    select.addEventListener("change", () => this.load(side, select.value));
    side.el = h("div.replay-side", { dataset: { side: key } },
      h("div.replay-head", {}, select, caption), words, h("div.replay-tools", {}, verdict, h("span.play-buttons", {}, side.playOn, side.playHere)),
      boardEl, analysisEl);
    return side;
  }

  load(side, player) {
    side.loading = this.fetchSide(side, player);
    return side.loading;
  }

  async fetchSide(side, player) {
    side.player = player;
    side.boardEl.dataset.board = player;
    side.el.dataset.player = player;
    side.data = null;
    side.analysis = null;
    side.view.set({ board: null });
    replace(side.analysisEl);
    try {
      if (!this.cache.has(player)) {
        this.cache.set(player, fetchJSON(`/api/races/${encodeURIComponent(this.race)}/replay/${encodeURIComponent(player)}`));
      }
      const data = await this.cache.get(player);
      if (side.player !== player) return;
      side.data = data;
    } catch (err) {
      this.cache.delete(player);
      side.caption.textContent = `Replay unavailable (${err.message}).`;
      return;
    }
    side.view.set({ label: `Replay: ${side.data.name || player}'s board` });
    this.rebuildPoints();
    this.analyse(side, player);
  }

  /** Ask for the racer's analysis (the server works it out once), and mark it when it comes. */
  async analyse(side, player) {
    replace(side.analysisEl, h("p.muted.analysis-wait", {}, `Analysing ${side.data.name || player}'s race…`));
    let report;
    try {
      report = await loadAnalysis(this.race, player);
    } catch (err) {
      if (side.player === player) {
        replace(side.analysisEl, h("p.muted", {}, `No analysis: ${err.message}`));
      }
      return;
    }
    if (side.player !== player || !side.data) return;
    side.analysis = report;
    replace(side.analysisEl, h("h3", {}, `${side.data.name || player}'s race, by the solver`),
      analysisBlock(report, { go: (at) => this.goToAction(side, at) }));
    this.renderTimeline();
    this.show(this.time);
  }

  /** Show the position of `side` after its action `at` (0: the deal). */
  goToAction(side, at) {
    if (!side.data) return;
    const t = at <= 0 ? 0 : this.timeOf(side.data, Math.min(at, side.data.boards.length - 1));
    const step = this.points.indexOf(t);
    this.stop();
    this.go(step < 0 ? 0 : step);
  }

  /** Show `player` (in the first board, unless a board shows him already) after action `at`. */
  async focus(player, at) {
    if (!this.players.some((p) => p.player === player)) return;
    let side = this.sides.find((s) => s.player === player);
    if (!side) {
      side = this.sides[0];
      side.select.value = player;
      this.load(side, player);
    }
    await side.loading;
    if (side.player !== player || !side.data) return;
    this.goToAction(side, at);
    this.el.scrollIntoView({ block: "start" });
  }

  /** The step (index into points) at which `side` made its action `i` (0: the start). */
  stepOf(side, i) {
    if (i <= 0) return 0;
    const k = this.points.indexOf(this.timeOf(side.data, i));
    return k < 0 ? 0 : k;
  }

  /** Each racer's line under the controls: green while the deal could be won from his position,
   * red once it could not, grey where the solver did not decide; a button on the losing move. */
  renderTimeline() {
    const max = Math.max(1, this.points.length - 1);
    const pct = (step) => `${(100 * step / max).toFixed(3)}%`;
    const rows = [];
    for (const side of this.sides) {
      const report = side.analysis;
      if (!side.data || !report || rows.some((r) => r.dataset.player === side.player)) continue;
      const name = side.data.name || side.player;
      const bar = h("div.tl-bar");
      const n = side.data.boards.length - 1;
      let from = 0;
      for (let i = 1; i <= n + 1; i++) {
        if (i <= n && report.verdicts[i] === report.verdicts[from]) continue;
        const a = this.stepOf(side, from), b = i <= n ? this.stepOf(side, i) : max;
        bar.append(h("span.tl-seg", { dataset: { v: report.verdicts[from] || "?" },
          style: { left: pct(a), width: `calc(${pct(b)} - ${pct(a)})` } }));
        from = i;
      }
      for (const t of report.thinks || []) {
        if (t.ms > 0) bar.append(h("span.tl-think", { style: { left: pct(this.stepOf(side, t.at)) }, "aria-hidden": "true",
          title: `${formatTime(t.ms)} think` }));
      }
      for (const loss of report.losses || []) {
        bar.append(h("button.tl-loss", { type: "button", style: { left: pct(this.stepOf(side, loss.at)) },
          dataset: { at: loss.at }, title: `The deal was lost here: action ${loss.at}, ${loss.move}`,
          "aria-label": `${name}: the deal was lost with action ${loss.at}, ${loss.move}. Show it.`,
          onclick: () => this.goToAction(side, loss.at) }));
      }
      rows.push(h("div.tl-row", { dataset: { player: side.player } }, h("span.tl-name", {}, name), bar));
    }
    replace(this.timeline, rows);
    this.timeline.hidden = !rows.length;
  }

  /** Where "Play on" starts for `side`: the last winnable position before the loss in effect
   * when the position shown is lost (with the solver's line from there), else the one shown. */
  playFrom(side) {
    const loss = side.analysis?.verdicts?.[side.i] === "l" ? lossBefore(side.analysis, side.i) : null;
    return loss?.best ? { at: loss.winnable_at, line: loss.line } : { at: side.i, line: null };
  }

  /** Start a practice game (see playFrom; `here`: from the position shown whatever it is). */
  playOn(side, { here = false } = {}) {
    if (!side.data?.deal) return;
    this.stop();
    const name = side.data.name || side.player;
    const from = here ? { at: side.i, line: null } : this.playFrom(side);
    this.main.hidden = true;
    this.practiceHost.hidden = false;
    this.practice = new Practice(this.practiceHost, { deal: side.data.deal, actions: side.data.moves, at: from.at, name,
      line: from.line, raceTime: from.at ? this.timeOf(side.data, from.at) : 0,
      onClose: () => {
        this.practice = null;
        this.practiceHost.hidden = true;
        replace(this.practiceHost);
        this.main.hidden = false;
        side.playOn.focus();
      } });
  }

  /** Race time of side's action i (1-based); without times (an older server), the index. */
  timeOf(data, i) {
    return data.times?.length ? data.times[i - 1] : i;
  }

  rebuildPoints() {
    const set = new Set([0]);
    for (const s of this.sides) {
      if (!s.data) continue;
      for (let i = 1; i < s.data.boards.length; i++) set.add(this.timeOf(s.data, i));
    }
    this.points = [...set].sort((a, b) => a - b);
    // Keep the moment shown: the last point at or before it.
    let step = 0;
    while (step + 1 < this.points.length && this.points[step + 1] <= this.time) step++;
    this.go(step);
    this.renderTimeline();
  }

  go(step) {
    this.step = Math.max(0, Math.min(this.points.length - 1, step));
    this.show(this.points[this.step]);
    if (this.step >= this.points.length - 1) this.stop();
  }

  /** Show both boards as they stood at race time `t`. */
  show(t) {
    this.time = t;
    const max = this.points.length - 1;
    this.slider.max = max;
    this.slider.value = this.step;
    const timed = this.sides.some((s) => s.data?.times?.length);
    this.stepText.textContent = timed ? `${formatTime(t)} · ${this.step} / ${max}` : `${this.step} / ${max}`;
    for (const s of this.sides) {
      if (!s.data) continue;
      const last = s.data.boards.length - 1;
      let i = 0;
      while (i < last && this.timeOf(s.data, i + 1) <= t) i++;
      // The better move in words, read off the board it is played on.
      const words = (move, at) => `${describeMove(move, s.data.boards[at], s.data.boards[at])} (${move})`;
      const said = verdictAt(s.analysis, i, words);
      s.view.set({ board: s.data.boards[i], hint: said?.hint || null });
      s.i = i;
      s.playOn.disabled = !s.data.deal;
      const from = this.playFrom(s).at;
      s.playOn.textContent = from !== i ? `Play on from action ${from}` : "Play on from here";
      s.playOn.title = from !== i ? `A practice game from action ${from}, the last position that could still be won, ` +
        "with the solver's line to show: unrated, in your browser alone" : "A practice game from the position shown, " +
        "against a clock: unrated, in your browser alone";
      s.playHere.hidden = from === i || !s.data.deal;
      s.verdict.textContent = said?.text || "";
      s.verdict.dataset.kind = said?.kind || "";
      s.el.dataset.step = i;
      const move = i > 0 ? s.data.moves[i - 1] : null;
      s.caption.textContent = i === 0 ? `Deal · ${last} actions` :
        `${i}/${last}: ${move}${i === last && t > this.timeOf(s.data, last) ? " (done)" : ""}`;
      s.words.textContent = i === 0 ? "" : describeMove(move, s.data.boards[i - 1], s.data.boards[i]);
    }
  }

  toggle() {
    if (this.timer) {
      this.stop();
      return;
    }
    if (this.step >= this.points.length - 1) this.go(0);
    this.playBtn.textContent = "⏸ Pause";
    let last = performance.now();
    this.timer = setInterval(() => {
      const now = performance.now();
      const t = this.time + (now - last) * Number(this.speed.value);
      last = now;
      const end = this.points[this.points.length - 1];
      let step = this.step;
      while (step + 1 < this.points.length && this.points[step + 1] <= t) step++;
      this.step = step;
      this.show(Math.min(t, end));
      if (t >= end) this.stop();
    }, TICK_MS);
  }

  stop() {
    clearInterval(this.timer);
    this.timer = 0;
    this.playBtn.textContent = "▶ Play";
  }

  destroy() {
    this.stop();
    this.practice?.destroy();
    this.el.removeEventListener("keydown", this.onKey);
    for (const s of this.sides) s.view.destroy();
  }
}
