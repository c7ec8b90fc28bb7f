"""What a timed hook works on: a view of the call's context whose changes reach the context only
if the hook returns in time (docs/hooks/errors.md#timeouts).

A hook that runs past ``hooks_timeout`` cannot be stopped, so it must not keep running against
the context the call goes on with. It gets a :class:`ContextView`: the context's data (``states``,
``questions``, ``results``, ``decision``, ``usage``) deep-copied, the rest as it is. If the hook
returns in time, :meth:`ContextView.commit` writes the view into the context, as if the hook had
worked on it directly; if not, the view is dropped and nothing the hook does later reaches the
call or its result.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import TypeVar

from .context import PredictContext

__all__ = ["SHARED_FIELDS", "ContextView"]

T = TypeVar("T")

# Fields a view shares with its context instead of copying: the runtimes that answer (a hook may
# call them) and the exception of a failed call (its traceback is what on_error hooks read).
SHARED_FIELDS = frozenset({"agent", "router", "error"})
_COPIED = frozenset(f.name for f in dataclasses.fields(PredictContext)) - SHARED_FIELDS
_ATOMIC = (str, int, float, bool, type(None))


class ContextView(PredictContext):
    """A timed hook's copy of a context: equal to it and hashed like it (so a dict keyed by the
    context finds the same entry), with the same ``run_id``."""

    __slots__ = ("_origin",)

    def __init__(self, origin: PredictContext) -> None:
        self._origin = origin
        memo: dict[int, object] = {id(origin.agent): origin.agent, id(origin.router): origin.router}
        for name, value in vars(origin).items():
            copied = name in _COPIED and not isinstance(value, _ATOMIC)
            setattr(self, name, _deep_copy(value, memo) if copied else value)

    def __eq__(self, other: object) -> bool:
        return other is self._origin or (
            isinstance(other, ContextView) and other.stands_for(self._origin)
        )

    def __hash__(self) -> int:
        return hash(self._origin)

    def stands_for(self, ctx: PredictContext) -> bool:
        """Whether this is a view of ``ctx``."""
        return self._origin is ctx

    def commit(self) -> None:
        """Make the context what this view is now: every attribute the hook set, replaced or
        deleted, including the hook's own ones."""
        origin, mine = self._origin, vars(self)
        for name in [name for name in vars(origin) if name not in mine]:
            delattr(origin, name)
        for name, value in mine.items():
            setattr(origin, name, value)


def _deep_copy(value: T, memo: dict[int, object]) -> T:
    """A deep copy, or the value itself where it cannot be copied (a lock, an open file)."""
    try:
        return copy.deepcopy(value, memo)
    except Exception:
        return value
