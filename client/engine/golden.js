// The golden deals of seeds/golden as solrules' position text, for the Node checks of the engine
// (selftest.mjs, bench/engine_bench.mjs). The Chromium check (tests/client/engine_check.js) keeps
// its own copy: it is injected into a page as one script.

/** solrules' position text of a golden deal (piles bottom to top, face-down counts). */
export function dealText(game, deal) {
  const ids = Object.keys(deal.piles);
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
