"""The one map from an exception to an HTTP answer, for ``laya serve`` and its Ray replicas.

The package's own hierarchy (:mod:`laya.errors`) says what went wrong; the wire adds a few
refusals of its own, all :class:`~laya.errors.InvalidRequest` (a caller's mistake), each with the
status the wire format gives it. Anything not in the hierarchy is a bug: a fixed-text 500, its
traceback logged once, server side only. A bare ``ValueError`` from deep inside a load is one of
those, never the client's fault. A checkpoint that is not here is a 422 no client retries (only
the operator can allow it), unless it is downloading: then a 503 with ``Retry-After``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from ..errors import (
    CheckpointUnavailable,
    DeadlineExceeded,
    InvalidRequest,
    LayaError,
    Overloaded,
    WorkBudgetExceeded,
    one_line,
)

__all__ = [
    "BodyTimeout",
    "ClientGone",
    "MalformedBody",
    "Refusal",
    "TooLarge",
    "Unauthorized",
    "CrossSite",
    "WrongHost",
    "reason",
    "refusal",
]

log = logging.getLogger("laya.server")
CLOSE = {"Connection": "close"}
INTERNAL = "inference failed"


class MalformedBody(InvalidRequest):
    """400: the body is not a JSON object, or a required field is missing or null."""

    close = False


class TooLarge(InvalidRequest):
    """413: more than the server takes (body bytes, JSON values, states, questions, options)."""

    close = False


class CrossSite(InvalidRequest):
    """403: a browser page on another site sent the request (``Origin`` / ``Sec-Fetch-Site``)."""


class Unauthorized(InvalidRequest):
    """401: the bearer key is missing or wrong."""


class BodyTimeout(InvalidRequest):
    """408: the body did not arrive in time (the connection is closed after the answer)."""


class WrongHost(InvalidRequest):
    """403: the ``Host`` (or ``Origin``) names a host this server does not answer to: a page
    whose name was rebound to this machine's address (DNS rebinding), or an unlisted name."""


class ClientGone(LayaError):
    """499 (never sent): the client hung up before its answer; its work is dropped and its
    admission slot given back. The status is nginx's "client closed request", for the log."""


@dataclass(frozen=True)
class Refusal:
    """What the server sends for an exception: status, ``{"detail": ...}`` and headers."""

    status: int
    detail: str
    headers: dict[str, str] = field(default_factory=dict)


_STATUS: tuple[tuple[type[InvalidRequest], int], ...] = (
    (Unauthorized, 401),
    (BodyTimeout, 408),
    (TooLarge, 413),
    (WorkBudgetExceeded, 413),
    (CrossSite, 403),
    (WrongHost, 403),
    (MalformedBody, 400),
)
CLIENT_GONE = 499


def refusal(exc: BaseException) -> Refusal:
    """The answer for ``exc``: the package's errors by meaning, anything else a logged 500."""
    if isinstance(exc, InvalidRequest):
        status = next((code for kind, code in _STATUS if isinstance(exc, kind)), 422)
        headers = dict(CLOSE) if status == 408 or getattr(exc, "close", False) else {}
        if status == 401:
            headers["WWW-Authenticate"] = "Bearer"
        return Refusal(status, one_line(exc), headers)
    if isinstance(exc, Overloaded):
        return Refusal(503, one_line(exc), {"Retry-After": f"{exc.retry_after:g}"})
    if isinstance(exc, CheckpointUnavailable):
        log.warning("checkpoint unavailable: %s", one_line(exc))
        if exc.retry_after is None:  # only the operator can change that: no client should retry
            return Refusal(422, one_line(exc))
        return Refusal(503, one_line(exc), {"Retry-After": f"{exc.retry_after:g}"})
    if isinstance(exc, DeadlineExceeded):
        return Refusal(504, one_line(exc))
    if isinstance(exc, ClientGone):
        return Refusal(CLIENT_GONE, one_line(exc))
    if isinstance(exc, LayaError):  # CheckpointError: the operator's checkpoint is broken
        log.error("checkpoint error: %s", one_line(exc))
        return Refusal(500, INTERNAL)
    log.error("inference failed", exc_info=exc)
    return Refusal(500, INTERNAL)


_REASONS: tuple[tuple[type[BaseException], str], ...] = (
    (Unauthorized, "unauthorized"),
    (BodyTimeout, "body_timeout"),
    (WorkBudgetExceeded, "work_budget"),
    (TooLarge, "too_large"),
    (CrossSite, "cross_site"),
    (WrongHost, "wrong_host"),
    (MalformedBody, "malformed"),
    (InvalidRequest, "invalid"),
    (Overloaded, "overloaded"),
    (CheckpointUnavailable, "checkpoint_unavailable"),
    (DeadlineExceeded, "deadline"),
    (ClientGone, "client_gone"),
)


def reason(exc: BaseException) -> str:
    """A short, fixed name for why ``exc`` ended a request (``/metrics``' ``reason`` label)."""
    return next((name for kind, name in _REASONS if isinstance(exc, kind)), "internal")
