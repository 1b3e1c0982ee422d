// A quick check of the engine in Node against the golden files of seeds/golden (written by the
// independent reference model of tests/solrules/model.py): the deals' boards, the counts of legal
// moves along the fixed "perft" lines, and perft from a deal to depth 4.
//
//   node client/engine/selftest.mjs          (any Node from 18 on: client/package.json says ES modules)
//
// `make test` runs it (tests/client/test_engine_node.py).
//
// The proof that the engine matches solrules is tests/client/test_engine.py, in Chromium.

import { readFileSync } from "node:fs";
import { dealText } from "./golden.js";
import { board, fromPosition, legal, play } from "./index.js";

const GOLDEN = new URL("../../seeds/golden/", import.meta.url);
let failures = 0;

function check(ok, what) {
  if (!ok) {
    failures += 1;
    console.error(`FAIL ${what}`);
  }
}

// tests/solrules/model.py is_ambiguous: left out of the golden counts.
function ambiguous(pos, text) {
  if (pos.rules.name !== "quadruple-canfield" || !text.startsWith("f")) return false;
  const [src, dst] = text.split(">");
  const { index } = pos.rules;
  return dst.startsWith("t") && pos.piles[index.get(src)].length === 1 && !pos.piles[index.get(dst)].length;
}

function perft(pos, depth) {
  const moves = legal(pos);
  if (depth === 1) return moves.length;
  let total = 0;
  for (const m of moves) total += perft(play(pos, m).pos, depth - 1);
  return total;
}

for (const game of ["scotch", "yukon", "quadruple-canfield"]) {
  const golden = JSON.parse(readFileSync(new URL(`${game}.json`, GOLDEN), "utf8"));
  const ids = Object.keys(Object.values(golden.deals)[0].piles);
  const start = Date.now();
  for (const [seed, deal] of Object.entries(golden.deals)) {
    const pos = fromPosition(dealText(game, deal));
    const shown = Object.fromEntries(board(pos).piles.map((p) => [p.pile, p.cards]));
    for (const id of ids) {
      const want = deal.piles[id].map((c, i) => (i < deal.face_down[id] ? null : c));
      check(JSON.stringify(shown[id]) === JSON.stringify(want), `${game} ${seed} board ${id}`);
    }
  }
  // A line or perft from a deal the file does not hold (Quadruple Canfield's) is left to the
  // Chromium test, which has solrules deal it.
  const { line, counts, seed } = golden.perft;
  const first = golden.deals[String(seed)];
  let pos = first && fromPosition(dealText(game, first));
  if (pos) {
    line.forEach((move, i) => {
      const n = legal(pos).filter((m) => !ambiguous(pos, m)).length;
      check(n === counts[i], `${game} perft line: ${n} moves before ${move} (#${i}), golden ${counts[i]}`);
      pos = play(pos, move).pos;
    });
  }
  const depth = golden.perft_depth;
  const rootDeal = golden.deals[String(depth.seed)];
  const nodes = rootDeal ? depth.nodes.map((_, d) => perft(fromPosition(dealText(game, rootDeal)), d + 1)) : [];
  if (rootDeal) check(JSON.stringify(nodes) === JSON.stringify(depth.nodes), `${game} perft ${nodes} != ${depth.nodes}`);
  console.log(`${game}: ${Object.keys(golden.deals).length} deals` + (pos ? `, line of ${line.length}` : "") +
    (nodes.length ? `, perft ${nodes.join("/")}` : "") + ` (${Date.now() - start} ms)`);
}
if (failures) {
  console.error(`${failures} failures`);
  process.exit(1);
}
console.log("ok");
