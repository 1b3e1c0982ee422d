// The browser rules engine (client/engine/) in Node's V8, Chromium's engine: what one racer's move
// costs the page. For each game, random play (a fixed PRNG) from the ten golden deals, every card
// known; each step times legal() on a fresh position, safe(), play() and board(), and now and then
// undo(). Figures are the best of several rounds (to filter out scheduler noise), per call.
//
//   node bench/engine_bench.mjs            (Node >= 22.7; Node 20: add --experimental-detect-module)
//
// The budget: a move drawn in the frame of the click, so everything here well under 1 ms.

import { readFileSync } from "node:fs";
import { dealText } from "../client/engine/golden.js";
import { board, fromPosition, legal, play, safe, undo } from "../client/engine/index.js";

const ROUNDS = 5;
const STEPS = 300;

function rng(seed) {  // mulberry32: small, fixed, good enough to pick moves
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function round(starts) {
  const time = { legal: 0, safe: 0, play: 0, board: 0, undo: 0 };
  const calls = { legal: 0, safe: 0, play: 0, board: 0, undo: 0 };
  const random = rng(617);
  const timed = (what, fn) => {
    const t0 = performance.now();
    const out = fn();
    time[what] += performance.now() - t0;
    calls[what] += 1;
    return out;
  };
  for (const start of starts) {
    let pos = start;
    for (let i = 0; i < STEPS; i++) {
      const fresh = { ...pos, legalCache: undefined };
      const moves = timed("legal", () => legal(fresh));
      timed("safe", () => safe(fresh, moves));
      timed("board", () => board(fresh));
      if (pos.history && (!moves.length || random() < 0.1)) {
        pos = timed("undo", () => undo(pos));
      } else if (moves.length) {
        const home = moves.filter((m) => m.includes(">f"));
        const pick = home.length && random() < 0.5 ? home : moves;
        const move = pick[Math.floor(random() * pick.length)];
        pos = timed("play", () => play(pos, move)).pos;
      } else {
        break;
      }
    }
  }
  return Object.fromEntries(Object.keys(time).map((k) => [k, (time[k] * 1000) / Math.max(1, calls[k])]));
}

for (const game of ["scotch", "yukon", "quadruple-canfield"]) {
  const golden = JSON.parse(readFileSync(new URL(`../seeds/golden/${game}.json`, import.meta.url), "utf8"));
  const starts = Object.values(golden.deals).map((deal) => fromPosition(dealText(game, deal)));
  let best = null;
  for (let r = 0; r < ROUNDS; r++) {
    const us = round(starts);
    best = best ? Object.fromEntries(Object.keys(us).map((k) => [k, Math.min(best[k], us[k])])) : us;
  }
  const line = Object.entries(best).map(([k, v]) => `${k} ${v.toFixed(1)} µs`).join(", ");
  console.log(`${game.padEnd(19)} ${line}`);
}
