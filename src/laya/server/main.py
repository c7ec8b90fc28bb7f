"""``laya serve``: settings → Router → app → uvicorn, with limits on every connection.

uvicorn runs on its h11 protocol with a cap on the request line and headers
(``max_header_bytes``), a time limit on receiving them (``header_timeout``, which uvicorn lacks
and :class:`HeaderTimeoutProtocol` adds), a keep-alive time and a connection cap. The body's own
size and time limits are the app's (:mod:`laya.server.limits`).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from functools import cache
from typing import Any

from ..errors import command_failed
from .inference import checkpoint_listing
from .settings import Settings, SettingsError, settings_from

__all__ = ["serve_main", "uvicorn_config"]

log = logging.getLogger("laya.server")


@cache
def _protocol_class() -> type:
    """uvicorn's h11 protocol, closing a connection whose headers do not arrive in time."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderTimeoutProtocol(H11Protocol):
        """Arms a timer whenever the server waits for a request's headers; closes on expiry."""

        header_timer: Any = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                if self.header_timer is None:
                    self._arm()
            else:
                self._disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            timeout = getattr(self.config, "laya_header_timeout", 10.0)
            self.header_timer = self.loop.call_later(timeout, self._expired)

        def _disarm(self) -> None:
            if self.header_timer is not None:
                self.header_timer.cancel()
                self.header_timer = None

        def _expired(self) -> None:
            self.header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return HeaderTimeoutProtocol


def uvicorn_config(app: Any, settings: Settings, **overrides: Any) -> Any:
    """The ``uvicorn.Config`` ``laya serve`` runs ``app`` with (tests use the same one)."""
    import uvicorn

    options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level,
        "access_log": False,
        "http": _protocol_class(),
        "h11_max_incomplete_event_size": settings.max_header_bytes,
        "timeout_keep_alive": settings.keep_alive_timeout,
        "limit_concurrency": settings.max_connections,
        **overrides,
    }
    config = uvicorn.Config(app, **options)
    config.laya_header_timeout = settings.header_timeout
    return config


def _configure_logging(level: str) -> None:
    if not log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
    log.setLevel(level.upper())


def serve_main(argv: Sequence[str] | None = None) -> int:
    """``laya serve``: read flags and ``LAYA_*`` variables, build the Router, run uvicorn."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        settings = settings_from(argv, os.environ)
    except SystemExit as exc:  # argparse: --help, or an unknown flag (already printed)
        return exc.code if isinstance(exc.code, int) else 2
    except SettingsError as exc:
        return command_failed("laya serve", exc)
    from .app import create_app

    try:
        app = create_app(settings=settings)
    except Exception as exc:  # noqa: BLE001 - one line for the operator, not a traceback
        return command_failed("laya serve", exc)
    _configure_logging(settings.log_level)
    router = app.state.service.router
    log.info("laya serve: checkpoints this server may answer with:")
    for line in checkpoint_listing(router):
        log.info("  %s", line)
    serve(app, settings)
    return 0


def serve(app: Any, settings: Settings, **overrides: Any) -> None:
    """Run ``app`` under uvicorn with ``laya serve``'s limits until interrupted."""
    import uvicorn

    uvicorn.Server(uvicorn_config(app, settings, **overrides)).run()
