"""Browser benchmark: how long a racer waits from a click to the board redrawn, in Chromium.

    .venv/bin/python bench/browser_premove.py [--rounds 20]

Starts its own ``solrace serve`` and Debian's Chromium (Playwright, ``/usr/bin/chromium``) and
races one page against a bot. Measured in the page, per round: a move with nothing in flight
(the round trip to the local server, or to one 250 ms away each way, then the redraw) against a
premove picked while a move is in flight (queued and drawn at once), and the length of an
animation frame. Prints the medians and p10/p90 (ms) and writes them to
test-artifacts/premove-timing.json; docs/performance.md ("Client: premoves") records them.
It is a benchmark, not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.client.conftest import start_server
from tests.client.helpers import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    Bot,
    Pages,
    own_legal,
    race_with_bot,
    scotch_seed_with_foundation_moves,
)
from tests.client.test_network import independent_pair

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


def measure(pages: Pages, bot: Bot, rounds: int) -> dict[str, dict[str, float]]:
    page, _ = race_with_bot(pages, bot, seed=str(scotch_seed_with_foundation_moves()))
    a, b = independent_pair(own_legal(page))
    result = page.evaluate(MEASURE, {"a": a, "b": b, "rounds": rounds, "latency": LATENCY_MS})
    return {
        kind: {
            "median_ms": round(statistics.median(times), 1),
            "p10_ms": round(sorted(times)[len(times) // 10], 1),
            "p90_ms": round(sorted(times)[len(times) * 9 // 10], 1),
            "rounds": len(times),
        }
        for kind, times in result.items() if times
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=20)
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        server = start_server(Path(tmp) / "races.db", "--pool", "0")
        base = next(server)
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=CHROMIUM_ARGS)
        pages = Pages(browser, base)
        bot = Bot(base)
        try:
            figures = measure(pages, bot, args.rounds)
        finally:
            bot.close()
            pages.close()
            browser.close()
            server.close()
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "premove-timing.json").write_text(json.dumps(figures, indent=2))
    for kind, f in figures.items():
        print(f"{kind:12} median {f['median_ms']:7.1f} ms   p10 {f['p10_ms']:7.1f}   "
              f"p90 {f['p90_ms']:7.1f}   ({f['rounds']} samples)")


if __name__ == "__main__":
    main()
