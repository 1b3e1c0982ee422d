// The page side of tests/client/test_engine.py: one function expression, run by Playwright's
// page.evaluate (so the page's Content-Security-Policy, which forbids eval, still holds). It
// imports the engine from the server and compares it with what solrules said, case by case,
// stopping at the first mismatch. Returns {mismatch, compared, counted, stats}.
async ({ url, cases: json }) => {
  const E = await import(url);
  // The golden deals' position text, as the engine's Node checks write it (beside the engine).
  const { dealText } = await import(new URL("golden.js", new URL(url, location.href)).href);
  const cases = JSON.parse(json);
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const stats = { undos: 0, safe: 0, refusals: 0, revealed: 0, lateReveals: 0, resyncs: 0, resyncUndos: 0 };
  const counted = {};
  let compared = 0;

  class Mismatch extends Error {
    constructor(detail) {
      super(detail.what);
      this.detail = detail;
    }
  }

  // tests/solrules/model.py is_ambiguous: moves the golden counts leave out.
  function ambiguous(pos, text) {
    if (pos.rules.name !== "quadruple-canfield" || !text.startsWith("f")) return false;
    const [src, dst] = text.split(">");
    const { index } = pos.rules;
    return dst.startsWith("t") && pos.piles[index.get(src)].length === 1 && !pos.piles[index.get(dst)].length;
  }

  function perft(pos, depth) {
    const moves = E.legal(pos);
    if (depth === 1) return moves.length;
    let total = 0;
    for (const m of moves) total += perft(E.play(pos, m).pos, depth - 1);
    return total;
  }

  function golden(c) {
    const where = { game: c.game };
    const expect = (ok, what, expected, got, more = {}) => {
      if (!ok) throw new Mismatch({ ...where, what, expected, got, ...more });
    };
    counted[c.game] = 0;
    for (const deal of c.deals) {
      const text = dealText(c.game, deal.golden, E.rulesOf(c.game).ids);
      const known = E.fromPosition(text);
      expect(E.position(known) === text, "position text", text, E.position(known));
      expect(same(E.board(known), deal.board), "deal board", deal.board, E.board(known), { text });
      expect(same(E.legal(known), deal.legal), "deal legal", deal.legal, E.legal(known), { text });
      const racer = E.fromState(c.game, deal.board);
      expect(same(E.board(racer), deal.board), "board round trip", deal.board, E.board(racer), { text });
      expect(same(E.legal(racer), deal.legal), "legal from board", deal.legal, E.legal(racer), { text });
      counted[c.game] += 1;
    }
    let pos = E.fromPosition(c.perft.position);
    c.perft.counts.forEach((count, i) => {
      const n = E.legal(pos).filter((m) => !ambiguous(pos, m)).length;
      expect(n === count, `perft line count before move ${i}`, count, n,
        { legal: E.legal(pos), position: E.position(pos) });
      counted[c.game] += 1;
      if (i < c.perft.line.length) pos = E.play(pos, c.perft.line[i]).pos;
    });
    const root = E.fromPosition(c.perft_depth.position);
    c.perft_depth.nodes.forEach((nodes, d) => {
      const n = perft(root, d + 1);
      expect(n === nodes, `perft depth ${d + 1}`, nodes, n);
      counted[c.game] += 1;
    });
  }

  function replay(c) {
    let pos = E.fromState(c.game, c.start.board);
    // The expected board, patched with the piles each step changed.
    const board = { ...c.start.board, piles: c.start.board.piles.map((p) => ({ ...p })) };
    const at = new Map(board.piles.map((p, i) => [p.pile, i]));
    let resynced = false;
    let where = { game: c.game, seed: c.seed, step: 0, action: null };
    const recent = [];
    const expect = (ok, what, expected, got, more = {}) => {
      if (!ok) {
        throw new Mismatch({ ...where, what, expected, got, recent: recent.slice(-8),
          position: E.position(pos), resynced, ...more });
      }
    };
    const compare = (want) => {
      expect(same(E.board(pos), want.board), "board", want.board, E.board(pos));
      expect(same(E.legal(pos), want.legal), "legal", want.legal, E.legal(pos));
      expect(same(E.safe(pos), want.safe), "safe", want.safe, E.safe(pos));
      expect(same(E.progress(pos), want.progress), "progress", want.progress, E.progress(pos));
      stats.safe += want.safe.length;
      compared += 1;
    };
    compare(c.start);
    c.steps.forEach((step, i) => {
      where = { ...where, step: i + 1, action: step.action };
      for (const [id, cards] of Object.entries(step.piles)) board.piles[at.get(id)].cards = cards;
      step.board = board;
      for (const [text, why] of Object.entries(step.refusals)) {
        expect(E.refusal(pos, text) === why, `refusal of ${JSON.stringify(text)}`, why, E.refusal(pos, text));
        expect(E.isLegal(pos, text) === (why === null), `isLegal(${text})`, why === null, E.isLegal(pos, text));
        stats.refusals += 1;
      }
      const before = pos;
      if (step.action === "undo") {
        pos = E.undo(pos);
        if (!pos) {
          // A position rebuilt from a board has no history: the client waits for the server.
          expect(resynced, "undo", "the position before", null);
          pos = E.fromState(c.game, step.board);
          stats.resyncUndos += 1;
        }
        stats.undos += 1;
      } else {
        const { pos: moved, turned } = E.play(pos, step.action);
        const told = resynced ? step.flipped : step.seen;
        const placesOf = (list) => list.map((t) => `${t.pile}:${t.index}`).sort();
        if (resynced) {
          const flipped = new Set(placesOf(step.flipped));
          expect(placesOf(turned).every((p) => flipped.has(p)), "turned cards (after a resync)",
            placesOf(step.flipped), placesOf(turned));
        } else {
          expect(same(placesOf(turned), placesOf(step.seen)), "turned cards", placesOf(step.seen), placesOf(turned));
        }
        if (turned.length) {
          // Before the reveal: no full list, and no move judged wrongly.
          expect(E.legal(moved) === null && E.safe(moved) === null, "legal before the reveal", null, E.legal(moved));
          for (const m of step.legal) {
            expect(E.isLegal(moved, m) !== false, `isLegal(${m}) before the reveal`, "true or null", false);
          }
          const next = c.steps[i + 1];
          for (const [text, why] of Object.entries(next?.refusals ?? {})) {
            if (why !== null) expect(E.isLegal(moved, text) !== true, `isLegal(${text}) before the reveal`, "false or null", true);
          }
          if (next?.action === "undo") {
            // The server's answer may come after the racer took the move back.
            const late = E.position(E.reveal(E.undo(moved), turned, told));
            const inTime = E.position(E.undo(E.reveal(moved, turned, told)));
            expect(late === inTime, "reveal after undo", inTime, late);
            // Played again before any reveal: the same cards await it, under the same ids.
            const again = E.play(E.undo(moved), step.action);
            expect(same(again.turned, turned), "turned cards played again", turned, again.turned);
            const revealed = E.position(E.reveal(moved, turned, told));
            const revealedAgain = E.position(E.reveal(again.pos, again.turned, told));
            expect(revealedAgain === revealed, "reveal of a move played again", revealed, revealedAgain);
            stats.lateReveals += 1;
          }
          stats.revealed += turned.length;
        }
        pos = E.reveal(moved, turned, told);
      }
      recent.push({ action: step.action, before: E.position(before) });
      if (c.resync === i) {
        pos = E.fromState(c.game, step.board);
        resynced = true;
        stats.resyncs += 1;
      }
      compare(step);
    });
  }

  // A winning line from the deal, every card known: legal (joined by spaces) and safe at each step.
  function line(c) {
    let pos = E.fromPosition(c.position);
    c.line.forEach((move, i) => {
      const where = { game: c.game, seed: c.seed, step: i, move, position: E.position(pos) };
      const legal = E.legal(pos).join(" ");
      if (legal !== c.legal[i]) throw new Mismatch({ ...where, what: "legal", expected: c.legal[i], got: legal });
      const safe = E.safe(pos);
      if (!same(safe, c.safe[i])) throw new Mismatch({ ...where, what: "safe", expected: c.safe[i], got: safe });
      stats.safe += safe.length;
      compared += 1;
      pos = E.play(pos, move).pos;
    });
  }

  // One position, every card known: legal, safe, refusals, and each legal move played and undone.
  function position(c) {
    const pos = E.fromPosition(c.text);
    const expect = (ok, what, expected, got) => {
      if (!ok) throw new Mismatch({ game: c.game, text: c.text, what, expected, got });
    };
    expect(E.position(pos) === c.text, "position text", c.text, E.position(pos));
    expect(same(E.legal(pos), c.legal), "legal", c.legal, E.legal(pos));
    expect(same(E.safe(pos), c.safe), "safe", c.safe, E.safe(pos));
    for (const [text, why] of Object.entries(c.refusals)) {
      expect(E.refusal(pos, text) === why, `refusal of ${JSON.stringify(text)}`, why, E.refusal(pos, text));
      stats.refusals += 1;
    }
    (c.after ?? []).forEach((want, i) => {
      const after = E.play(pos, c.legal[i]).pos;
      expect(E.position(after) === want, `position after ${c.legal[i]}`, want, E.position(after));
      expect(E.position(E.undo(after)) === c.text, `undo of ${c.legal[i]}`, c.text, E.position(E.undo(after)));
    });
    stats.safe += c.safe.length;
    compared += 1;
  }

  try {
    for (const c of cases) {
      if (c.deals) golden(c);
      else if (c.line) line(c);
      else if (c.text) position(c);
      else replay(c);
    }
  } catch (err) {
    if (!(err instanceof Mismatch)) throw err;
    return { mismatch: err.detail, compared, counted, stats };
  }
  return { mismatch: null, compared, counted, stats };
}
