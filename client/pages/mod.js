// The moderators' page, /mod (GET /api/mod/flags; docs/protocol.md, "Fair play"): every result the
// fair-play checks flagged that waits for a decision, most suspicious first, with its signals (how
// fast the moves came, how much of the solver's own line was followed) and its replay. A moderator
// clears a result (`mod_clear`: it counts after all, the race's held ratings change) or closes the
// account for fair play (`mod_close`: out of every table, its opponents' lost points refunded).
// Anyone else is told the page is for moderators.

import { gameTitle } from "../cards.js";
import { me } from "../me.js";
import { fetchJSON, formatTime, h, replace, toast } from "../ui.js";
import { playerPath } from "./player-parts.js";
import { Replay } from "./replay.js";

const RULES = {
  machine_speed: "machine speed",
  engine_line: "the solver's line, quickly",
  scouted_line: "scouted daily deal",
};

function pct(x) {
  return x === null || x === undefined ? "–" : `${Math.round(100 * x)} %`;
}

function when(at) {
  return new Date(at).toISOString().replace("T", " ").slice(0, 16);
}

export function mount(root) {
  document.title = "Fair play — solrace";
  const body = h("div.mod-body", { "aria-busy": "true" }, h("p.muted.page-loading", {}, "Loading…"));
  replace(root, h("section.mod-page", {},
    h("header.page-head", {}, h("h1.page-title", {}, "Fair play")),
    h("section.panel", { "aria-labelledby": "flags-title" },
      h("h2#flags-title", {}, "Flagged results"),
      h("p.hint", {}, "Results the fair-play checks flagged: kept off ratings and tables until you decide. " +
        "Most suspicious first. Clear a result that was played fairly; close an account that used help."),
      body)));
  let closed = false;
  const replays = [];

  async function load() {
    try {
      const data = await fetchJSON("/api/mod/flags");
      if (closed) return;
      if (data.moderator === false) {
        body.removeAttribute("aria-busy");
        replace(body, h("p.mod-refused", {}, "This page is for moderators. A server's operator makes one " +
          "with `solrace mod add NAME`."));
        return;
      }
      show(data.flags || []);
    } catch {
      if (closed) return;
      body.removeAttribute("aria-busy");
      replace(body, h("p.mod-refused", {}, "This page did not load: try again in a moment."));
    }
  }

  async function decide(msg, row, button) {
    button.disabled = true;
    try {
      const reply = await me.request(msg);
      if (reply.type === "error") throw new Error(reply.message);
      row.nextElementSibling?.classList.contains("mod-replay") && row.nextElementSibling.remove();
      row.remove();
      toast(msg.type === "mod_clear" ? "Cleared: the result counts." :
        `Account closed: ${reply.refunds?.length ?? 0} refund${reply.refunds?.length === 1 ? "" : "s"} to its opponents.`, "info", 4000);
      if (!body.querySelector("tbody tr:not(.mod-replay)")) load();
    } catch (err) {
      button.disabled = false;
      toast(err.message || "That did not work.", "error", 5000);
    }
  }

  function show(flags) {
    body.removeAttribute("aria-busy");
    if (!flags.length) {
      replace(body, h("p.muted.mod-empty", {}, "Nothing waits for a decision."));
      return;
    }
    const rows = flags.map((f) => {
      const sig = f.signals || {};
      const clear = h("button.small.mod-clear", { type: "button" }, "Clear");
      const replayBtn = h("button.small.mod-replay-btn", { type: "button", "aria-expanded": "false" }, "Replay");
      const close = h("button.small.danger.mod-close", { type: "button" }, "Close account");
      const row = h("tr", { dataset: { race: f.race, player: f.player } },
        h("td", {}, h("a.player-link", { href: playerPath(f.player_name), "data-link": true }, f.player_name),
          h("div.muted", {}, `${gameTitle(f.game)}${f.kind === "daily" ? `, daily ${f.day}` : f.kind ? `, ${f.kind}` : ""}`),
          h("div.muted", {}, when(f.at))),
        h("td.num", {}, f.finished ? formatTime(f.time_ms) : `${f.foundation} / ${f.total}`,
          f.place ? h("div.muted", {}, `place ${f.place} of ${f.racers}`) : null),
        h("td", {}, h("ul.mod-signals", {},
          h("li", {}, `${sig.moves ?? "?"} moves, ${sig.manual ?? "?"} by hand, median gap ` +
            `${sig.median_gap_ms ?? "–"} ms`),
          h("li", {}, `${pct(sig.fast_share)} faster than a person clicks`),
          h("li", {}, `solver's line followed: ${pct(sig.agreement)}; longest think ${Math.round((sig.longest_think_ms ?? 0) / 1000)} s; ` +
            `${sig.undos ?? 0} undos, ${sig.hints ?? 0} hints`),
          sig.tracking !== null && sig.tracking !== undefined ? h("li", {}, `moves on a solver's line from where he stood: ` +
            `${pct(sig.tracking)} (${sig.resolves ?? 0} re-solve${sig.resolves === 1 ? "" : "s"})`) : null,
          sig.par_pace_ms !== null && sig.par_pace_ms !== undefined ? h("li", {}, `${(sig.par_pace_ms / 1000).toFixed(2)} s ` +
            `per move of the solver's ${sig.par_moves}-move line, found in ${sig.deal_nodes ?? "?"} nodes`) : null,
          sig.positions !== null && sig.positions !== undefined
            ? h("li", {}, `solver's positions passed through, in any order: ${pct(sig.positions)}`) : null,
          sig.scouted ? h("li", {}, "another account of the same network looked at this deal before this one ended") : null),
          h("p.mod-rules", {}, (sig.rules || []).map((r) => RULES[r] || r).join(", "))),
        h("td.num", {}, String(sig.suspicion ?? "–")),
        h("td", {}, replayBtn),
        h("td.mod-actions", {}, clear, close));
      // The replay opens under the row: a daily result's deal is still secret to everyone but
      // moderators, so its race page would show nothing yet.
      const replayRow = h("tr.mod-replay", { hidden: true }, h("td", { colspan: 6 }));
      let replay = null;
      replayBtn.addEventListener("click", () => {
        replayRow.hidden = !replayRow.hidden;
        replayBtn.setAttribute("aria-expanded", String(!replayRow.hidden));
        if (!replayRow.hidden && !replay) {
          replay = new Replay(replayRow.firstChild, f.race, [{ player: f.racer || "p1", name: f.player_name }], f.racer);
          replays.push(replay);
        }
      });
      clear.addEventListener("click", () => decide({ type: "mod_clear", race: f.race, player: f.player }, row, clear));
      close.addEventListener("click", () => {
        if (!window.confirm(`Close ${f.player_name}'s account for fair play? Its opponents get back the points they lost to it.`)) return;
        decide({ type: "mod_close", player: f.player, reason: "fair_play" }, row, close);
      });
      return [row, replayRow];
    });
    replace(body, h("div.table-scroll", {}, h("table.data-table.mod-table", {},
      h("caption.sr-only", {}, "Flagged results"),
      h("thead", {}, h("tr", {}, ["Result", "Time or cards", "Signals", "Suspicion", "", ""]
        .map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows.flat()))));
  }

  load();
  return () => {
    closed = true;
    for (const r of replays) r.destroy();
  };
}
