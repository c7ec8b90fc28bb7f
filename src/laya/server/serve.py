"""``laya serve``: settings → Router → app → uvicorn, with limits on every connection.

uvicorn runs on its h11 protocol, extended by :class:`LimitedProtocol` with limits uvicorn does
not enforce as documented: a cap on the request line and headers (``max_header_bytes``; h11
alone lets any head through that arrives in one read), a time limit on receiving them
(``header_timeout``), a connection cap (``max_connections``) whose 503 is JSON, like every
refusal of the app, and a cap per client address (``max_client_connections``), beyond which a
connection is answered 503 and closed at once, so one client's idle sockets cannot fill the
server's. An HTTP request h11 cannot parse gets a JSON 400, and so does one framed by both
``Content-Length`` and ``Transfer-Encoding`` (which h11 would read as chunked and keep the
connection: RFC 9112 §6.1 asks for 400 and a close). Every accepted socket gets ``TCP_NODELAY``
(a reply's head and body leave at once). The keep-alive time is uvicorn's; the body's own size
and time limits are the app's (:mod:`laya.server.limits`). Each refusal here is counted in the
app's metrics (``laya_refusals``).

The subclass relies on these parts of uvicorn's ``H11Protocol`` (and h11's ``Connection``),
each pinned by ``tests/test_server_limits.py::test_the_uvicorn_internals_laya_serve_extends``:
``connection_made``, ``data_received``, ``handle_events``, ``send_400_response``,
``connection_lost``, and the attributes ``config``, ``conn``, ``transport``, ``loop``, ``app``,
``connections``, ``tasks``; h11's ``their_state`` and ``trailing_data``.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
from collections.abc import Iterable, Sequence
from functools import cache
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Protocol

from ..commands import run_command
from ..errors import LayaError, Overloaded
from .inference import checkpoint_listing
from .settings import Settings, settings_from
from .statuses import CLOSE, Refusal, refusal
from .tracing import configure as configure_tracing

if TYPE_CHECKING:
    import asyncio

    import uvicorn
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["serve_main", "uvicorn_config"]

log = logging.getLogger("laya.server")
_HEAD_END = re.compile(rb"\n\r?\n")  # where h11 finds the blank line that ends the headers
_MALFORMED = (
    "malformed HTTP request: its request line or headers could not be parsed; send an HTTP/1.1 "
    "request (METHOD /path HTTP/1.1, then Name: value header lines)"
)
_FRAMED_TWICE = (
    "malformed HTTP request: Content-Length and Transfer-Encoding together (RFC 9112 section "
    "6.1); send one of them"
)


def _not_counted(_reason: str) -> None:
    """Where a refusal is counted when the app has no metrics (an app built elsewhere)."""


def _json_parts(answer: Refusal) -> tuple[dict[str, str], bytes]:
    """The headers and ``{"detail": ...}`` body of a refusal the protocol sends, closing after."""
    body = json.dumps({"detail": answer.detail}).encode()
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
    return {**headers, **answer.headers, **CLOSE}, body


def _json_reply(answer: Refusal) -> bytes:
    """A refusal as a whole HTTP/1.1 reply, for a connection h11 will not answer."""
    headers, body = _json_parts(answer)
    lines = [f"HTTP/1.1 {answer.status} {HTTPStatus(answer.status).phrase}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return "\r\n".join(lines).encode() + b"\r\n\r\n" + body


class _Connection(Protocol):
    """What :func:`_open` reads of one of uvicorn's connection protocols."""

    @property
    def transport(self) -> asyncio.BaseTransport: ...


def _open(connections: Iterable[_Connection]) -> int:
    """The connections not on their way out: one refused (closing) no longer takes a place
    (counted only past the cap, so a request under it does not walk every connection)."""
    return sum(1 for connection in connections if not connection.transport.is_closing())


@cache
def _at_capacity(limit: int) -> ASGIApp:
    """The ASGI app answering a request beyond the connection cap: JSON 503, Retry-After, close."""
    message = f"server busy: at its limit of {limit} connections (--max-connections); retry shortly"
    answer = refusal(Overloaded(message, retry_after=1))
    headers, body = _json_parts(answer)
    start = {
        "type": "http.response.start",
        "status": answer.status,
        "headers": [(name.lower().encode(), value.encode()) for name, value in headers.items()],
    }

    async def app(_scope: Scope, _receive: Receive, send: Send) -> None:
        log.warning("refused a request: %s", answer.detail)
        await send(start)
        await send({"type": "http.response.body", "body": body})

    return app


@cache
def _protocol_class() -> type:
    """uvicorn's h11 protocol with ``laya serve``'s header cap and timer and connection cap."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class LimitedProtocol(H11Protocol):
        """Caps a request's head (431) and the connections (503), and times the head's arrival."""

        header_timer: asyncio.TimerHandle | None = None
        limits: Settings = Settings()

        def connection_made(self, transport: Any) -> None:  # uvicorn narrows it to a Transport
            super().connection_made(transport)
            self.limits = getattr(self.config, "laya_settings", self.limits)
            self.count = getattr(self.config, "laya_refused", _not_counted)
            no_delay(transport)
            if self._client_over_cap():
                return
            self._arm()

        def _client_over_cap(self) -> bool:
            """Past ``max_client_connections`` from this address: 503 and closed at once."""
            peer = _peer(self)
            cap = self.limits.max_client_connections
            if peer is None or len(self.connections) <= cap:
                return False
            mine = [_peer(other) for other in self.connections].count(peer)
            if mine <= cap:
                return False
            detail = (
                f"too many connections from {peer}: {mine} open, at most {cap} per client "
                "(--max-client-connections); reuse or close some"
            )
            log.warning("refused a connection: %s", detail)
            self.count("client_connections")
            self._refuse(503, detail, {"Retry-After": "1"})
            return True

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                if self.header_timer is None:
                    self._arm()
            else:
                self._disarm()

        def handle_events(self) -> None:
            """Refuse an oversized or twice-framed head before h11 parses it; pick the app for
            the next request."""
            if self.transport.is_closing():  # refused at once (a client over its cap)
                return
            if self._head_too_large():
                self._refuse_head()
                return
            if self._framed_twice():
                log.warning("refused a request: %s", _FRAMED_TWICE)
                self.count("malformed_http")
                self._refuse(400, _FRAMED_TWICE)
                return
            self.app = self._app_for_next_request()
            super().handle_events()

        def _refuse_head(self) -> None:
            """431 for a head over the cap, logged for the operator."""
            cap = self.limits.max_header_bytes
            detail = (
                f"request line and headers exceed {cap} bytes, this server's limit "
                "(--max-header-bytes); send fewer or smaller headers"
            )
            log.warning("refused a request: %s", detail)
            self.count("header_too_large")
            self._refuse(431, detail)

        def send_400_response(self, msg: str) -> None:
            """A request h11 cannot parse (uvicorn logs it): a JSON 400, not uvicorn's plain text."""
            self.count("malformed_http")
            self._refuse(400, _MALFORMED)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _head_too_large(self) -> bool:
            """Whether a waiting request's line and headers (all buffered bytes until they end,
            if they have not) pass the cap; h11 caps only a head that is still incomplete."""
            if self.conn.their_state is not h11.IDLE:
                return False
            buffered = self.conn.trailing_data[0]
            end = _HEAD_END.search(buffered)
            return (end.end() if end else len(buffered)) > self.limits.max_header_bytes

        def _framed_twice(self) -> bool:
            """Whether a waiting request's whole head (within the cap: checked just before)
            carries both ``Content-Length`` and ``Transfer-Encoding``."""
            if self.conn.their_state is not h11.IDLE:
                return False
            buffered = self.conn.trailing_data[0]
            end = _HEAD_END.search(buffered)
            if end is None:
                return False
            lines = bytes(buffered[: end.start()]).split(b"\n")[1:]
            names = {line.partition(b":")[0].strip().lower() for line in lines}
            return b"content-length" in names and b"transfer-encoding" in names

        def _app_for_next_request(self) -> ASGIApp:
            """The app, or the JSON 503 when the connections (this one too) or requests are over cap."""
            cap = self.limits.max_connections
            over = len(self.connections) > cap and _open(self.connections) > cap
            if over or len(self.tasks) >= cap:
                self.count("connections")
                return _at_capacity(cap)
            app: ASGIApp = self.config.loaded_app  # the app uvicorn_config was given
            return app

        def _refuse(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
            """Answer ``detail`` as JSON and close: h11 has no request to answer through."""
            self.transport.write(_json_reply(Refusal(status, detail, headers or {})))
            self.transport.close()

        def _arm(self) -> None:
            timeout = self.limits.header_timeout
            self.header_timer = self.loop.call_later(timeout, self._expired)

        def _disarm(self) -> None:
            if self.header_timer is not None:
                self.header_timer.cancel()
                self.header_timer = None

        def _expired(self) -> None:
            self.header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return LimitedProtocol


def _peer(protocol: object) -> str | None:
    """The client address of one of uvicorn's connection protocols (None: not known)."""
    client = getattr(protocol, "client", None)
    return str(client[0]) if client else None


def no_delay(transport: asyncio.BaseTransport) -> None:
    """``TCP_NODELAY`` on a transport's TCP socket (a Unix socket has none to set)."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def uvicorn_config(app: ASGIApp, settings: Settings, **overrides: Any) -> uvicorn.Config:
    """The ``uvicorn.Config`` ``laya serve`` runs ``app`` with (tests use the same one)."""
    import uvicorn

    class LayaConfig(uvicorn.Config):
        """uvicorn's Config carrying what the protocol reads: the settings (``laya_settings``)
        and where its refusals are counted (``laya_refused``, the app's metrics)."""

        def __init__(self, settings: Settings, app: ASGIApp, **options: Any) -> None:
            super().__init__(app, **options)
            self.laya_settings = settings
            metrics = getattr(
                getattr(getattr(app, "state", None), "service", None), "metrics", None
            )
            self.laya_refused = metrics.refused if metrics is not None else _not_counted

    options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level,
        "access_log": False,
        "http": _protocol_class(),
        "h11_max_incomplete_event_size": settings.max_header_bytes,  # a backstop: the head is capped above
        "timeout_keep_alive": settings.keep_alive_timeout,
        **overrides,
    }
    return LayaConfig(settings, app, **options)


def _configure_logging(level: str) -> None:
    if not log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
    log.setLevel(level.upper())


def serve_main(argv: Sequence[str] | None = None) -> int:
    """``laya serve``: read flags and ``LAYA_*`` variables, build the Router, run uvicorn."""
    return run_command("laya serve", argv, lambda args: settings_from(args, os.environ), _serve)


def _serve(settings: Settings) -> None:
    listener = listen(settings.host, settings.port)  # a busy port fails before any model loads
    from .app import create_app

    app = create_app(settings=settings)
    _configure_logging(settings.log_level)
    service = app.state.service
    log.info("laya serve: checkpoints this server may answer with:")
    for line in checkpoint_listing(service.router):
        log.info("  %s", line)
    if service.hosts.names is None:
        log.info(
            "laya serve: Host headers are not checked (bound to %s); --allowed-hosts NAMES "
            "answers only those names (docs/server.md#host-names)",
            settings.host,
        )
    traced = configure_tracing(os.environ)
    if traced:
        log.info(traced)
    listener.listen(socket.SOMAXCONN)  # from this line on a connection waits for uvicorn
    log.info("laya serve: listening on http://%s:%d (Ctrl-C stops)", settings.host, settings.port)
    serve(app, settings, sockets=[listener])


def listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound to ``host:port``; a port that is taken (or an address this
    machine does not have) is one clear error, raised before anything else starts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise LayaError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; stop what is using it, or "
            "serve on another port (--port N, LAYA_PORT)"
        ) from None
    return sock


def serve(
    app: ASGIApp, settings: Settings, sockets: list[socket.socket] | None = None, **overrides: Any
) -> None:
    """Run ``app`` under uvicorn with ``laya serve``'s limits until interrupted (on ``sockets``
    when given, else on the settings' host and port)."""
    import uvicorn

    uvicorn.Server(uvicorn_config(app, settings, **overrides)).run(sockets=sockets)
