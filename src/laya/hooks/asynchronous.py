"""Coroutines run to completion from synchronous code: ``run_coroutine_sync`` and ``AsyncHook``
(docs/hooks/api.md#async-hooks)."""

from __future__ import annotations

import asyncio
import inspect
import os
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

from .context import HOOK_EVENTS, PredictContext

__all__ = ["AsyncHook", "call_hook", "run_coroutine_sync"]

T = TypeVar("T")


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


def _forget_background() -> None:
    """After ``fork`` the loop's thread is gone from the child: start a new one when needed."""
    global _background_loop, _background_lock
    _background_loop = None
    _background_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_background)


def _close(awaitable: object) -> None:
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()


def run_coroutine_sync(coro: Awaitable[T], loop: asyncio.AbstractEventLoop | None = None) -> T:
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


async def _await(awaitable: Awaitable[T]) -> T:
    return await awaitable


def call_hook(
    function: Callable[[PredictContext], object],
    ctx: PredictContext,
    loop: asyncio.AbstractEventLoop | None = None,
) -> None:
    """Call one hook implementation; an awaitable it returns runs to completion (on ``loop``)."""
    result = function(ctx)
    if result is not None and inspect.isawaitable(result):
        run_coroutine_sync(result, loop)


class AsyncHook:
    """Wrap a hook whose ``async def`` events should run to completion inside the sync core."""

    def __init__(self, hook: object, loop: asyncio.AbstractEventLoop | None = None) -> None:
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

    def wrapped(self, event: str) -> Callable[[PredictContext], object] | None:
        """The wrapped hook's own ``event`` method, or None where it has none."""
        method: Callable[[PredictContext], object] | None = getattr(self.hook, event, None)
        return method

    def _run(self, event: str, ctx: PredictContext) -> None:
        method = self.wrapped(event)
        if method is not None:
            call_hook(method, ctx, self.loop)

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
