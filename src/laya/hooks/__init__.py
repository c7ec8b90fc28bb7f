"""Prediction hooks: observe or shape every decision without forking the runtime.

Everything here is pure Python (no torch), so hooks can be written and tested anywhere:
:mod:`~laya.hooks.context` (the context and the hook types), :mod:`~laya.hooks.dispatch`
(resolving and calling hooks), :mod:`~laya.hooks.asynchronous` (async hooks),
:mod:`~laya.hooks.workers` and :mod:`~laya.hooks.views` (timed hooks: the threads they run on
and the view of the context they work on), :mod:`~laya.hooks.registry` (defaults and installed
hooks), :mod:`~laya.hooks.lifecycle` (the one runner that fires them around a prediction) and
:mod:`~laya.hooks.stability` (a ready-made hook: how stable a choice is under reordered and
renamed options).
"""

from .asynchronous import AsyncHook, run_coroutine_sync
from .context import (
    HOOK_EVENTS,
    BaseHook,
    Hook,
    PredictContext,
    PredictHook,
    normalise_hooks,
    validate_timeout,
)
from .dispatch import aggregate_usage, dispatch
from .registry import (
    HookRegistry,
    add_default_hook,
    clear_default_hooks,
    compose_hooks,
    default_hooks,
    set_default_hooks,
)
from .stability import (
    ALL_VARIANTS,
    VARIANT_PRESETS,
    OptionStabilityHook,
    calibrate_reliability,
    decide_reliability,
    make_variants,
)

__all__ = [
    "ALL_VARIANTS",
    "HOOK_EVENTS",
    "VARIANT_PRESETS",
    "AsyncHook",
    "BaseHook",
    "Hook",
    "HookRegistry",
    "OptionStabilityHook",
    "PredictContext",
    "PredictHook",
    "add_default_hook",
    "aggregate_usage",
    "calibrate_reliability",
    "clear_default_hooks",
    "compose_hooks",
    "decide_reliability",
    "default_hooks",
    "dispatch",
    "make_variants",
    "normalise_hooks",
    "run_coroutine_sync",
    "set_default_hooks",
    "validate_timeout",
]
