"""Calling hooks: one event over a list of hooks with the raise policy, a lock and a timeout,
and coroutines run to completion from synchronous code (``AsyncHook``)."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
import warnings
from collections.abc import Awaitable, Callable, Sequence
from contextlib import nullcontext, suppress
from typing import Any

from .context import HOOK_EVENTS, CallableHook, PredictContext, validate_timeout

__all__ = ["AsyncHook", "aggregate_usage", "dispatch", "run_coroutine_sync"]


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
    if isinstance(hook, CallableHook):
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
