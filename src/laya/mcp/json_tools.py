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

_built: list[tuple[tools.Runner, Settings]] = []
_lock = threading.Lock()


def _context() -> tuple[tools.Runner, Settings]:
    """The Router (or RemoteRouter) and the settings every call here answers with."""
    with _lock:
        if not _built:
            settings = dataclasses.replace(settings_from(), preload=False)
            _built.append((remote_from_env() or build_router(settings), settings))
        return _built[0]


def _answer(body: Callable[..., tools.Json], *args: object, **kwargs: object) -> str:
    router, settings = _context()
    return json.dumps(body(*args, **kwargs, router=router, settings=settings), indent=2)


def laya_status_tool() -> str:
    return _answer(tools.laya_status)


def laya_route_tool(
    state: dict[str, object],
    questions: dict[str, object],
    model: str | None = None,
    task: str | None = None,
    lang: str | None = None,
    lang_guess: str | None = None,
) -> str:
    return _answer(tools.laya_route, **locals())


def laya_predict_tool(
    state: dict[str, object],
    questions: dict[str, object],
    model: str | None = None,
    task: str | None = None,
    lang: str | None = None,
    lang_guess: str | None = None,
    max_len: int | None = None,
    head_max_len: int | None = None,
    min_confidence: float | None = None,
) -> str:
    return _answer(tools.laya_predict, **locals())


def laya_predict_batch_tool(
    requests: list[object],
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


def laya_route_batch_tool(requests: list[object], hooks_timeout: float = 0) -> str:
    return _answer(tools.laya_route_batch, requests)


def laya_shortlist_tool(
    state: dict[str, object],
    questions: dict[str, object],
    model: str | None = None,
    k: int = 20,
    task: str | None = None,
    lang: str | None = None,
    lang_guess: str | None = None,
    max_len: int | None = None,
    head_max_len: int | None = None,
    min_confidence: float | None = None,
) -> str:
    return _answer(tools.laya_shortlist, **locals())


def laya_tournament_tool(
    state: dict[str, object],
    questions: dict[str, object],
    model: str | None = None,
    group_size: int = 16,
    task: str | None = None,
    lang: str | None = None,
    lang_guess: str | None = None,
    max_len: int | None = None,
    head_max_len: int | None = None,
    min_confidence: float | None = None,
) -> str:
    return _answer(tools.laya_tournament, **locals())


def laya_preset_tool(
    preset: str,
    state: dict[str, object],
    task: str | None = None,
    lang: str | None = None,
    lang_guess: str | None = None,
    max_len: int | None = None,
    head_max_len: int | None = None,
    min_confidence: float | None = None,
) -> str:
    return _answer(tools.laya_preset, **locals())


def laya_decide_tool(
    state: dict[str, object],
    schema: dict[str, object],
    model: str | None = None,
    min_confidence: float | None = None,
) -> str:
    return _answer(tools.laya_decide, **locals())


def laya_predict_long_tool(
    state: dict[str, object],
    questions: dict[str, object],
    model: str = "auto",
    window: int | None = None,
    stride: int | None = None,
    task: str | None = None,
    lang: str | None = None,
) -> str:
    return _answer(tools.laya_predict_long, **locals())
