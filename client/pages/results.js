// Results of a finished race: standings, the revealed deal with an in-browser check of the
// commitment, and a side-by-side replay of any two racers (boards come from the server's replay API).

import { BoardView } from "../board.js";
import { gameTitle } from "../cards.js";
import { fetchJSON, formatTime, h, ordinal, replace } from "../ui.js";
import { verifyCommitment } from "../verify.js";
import { botTag, seedChosenNote } from "./parts.js";

/** Remember the commitment this browser saw before the race ended, to check against later. */
export function rememberCommitment(model) {
  if (!model.commitment || model.status === "finished") return;
  const key = `solrace:commit:${model.race}`;
  if (!localStorage.getItem(key)) localStorage.setItem(key, model.commitment);
}

function seenCommitment(race) {
  return localStorage.getItem(`solrace:commit:${race}`);
}

export function mountResults(el, session) {
  const model = session.model;
  const race = model.race;
  const standingsEl = h("div.standings");
  const verifyEl = h("div.verify", { "aria-live": "polite" });
  const replayEl = h("section.panel.replay", { "aria-labelledby": "replay-title" });
  replace(el,
    h("div.results", {},
      h("section.panel.results-main", { "aria-labelledby": "results-title" },
        h("h2#results-title", {}, "Results"),
        standingsEl),
      h("section.panel.deal", { "aria-labelledby": "deal-title" },
        h("h2#deal-title", {}, "The deal"),
        seedChosenNote(model),
        verifyEl),
      replayEl));

  let summary = null;
  let replay = null;
  let destroyed = false;

  function renderStandings() {
    const me = model.you;
    const rows = (model.standings || []).map((s) => {
      const p = s.progress || {};
      const status = s.time_ms !== null && s.time_ms !== undefined ? "finished" : s.resigned ? "resigned" : "time up";
      return h("tr", { class: s.player === me ? "is-you" : "", dataset: { player: s.player } },
        h("td.place", {}, h("span.medal", { dataset: { place: s.place } }, ordinal(s.place))),
        h("td", {}, s.name, s.bot ? botTag() : null, s.player === me ? h("span.muted", {}, " (you)") : null),
        h("td.num", {}, s.time_ms !== null && s.time_ms !== undefined ? formatTime(s.time_ms) : "–"),
        h("td.num", {}, `${p.foundation ?? 0} / ${p.total ?? "?"}`),
        h("td.num", {}, p.moves ?? 0),
        h("td", {}, status));
    });
    replace(standingsEl,
      h("table.standings-table", {},
        h("caption.sr-only", {}, "Standings"),
        h("thead", {}, h("tr", {},
          ["Place", "Racer", "Time", "Cards home", "Moves", ""].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, rows)));
  }

  async function renderVerify() {
    const seen = seenCommitment(race);
    const commitment = seen || model.commitment || summary?.commitment;
    const facts = h("dl.facts", {},
      h("dt", {}, "Game"), h("dd", {}, gameTitle(model.game)),
      h("dt", {}, "Seed"), h("dd", {}, h("code#seed-value", {}, model.seed ?? "–")),
      h("dt", {}, "Salt"), h("dd", {}, h("code.wrap", {}, model.salt ?? "–")),
      h("dt", {}, seen ? "Commitment (seen here before the end)" : "Commitment"),
      h("dd", {}, h("code.wrap#commitment-value", {}, commitment ?? "–")));
    const outcome = h("p.verify-result", { id: "verify-result" }, "Checking…");
    const again = h("button.small", { type: "button", onclick: () => check() }, "Verify deal");
    replace(verifyEl, facts, h("div.verify-row", {}, again, outcome),
      h("p.hint", {}, "The server published SHA-256(game:seed:salt) before the start. Your browser recomputes it " +
        "from the revealed seed and salt: a match proves the deal was fixed in advance."));
    async function check() {
      outcome.textContent = "Checking…";
      outcome.dataset.ok = "";
      if (model.seed === null || model.salt === null || !commitment) {
        outcome.textContent = "Seed, salt or commitment missing.";
        outcome.dataset.ok = "false";
        return;
      }
      const r = await verifyCommitment({ game: model.game, seed: model.seed, salt: model.salt, commitment });
      outcome.dataset.ok = String(r.ok);
      replace(outcome,
        r.ok ? "✓ Verified: the deal matches the commitment." : "✗ Mismatch: the deal does NOT match the commitment!",
        h("br"),
        h("small.muted", {}, `SHA-256("${r.input}") = `, h("code.wrap", {}, r.computed)));
    }
    await check();
  }

  async function loadSummary() {
    try {
      summary = await fetchJSON(`/api/races/${encodeURIComponent(race)}`);
    } catch {
      summary = null;
    }
    if (destroyed) return;
    renderReplay();
  }

  function renderReplay() {
    const players = (model.standings || []).map((s) => ({ player: s.player, name: s.name }));
    if (!players.length) {
      replace(replayEl, h("h2#replay-title", {}, "Replay"), h("p.muted", {}, "Nobody raced."));
      return;
    }
    replay?.destroy();
    replay = new Replay(replayEl, race, players, model.you);
  }

  function update() {
    renderStandings();
  }

  rememberCommitment(model);
  renderStandings();
  renderVerify();
  loadSummary();

  return {
    update,
    destroy() {
      destroyed = true;
      replay?.destroy();
    },
  };
}

const svg = (d) => `<svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true"><path fill="currentColor" d="${d}"/></svg>`;
const ICONS = {
  first: svg("M3 2h2v12H3zM14 2v12L6 8z"),
  prev: svg("M12 2v12L4 8z"),
  next: svg("M4 2v12l8-6z"),
  last: svg("M11 2h2v12h-2zM2 2v12l8-6z"),
};

/** Two boards stepping through two racers' moves together. */
class Replay {
  constructor(el, race, players, you) {
    this.el = el;
    this.race = race;
    this.players = players;
    this.cache = new Map();
    this.step = 0;
    this.timer = 0;
    const first = players.find((p) => p.player === you) || players[0];
    const second = players.find((p) => p.player !== first.player) || first;
    this.sides = [this.side("a", first.player), this.side("b", second.player)];
    this.slider = h("input#replay-step", { type: "range", min: 0, max: 0, value: 0, "aria-label": "Replay step",
      oninput: () => this.go(Number(this.slider.value)) });
    this.stepText = h("span.step-text", { "aria-live": "polite" });
    this.playBtn = h("button#replay-play", { type: "button", onclick: () => this.toggle() }, "▶ Play");
    this.speed = h("select", { "aria-label": "Speed" },
      [[800, "1×"], [400, "2×"], [150, "5×"]].map(([ms, l]) => h("option", { value: ms, selected: ms === 400 }, l)));
    const btn = (label, title, fn) => {
      const b = h("button.small.icon", { type: "button", title, "aria-label": title, onclick: fn });
      b.innerHTML = label;
      return b;
    };
    replace(el,
      h("h2#replay-title", {}, "Replay"),
      h("div.replay-controls", {},
        btn(ICONS.first, "First position", () => this.go(0)),
        btn(ICONS.prev, "Previous move", () => this.go(this.step - 1)),
        this.playBtn,
        btn(ICONS.next, "Next move", () => this.go(this.step + 1)),
        btn(ICONS.last, "Last position", () => this.go(this.max)),
        this.slider, this.stepText, this.speed),
      h("div.replay-boards", {}, this.sides.map((s) => s.el)));
    this.onKey = (e) => {
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
    const view = new BoardView(boardEl, { player, compact: false, emptyText: "Loading…" });
    const caption = h("p.replay-move");
    const side = { key, player, select, view, boardEl, caption, data: null };
    select.addEventListener("change", () => this.load(side, select.value));
    side.el = h("div.replay-side", {}, h("div.replay-head", {}, select, caption), boardEl);
    return side;
  }

  async load(side, player) {
    side.player = player;
    side.boardEl.dataset.board = player;
    side.data = null;
    side.view.set({ board: null });
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
    this.go(this.step);
  }

  get max() {
    return Math.max(0, ...this.sides.map((s) => (s.data ? s.data.boards.length - 1 : 0)));
  }

  go(step) {
    this.step = Math.max(0, Math.min(this.max, step));
    this.slider.max = this.max;
    this.slider.value = this.step;
    this.stepText.textContent = `${this.step} / ${this.max}`;
    for (const s of this.sides) {
      if (!s.data) continue;
      const last = s.data.boards.length - 1;
      const i = Math.min(this.step, last);
      s.view.set({ board: s.data.boards[i] });
      const move = i > 0 ? s.data.moves[i - 1] : null;
      s.caption.textContent = i === 0 ? `Deal · ${last} actions` :
        `${i}/${last}: ${move}${this.step > last ? " (done)" : ""}`;
    }
    if (this.step >= this.max) this.stop();
  }

  toggle() {
    if (this.timer) this.stop();
    else {
      if (this.step >= this.max) this.go(0);
      this.playBtn.textContent = "⏸ Pause";
      const tick = () => {
        this.go(this.step + 1);
        if (this.timer) this.timer = setTimeout(tick, Number(this.speed.value));
      };
      this.timer = setTimeout(tick, Number(this.speed.value));
    }
  }

  stop() {
    clearTimeout(this.timer);
    this.timer = 0;
    this.playBtn.textContent = "▶ Play";
  }

  destroy() {
    this.stop();
    this.el.removeEventListener("keydown", this.onKey);
    for (const s of this.sides) s.view.destroy();
  }
}
