// The daily deal, /daily and /daily/{game} (GET /api/daily/{game}): today's deal of a game, played
// alone against the clock (`daily` → `paired` → the race page), the day's table, the player's
// streak, and yesterday's deal revealed: seed and salt to check against its commitment, and the
// replays of its best races.

import { GAME_TITLES, gameTitle } from "../cards.js";
import { me } from "../me.js";
import { playDaily } from "../seek.js";
import { fetchJSON, formatTime, h, navigate, ordinal, replace } from "../ui.js";
import { verifyCommitment } from "../verify.js";
import { gameTabs } from "./leaderboard.js";
import { dailyPath, playerPath } from "./player-parts.js";

const DEFAULT_GAME = "scotch";

/** "3 h 12 min", "12 min", "under a minute". */
function left(ms) {
  const m = Math.floor(ms / 60000);
  if (m < 1) return "under a minute";
  return m >= 60 ? `${Math.floor(m / 60)} h ${m % 60} min` : `${m} min`;
}

/** "cleared in 4:12.3" or "34/52 cards home" for a row of a day's table or a player's result. */
function resultText(r) {
  if (!r) return "";
  if (r.finished || (r.time_ms !== null && r.time_ms !== undefined)) return `cleared in ${formatTime(r.time_ms)}`;
  return `${r.foundation ?? 0}/${r.total ?? "?"} cards home`;
}

export function mount(root, { game }) {
  game = GAME_TITLES[game] ? game : DEFAULT_GAME;
  const title = gameTitle(game);
  document.title = `Today's deal: ${title} — solrace`;
  const body = h("div.daily-body", { "aria-busy": "true" }, h("p.muted.page-loading", {}, "Loading…"));
  replace(root, h("section.daily-page", {},
    h("header.page-head", {},
      h("h1.page-title", {}, "Today's deal"),
      h("p.muted.page-facts", {}, "One deal per game each day (UTC), the same for everyone: play it once, alone " +
        "against the clock. Its cards are revealed tomorrow."),
      gameTabs(game, dailyPath, "Daily deals by game")),
    body));
  let closed = false;
  let timer = 0;
  fetchJSON(`/api/daily/${encodeURIComponent(game)}`)
    .then((data) => {
      if (!closed) show(data);
    }, () => {
      if (!closed) replace(body, h("p.panel", {}, "Today's deal did not load: try again in a moment."));
    });

  function show(d) {
    body.removeAttribute("aria-busy");
    const you = d.you;
    const msg = h("p.form-msg", { role: "alert" });
    const played = !!you?.played;
    const over = played && !!you?.result;
    const play = h("button.primary.play-daily#play-daily", {
      type: "button",
      onclick: async () => {
        play.disabled = true;
        msg.textContent = "";
        try {
          navigate(await playDaily(game));
        } catch (err) {
          msg.textContent = err.message || "Could not start today's deal.";
          play.disabled = false;
        }
      },
    }, over ? "See your race" : played ? "Resume today's deal" : `Play today's ${title}`);
    const clock = h("span.daily-left");
    const tick = () => {
      clock.textContent = d.ends_at ? `Next deal in ${left(d.ends_at - Date.now())}` : "";
    };
    tick();
    timer = setInterval(tick, 30_000);
    const streak = you?.streak ?? 0;
    // His place on the day's table (the result's own place is in his race, of one racer).
    const yourId = you?.id ?? me.player?.id;
    const row = yourId ? (d.table || []).find((r) => r.id === yourId) : null;
    const ranked = (d.table || []).filter((r) => r.place !== null && r.place !== undefined);
    // A guest plays the deal too, unranked: where his result would stand, and how to be ranked.
    const guestNote = you && you.account === false
      ? h("p.hint.daily-guest", {}, "Guests play the daily deal unranked. Set a password (the menu under " +
        "your name) to make your name an account: tomorrow's result takes its place on the table.") : null;
    const standing = row?.flagged ? " — flagged by the fair-play checks: a moderator looks at it"
      : row ? ` — ${ordinal(row.place)} of ${ranked.length} so far`
        : you?.would_place ? ` — unranked: it would be ${ordinal(you.would_place)} of ${ranked.length + 1}`
          : you?.result?.aborted ? " — aborted (fewer than three moves): not on the table" : "";
    const yourLine = !you ? h("p.muted", {}, "Play it to get on today's table and start a streak.")
      : over ? h("p.daily-result", {}, "You played today's deal: ", h("strong", {}, resultText(you.result)),
        standing)
        : played ? h("p.daily-result", {}, "You started today's deal: finish it before the clock runs out.")
          : h("p.muted", {}, "You have not played today's deal yet.");
    const playCard = h("section.panel.daily-play", { "aria-labelledby": "daily-title" },
      h("div.daily-play-head", {},
        h("h2#daily-title", {}, `${title} — ${d.day}`),
        clock),
      yourLine,
      guestNote,
      h("p.daily-streak", { dataset: { streak } }, h("span.streak-count", {}, String(streak)),
        ` day${streak === 1 ? "" : "s"} in a row`, h("span.muted", {}, " (your streak of daily deals played to the end)")),
      h("div.buttons", {}, play, h("span.muted.daily-limit", {},
        d.time_limit ? `${Math.round(d.time_limit / 60)} min on the clock` : "")),
      msg,
      d.commitment ? h("details.commitment", {}, h("summary", {}, "Today's commitment"),
        h("p.hint", {}, "SHA-256 of game, seed and salt, published now; the seed and salt come tomorrow."),
        h("code.wrap", {}, d.commitment)) : null);
    replace(body,
      h("div.daily-grid", {},
        playCard,
        h("section.panel.daily-table", { "aria-labelledby": "today-table-title" },
          h("h2#today-table-title", {}, "Today's table"),
          dayTable(d.table, { replays: false, empty: "Nobody has finished today's deal yet: be the first." }))),
      yesterday(d));
  }

  function yesterday(d) {
    const y = d.yesterday;
    if (!y) {
      return h("section.panel.daily-yesterday", { "aria-labelledby": "yesterday-title" },
        h("h2#yesterday-title", {}, "Yesterday's deal"),
        h("p.muted", {}, "Nobody played yesterday's deal."));
    }
    const outcome = h("p.verify-result", { id: "daily-verify" });
    const check = async () => {
      outcome.textContent = "Checking…";
      const r = await verifyCommitment({ game, seed: y.seed, salt: y.salt, commitment: y.commitment });
      outcome.dataset.ok = String(r.ok);
      outcome.textContent = r.ok ? "✓ The deal matches the commitment published yesterday."
        : "✗ Mismatch: the deal does NOT match the commitment!";
    };
    return h("section.panel.daily-yesterday", { "aria-labelledby": "yesterday-title" },
      h("h2#yesterday-title", {}, `Yesterday's deal — ${y.day}`),
      h("div.yesterday-grid", {},
        h("div", {},
          h("dl.facts", {},
            h("dt", {}, "Seed"), h("dd", {}, h("code", {}, y.seed ?? "–")),
            h("dt", {}, "Salt"), h("dd", {}, h("code.wrap", {}, y.salt ?? "–")),
            h("dt", {}, "Commitment"), h("dd", {}, h("code.wrap", {}, y.commitment ?? "–"))),
          h("div.verify-row", {}, h("button.small", { type: "button", onclick: check }, "Verify deal"), outcome)),
        h("div", {}, h("h3", {}, "Best races"),
          dayTable(y.table, { replays: true, empty: "Nobody played it to the end." }))));
  }

  return () => {
    closed = true;
    clearInterval(timer);
  };
}

/** A day's table: place, player, result; with `replays`, a link to each race's replay. */
function dayTable(rows, { replays, empty }) {
  rows = rows || [];
  if (!rows.length) return h("p.muted", {}, empty);
  const you = me.player?.id;
  return h("div.table-scroll", {}, h("table.data-table.day-table", {},
    h("thead", {}, h("tr", {}, ["Place", "Player", "Result", replays ? "" : null].filter((t) => t !== null)
      .map((t) => h("th", { scope: "col", class: t === "Result" ? "num" : "" }, t)))),
    h("tbody", {}, rows.map((r) => h("tr", { class: `${r.id && r.id === you ? "is-you" : ""}${r.flagged ? " daily-flagged" : ""}`,
      dataset: { id: r.id ?? "", flagged: r.flagged ? "true" : "" } },
      h("td.place", {}, r.flagged ? h("span.muted", { title: "Flagged by the fair-play checks: no place until a moderator decides" },
        "flagged") : h("span.medal", { dataset: { place: r.place } }, ordinal(r.place))),
      h("td", {}, r.id ? h("a.player-link", { href: playerPath(r.name), "data-link": true }, r.name) : r.name),
      h("td.num", {}, resultText(r)),
      replays ? h("td", {}, r.race ? h("a", { href: `/race/${encodeURIComponent(r.race)}`, "data-link": true }, "Replay") : null)
        : null)))));
}
