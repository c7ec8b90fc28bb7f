"""The published ``laya.serve`` module: ``create_app()``, ``build_router()``, ``main()`` and its
limits as constants, over laya's own server (docs/migrating.md says where the values differ).

Both read the ``LAYA_*`` variables as ``laya serve`` does (docs/server.md); the constants are the
limits this server enforces, so code that reads them sizes its requests to what is accepted.
"""

from __future__ import annotations

import os
from typing import Any

from ..router.core import Router
from ..router.requests import BUDGET_KEYS, ROUTING_KEYS
from ..server.limits import MAX_BODY_BYTES
from ..server.settings import Settings, settings_from
from ..server.wire import (
    MAX_BATCH_STATES,
    MAX_CHOICE_OPTIONS,
    MAX_MANY_OPTIONS,
    MAX_QUESTIONS,
    MAX_SCORE_LEVELS,
    MAX_STATE_CHARS,
    MAX_TOTAL_OPTIONS,
)

__all__ = [
    "BATCH_BODY_CALL_CONTROLS",
    "BATCH_BODY_ITEM_CONTROLS",
    "BATCH_BODY_OUT_PARAMETERS",
    "BODY_CONTROLS",
    "BODY_REFUSALS",
    "DEFAULT_BODY_READ_TIMEOUT",
    "DEFAULT_LOG_LEVEL",
    "DEFAULT_MAX_BATCH_TOKENS",
    "DEFAULT_MAX_CONCURRENT",
    "DEFAULT_MAX_TOKEN_BUDGET",
    "DEFAULT_PORT",
    "LIVENESS_ONLY",
    "MAX_BATCH_STATES",
    "MAX_BODY_BYTES",
    "MAX_CHOICE_OPTIONS",
    "MAX_QUESTIONS",
    "MAX_SCORE_LEVELS",
    "MAX_STATE_CHARS",
    "MAX_TOTAL_OPTIONS",
    "MAX_TOURNAMENT_CHOICE_OPTIONS",
    "build_router",
    "create_app",
    "main",
]

_DEFAULTS = Settings()  # laya serve with no flags and no LAYA_* variables

BODY_CONTROLS = (  # the published order: the model, the budgets, the routing hints
    "model",
    *BUDGET_KEYS,
    *(key for key in ROUTING_KEYS if key != "model"),
    "min_confidence",
)
BATCH_BODY_CALL_CONTROLS = ("batch_size", "min_confidence", "sort_by_length")
BATCH_BODY_ITEM_CONTROLS = (*BUDGET_KEYS, *ROUTING_KEYS[1:])
BATCH_BODY_OUT_PARAMETERS = ("diagnostics",)
BODY_REFUSALS = ("hooks", "on_predict_start", "on_predict_end", "hooks_raise", "hooks_timeout")
DEFAULT_BODY_READ_TIMEOUT: float = _DEFAULTS.body_read_timeout
DEFAULT_LOG_LEVEL: str = _DEFAULTS.log_level
DEFAULT_MAX_BATCH_TOKENS: int = _DEFAULTS.max_work_tokens
DEFAULT_MAX_CONCURRENT: int = _DEFAULTS.max_concurrent
DEFAULT_MAX_TOKEN_BUDGET: int = _DEFAULTS.max_token_budget
DEFAULT_PORT: int = _DEFAULTS.port
LIVENESS_ONLY = {"status": "ok"}
MAX_TOURNAMENT_CHOICE_OPTIONS = MAX_MANY_OPTIONS


def _settings() -> Settings:
    return settings_from((), os.environ)


def build_router() -> Router:
    """The Router ``laya serve`` would build from the ``LAYA_*`` variables."""
    from ..server.inference import build_router as build

    return build(_settings())


def create_app(router: Any = None) -> Any:
    """The FastAPI app ``laya serve`` runs, on ``router`` (else :func:`build_router`'s): a laya
    Router, or any object with its ``predict`` (laya.server.caller_router)."""
    from ..server.app import create_app as create
    from ..server.caller_router import CallerRouter

    settings = _settings()
    if router is None:
        router = build_router()
    elif not isinstance(router, Router):
        router = CallerRouter(router)
    return create(router, settings)


def main() -> None:
    """``laya serve`` with the command line's arguments; exits with its status."""
    from ..server.serve import serve_main

    raise SystemExit(serve_main())
