"""A deadline for the work of one call, checked between forward passes.

A server cannot stop a thread in the middle of a forward pass, but it can stop the work at the
next pass: :func:`deadline` sets the time by which the calls made inside its block must be done,
and every runtime calls :func:`check_deadline` before each pass. Outside a block it is a no-op.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from ..errors import DeadlineExceeded

__all__ = ["check_deadline", "deadline"]

_DUE: ContextVar[tuple[float, float] | None] = ContextVar("laya_deadline", default=None)


@contextmanager
def deadline(seconds: float | None, started: float | None = None) -> Iterator[None]:
    """Work inside the block must finish ``seconds`` after ``started`` (monotonic; now by default)."""
    if seconds is None:
        yield
        return
    start = time.monotonic() if started is None else started
    token = _DUE.set((start + seconds, seconds))
    try:
        yield
    finally:
        _DUE.reset(token)


def check_deadline() -> None:
    """Raise :class:`DeadlineExceeded` if the current block's deadline has passed."""
    due = _DUE.get()
    if due is not None and time.monotonic() > due[0]:
        raise DeadlineExceeded(
            f"the request ran past its {due[1]:g} s deadline and was stopped; send fewer "
            "states or questions per request"
        )
