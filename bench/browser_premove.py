"""Browser benchmark: how long a racer waits from a click to the board redrawn, in Chromium.

    .venv/bin/python bench/browser_premove.py [--rounds 20] [--client OTHER/client]

Starts its own ``solrace serve`` and Debian's Chromium (Playwright, ``/usr/bin/chromium``) and
races one page against a bot. Measured in the page, per round, from the click that completes an
action to the first animation frame whose board shows it, in ms and in animation frames: a move
with the server local, then 150 ms and 250 ms away (every message the page sends held that long
before it leaves: one way), an undo and a second move made while the first travels (150 ms
away), and, for reference, how long the server's confirmation of a move 150 ms away takes; and
the length of an idle animation frame. ``--client`` serves another checkout's client (an older
one, to compare; this tree's server). Prints the medians and p10/p90 and writes them to
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

MEASURE = """async ({a, b, rounds}) => {
  const s = window.solrace.session;
  const c = s.conn;
  // Every message leaves `delay` ms late: a server that far away, one way.
  const send = c.sendRaw.bind(c);
  let delay = 0;
  c.sendRaw = (m) => (delay ? setTimeout(() => c.ws && send(m), delay) : send(m));
  const pile = (p) => document.querySelector(`[data-board="own"] [data-pile="${p}"]`);
  const top = (p) => pile(p).querySelector('[data-depth="1"]');
  const frame = () => new Promise((r) => requestAnimationFrame(r));
  // From t0 until cond() holds in an animation frame: [ms, frames].
  const until = async (cond, t0) => {
    let frames = 0;
    while (!cond()) {
      if (performance.now() - t0 > 8000) throw new Error(`stuck waiting for ${cond}`);
      await frame();
      frames++;
    }
    return [performance.now() - t0, frames];
  };
  const idle = () => until(() => !s.pendingMove && !s.queued, performance.now());
  const [as, ad] = a.split(">");
  const [bs, bd] = b.split(">");
  const out = {};
  const add = (kind, [ms, frames]) => (out[kind] ||= []).push({ ms, frames });
  const on = (p, card) => () => top(p)?.dataset.card === card;
  // Pick the card (two frames to draw the selection), then click where it goes: [t0 of the drop].
  const play = async (src, dst) => {
    top(src).click();
    await frame(); await frame();
    const t0 = performance.now();
    pile(dst).click();
    return t0;
  };
  const undo = async (card) => {
    await frame(); await frame();
    const t0 = performance.now();
    document.querySelector("#undo").click();
    return until(on(as, card), t0);
  };
  for (let i = 0; i < rounds; i++) {
    const card = top(as).dataset.card;
    const other = top(bs).dataset.card;
    for (const [kind, lag] of [["move_local", 0], ["move_150", 150], ["move_250", 250]]) {
      delay = lag;
      const seq = s.model.own.seq + 1;
      const t0 = await play(as, ad);
      add(kind, await until(on(ad, card), t0));
      // (A client that draws only what the server confirmed has no `confirmed`: its seq is.)
      const confirmed = () => (s.model.own.confirmed ?? s.model.own.seq) >= seq;
      if (lag === 150) add("confirmed_150", await until(confirmed, t0));
      await idle();
      if (lag === 150) add("undo_150", await undo(card));
      else s.undo();
      await idle();
    }
    // A second move while the first travels (once a premove; now drawn as any move).
    delay = 150;
    await play(as, ad);
    const t1 = await play(bs, bd);
    add("second_move_150", await until(on(bd, other), t1));
    await idle();
    s.undo();
    s.undo();
    await until(on(as, card), performance.now());
    await idle();
    delay = 0;
    let t = performance.now();
    for (let k = 0; k < 5; k++) {
      await frame();
      const n = performance.now();
      add("frame", [n - t, 1]);
      t = n;
    }
  }
  c.sendRaw = send;
  return out;
}"""


def pct(values: list[float], p: int) -> float:
    return sorted(values)[min(len(values) - 1, len(values) * p // 100)]


def measure(pages: Pages, bot: Bot, rounds: int) -> dict[str, dict[str, float]]:
    page, _ = race_with_bot(pages, bot, seed=str(scotch_seed_with_foundation_moves()))
    a, b = independent_pair(own_legal(page))
    result = page.evaluate(MEASURE, {"a": a, "b": b, "rounds": rounds})
    figures = {}
    for kind, samples in result.items():
        ms = [x["ms"] for x in samples]
        frames = [x["frames"] for x in samples]
        figures[kind] = {
            "median_ms": round(statistics.median(ms), 1),
            "p10_ms": round(pct(ms, 10), 1),
            "p90_ms": round(pct(ms, 90), 1),
            "median_frames": statistics.median(frames),
            "p90_frames": pct(frames, 90),
            "rounds": len(samples),
        }
    return figures


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--client", type=Path, help="serve this client directory instead")
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        extra = ["--client-dir", str(args.client.resolve())] if args.client else []
        server = start_server(Path(tmp) / "races.db", "--pool", "0", *extra)
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
        print(f"{kind:16} median {f['median_ms']:7.1f} ms   p10 {f['p10_ms']:7.1f}   "
              f"p90 {f['p90_ms']:7.1f}   frames median {f['median_frames']:4}   "
              f"p90 {f['p90_frames']:3}   ({f['rounds']} samples)")


if __name__ == "__main__":
    main()
