"""laya: typed decisions (choice, score, noul) with calibrated probabilities from one encoder pass.

``import laya`` is light: the hook system is pure Python, and the runtimes (which need torch,
transformers or onnxruntime) are imported the first time one of their names is used.
"""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec
from typing import Any

from . import hooks
from .hooks import (
    HOOK_EVENTS,
    AsyncHook,
    BaseHook,
    Hook,
    PredictContext,
    PredictHook,
    add_default_hook,
    aggregate_usage,
    clear_default_hooks,
    compose_hooks,
    default_hooks,
    set_default_hooks,
)

__version__ = "0.1.0"

_LAZY = {
    "Agent": "laya.runtime",
    "ONNXAgent": "laya.runtime",
    "load": "laya.runtime",
    "Router": "laya.router",
    "RouteDecision": "laya.router",
    "analyse": "laya.lang",
    "detect_language": "laya.lang",
    "PRESETS": "laya.presets",
    "email_questions": "laya.presets",
    "guard_questions": "laya.presets",
    "moderation_questions": "laya.presets",
    "router_questions": "laya.presets",
    "state_field": "laya.presets",
    "triage_questions": "laya.presets",
    "decide": "laya.shortcuts",
    "decide_batch": "laya.shortcuts",
    "Decision": "laya.typed",
    "FieldDecision": "laya.typed",
    "Criteria": "laya.schema",
    "Scale": "laya.schema",
    "Calibration": "laya.calibration",
    "read_calibration": "laya.calibration",
    "calibrate": "laya.fitting",
}

__all__ = [
    "HOOK_EVENTS",
    "AsyncHook",
    "BaseHook",
    "Hook",
    "PredictContext",
    "PredictHook",
    "__version__",
    "add_default_hook",
    "aggregate_usage",
    "clear_default_hooks",
    "compose_hooks",
    "default_hooks",
    "hooks",
    "set_default_hooks",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    """The runtimes' names, and the submodules (``laya.testing``, ``laya.errors``), on first use."""
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(import_module(module), name)
    elif not name.startswith("_") and find_spec(f"{__name__}.{name}") is not None:
        value = import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module 'laya' has no attribute {name!r}")
    globals()[name] = value
    return value
