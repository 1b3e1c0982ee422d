"""How the HTTP side answers (:mod:`solrace.net.web`): every answer with its security headers,
and the request headers an answer depends on.

Every answer carries ``nosniff``, ``no-referrer``, ``DENY`` framing and ``no-cache``, and a page
its Content-Security-Policy (only this server's own scripts, styles and socket): the routes'
answers are built by :func:`response`, and the ones websockets makes itself (426, 414, 431, 400)
get them through :class:`SecureConnection`. A request header whose value decides something must
come once only (:data:`SINGLE_HEADERS`); the browser's player key travels in the ``sr_player``
cookie, read by :func:`player_cookie` and given by :func:`set_cookie`.
"""

from __future__ import annotations

import email.utils
import http
import http.cookies
import json
from collections.abc import Iterable
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Response
from websockets.server import ServerProtocol

#: Pages may load only this server's own scripts and styles and open only its own socket, and
#: may not be framed.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
       "form-action 'self'; frame-ancestors 'none'")


#: On every answer but the WebSocket upgrade itself.
SECURITY_HEADERS = (
    ("Cache-Control", "no-cache"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
)


def response(status: int, body: bytes, content_type: str,
             extra: Iterable[tuple[str, str]] = ()) -> Response:
    headers = Headers(
        [
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Connection", "close"),
            ("Content-Length", str(len(body))),
            ("Content-Type", content_type),
            *SECURITY_HEADERS,
            *extra,
        ]
    )
    if content_type.startswith("text/html"):
        headers["Content-Security-Policy"] = CSP
    return Response(status, http.HTTPStatus(status).phrase, headers, body)


def secured(answer: Response) -> Response:
    """``answer`` with the security headers it lacks (the library's own error answers)."""
    for name, value in SECURITY_HEADERS:
        if name not in answer.headers:
            answer.headers[name] = value
    return answer


class SecureConnection(ServerConnection):
    """A server connection whose every HTTP answer carries the security headers.

    Our routes build theirs with :func:`response`; the answers websockets makes itself (426
    for a plain GET of ``/ws``, 414 and 431 for a request line or headers too long, 400 for
    a bad handshake) all come from ``ServerProtocol.reject``, which is wrapped here. That is
    the one place this module leans on websockets' internals; tests/solrace/test_http.py
    fails if the library stops going through it.
    """

    def __init__(self, protocol: ServerProtocol, *args: Any, **kwargs: Any) -> None:
        super().__init__(protocol, *args, **kwargs)
        reject = protocol.reject

        def secure_reject(status: Any, text: str) -> Response:
            return secured(reject(status, text))

        protocol.reject = secure_reject  # type: ignore[method-assign]


def text_response(status: int, text: str) -> Response:
    return response(status, text.encode(), "text/plain; charset=utf-8")


def json_response(status: int, obj: Any, extra: Iterable[tuple[str, str]] = ()) -> Response:
    body = json.dumps(obj, separators=(",", ":")).encode()
    return response(status, body, "application/json", extra)


#: Request headers that must appear at most once (their value decides something): a request
#: with one of them twice is answered 400 before anything reads it (``Headers.get`` would raise
#: on it). Every header this module reads is one of these, but ``Accept-Encoding``, which may
#: come in several lines (:func:`accepts_gzip` reads them all).
SINGLE_HEADERS = ("Host", "Origin", "If-None-Match", "X-Forwarded-For", "X-Real-IP", "Cookie",
                  "X-Forwarded-Proto", "X-Solrace-Ticket", "X-Solrace-Signout")


def accepts_gzip(headers: Headers) -> bool:
    """Does the client take a gzipped answer (any of its ``Accept-Encoding`` lines)?"""
    return "gzip" in ", ".join(headers.get_all("Accept-Encoding"))


#: The browser's player key (see docs/protocol.md, "Who you are").
COOKIE = "sr_player"
COOKIE_DAYS = 400  # the most a browser keeps a cookie


def player_cookie(headers: Headers) -> str | None:
    """The ``sr_player`` cookie of a request, if any (unparsable cookies are ignored)."""
    raw = headers.get("Cookie")
    if not raw:
        return None
    jar = http.cookies.SimpleCookie()
    try:
        jar.load(raw)
    except http.cookies.CookieError:
        return None
    morsel = jar.get(COOKIE)
    return None if morsel is None else morsel.value


def set_cookie(value: str, secure: bool, max_age: int = COOKIE_DAYS * 86400) -> tuple[str, str]:
    """The header that gives the browser its key (``HttpOnly``: no script reads it)."""
    flags = f"; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Lax"
    return ("Set-Cookie", f"{COOKIE}={value}{flags}{'; Secure' if secure else ''}")
