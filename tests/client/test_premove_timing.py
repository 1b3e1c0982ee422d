"""How long a racer waits from a click to the board redrawn: a move with nothing in flight (the
round trip to the local server, or to one 250 ms away each way, then the redraw) against a
premove picked while a move is in flight (queued and drawn at once). The figures go to
test-artifacts/premove-timing.json and, by hand, to docs/performance.md ("Client: premoves")."""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable

from tests.client.helpers import (
    ARTIFACTS,
    Bot,
    Pages,
    own_legal,
    race_with_bot,
    scotch_seed_with_foundation_moves,
)
from tests.client.test_network import independent_pair

NewBot = Callable[[], Bot]
#: Rounds per case: few in the suite; SOLRACE_PREMOVE_ROUNDS=20 for the published figures.
ROUNDS = int(os.environ.get("SOLRACE_PREMOVE_ROUNDS", "6"))

MEASURE = """async ({a, b, rounds, latency}) => {
  const s = window.solrace.session;
  const c = s.conn;
  // Moves (not undos) leave `delay` ms late: a simulated distant server, one way.
  const send = c.sendRaw.bind(c);
  let delay = 0;
  c.sendRaw = (m) => (m.type === "move" && delay ? setTimeout(() => send(m), delay) : send(m));
  const pile = (p) => document.querySelector(`[data-board="own"] [data-pile="${p}"]`);
  const top = (p) => pile(p).querySelector('[data-depth="1"]');
  const frame = () => new Promise((r) => requestAnimationFrame(r));
  const until = async (cond) => {
    const start = performance.now();
    while (!cond()) {
      if (performance.now() - start > 8000) throw new Error(`stuck waiting for ${cond}`);
      await frame();
    }
    return performance.now();
  };
  const idle = () => until(() => !s.inflight && !s.queued);
  const [as, ad] = a.split(">");
  const [bs, bd] = b.split(">");
  const out = { plain_local: [], plain_slow: [], queued_slow: [], frame: [] };
  const back = async (card, n) => {
    await idle();
    for (let k = 0; k < n; k++) await s.undo();
    await until(() => top(as)?.dataset.card === card);
  };
  for (let i = 0; i < rounds; i++) {
    const card = top(as).dataset.card;
    for (const [kind, lag] of [["plain_local", 0], ["plain_slow", latency]]) {
      delay = lag;
      top(as).click();
      await frame(); await frame();
      const t0 = performance.now();
      pile(ad).click();
      out[kind].push(await until(() => pile(ad).querySelector(`[data-card="${card}"]`)) - t0);
      await back(card, 1);
    }
    delay = 1200; // long enough that the premove is surely drawn before the first move's reply
    top(as).click();
    await frame(); await frame();
    pile(ad).click();
    await until(() => s.inflight);
    top(bs).click();
    await frame(); await frame();
    const t1 = performance.now();
    const inFlight = !!s.inflight; // a very slow frame may have let the reply come first
    pile(bd).click();
    const drawn = () => pile(bs).querySelector(".card.premove");
    if (inFlight) out.queued_slow.push(await until(drawn) - t1);
    await back(card, 2);
    delay = 0;
    let t = performance.now();
    for (let k = 0; k < 5; k++) {
      await frame();
      const n = performance.now();
      out.frame.push(n - t);
      t = n;
    }
  }
  c.sendRaw = send;
  return out;
}"""

LATENCY_MS = 250

def test_a_premove_is_drawn_without_waiting_for_the_server(pages: Pages, new_bot: NewBot) -> None:
    page, _ = race_with_bot(pages, new_bot(), seed=str(scotch_seed_with_foundation_moves()))
    a, b = independent_pair(own_legal(page))
    result = page.evaluate(MEASURE, {"a": a, "b": b, "rounds": ROUNDS, "latency": LATENCY_MS})
    figures = {
        kind: {
            "median_ms": round(statistics.median(times), 1),
            "p10_ms": round(sorted(times)[len(times) // 10], 1),
            "p90_ms": round(sorted(times)[len(times) * 9 // 10], 1),
            "rounds": len(times),
        }
        for kind, times in result.items()
    }
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "premove-timing.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures))
    # A premove is drawn without waiting for the server; a move waits for its round trip.
    assert len(result["queued_slow"]) >= (ROUNDS + 1) // 2
    assert figures["queued_slow"]["median_ms"] < figures["plain_slow"]["median_ms"]
