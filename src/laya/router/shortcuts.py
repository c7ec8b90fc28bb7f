"""``laya.decide`` and ``laya.decide_batch``: typed decisions in one line, on a shared Router.

The Router is built on first use and kept for the process, so its resident checkpoints (two at
most, least recently used evicted) serve every later one-liner; ``model="mini"`` pins one.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ..typed.decisions import Decision
from . import Router

__all__ = ["decide", "decide_batch", "shared_router"]

_SHARED: list[Router] = []
_LOCK = threading.Lock()


def shared_router() -> Router:
    """The process's Router for the one-liners (built on first use)."""
    with _LOCK:
        if not _SHARED:
            _SHARED.append(Router())
        return _SHARED[0]


def decide(state: Any, schema: Any, *, model: Any = None, **options: Any) -> Decision[Any]:
    """Decide ``schema`` about ``state`` (see ``Router.decide``); ``model`` pins a checkpoint."""
    return shared_router().decide(state, schema, model=model, **options)


def decide_batch(
    states: Sequence[Any], schema: Any, *, model: Any = None, **options: Any
) -> list[Decision[Any]]:
    """Decide ``schema`` about every state in one batched call (see ``Router.decide_batch``)."""
    return shared_router().decide_batch(states, schema, model=model, **options)
