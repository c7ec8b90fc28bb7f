"""The one hook lifecycle every runtime runs: start -> infer or skip -> on_error -> end.

Agent, ONNXAgent and Router all call :func:`run_lifecycle`; none re-implements the flow.
A single call passes one context. ``Router.predict_batch`` passes one context per request,
which share one inference step: every start fires first, then inference, then every end
(in reverse start order, so spans nest). :func:`run_each` is the same flow for independent
requests sharing the step (a server's batcher): a failure belongs to its own context only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

from .context import HOOK_EVENTS, PredictContext, normalise_hooks, validate_timeout
from .dispatch import Implementation, aggregate_usage, call_event, resolve
from .registry import compose_hooks

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .registry import HookRegistry


__all__ = [
    "HookOptions",
    "HookPolicy",
    "hook_options",
    "policy_for",
    "run_each",
    "run_lifecycle",
]


@dataclass(frozen=True)
class HookPolicy:
    """How one call dispatches: the composed hooks, raise policy, lock and timeout.

    Each event's implementations are resolved once per policy, the first time the call fires it
    (:func:`~laya.hooks.dispatch.resolve`), so firing is a loop over prepared callables however
    many contexts the call has. A timed hook works on a view of the context, committed only if
    it returns in time (docs/hooks/errors.md#timeouts).
    """

    hooks: tuple[object, ...]
    raise_errors: bool = True
    lock: AbstractContextManager[object] | None = None
    timeout: float | None = None
    resolved: dict[str, tuple[Implementation, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.timeout is not None:
            object.__setattr__(self, "timeout", validate_timeout(self.timeout))

    def implementations(self, event: str) -> tuple[Implementation, ...]:
        """``event``'s implementations over this call's hooks, resolved on first use."""
        found = self.resolved.get(event)
        if found is None and not self.hooks and event in HOOK_EVENTS:
            return ()
        if found is None:
            if event not in HOOK_EVENTS:
                raise ValueError(
                    f"unknown hook event {event!r}; use one of {', '.join(HOOK_EVENTS)}"
                )
            found = self.resolved[event] = resolve(self.hooks, event)
        return found

    def fire(self, event: str, ctx: PredictContext) -> None:
        """Dispatch ``event`` over this call's hooks with this call's policy."""
        call_event(
            self.implementations(event),
            ctx,
            raise_errors=self.raise_errors,
            lock=self.lock,
            timeout=self.timeout,
            isolate=True,
        )

    def fire_on_failure(self, event: str, ctx: PredictContext) -> None:
        """Dispatch on the failure path: a hook error is chained, never masks ``ctx.error``."""
        try:
            self.fire(event, ctx)
        except Exception as hook_exc:
            if ctx.error is not None:
                ctx.error.__context__ = hook_exc


class HookOptions(TypedDict, total=False):
    """The hook arguments of one public call, as the seed spells them on every entry point.

    Public methods keep their spelled-out signatures; inside, this one bundle travels.
    """

    hooks: object
    on_predict_start: object
    on_predict_end: object
    hooks_raise: bool | None
    hooks_timeout: object


def hook_options(
    hooks: object = None,
    on_predict_start: object = None,
    on_predict_end: object = None,
    hooks_raise: bool | None = None,
    hooks_timeout: object = None,
) -> HookOptions:
    """The bundle of the seed's five per-call hook arguments, taken in the seed's order."""
    return HookOptions(
        hooks=hooks,
        on_predict_start=on_predict_start,
        on_predict_end=on_predict_end,
        hooks_raise=hooks_raise,
        hooks_timeout=hooks_timeout,
    )


def policy_for(
    owner: HookRegistry, *, defaults: bool = True, **options: Unpack[HookOptions]
) -> HookPolicy:
    """Compose a call's hook list and resolve its policy against the owner's instance values.

    The list is the process defaults (unless ``defaults=False``: a runtime called by a Router,
    whose defaults already fire at the Router's level), the owner's installed hooks, then the
    call's own. Validation happens here, so bad hook arguments raise before any event fires.
    """
    per_call = (options.get(k) for k in ("hooks", "on_predict_start", "on_predict_end"))
    if defaults:
        composed = compose_hooks(owner.hooks, *per_call)
    else:
        composed = [*owner.hooks, *normalise_hooks(*per_call)]
    timeout = validate_timeout(options.get("hooks_timeout"))
    hooks_raise = options.get("hooks_raise")
    return HookPolicy(
        hooks=tuple(composed),
        raise_errors=owner.hooks_raise if hooks_raise is None else bool(hooks_raise),
        lock=owner.hooks_lock,
        timeout=owner.hooks_timeout if timeout is None else timeout,
    )


Infer = Callable[[list[PredictContext]], None]
Step = Callable[[PredictContext], None]


def run_lifecycle(
    policy: HookPolicy,
    contexts: Sequence[PredictContext],
    infer: Infer,
    *,
    prepare: Step | None = None,
    finalize: Step | None = None,
) -> None:
    """Run the hook lifecycle over ``contexts`` around one shared inference step.

    For each context: ``prepare`` (work that belongs to the call, e.g. routing), then
    ``on_predict_start``. Then ``infer`` receives the contexts no start hook answered and must set
    their ``results``. On any failure every started context gets ``on_error`` then
    ``on_predict_end`` and the original exception propagates (a hook failing on that path is
    attached as its ``__context__``). On success every context gets ``on_predict_end``;
    ``elapsed_ms``, ``usage`` and ``finalize`` are applied just before it.
    """
    started: list[PredictContext] = []
    try:
        for ctx in contexts:
            started.append(ctx)
            if prepare is not None:
                prepare(ctx)
            policy.fire("on_predict_start", ctx)
        pending = [ctx for ctx in started if ctx.results is None]
        if pending:
            infer(pending)
    except BaseException as exc:
        for ctx in started:
            ctx.error = exc
        _end_all(policy, started, finalize, failed=True)
        raise
    _end_all(policy, started, finalize, failed=False)


def run_each(
    policy: HookPolicy,
    contexts: Sequence[PredictContext],
    infer: Infer,
    *,
    prepare: Step | None = None,
    finalize: Step | None = None,
) -> list[Exception | None]:
    """:func:`run_lifecycle` for independent contexts: one error per context, never shared.

    A context whose ``prepare`` or start hook raises skips inference; if the shared ``infer``
    raises, each context it left unanswered is inferred alone, so an error lands only on the
    context that caused it. Every started context then ends (``on_error`` first if it failed),
    in reverse start order; an end hook's error becomes its own context's.
    """
    errors: dict[PredictContext, Exception] = {}
    for ctx in contexts:
        try:
            if prepare is not None:
                prepare(ctx)
            policy.fire("on_predict_start", ctx)
        except Exception as exc:
            errors[ctx] = exc
    pending = [ctx for ctx in contexts if ctx not in errors and ctx.results is None]
    if pending:
        try:
            infer(pending)
        except Exception:
            for ctx in (c for c in pending if c.results is None):
                try:
                    infer([ctx])
                except Exception as exc:
                    errors[ctx] = exc
    for ctx in reversed(contexts):
        ctx.error = errors.get(ctx)
        try:
            _end_all(policy, [ctx], finalize, failed=ctx.error is not None)
        except Exception as exc:
            errors.setdefault(ctx, exc)
    return [errors.get(ctx) for ctx in contexts]


def _end_all(
    policy: HookPolicy, started: list[PredictContext], finalize: Step | None, *, failed: bool
) -> None:
    """Fire the end of every started context; each gets its end even if another's hooks raise."""
    now = time.perf_counter()
    first_error: Exception | None = None
    for ctx in reversed(started):
        if failed:
            policy.fire_on_failure("on_error", ctx)
        ctx.elapsed_ms = (now - ctx.started_at) * 1000.0
        if ctx.results is not None:
            ctx.usage = aggregate_usage(ctx.results)
            if finalize is not None:
                finalize(ctx)
        if failed:
            policy.fire_on_failure("on_predict_end", ctx)
            continue
        try:
            policy.fire("on_predict_end", ctx)
        except Exception as exc:
            if first_error is None:
                first_error = exc
    if first_error is not None:
        raise first_error
