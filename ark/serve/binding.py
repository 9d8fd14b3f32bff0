"""Where the servers listen, and who may talk to them: one rule for ``ark serve`` and ``ark mcp --transport http``.

- By default a server listens on 127.0.0.1 only. Any loopback address (127.0.0.0/8, ``::1``, ``localhost``) is
  accepted as it is.
- Any other address is refused unless the command is given ``--allow-remote`` **and** a token (``--token`` or the
  ``ARK_SERVE_TOKEN`` environment variable, at least :data:`MIN_TOKEN_CHARS` characters). Every request must then
  carry it: ``Authorization: Bearer TOKEN``, or ``?token=TOKEN`` once (a browser opening the page), after which a
  same-site cookie carries it.
- :func:`serve_app` binds the socket first, so the address a server really got (``--port 0``: any free port) is
  printed before it starts answering.
- On loopback without a token, a request whose ``Host`` header is not a loopback name (a web page reaching the
  server through DNS rebinding) is refused with 421.
- Every request that may change state or spend a model (any method but GET, HEAD and OPTIONS) must come from the
  server's own origin (:class:`SameOriginMiddleware`): an ``Origin`` header other than the server's is refused with
  403, and so is a browser's request without one unless ``Sec-Fetch-Site`` says ``same-origin`` or ``none``. Clients
  that are not browsers send neither header and pass; a request carrying the token in ``Authorization`` passes too.
  A body must be declared JSON (``Content-Type: application/json``, else 415), so a page cannot send one as a form
  or ``text/plain`` "simple request" either. Every response forbids framing (``X-Frame-Options: DENY``,
  ``frame-ancestors 'none'``): another site cannot show the server's page in a frame and have the user click it.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import socket
from collections.abc import Callable
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

from ark.errors import ArkError

from ..text import escape_log_output

TOKEN_ENV = "ARK_SERVE_TOKEN"
MIN_TOKEN_CHARS = 16
COOKIE = "ark_token"
DEFAULT_HOST = "127.0.0.1"


class BindingError(ValueError, ArkError):
    """A listening address the rule refuses (the message says what to pass)."""


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_binding(host: str, allow_remote: bool, token: str | None) -> str | None:
    """The token requests must carry (None on loopback without one), or :class:`BindingError` for an address that
    needs ``--allow-remote`` and a token."""
    token = token or os.environ.get(TOKEN_ENV) or None
    if is_loopback(host):
        return token
    if not allow_remote:
        raise BindingError(f"refusing to listen on {host}: only loopback addresses (127.0.0.1, ::1, localhost) are "
                           f"allowed by default. To accept other machines pass --allow-remote and a token "
                           f"(--token or {TOKEN_ENV}); every request must then carry it")
    if not token or len(token) < MIN_TOKEN_CHARS:
        raise BindingError(f"--allow-remote needs a token of at least {MIN_TOKEN_CHARS} characters (--token or "
                           f"{TOKEN_ENV}), e.g. one made with: "
                           "python -c 'import secrets; print(secrets.token_urlsafe())'")
    return token


def _headers(scope: dict) -> dict[str, str]:
    """A request's headers by lower-cased name."""
    return {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope.get("headers", [])}


class TokenMiddleware:
    """ASGI middleware refusing every HTTP request without the token (401, JSON); lifespan events pass through."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token.encode()

    def _valid(self, candidate: str | None) -> bool:
        if not candidate:
            return False
        return hmac.compare_digest(candidate.encode(), self.token)

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        authorization = headers.get("authorization", "")
        bearer = authorization[7:].strip() if authorization.lower().startswith("bearer ") else None
        cookie = SimpleCookie(headers.get("cookie", ""))
        from_cookie = cookie[COOKIE].value if COOKIE in cookie else None
        query = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [None])[0]
        if self._valid(bearer) or self._valid(from_cookie):
            await self.app(scope, receive, send)
            return
        if self._valid(query):  # a browser opening the page: keep the token in a cookie for its next requests
            async def send_with_cookie(message: dict) -> None:
                if message["type"] == "http.response.start":
                    value = f"{COOKIE}={query}; Path=/; HttpOnly; SameSite=Strict"
                    message = {**message, "headers": [*message.get("headers", []),
                                                      (b"set-cookie", value.encode("latin-1"))]}
                await send(message)

            await self.app(scope, receive, send_with_cookie)
            return
        body = (b'{"error": "this server needs its token: send Authorization: Bearer TOKEN (or open the page with '
                b'?token=TOKEN)"}')
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"www-authenticate", b"Bearer")]})
        await send({"type": "http.response.body", "body": body})


def host_name(header: str) -> str:
    """The host name of an HTTP ``Host`` header (``[::1]:8000`` -> ``::1``, ``localhost:8000`` -> ``localhost``)."""
    header = header.strip()
    if header.startswith("["):
        end = header.find("]")
        return header[1:end] if end > 0 else ""
    return header.split(":", 1)[0]


class LoopbackHostMiddleware:
    """ASGI middleware refusing (421, JSON) a request whose ``Host`` header names anything but a loopback address.

    A server on loopback without a token trusts whoever can reach it; a web page can reach it only through DNS
    rebinding (its own host name resolving to 127.0.0.1), and then its requests carry that host name. (The MCP
    SDK's transport security does the same for ``ark mcp``; Starlette's ``TrustedHostMiddleware`` cuts an IPv6
    ``Host`` such as ``[::1]:8000`` at its first colon, hence this one.)"""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] in ("http", "websocket"):
            headers = dict(scope.get("headers") or [])
            host = headers.get(b"host", b"").decode("latin-1")
            if not is_loopback(host_name(host) or "-"):
                await _refuse(send, 421, f"refusing Host {host!r}: this server answers only requests addressed to a "
                              "loopback name (127.0.0.1, localhost, [::1])", "bad_host")
                return
        await self.app(scope, receive, send)


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
# Every response: no page of another origin may show this one in a frame (and have the user click its buttons,
# which are same-origin requests), and no response is read as another type than it declares.
NO_FRAMING = ((b"x-frame-options", b"DENY"), (b"content-security-policy", b"frame-ancestors 'none'"),
              (b"x-content-type-options", b"nosniff"))
SAME_ORIGIN_FETCH_SITES = frozenset({"same-origin", "none"})  # ``none``: typed in the address bar, a bookmark


async def _refuse(send: Callable, status: int, message: str, kind: str) -> None:
    body = json.dumps({"error": message, "kind": kind}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class SameOriginMiddleware:
    """ASGI middleware admitting a request that may change state or spend a model (any method but GET, HEAD and
    OPTIONS) only from the server's own origin, with a JSON body: see the module doc. The server's origin is
    ``http://`` + the request's ``Host`` (which :class:`LoopbackHostMiddleware` or the token already vouch for)."""

    def __init__(self, app: Any, token: str | None = None) -> None:
        self.app = app
        self.token = token.encode() if token else None

    def problem(self, method: str, headers: dict[str, str]) -> tuple[int, str, str] | None:
        """``(status, message, kind)`` of a refusal, or None for a request that may go on."""
        if method in SAFE_METHODS:
            return None
        bearer = headers.get("authorization", "")
        with_token = self.token is not None and bearer.lower().startswith("bearer ") and hmac.compare_digest(
            bearer[7:].strip().encode(), self.token)
        own = "http://" + headers.get("host", "").strip().lower()
        origin = headers.get("origin")
        fetch_site = headers.get("sec-fetch-site")
        if not with_token and origin is not None and origin.strip().lower() != own:
            return 403, (f"cross-origin request refused: Origin {origin!r} is not this server's origin {own!r}; "
                         "only the server's own page (or a client that is not a browser) may call it"), "cross_origin"
        if not with_token and origin is None and fetch_site is not None and fetch_site not in SAME_ORIGIN_FETCH_SITES:
            return 403, (f"cross-site request refused (Sec-Fetch-Site: {fetch_site!r}); only the server's own page "
                         "(or a client that is not a browser) may call it"), "cross_origin"
        if method in BODY_METHODS:
            content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if content_type != "application/json":
                return 415, (f"a {method} body must be JSON: send Content-Type: application/json (got "
                             f"{headers.get('content-type', 'none')!r})"), "unsupported_media_type"
        return None

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http":
            headers = _headers(scope)
            refused = self.problem(scope.get("method", "GET").upper(), headers)
            if refused is not None:
                await _refuse(send, *refused)
                return

            async def send_unframed(message: dict) -> None:
                if message["type"] == "http.response.start":
                    message = {**message, "headers": [*message.get("headers", []), *NO_FRAMING]}
                await send(message)

            await self.app(scope, receive, send_unframed)
            return
        await self.app(scope, receive, send)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: any free port); ``OSError`` if the address is taken."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket, path: str = "/") -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"


def serve_app(app: Any, host: str, port: int, announce: Callable[[str], None], path: str = "/",
              token: str | None = None, log_level: str = "warning") -> None:
    """Serve the ASGI ``app`` with uvicorn on ``host:port`` until interrupted; ``announce`` gets the URL once the
    socket is bound. Requests that may change state or spend a model must be same-origin JSON
    (:class:`SameOriginMiddleware`). With a ``token`` every request must carry it (:class:`TokenMiddleware`);
    without one, on loopback, only requests addressed to a loopback name are answered
    (:class:`LoopbackHostMiddleware`)."""
    import uvicorn

    sock = bind_socket(host, port)
    app = SameOriginMiddleware(app, token)
    if token:
        app = TokenMiddleware(app, token)
    elif is_loopback(host):
        app = LoopbackHostMiddleware(app)
    announce(url_of(sock, path))
    config = uvicorn.Config(app, log_level=log_level, lifespan="on", timeout_graceful_shutdown=3)
    escape_log_output("uvicorn", "uvicorn.error", "uvicorn.access")  # its handlers exist once the config is made
    uvicorn.Server(config).run(sockets=[sock])
