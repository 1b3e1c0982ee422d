"""The multi-process service as compose.yaml runs it: the repo's nginx configuration (Debian's
nginx, on a free port) in front of two ``solrace serve --redis`` processes on a real Redis; a
browser racer and a bot race through it, and the race goes on when one process is killed."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.client.helpers import DESKTOP, REPO, WAIT_MS, Bot, Pages, screenshot, settle, wait_seq
from tests.solrace.servers import RedisServer, Solrace, free_port

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def nginx_config(listen: int, upstreams: list[int]) -> str:
    """deploy/nginx.conf with this test's ports: only the upstream servers and the port
    change."""
    text = (REPO / "deploy" / "nginx.conf").read_text()
    line = "        server solrace:8080 max_fails=1 fail_timeout=2s;"
    assert line in text and "listen 8080;" in text
    servers = "\n".join(f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=2s;"
                        for p in upstreams)
    return text.replace(line, servers).replace("listen 8080;", f"listen 127.0.0.1:{listen};")


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[str, list[Solrace]]]:
    if not Path(NGINX).exists():
        pytest.fail("nginx is missing (apt-get install nginx)")
    redis = RedisServer(tmp_path / "redis")
    procs = [Solrace(redis.url, "--trust-proxy", "--countdown", "1") for _ in range(2)]
    for proc in procs:
        proc.start_blocking()
    port = free_port()
    prefix = tmp_path / "nginx"
    prefix.mkdir()
    (prefix / "nginx.conf").write_text(nginx_config(port, [p.port for p in procs]))
    nginx = subprocess.Popen([NGINX, "-p", str(prefix), "-c", str(prefix / "nginx.conf"),
                              "-g", "daemon off;"], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 10
    while not ping_http(port):
        assert nginx.poll() is None, nginx.stderr.read() if nginx.stderr else ""
        assert time.monotonic() < deadline, "nginx did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", procs
    finally:
        nginx.terminate()
        nginx.wait(5)
        for proc in procs:
            proc.stop()
        redis.stop()


def ping_http(port: int) -> bool:
    import urllib.request

    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                f"http://127.0.0.1:{port}/healthz", timeout=0.5) as resp:
            return resp.status == 200
    except OSError:
        return False


def open_at(pages: Pages, base: str, path: str) -> Any:
    """``pages.open`` on another server (console errors still fail the test)."""
    context = pages.browser.new_context(viewport=DESKTOP, bypass_csp=True)
    context.set_default_timeout(WAIT_MS * 2)
    pages.contexts.append(context)
    page = context.new_page()
    page.on("console", pages._console)
    page.on("pageerror", lambda exc: pages.errors.append(f"pageerror: {exc}"))
    page.goto(base + path)
    return page


def test_a_browser_race_through_nginx_in_front_of_two_processes(
    pages: Pages, service: tuple[str, list[Solrace]]
) -> None:
    base, procs = service
    home = open_at(pages, base, "/")
    home.select_option("#game", "yukon")
    home.click("text=Create race")
    home.wait_for_selector("#racer-name", timeout=WAIT_MS * 2)
    race = home.url.rsplit("/", 1)[1]
    home.fill("#racer-name", "Nina")
    home.click("text=Join race")
    home.wait_for_selector("text=You're in, Nina.")
    bots = [Bot(base) for _ in range(2)]  # two connections: round robin, one per process
    try:
        bots[0].request({"type": "join", "race": race, "name": "Robo", "bot": True})
        watcher = open_at(pages, base, f"/race/{race}/watch")
        home.click("#ready")
        bots[1].request({"type": "watch", "race": race})
        bots[0].request({"type": "ready", "race": race})
        home.wait_for_selector('[data-board="own"] [data-card]', timeout=WAIT_MS * 2)
        watcher.wait_for_selector('[data-board="p2"] [data-card]', timeout=WAIT_MS * 2)
        for _ in range(3):
            legal = bots[0].wait_state()["legal"]
            bots[0].request({"type": "move", "race": race, "move": legal[0],
                             "seq": bots[0].state["seq"] + 1})  # type: ignore[index]
        home.wait_for_function("window.solrace.session.model.own?.seq === 0")
        move = home.evaluate("window.solrace.session.model.own.legal[0]")
        home.evaluate("(m) => window.solrace.session.move(m)", move)
        wait_seq(home, 1)
        settle(watcher)
        screenshot(watcher, "nginx-watch")
        # One process dies: the pages reconnect through nginx to the other and go on.
        procs[0].kill()
        # The racer plays on: drawn at once, the move goes through once the page is back.
        move = home.evaluate("window.solrace.session.model.own.legal[0]")
        home.evaluate("(m) => window.solrace.session.move(m)", move)
        wait_seq(home, 2, timeout=WAIT_MS * 4)
        # The human resigns: the race ends for him at once (the bot stops where it is).
        home.click("#resign")
        home.click("#resign")
        home.wait_for_selector('#verify-result[data-ok="true"]', timeout=WAIT_MS * 2)
        screenshot(home, "nginx-results")
    finally:
        for b in bots:
            b.close()
