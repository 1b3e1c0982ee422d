// Move text, the one grammar of the client (the server's is solrules.Move.from_text): "t3>f1" moves
// one card, "t2>t5/3" the top three, "s>w" deals, "w>s" turns the waste over. No rules here: which
// moves are legal is the rules engine's business (engine/, the server's rules).

const MOVE_RE = /^([a-z]+\d*)>([a-z]+\d*)(?:\/(\d+))?$/;

/** Parse "t2>t5/3" into {from: "t2", to: "t5", count: 3, text}; null for anything else. */
export function parseMove(text) {
  const m = MOVE_RE.exec(text);
  return m ? { from: m[1], to: m[2], count: m[3] ? Number(m[3]) : 1, text } : null;
}

/** The move text for moving the top `count` cards of `from` to `to`. */
export function moveText(from, to, count = 1) {
  return count > 1 ? `${from}>${to}/${count}` : `${from}>${to}`;
}

/** What a player typed ("T3 F1", "t3f1", "t3 > f1") as a move text ("t3>f1"); the server judges it. */
export function normaliseMove(text) {
  let t = text.trim().toLowerCase().replace(/\s*>\s*/g, ">").replace(/\s*\/\s*/g, "/");
  if (!t.includes(">")) t = t.replace(/^([a-z]\d*)\s*([a-z]\d*)((?:\/\d+)?)$/, "$1>$2$3");
  return t.replace(/\s+/g, "");
}

/** Does this move put a card on a foundation? */
export function isHome(move) {
  return move.to.startsWith("f");
}
