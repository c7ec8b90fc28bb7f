"""Calling hooks: each event's implementations resolved once into prepared callables, then one
loop over them that applies the raise policy, the lock and the timeout (docs/hooks/api.md).

A call's :class:`HookPolicy <laya.hooks.lifecycle.HookPolicy>` resolves an event once, the first
time the call fires it, and reuses that for every context of the call (as pluggy resolves at
registration); :func:`dispatch` (the contract's helper) resolves as it goes.
"""

from __future__ import annotations

import asyncio
import contextvars
import warnings
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, suppress

from .asynchronous import AsyncHook, call_hook, run_coroutine_sync
from .context import HOOK_EVENTS, BaseHook, CallableHook, PredictContext, validate_timeout
from .views import ContextView
from .workers import HOOK_WORKERS

__all__ = [
    "AsyncHook",
    "Implementation",
    "aggregate_usage",
    "call_event",
    "dispatch",
    "implementation",
    "resolve",
    "run_coroutine_sync",
]


class Implementation:
    """One hook's implementation of one event: the callable to run (and the loop for what it
    awaits), with the names its failures and timeouts are reported under."""

    __slots__ = ("event", "function", "hook", "loop", "method")

    def __init__(
        self,
        hook: object,
        event: str,
        method: object,
        function: Callable[[PredictContext], object],
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.hook = hook
        self.event = event
        self.method = method  # what the hook's attribute holds, for its name
        self.function = function
        self.loop = loop

    def __repr__(self) -> str:
        return f"Implementation({self.label})"

    @property
    def label(self) -> str:
        """``<Type>.<event>`` (and the function, for a plain callable): how a warning names it."""
        if isinstance(self.hook, CallableHook):
            return f"{type(self.hook).__name__}.{self.event} ({self.hook!r})"
        return f"{type(self.hook).__name__}.{self.event}"

    @property
    def timed_name(self) -> str:
        """How a ``TimeoutError`` names it: the method's qualified name where it has one."""
        return getattr(self.method, "__qualname__", None) or self.label

    def __call__(self, ctx: PredictContext) -> None:
        call_hook(self.function, ctx, self.loop)


_NO_OPS = {event: getattr(BaseHook, event) for event in HOOK_EVENTS}
_ASYNC_OWN = {event: getattr(AsyncHook, event) for event in HOOK_EVENTS}


def implementation(hook: object, event: str) -> Implementation | None:
    """What calling ``event`` on ``hook`` runs, or None where it runs nothing: no such method,
    BaseHook's no-op, or an AsyncHook around an object without it."""
    found = resolve((hook,), event)
    return found[0] if found else None


def resolve(hooks: Iterable[object], event: str) -> tuple[Implementation, ...]:
    """The implementations of ``event`` over ``hooks``, in order (see :func:`implementation`)."""
    no_op, async_own = _NO_OPS[event], _ASYNC_OWN[event]
    found = []
    for hook in hooks:
        method = getattr(hook, event, None)
        if method is None:
            continue
        function = getattr(method, "__func__", None)  # set where it is a method of its class
        if function is no_op:
            continue
        if function is async_own and isinstance(hook, AsyncHook):
            wrapped = hook.wrapped(event)
            if wrapped is not None:
                found.append(Implementation(hook, event, method, wrapped, hook.loop))
            continue
        found.append(Implementation(hook, event, method, method))
    return tuple(found)


def call_event(
    implementations: Iterable[Implementation | None],
    ctx: PredictContext,
    *,
    raise_errors: bool,
    lock: AbstractContextManager[object] | None,
    timeout: float | None,
    isolate: bool,
) -> None:
    """Call each implementation on ``ctx`` in order, applying the policy.

    ``isolate``: a timed hook works on a :class:`ContextView` committed only if it returns in
    time (the runtimes' calls); otherwise on ``ctx`` itself (:func:`dispatch`).
    """
    for resolved in implementations:
        if resolved is None:
            continue
        try:
            if lock is None:
                _call(resolved, ctx, timeout, isolate)
            else:
                with lock:
                    _call(resolved, ctx, timeout, isolate)
        except Exception as exc:
            if raise_errors:
                raise
            warnings.warn(
                f"laya: hook {resolved.label} failed: {exc}", RuntimeWarning, stacklevel=3
            )


def _call(
    resolved: Implementation, ctx: PredictContext, timeout: float | None, isolate: bool
) -> None:
    if timeout is None:
        resolved(ctx)
    else:
        _call_timed(resolved, ctx, timeout, isolate)


def _call_timed(
    resolved: Implementation, ctx: PredictContext, timeout: float, isolate: bool
) -> None:
    """Run one hook on a worker carrying the caller's contextvars; give up after ``timeout``.

    What the hook changed reaches ``ctx`` only if it returned in time (raising counts)."""
    view = ContextView(ctx) if isolate else None
    copied = contextvars.copy_context()
    job = HOOK_WORKERS.submit(copied.run, resolved, ctx if view is None else view)
    if not HOOK_WORKERS.wait(job, timeout):
        raise TimeoutError(f"laya: hook {resolved.timed_name} exceeded {timeout:g}s")
    if view is not None:
        view.commit()
    job.reraise()


def dispatch(
    hooks: Sequence[object],
    event: str,
    ctx: PredictContext,
    *,
    raise_errors: bool = True,
    lock: AbstractContextManager[object] | None = None,
    timeout: float | None = None,
) -> None:
    """Call ``event`` on every hook that implements it, in order, applying the error policy.

    ``raise_errors=True``: the first failing hook's exception propagates and later hooks of this
    event are not called. ``False``: each failure becomes a ``RuntimeWarning`` and dispatch goes
    on. Non-``Exception`` errors (KeyboardInterrupt, SystemExit) always propagate. ``lock`` wraps
    each single hook call; ``timeout`` bounds each one (a ``TimeoutError`` counts as the hook
    failing). A timed hook works on ``ctx`` itself: what it does after its timeout still lands
    there (the runtimes' own calls give it a view instead, docs/hooks/errors.md#timeouts).
    """
    if event not in HOOK_EVENTS:
        raise ValueError(f"unknown hook event {event!r}; use one of {', '.join(HOOK_EVENTS)}")
    timeout = validate_timeout(timeout)
    call_event(
        (implementation(hook, event) for hook in hooks),
        ctx,
        raise_errors=raise_errors,
        lock=lock,
        timeout=timeout,
        isolate=False,
    )


def aggregate_usage(results: Iterable[object] | None) -> dict[str, int]:
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
