"""``laya.decision`` and ``laya.decision_batch``: typed decisions in one line, on a shared Router.

The Router is built on first use and kept for the process, so its resident checkpoints (two at
most, least recently used evicted) serve every later one-liner; ``model="mini"`` pins one.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ..typed.decisions import Decision
from . import Router

__all__ = ["decision", "decision_batch", "shared_router"]

_SHARED: list[Router] = []
_LOCK = threading.Lock()


def shared_router() -> Router:
    """The process's Router for the one-liners (built on first use)."""
    with _LOCK:
        if not _SHARED:
            _SHARED.append(Router())
        return _SHARED[0]


def decision(state: Any, schema: Any, *, model: Any = None, **options: Any) -> Decision[Any]:
    """Decide ``schema`` about ``state`` (see ``Router.decision``); ``model`` pins a checkpoint."""
    return shared_router().decision(state, schema, model=model, **options)


def decision_batch(
    states: Sequence[Any], schema: Any, *, model: Any = None, **options: Any
) -> list[Decision[Any]]:
    """Decide ``schema`` about every state in one batched call (see ``Router.decision_batch``)."""
    return shared_router().decision_batch(states, schema, model=model, **options)
