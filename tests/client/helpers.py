"""Helpers for the browser tests: opening watched pages, reading and driving boards through their
``data-board`` / ``data-pile`` / ``data-card`` attributes, and a blocking protocol client (``Bot``)
to set races up around the browsers."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import solrules

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
#: Debian's headless-only build of Chromium (package ``chromium-headless-shell``): the same engine
#: as the full browser without its desktop parts, a third less CPU on the browser tests
#: (docs/performance.md, "Test suite"). The binary itself, not ``/usr/bin/chromium-headless-shell``,
#: a shell script that stays as the browser's parent.
HEADLESS_SHELL = "/usr/lib/chromium/chromium-headless-shell"
#: The browser the tests drive: ``SOLRACE_CHROMIUM`` if set, else the headless shell, else the full
#: Chromium (package ``chromium``) in headless mode. Never a browser Playwright downloads.
CHROMIUM = os.environ.get("SOLRACE_CHROMIUM") or (
    HEADLESS_SHELL if Path(HEADLESS_SHELL).exists() else "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Unit of waiting in the browser tests, in milliseconds; every timeout is a small multiple.
WAIT_MS = 10000
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


class Pages:
    """Opens pages in fresh browser contexts (each one a separate "browser" with its own
    storage) and records every console error and uncaught page error they produce."""

    def __init__(self, browser: Any, base: str) -> None:
        self.browser = browser
        self.base = base
        self.contexts: list[Any] = []
        self.errors: list[str] = []

    def open(self, path: str = "/", viewport: dict[str, int] | None = None,
             csp: bool = False, **context_options: Any) -> Any:
        """A page in a fresh context. The page's Content-Security-Policy forbids evaluating
        strings, which Playwright's ``wait_for_function`` does: contexts bypass it unless
        ``csp`` (tests/client/test_security.py checks the client keeps to its policy)."""
        # Motion is reduced unless a test asks for it (reduced_motion="no-preference"): slides,
        # pulses and spinners redraw every frame in every open page, which costs the suite's
        # few cores far more than anything a test checks.
        context_options.setdefault("reduced_motion", "reduce")
        context = self.browser.new_context(viewport=viewport or DESKTOP, bypass_csp=not csp,
                                           **context_options)
        context.set_default_timeout(WAIT_MS * 2)
        self.contexts.append(context)
        page = context.new_page()
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        page.goto(self.base + path)
        return page

    def _console(self, msg: Any) -> None:
        # Chromium fails the requests it has in flight with ERR_NETWORK_CHANGED when the host's
        # interfaces change (seen in CI while tests/test_compose.py's dockerd made its bridges):
        # the machine's doing, not the client's; the test still fails if the page did not cope.
        if msg.type == "error" and "net::ERR_NETWORK_CHANGED" not in msg.text:
            self.errors.append(f"console: {msg.text}")

    def close(self) -> None:
        for c in self.contexts:
            c.close()


# ------------------------------------------------------------------------- reading boards
def own_legal(page: Any) -> list[str]:
    """The legal moves of the racer's board as drawn (exposed on ``window.solrace``)."""
    return page.evaluate("window.solrace.session.model.own?.legal ?? []")


def own_seq(page: Any) -> int:
    """The actions the racer's board as drawn counts (some may await the server's answer)."""
    return page.evaluate("window.solrace.session.model.own?.seq ?? -1")


SETTLE = """async () => {
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const flying = [...document.querySelectorAll(".card.flying")].flatMap((c) => c.getAnimations());
  await Promise.all(flying.map((a) => a.finished.catch(() => null)));
}"""


def settle(page: Any) -> None:
    """Let pending redraws (one animation frame each) happen, and cards sliding to their new
    place (board.js, at most 120 ms) land there."""
    page.evaluate(SETTLE)


RECORD_TOASTS = """() => {
  window.toastTexts = [...document.querySelectorAll('.toast')].map(t => t.textContent);
  new MutationObserver((records) => {
    for (const r of records) for (const n of r.addedNodes)
      if (n.classList?.contains('toast')) window.toastTexts.push(n.textContent);
  }).observe(document.getElementById('toasts'), {childList: true});
}"""


def record_toasts(page: Any) -> None:
    """Keep every toast the page shows from now on: a toast lasts four seconds, which a busy
    machine can spend before the test looks."""
    page.wait_for_selector("#toasts", state="attached")
    page.evaluate(RECORD_TOASTS)


def wait_toast(page: Any, pattern: str, timeout: int = WAIT_MS) -> None:
    """Wait until a toast matching the regular expression ``pattern`` has been shown since
    ``record_toasts``."""
    page.wait_for_function(
        "(p) => window.toastTexts.some(t => new RegExp(p).test(t))", arg=pattern, timeout=timeout)


def wait_seq(page: Any, seq: int, timeout: int = WAIT_MS) -> None:
    """Wait until the server has confirmed ``seq`` actions of the racer, nothing more is drawn,
    and the board shows it."""
    page.wait_for_function(
        f"(o => o?.seq === {seq} && o.confirmed === {seq})(window.solrace.session.model.own)",
        timeout=timeout)
    settle(page)


def board_cards(page: Any, board: str) -> dict[str, list[str]]:
    """Pile id -> face-up cards, bottom to top, as rendered in ``[data-board=board]``."""
    return page.evaluate(
        """(board) => Object.fromEntries([...document.querySelectorAll(
             `[data-board="${board}"] [data-pile]`)].map(p =>
             [p.dataset.pile, [...p.querySelectorAll('[data-card]')].map(c => c.dataset.card)]))""",
        board,
    )


def own_cards(page: Any) -> dict[str, list[str]]:
    return board_cards(page, "own")


def top_card(page: Any, pile: str) -> Any:
    return page.locator(f'[data-board="own"] [data-pile="{pile}"] [data-depth="1"]')


def click_move(page: Any, move: str) -> None:
    """Play a one-card move by clicking its card, then the destination pile."""
    src, dst = move.split(">")
    seq = own_seq(page)
    top_card(page, src).click()
    page.wait_for_selector(f'[data-board="own"] [data-pile="{dst}"].target')
    page.locator(f'[data-board="own"] [data-pile="{dst}"]').click()
    wait_seq(page, seq + 1)


def screenshot(page: Any, name: str, full_page: bool = False) -> Path:
    """``test-artifacts/{name}.jpg``: JPEG, as Chromium encodes it in a third of the CPU time
    of a PNG (the suite takes about 140 screenshots)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.jpg"
    page.screenshot(path=str(path), full_page=full_page, type="jpeg", quality=85)
    return path


# ------------------------------------------------------------------------------ protocol
class Bot:
    """A blocking protocol client for setting races up around the browsers."""

    def __init__(self, base: str) -> None:
        from websockets.sync.client import connect

        self._stack = contextlib.ExitStack()
        url = base.replace("http://", "ws://") + "/ws"
        # Unbounded queue: a bot that does not read must not stall the server's close.
        self.ws = self._stack.enter_context(
            connect(url, compression=None, max_size=2**22, max_queue=None, close_timeout=1)
        )
        self.rid = 0
        self.state: dict[str, Any] | None = None

    def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Send ``msg`` and return its direct reply (an ``error`` reply fails the test)."""
        self.rid += 1
        self.ws.send(json.dumps({**msg, "rid": self.rid}))
        while True:
            reply = json.loads(self.ws.recv(timeout=WAIT_MS / 1000))
            if reply.get("type") == "state":
                self.state = reply
            if reply.get("rid") == self.rid:
                if reply["type"] == "error":
                    raise AssertionError(f"{reply['code']}: {reply['message']}")
                return reply

    def wait_state(self) -> dict[str, Any]:
        """The latest ``state`` with legal moves, waiting for one if needed."""
        while self.state is None or not self.state.get("legal"):
            msg = json.loads(self.ws.recv(timeout=WAIT_MS / 1000))
            if msg.get("type") == "state":
                self.state = msg
        return self.state

    def play(self, race: str, moves: int) -> None:
        """Make ``moves`` moves, preferring the foundations."""
        for _ in range(moves):
            state = self.wait_state()
            legal = state["legal"]
            move = next((m for m in legal if ">f" in m), legal[0])
            self.request({"type": "move", "race": race, "move": move, "seq": state["seq"] + 1})

    def close(self) -> None:
        self._stack.close()


def create_race(base: str, **options: Any) -> dict[str, Any]:
    """Create a race (Scotch unless ``game`` says otherwise); the ``created`` reply."""
    bot = Bot(base)
    try:
        return bot.request({"type": "create", "game": "scotch", **options})
    finally:
        bot.close()


# --------------------------------------------------------------------------------- deals
def scotch_seed_with_foundation_moves(count: int = 2) -> int:
    """A Scotch deal with at least ``count`` fans showing an Ace (foundation moves at once)."""
    for seed in range(1, 1000):
        legal = [m.text() for m in solrules.new_game("scotch", seed).legal_moves()]
        if len({t.split(">")[0] for t in legal if ">f" in t}) >= count:
            return seed
    raise AssertionError("no such deal")


def winning_line(game: Any, max_nodes: int) -> list[str] | None:
    """A list of moves that wins ``game`` (depth-first, foundations first), or None."""
    seen: set[str] = set()
    line: list[str] = []
    nodes = 0

    def search() -> bool:
        nonlocal nodes
        nodes += 1
        if game.is_won():
            return True
        key = json.dumps(game.board())
        if nodes > max_nodes or key in seen:
            return False
        seen.add(key)
        moves = sorted(game.legal_moves(), key=lambda m: (">f" not in m.text(), m.text()[0] == "f"))
        for move in moves:
            game.push(move)
            line.append(move.text())
            if search():
                return True
            game.pop()
            line.pop()
        return False

    return line if search() else None


def solvable_scotch(max_nodes: int = 3000) -> tuple[int, list[str]]:
    """The first Scotch seed a small search wins, with its winning line."""
    for seed in range(1, 200):
        line = winning_line(solrules.new_game("scotch", seed), max_nodes)
        if line is not None:
            return seed, line
    raise AssertionError("no easy deal found")


# ---------------------------------------------------------------------------- races, views
def join_as(page: Any, name: str) -> None:
    """Join the race the page shows, with the lobby's form."""
    page.fill("#racer-name", name)
    page.click("text=Join race")
    page.wait_for_selector(f"text=You're in, {name}.")


def race_with_bot(pages: Pages, bot: Bot, viewport: dict[str, int] | None = None,
                  before_start: Any = None, context: dict[str, Any] | None = None,
                  **options: Any) -> tuple[Any, str]:
    """A running race of one browser racer ("Ann", p1) and ``bot`` ("Robo", p2): the page, once
    its board is dealt, and the race id. ``before_start(page)`` runs in the lobby."""
    created = create_race(pages.base, players=2, **options)
    race = created["race"]
    page = pages.open(f"/race/{race}", viewport=viewport, **(context or {}))
    join_as(page, "Ann")
    if before_start:
        before_start(page)
    bot.request({"type": "join", "race": race, "name": "Robo", "bot": True})
    bot.request({"type": "start", "race": race, "token": created["host_token"]})
    page.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS)
    page.wait_for_function("window.solrace.session.model.own", timeout=WAIT_MS)
    settle(page)
    return page, race


def both_widths(page: Any, name: str, full_page: bool = False,
                phone: dict[str, int] = PHONE) -> None:
    """Screenshots ``{name}-1280`` and ``{name}-390`` (the ``phone`` width) of the page as it
    is now."""
    before = page.viewport_size
    for label, size in (("1280", DESKTOP), (str(phone["width"]), phone)):
        page.set_viewport_size(size)
        settle(page)
        screenshot(page, f"{name}-{label}", full_page=full_page)
    page.set_viewport_size(before)
    settle(page)


def one_card_moves(legal: list[str]) -> list[str]:
    return [m for m in legal if "/" not in m and m not in ("s>w", "w>s")]
