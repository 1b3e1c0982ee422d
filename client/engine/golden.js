// The golden deals of seeds/golden as solrules' position text, for the Node checks of the engine
// (selftest.mjs, bench/engine_bench.mjs) and the Chromium one (tests/client/engine_check.js,
// which imports it from the server beside the engine).

/** solrules' position text of a golden deal (piles bottom to top, face-down counts), its piles
 * in the order `ids` (the golden file's by default; the engine's own order gives the very text
 * the engine writes). */
export function dealText(game, deal, ids = Object.keys(deal.piles)) {
  const parts = [game];
  if (game === "quadruple-canfield") {
    const home = ids.find((id) => id.startsWith("f") && deal.piles[id].length);
    parts.push(`base=${deal.piles[home][0][0]}`);
  }
  for (const id of ids) {
    const cards = [...deal.piles[id]];
    if (deal.face_down[id]) cards.splice(deal.face_down[id], 0, "|");
    parts.push(`${id}:${cards.join("")}`);
  }
  return parts.join(" ");
}
