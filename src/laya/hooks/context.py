"""The hook protocol's objects: the context every hook receives, the hook types, and how the
hook arguments of a call (objects and plain callables) become one checked list."""

from __future__ import annotations

import math
import time
import typing
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "HOOK_EVENTS",
    "BaseHook",
    "CallableHook",
    "Hook",
    "PredictContext",
    "PredictHook",
    "normalise_hooks",
    "validate_timeout",
]

HOOK_EVENTS: tuple[str, ...] = (
    "on_predict_start",
    "on_predict_end",
    "on_route",
    "on_load",
    "on_evict",
    "on_error",
)


# --------------------------------------------------------------------------- context


@dataclass(eq=False)
class PredictContext:
    """What one public call hands to every hook; hooks may rewrite states, questions, results."""

    states: list[Any]
    questions: dict[Any, Any]
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    results: list[dict[str, Any]] | None = None
    decision: dict[str, Any] | None = None
    model: str | None = None
    agent: Any = None
    router: Any = None
    max_len: int | None = None
    head_max_len: int | None = None
    usage: dict[str, int] | None = None
    started_at: float = field(default_factory=time.perf_counter)
    elapsed_ms: float | None = None
    error: BaseException | None = None

    def skip(self, results: list[dict[str, Any]]) -> None:
        """Answer the call from a start hook: inference is skipped, end hooks still run.

        ``results`` holds one entry per state in ``ctx.states`` (the shape ``predict_batch``
        returns) or a single entry for the whole call (how a ``predict_long`` document is answered).
        """
        if not isinstance(results, (list, tuple)) or not all(isinstance(r, dict) for r in results):
            shape = type(results).__name__  # ``dict``, or ``list holding a str``
            if isinstance(results, (list, tuple)):
                odd = next(r for r in results if not isinstance(r, dict))
                shape += f" holding a {type(odd).__name__}"
            raise TypeError(
                "ctx.skip() takes a list of result dicts (one per state in ctx.states, or one "
                f"for the whole call), got {shape}"
            )
        if isinstance(self.states, (list, tuple)):
            n, m = len(self.states), len(results)
            if m not in (1, n):
                raise ValueError(
                    f"ctx.skip() takes one result for the whole call or one per state in "
                    f"ctx.states ({n}); got {m}"
                )
        self.results = results


# --------------------------------------------------------------------------- protocol


class Hook(Protocol):
    """Structural type of a hook: implement any subset of the six events."""

    def on_predict_start(self, ctx: PredictContext) -> None: ...
    def on_predict_end(self, ctx: PredictContext) -> None: ...
    def on_route(self, ctx: PredictContext) -> None: ...
    def on_load(self, ctx: PredictContext) -> None: ...
    def on_evict(self, ctx: PredictContext) -> None: ...
    def on_error(self, ctx: PredictContext) -> None: ...


class BaseHook:
    """Concrete base with a no-op for every event; override the ones you need."""

    def on_predict_start(self, ctx: PredictContext) -> None:
        """Before inference; may rewrite ``ctx`` or call ``ctx.skip``."""

    def on_predict_end(self, ctx: PredictContext) -> None:
        """After the call, on every path; may replace ``ctx.results``."""

    def on_route(self, ctx: PredictContext) -> None:
        """After a Router decided; may replace ``ctx.decision``."""

    def on_load(self, ctx: PredictContext) -> None:
        """After a Router built a checkpoint."""

    def on_evict(self, ctx: PredictContext) -> None:
        """After a Router freed a checkpoint."""

    def on_error(self, ctx: PredictContext) -> None:
        """On the failure path, before ``on_predict_end``."""


# typing.Callable, as the user's page writes it: its arguments read ([PredictContext], NoneType).
PredictHook = typing.Callable[[PredictContext], None]


class CallableHook:
    """Adapter that turns a plain callable into a single-event hook."""

    event = ""

    def __init__(self, fn: Callable[[PredictContext], object]) -> None:
        self.fn = fn

    def __repr__(self) -> str:
        return f"{self.event}={getattr(self.fn, '__qualname__', repr(self.fn))}"


class _StartAdapter(CallableHook):
    event = "on_predict_start"

    def on_predict_start(self, ctx: PredictContext) -> object:
        return self.fn(ctx)


class _EndAdapter(CallableHook):
    event = "on_predict_end"

    def on_predict_end(self, ctx: PredictContext) -> object:
        return self.fn(ctx)


# --------------------------------------------------------------------------- normalisation


def _as_sequence(value: object) -> list[object]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _check_hook_object(hook: object) -> object:
    if isinstance(hook, type):
        raise TypeError(
            f"hooks entries must be instances, not classes; got the class {hook.__name__}. "
            f"Instantiate it first: hooks=[{hook.__name__}()]."
        )
    implemented = [name for name in HOOK_EVENTS if hasattr(hook, name)]
    if not implemented:
        raise TypeError(
            f"hooks entries must implement at least one of {', '.join(HOOK_EVENTS)}; "
            f"got {type(hook).__name__} ({hook!r:.80}). A bare function says nothing about which "
            f"event it is for: pass it as on_predict_start= or on_predict_end= instead."
        )
    for name in implemented:
        method = getattr(hook, name)
        if method is not None and not callable(method):
            raise TypeError(
                f"hooks entry {type(hook).__name__}.{name} must be callable, got "
                f"{type(method).__name__}; define it as a method or remove the attribute."
            )
    return hook


def _wrap_callables(value: object, adapter: type[CallableHook]) -> list[CallableHook]:
    wrapped = []
    for fn in _as_sequence(value):
        if not callable(fn) or isinstance(fn, type):
            raise TypeError(
                f"{adapter.event} must be a callable taking the PredictContext (or a list of them), "
                f"got {type(fn).__name__}; pass hook objects through hooks= instead."
            )
        wrapped.append(adapter(fn))
    return wrapped


def normalise_hooks(
    hooks: object = None, on_predict_start: object = None, on_predict_end: object = None
) -> list[object]:
    """Flatten hook objects and the two callable arguments into one ordered, validated list."""
    objects = [_check_hook_object(h) for h in _as_sequence(hooks)]
    return (
        objects
        + _wrap_callables(on_predict_start, _StartAdapter)
        + _wrap_callables(on_predict_end, _EndAdapter)
    )


def validate_timeout(value: Any) -> float | None:
    """Check a ``hooks_timeout``: a positive finite number of seconds, or None for no limit."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError, OverflowError):
        seconds = math.nan
    if isinstance(value, bool) or not math.isfinite(seconds) or seconds <= 0:
        not_bool = ", not a bool" if isinstance(value, bool) else ""
        raise ValueError(
            f"hooks_timeout must be a positive finite number or None{not_bool}; got {value!r}"
        )
    return seconds
