"""How the forward passes of the calls inside a block are run: at once, or handed to a scheduler.

``Engine.run`` and ``Engine.embed`` pack their rows lazily (each pass under the budget
:func:`pass_budget` gives when that pass is packed) and run the passes through
:func:`run_passes`. Outside a :func:`paced` block the passes run at once in the calling thread,
each after the deadline check (:mod:`laya.engine.deadline`), as large as the engine's own budget.
A server runs its long requests (tournaments, shortlists, batches) inside such a block: the
passes of one ``run`` are handed to its queue as one job that runs a pass per turn, each cut to a
slice of tokens while small requests are about, so the small requests that arrive meanwhile are
answered between them, and a request whose client has gone stops at its next pass
(docs/server.md#fair-turns).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from .deadline import check_deadline

__all__ = ["Limit", "Runner", "Steps", "paced", "pass_budget", "run_passes"]

P = TypeVar("P")
T = TypeVar("T")
Steps = Iterator[tuple[int, Any]]
"""A run's passes as steps: each ``next()`` packs and runs one pass and gives its padded tokens
and ``(pass, output)``."""
Runner = Callable[[Steps], list[Any]]
"""Runs every step of a run (where and when it likes) and returns their ``(pass, output)``s in
order, or raises."""
Limit = Callable[[int], int]
"""The padded tokens a pass may hold, given the engine's own budget."""

_PACE: ContextVar[tuple[Runner | None, Limit | None]] = ContextVar(
    "laya_pace", default=(None, None)
)


@contextmanager
def paced(runner: Runner | None = None, limit: Limit | None = None) -> Iterator[None]:
    """Inside the block, the passes of every run go through ``runner`` (None: at once, here) and
    each holds at most ``limit(budget)`` padded tokens, ``budget`` being the engine's own (None:
    all of it; a row longer than the limit still gets a pass of its own)."""
    reset = _PACE.set((runner, limit))
    try:
        yield
    finally:
        _PACE.reset(reset)


def pass_budget(budget: int) -> Callable[[], int]:
    """The padded tokens of each pass: the engine's ``budget``, or the block's limit if lower,
    read as each pass is packed (the limit is taken now, so another thread may pack them)."""
    limit = _PACE.get()[1]
    if limit is None:
        return lambda: budget
    return lambda: max(1, min(budget, limit(budget)))


def run_passes(
    passes: Iterable[P], forward: Callable[[P], T], tokens: Callable[[P], int]
) -> list[tuple[P, T]]:
    """``(pass, forward(pass))`` for each of ``passes`` (packed as they are reached), through
    the block's runner; each pass once the deadline allows it."""
    runner = _PACE.get()[0]
    steps = _steps(passes, forward, tokens)
    if runner is None:
        return [value for _, value in steps]
    return runner(steps)


def _steps(
    passes: Iterable[P], forward: Callable[[P], T], tokens: Callable[[P], int]
) -> Iterator[tuple[int, tuple[P, T]]]:
    for one in passes:
        check_deadline()  # where a scheduler runs the step, its own deadline holds instead
        yield tokens(one), (one, forward(one))
