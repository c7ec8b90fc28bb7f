"""A budget of work for the calls made inside a block: the tokens of the rows the model reads.

A server must not let one request hold a worker for minutes, and it cannot know a request's cost
from its characters (CJK text reads at about a token a character, English at about four). The
rows' lengths are exact once their texts are tokenized, before any forward pass:
:func:`work_budget` sets how many row tokens the calls inside its block may read in all, and
``laya.engine.encoding.encode_rows`` (where every row the model reads is built) charges them with
:func:`charge` before building them. Past the budget it raises
:class:`~laya.errors.WorkBudgetExceeded`; outside a block it is a no-op (docs/server.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from ..errors import WorkBudgetExceeded

__all__ = ["charge", "work_budget"]


@dataclass
class _Meter:
    limit: int
    tokens: int = 0
    rows: int = 0


_METER: ContextVar[_Meter | None] = ContextVar("laya_work_budget", default=None)


@contextmanager
def work_budget(tokens: int | None) -> Iterator[None]:
    """Calls inside the block may read at most ``tokens`` row tokens in all (None: no limit)."""
    if tokens is None:
        yield
        return
    reset = _METER.set(_Meter(tokens))
    try:
        yield
    finally:
        _METER.reset(reset)


def charge(tokens: int, rows: int) -> None:
    """Count ``rows`` rows of ``tokens`` tokens in all against the block's budget, or refuse them."""
    meter = _METER.get()
    if meter is None:
        return
    meter.tokens += tokens
    meter.rows += rows
    if meter.tokens > meter.limit:
        raise WorkBudgetExceeded(
            f"this request asks for {meter.tokens} tokens of work ({meter.rows} rows of a state "
            f"and a question, counted by the model's tokenizer); the limit is {meter.limit} per "
            "request: send fewer states or questions per request, or a lower max_len"
        )
