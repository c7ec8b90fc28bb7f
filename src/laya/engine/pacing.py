"""How the forward passes of the calls inside a block are run: at once, or handed to a scheduler.

The engine sends every pass (``Engine.run``'s and ``Engine.embed``'s) through :func:`run_pass`,
after the deadline check (:mod:`laya.engine.deadline`), and packs its rows under
:func:`pass_tokens`, read again as each pass starts. Outside a :func:`paced` block a pass runs at once in the calling thread,
as large as the engine's own budget. A server runs its long requests (tournaments, shortlists,
batches) inside such a block: each pass becomes one job of its queue, cut to a slice of tokens
while small requests are about, so the small requests that arrive meanwhile are answered between
them, and a request whose client has gone stops at its next pass (docs/server.md#fair-turns).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from .deadline import check_deadline

__all__ = ["Limit", "PassRunner", "paced", "pass_tokens", "run_pass"]

T = TypeVar("T")
PassRunner = Callable[[Callable[[], Any]], Any]
"""Runs one pass (a function of no arguments) and returns what it returned, or raises."""

Limit = Callable[[int], int]
"""The padded tokens a pass may hold, given the engine's own budget."""

_PACE: ContextVar[tuple[PassRunner | None, Limit | None]] = ContextVar(
    "laya_pace", default=(None, None)
)


@contextmanager
def paced(runner: PassRunner | None = None, limit: Limit | None = None) -> Iterator[None]:
    """Inside the block, every forward pass runs through ``runner`` (None: at once) and holds at
    most ``limit(budget)`` padded tokens, ``budget`` being the engine's own (None: all of it; a
    row longer than the limit still gets a pass of its own)."""
    reset = _PACE.set((runner, limit))
    try:
        yield
    finally:
        _PACE.reset(reset)


def run_pass(work: Callable[[], T]) -> T:
    """``work()`` (one forward pass), through the block's runner, once the deadline allows it."""
    check_deadline()
    runner = _PACE.get()[0]
    result: T = work() if runner is None else runner(work)
    return result


def pass_tokens(budget: int) -> int:
    """The padded tokens a pass may hold: the engine's ``budget``, or the block's limit if lower."""
    limit = _PACE.get()[1]
    return budget if limit is None else max(1, min(budget, limit(budget)))
