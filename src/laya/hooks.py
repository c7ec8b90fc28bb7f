"""Prediction hooks: observe or shape every decision without forking the runtime.

Everything here is pure Python (no torch), so hooks can be written and tested anywhere.
The lifecycle that fires these events around a prediction lives in :mod:`laya.lifecycle`.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import math
import threading
import time
import typing
import uuid
import warnings
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from typing import Any, Protocol

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


class _CallableHook:
    """Adapter that turns a plain callable into a single-event hook."""

    event = ""

    def __init__(self, fn: Callable[[PredictContext], Any]) -> None:
        self.fn = fn

    def __repr__(self) -> str:
        return f"{self.event}={getattr(self.fn, '__qualname__', repr(self.fn))}"


class _StartAdapter(_CallableHook):
    event = "on_predict_start"

    def on_predict_start(self, ctx: PredictContext) -> Any:
        return self.fn(ctx)


class _EndAdapter(_CallableHook):
    event = "on_predict_end"

    def on_predict_end(self, ctx: PredictContext) -> Any:
        return self.fn(ctx)


# --------------------------------------------------------------------------- normalisation


def _as_sequence(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _check_hook_object(hook: Any) -> Any:
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


def _wrap_callables(value: Any, adapter: type[_CallableHook]) -> list[_CallableHook]:
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
    hooks: Any = None, on_predict_start: Any = None, on_predict_end: Any = None
) -> list[Any]:
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


# --------------------------------------------------------------------------- coroutines

_background_lock = threading.Lock()
_background_loop: asyncio.AbstractEventLoop | None = None


def _background() -> asyncio.AbstractEventLoop:
    """The process-wide loop thread that runs hook coroutines for callers already in a loop."""
    global _background_loop
    with _background_lock:
        loop = _background_loop
        if loop is None or loop.is_closed() or not loop.is_running():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            threading.Thread(target=serve, name="laya-async-hooks", daemon=True).start()
            ready.wait()
            _background_loop = loop
        return loop


def _close(awaitable: Any) -> None:
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()


def run_coroutine_sync(coro: Awaitable[Any], loop: asyncio.AbstractEventLoop | None = None) -> Any:
    """Run an awaitable to completion from synchronous code and return its result.

    No running loop in this thread: ``asyncio.run``. A running loop (the caller is inside an
    async function): a dedicated background loop thread, so blocking here cannot deadlock.
    ``loop=``: that loop, which must be running and must not be this thread's own loop.
    """
    try:
        own = asyncio.get_running_loop()
    except RuntimeError:
        own = None
    if loop is None:
        if own is None:
            return asyncio.run(_await(coro))
        loop = _background()
    elif not loop.is_running():
        _close(coro)
        raise ValueError(
            "run_coroutine_sync: the loop passed is not running; start it in another thread "
            "first, or pass loop=None to let laya pick one"
        )
    elif loop is own:
        _close(coro)
        raise ValueError(
            "run_coroutine_sync: the loop passed is running in the calling thread; blocking "
            "on it would deadlock. Pass a loop running in another thread, or loop=None"
        )
    return asyncio.run_coroutine_threadsafe(_await(coro), loop).result()


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


class AsyncHook:
    """Wrap a hook whose ``async def`` events should run to completion inside the sync core."""

    def __init__(self, hook: Any, loop: asyncio.AbstractEventLoop | None = None) -> None:
        if isinstance(hook, type):
            raise TypeError(
                f"AsyncHook wraps an instance, not a class; got the class {hook.__name__}. "
                f"Use AsyncHook({hook.__name__}())."
            )
        if not any(hasattr(hook, name) for name in HOOK_EVENTS):
            raise TypeError(
                f"AsyncHook wraps an object implementing at least one of "
                f"{', '.join(HOOK_EVENTS)}; got {type(hook).__name__}"
            )
        self.hook = hook
        self.loop = loop

    def __repr__(self) -> str:
        return f"AsyncHook({self.hook!r})"

    def _run(self, event: str, ctx: PredictContext) -> None:
        method = getattr(self.hook, event, None)
        if method is not None:
            _call(method, ctx, self.loop)

    def on_predict_start(self, ctx: PredictContext) -> None:
        self._run("on_predict_start", ctx)

    def on_predict_end(self, ctx: PredictContext) -> None:
        self._run("on_predict_end", ctx)

    def on_route(self, ctx: PredictContext) -> None:
        self._run("on_route", ctx)

    def on_load(self, ctx: PredictContext) -> None:
        self._run("on_load", ctx)

    def on_evict(self, ctx: PredictContext) -> None:
        self._run("on_evict", ctx)

    def on_error(self, ctx: PredictContext) -> None:
        self._run("on_error", ctx)


# --------------------------------------------------------------------------- dispatch


def _hook_name(hook: Any, event: str) -> str:
    if isinstance(hook, _CallableHook):
        return f"{type(hook).__name__}.{event} ({hook!r})"
    return f"{type(hook).__name__}.{event}"


def _call(method: Callable[[PredictContext], Any], ctx: PredictContext, loop: Any = None) -> None:
    result = method(ctx)
    if inspect.isawaitable(result):
        run_coroutine_sync(result, loop)


def _call_with_timeout(
    method: Callable[[PredictContext], Any], ctx: PredictContext, timeout: float, name: str
) -> None:
    """Run one hook on a worker thread carrying the caller's contextvars; give up after timeout."""
    outcome: list[BaseException] = []
    copied = contextvars.copy_context()

    def work() -> None:
        try:
            copied.run(_call, method, ctx)
        except BaseException as exc:  # handed back to the caller thread
            outcome.append(exc)

    worker = threading.Thread(target=work, name="laya-hook-timeout", daemon=True)
    worker.start()
    worker.join(min(timeout, threading.TIMEOUT_MAX))
    if worker.is_alive():
        raise TimeoutError(f"laya: hook {name} exceeded {timeout:g}s")
    if outcome:
        raise outcome[0]


def dispatch(
    hooks: Sequence[Any],
    event: str,
    ctx: PredictContext,
    *,
    raise_errors: bool = True,
    lock: Any = None,
    timeout: float | None = None,
) -> None:
    """Call ``event`` on every hook that implements it, in order, applying the error policy.

    ``raise_errors=True``: the first failing hook's exception propagates and later hooks of this
    event are not called. ``False``: each failure becomes a ``RuntimeWarning`` and dispatch goes
    on. Non-``Exception`` errors (KeyboardInterrupt, SystemExit) always propagate. ``lock`` wraps
    each single hook call; ``timeout`` bounds each one (a ``TimeoutError`` counts as the hook failing).
    """
    if event not in HOOK_EVENTS:
        raise ValueError(f"unknown hook event {event!r}; use one of {', '.join(HOOK_EVENTS)}")
    timeout = validate_timeout(timeout)
    for hook in hooks:
        method = getattr(hook, event, None)
        if method is None:
            continue
        try:
            with nullcontext() if lock is None else lock:
                if timeout is None:
                    _call(method, ctx)
                else:
                    name = getattr(method, "__qualname__", None) or _hook_name(hook, event)
                    _call_with_timeout(method, ctx, timeout, name)
        except Exception as exc:
            if raise_errors:
                raise
            warnings.warn(
                f"laya: hook {_hook_name(hook, event)} failed: {exc}", RuntimeWarning, stacklevel=2
            )


def aggregate_usage(results: Any) -> dict[str, int]:
    """Sum the per-state usage blocks; a missing, None or unreadable usage or count is 0 (a
    hook's own results may carry anything, and the answers stand whatever their usage says)."""
    totals = {"input_tokens": 0, "output_tokens": 0}
    for result in results or ():
        usage = result.get("usage") if isinstance(result, dict) else None
        if not isinstance(usage, dict):
            continue
        for key in totals:
            with suppress(TypeError, ValueError, OverflowError):  # "4" is 4, as published
                totals[key] += int(usage.get(key) or 0)
    return totals


# --------------------------------------------------------------------------- defaults

_defaults_lock = threading.Lock()
_defaults: tuple[Any, ...] = ()


def set_default_hooks(
    hooks: Any = None, on_predict_start: Any = None, on_predict_end: Any = None
) -> None:
    """Replace the process-wide hooks that run first on every Agent, Router and ONNXAgent call."""
    global _defaults
    new = tuple(normalise_hooks(hooks, on_predict_start, on_predict_end))
    with _defaults_lock:
        _defaults = new


def add_default_hook(hook: Any) -> None:
    """Append one hook object (or a sequence of them) to the process-wide defaults."""
    global _defaults
    new = tuple(normalise_hooks(hook))
    with _defaults_lock:
        _defaults = _defaults + new


def clear_default_hooks() -> None:
    """Remove every process-wide default hook."""
    set_default_hooks()


def default_hooks() -> list[Any]:
    """A copy of the current process-wide defaults."""
    return list(_defaults)


def compose_hooks(
    installed: Sequence[Any] = (),
    hooks: Any = None,
    on_predict_start: Any = None,
    on_predict_end: Any = None,
) -> list[Any]:
    """The effective list of one call: defaults, then installed, then per-call hooks."""
    return (
        list(_defaults) + list(installed) + normalise_hooks(hooks, on_predict_start, on_predict_end)
    )


# --------------------------------------------------------------------------- registry


class HookRegistry:
    """Mixin giving a runtime its installed hooks, their policy, and thread-safe mutation.

    A class that mixes it in calls ``HookRegistry.__init__`` with the constructor's hook
    arguments before anything else, so bad hook arguments raise first.
    """

    def __init__(
        self,
        hooks: Any = None,
        on_predict_start: Any = None,
        on_predict_end: Any = None,
        hooks_raise: bool = True,
        hooks_concurrent: bool = True,
        hooks_timeout: Any = None,
    ) -> None:
        self.hooks: tuple[Any, ...] = tuple(
            normalise_hooks(hooks, on_predict_start, on_predict_end)
        )
        self.hooks_raise = bool(hooks_raise)
        self.hooks_concurrent = bool(hooks_concurrent)
        self.hooks_timeout: float | None = validate_timeout(hooks_timeout)
        # hooks_concurrent=False: one re-entrant lock around every hook call of this instance
        self.hooks_lock: threading.RLock | None = (
            None if self.hooks_concurrent else threading.RLock()
        )
        self._hooks_mutex = threading.Lock()

    def add_hook(self, hook: Any) -> HookRegistry:
        """Install a hook object (or a sequence of them) after construction; returns self."""
        new = tuple(normalise_hooks(hook))
        with self._hooks_mutex:
            self.hooks = tuple(self.hooks) + new
        return self

    def remove_hook(self, hook: Any) -> bool:
        """Remove every installed occurrence of ``hook`` (by identity); True if there was one."""
        with self._hooks_mutex:
            kept = tuple(h for h in self.hooks if h is not hook)
            removed = len(kept) != len(self.hooks)
            self.hooks = kept
        return removed

    @contextmanager
    def hooks_installed(self, *hooks: Any) -> Iterator[Any]:
        """Install hooks for the block; on exit remove exactly what the block added."""
        added = [h for group in hooks for h in normalise_hooks(group)]
        self.add_hook(added)
        try:
            yield self
        finally:
            with self._hooks_mutex:
                current = list(self.hooks)
                for hook in added:
                    for i in range(len(current) - 1, -1, -1):
                        if current[i] is hook:
                            del current[i]
                            break
                self.hooks = tuple(current)
