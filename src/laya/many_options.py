"""The runtime's calls for choices with many options: ``predict_tournament``, ``predict_shortlist``.

A mixin of :class:`laya.runtime.Runtime`, so the runtime module keeps only the ``mode`` it hands
its inference step; the rounds and the ranking are :mod:`laya.tournament` and
:mod:`laya.shortlist` (docs/many-options.md).
"""

from __future__ import annotations

from typing import Any

from .lifecycle import HookOptions, hook_options
from .tournament import ChoiceMode, choice_mode

__all__ = ["ManyOptionCalls"]


class ManyOptionCalls:
    """``predict_tournament`` and ``predict_shortlist`` on top of a runtime's ``_batch``."""

    _batch: Any

    def predict_tournament(
        self, state: Any, questions: dict[Any, Any], group: int | None = None, **call: Any
    ) -> dict[str, Any]:
        """:meth:`system_one` with every choice of more than ``group`` options a tournament
        (``laya.tournament``; None: the largest group that fits). Takes ``seed=``, ``shortlist=``."""
        seed, shortlist = call.pop("seed", 0), call.pop("shortlist", None)
        mode = choice_mode(True if group is None else group, shortlist, seed=seed)
        return self._one(state, questions, mode, call)

    def predict_shortlist(
        self, state: Any, questions: dict[Any, Any], k: int = 20, embed: Any = None, **call: Any
    ) -> dict[str, Any]:
        """:meth:`system_one` reading each choice as the ``k`` options ``embed`` (texts -> vectors;
        None: the bundled mini encoder) ranks nearest the state. Takes ``tournament=``."""
        mode = choice_mode(call.pop("tournament", None), k, embed, call.pop("seed", 0))
        return self._one(state, questions, mode, call)

    def _one(
        self, state: Any, questions: dict[Any, Any], mode: ChoiceMode | None, call: dict[str, Any]
    ) -> dict[str, Any]:
        options = hook_options(**{key: call.pop(key, None) for key in HookOptions.__annotations__})
        return self._batch([state], questions, options, mode=mode, **call)[0]
