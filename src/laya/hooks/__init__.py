"""Prediction hooks: observe or shape every decision without forking the runtime.

Everything here is pure Python (no torch), so hooks can be written and tested anywhere:
:mod:`~laya.hooks.context` (the context and the hook types), :mod:`~laya.hooks.dispatch`
(calling hooks, async ones included), :mod:`~laya.hooks.registry` (defaults and installed hooks)
and :mod:`~laya.hooks.lifecycle` (the one runner that fires them around a prediction).
"""

from .context import (
    HOOK_EVENTS,
    BaseHook,
    Hook,
    PredictContext,
    PredictHook,
    normalise_hooks,
    validate_timeout,
)
from .dispatch import AsyncHook, aggregate_usage, dispatch, run_coroutine_sync
from .registry import (
    HookRegistry,
    add_default_hook,
    clear_default_hooks,
    compose_hooks,
    default_hooks,
    set_default_hooks,
)

__all__ = [
    "HOOK_EVENTS",
    "AsyncHook",
    "BaseHook",
    "Hook",
    "HookRegistry",
    "PredictContext",
    "PredictHook",
    "add_default_hook",
    "aggregate_usage",
    "clear_default_hooks",
    "compose_hooks",
    "default_hooks",
    "dispatch",
    "normalise_hooks",
    "run_coroutine_sync",
    "set_default_hooks",
    "validate_timeout",
]
