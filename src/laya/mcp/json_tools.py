"""The published runtime's module-level tool functions (``laya.mcp.server.laya_predict_tool``...):
each answers one tool call as pretty JSON text, through the Router the ``LAYA_*`` variables
describe (``LAYA_BASE_URL``: a running ``laya serve``), built on first use. A bad argument raises
``ToolError`` (its ``payload()`` is ``{"error": code, "message": ...}``). docs/integrations.md.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable
from typing import Any

from ..server import Settings, build_router, settings_from
from . import tools
from .remote import remote_from_env

__all__ = [
    "laya_decide_tool",
    "laya_predict_batch_tool",
    "laya_predict_long_tool",
    "laya_predict_tool",
    "laya_preset_tool",
    "laya_route_batch_tool",
    "laya_route_tool",
    "laya_shortlist_tool",
    "laya_status_tool",
    "laya_tournament_tool",
]

_built: dict[str, Any] = {}
_lock = threading.Lock()


def _context() -> tuple[Any, Settings]:
    """The Router (or RemoteRouter) and the settings every call here answers with."""
    with _lock:
        if not _built:
            settings = dataclasses.replace(settings_from(), preload=False)
            _built["settings"] = settings
            _built["router"] = remote_from_env() or build_router(settings)
        return _built["router"], _built["settings"]


def _answer(body: Callable[..., dict[str, Any]], *args: Any, **kwargs: Any) -> str:
    router, settings = _context()
    return json.dumps(body(*args, **kwargs, router=router, settings=settings), indent=2)


def laya_status_tool() -> str:
    return _answer(tools.laya_status)


def laya_route_tool(
    state: dict,
    questions: dict,
    model: str | None = None,
    task: str | None = None,
    lang: str | None = None,
    lang_guess: str | None = None,
) -> str:
    return _answer(
        tools.laya_route, state, questions, model=model, task=task, lang=lang, lang_guess=lang_guess
    )


def laya_predict_tool(
    state: dict,
    questions: dict,
    model: str | None = None,
    task: str | None = None,
    lang: str | None = None,
    lang_guess: str | None = None,
    max_len: int | None = None,
    head_max_len: int | None = None,
    min_confidence: float | None = None,
) -> str:
    return _answer(
        tools.laya_predict, state, questions, model, task=task, lang=lang, lang_guess=lang_guess,
        max_len=max_len, head_max_len=head_max_len, min_confidence=min_confidence,
    )  # fmt: skip


def laya_predict_batch_tool(
    requests: list,
    batch_size: int = 0,
    hooks_timeout: float | None = 0,
    min_confidence: float | None = None,
    sort_by_length: bool = False,
) -> str:
    """``batch_size`` 0 leaves it unset; hooks run in this process, so ``hooks_timeout`` is
    accepted and unused."""
    return _answer(
        tools.laya_predict_batch, requests, batch_size or None, None, min_confidence,
        sort_by_length,
    )  # fmt: skip


def laya_route_batch_tool(requests: list, hooks_timeout: float = 0) -> str:
    return _answer(tools.laya_route_batch, requests)


def laya_shortlist_tool(
    state: dict,
    questions: dict,
    model: str | None = None,
    k: int = 20,
    task: str | None = None,
    lang: str | None = None,
    lang_guess: str | None = None,
    max_len: int | None = None,
    head_max_len: int | None = None,
    min_confidence: float | None = None,
) -> str:
    return _answer(
        tools.laya_shortlist, state, questions, model, k, task=task, lang=lang,
        lang_guess=lang_guess, max_len=max_len, head_max_len=head_max_len,
        min_confidence=min_confidence,
    )  # fmt: skip


def laya_tournament_tool(
    state: dict,
    questions: dict,
    model: str | None = None,
    group_size: int = 16,
    task: str | None = None,
    lang: str | None = None,
    lang_guess: str | None = None,
    max_len: int | None = None,
    head_max_len: int | None = None,
    min_confidence: float | None = None,
) -> str:
    return _answer(
        tools.laya_tournament, state, questions, model, group_size, task=task, lang=lang,
        lang_guess=lang_guess, max_len=max_len, head_max_len=head_max_len,
        min_confidence=min_confidence,
    )  # fmt: skip


def laya_preset_tool(
    preset: str,
    state: dict,
    task: str | None = None,
    lang: str | None = None,
    lang_guess: str | None = None,
    max_len: int | None = None,
    head_max_len: int | None = None,
    min_confidence: float | None = None,
) -> str:
    return _answer(
        tools.laya_preset, preset, state, task=task, lang=lang, lang_guess=lang_guess,
        max_len=max_len, head_max_len=head_max_len, min_confidence=min_confidence,
    )  # fmt: skip


def laya_decide_tool(
    state: dict, schema: dict, model: str | None = None, min_confidence: float | None = None
) -> str:
    return _answer(tools.laya_decide, state, schema, model, min_confidence=min_confidence)


def laya_predict_long_tool(
    state: dict,
    questions: dict,
    model: str = "auto",
    window: int | None = None,
    stride: int | None = None,
    task: str | None = None,
    lang: str | None = None,
) -> str:
    return _answer(
        tools.laya_predict_long, state, questions, model, window=window, stride=stride,
        task=task, lang=lang,
    )  # fmt: skip
