"""A Router's prediction calls: ``predict``, ``predict_long`` and ``predict_batch``.

Each request gets its own hook context; routing and loading happen inside its lifecycle, and the
runtime is only asked through :class:`laya.runtime.RuntimeProtocol` (``answer`` /
``answer_long`` with ``defaults=False``: process defaults fire once, at the Router's level). A
mixin of :class:`~laya.router.core.Router`, as ``scan.py`` and ``many_options.py`` are of the
runtimes: it uses the Router's ``resolve``, ``_route_fired``, ``_route_all``, ``_residency`` and
``_fire``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from typing import Any

from ..gate import check_min_confidence
from ..hooks import PredictContext
from ..lifecycle import (
    HookOptions,
    HookPolicy,
    hook_options,
    policy_for,
    run_lifecycle,
    single_result,
)
from ..questions import check_count
from .requests import (
    REQUEST_KEYS,
    Routed,
    answer_shared,
    batch_context,
    check_call,
    check_requests,
    mode_argument,
)
from .residency import Event

__all__ = ["RouterCalls"]


class RouterCalls:
    """``predict``, ``predict_long`` and ``predict_batch`` of a Router."""

    def predict(
        self,
        state: Any,
        questions: dict[str, Any],
        model: Any = None,
        task: Any = None,
        lang: Any = None,
        lang_guess: Any = None,
        hooks: Any = None,
        on_predict_start: Any = None,
        on_predict_end: Any = None,
        hooks_raise: bool | None = None,
        hooks_timeout: Any = None,
        max_len: int | None = None,
        head_max_len: int | None = None,
        min_confidence: Any = None,
        *,
        tournament: Any = None,
        shortlist: int | None = None,
    ) -> dict[str, Any]:
        """Route one state, load its checkpoint and answer; the result carries ``routing``.

        ``tournament`` / ``shortlist`` answer many-option choices as the runtime's
        ``predict_tournament`` / ``predict_shortlist`` do.
        """
        mode = mode_argument(tournament, shortlist)

        def answer(ctx: PredictContext, lang: str | None) -> dict[str, Any]:
            budgets = dict(max_len=ctx.max_len, head_max_len=ctx.head_max_len)
            return ctx.agent.answer(
                ctx.states, ctx.questions, lang=lang, defaults=False, **budgets, **mode
            )[0]

        options = hook_options(hooks, on_predict_start, on_predict_end, hooks_raise, hooks_timeout)
        hints = dict(model=model, task=task, lang=lang, lang_guess=lang_guess)
        budgets = dict(max_len=max_len, head_max_len=head_max_len)
        return self._answer_one(answer, state, questions, hints, options, min_confidence, budgets)

    system_one = predict

    def predict_long(
        self,
        state: Any,
        questions: dict[str, Any],
        model: Any = None,
        task: Any = None,
        lang: Any = None,
        lang_guess: Any = None,
        window: int | None = None,
        stride: int | None = None,
        aggregate: str = "auto",
        batch_size: int | None = None,
        hooks: Any = None,
        on_predict_start: Any = None,
        on_predict_end: Any = None,
        hooks_raise: bool | None = None,
        hooks_timeout: Any = None,
        min_confidence: Any = None,
    ) -> dict[str, Any]:
        """Like :meth:`predict`, but the state may be longer than one window: its runtime scans it."""
        check_count("window", window)  # the runtime checks these too, but after this call's
        check_count("stride", stride)  # start hooks: a caller's mistake raises before them
        check_count("batch_size", batch_size, "windows")

        def answer(ctx: PredictContext, lang: str | None) -> dict[str, Any]:
            scan = dict(window=window, stride=stride, aggregate=aggregate, batch_size=batch_size)
            return ctx.agent.answer_long(
                ctx.states[0], ctx.questions, lang=lang, defaults=False, **scan
            )

        options = hook_options(hooks, on_predict_start, on_predict_end, hooks_raise, hooks_timeout)
        hints = dict(model=model, task=task, lang=lang, lang_guess=lang_guess)
        return self._answer_one(answer, state, questions, hints, options, min_confidence, {})

    def _answer_one(
        self,
        answer: Callable[[PredictContext, str | None], dict[str, Any]],
        state: Any,
        questions: dict[str, Any],
        hints: dict[str, Any],
        options: HookOptions,
        min_confidence: Any,
        budgets: dict[str, Any],
    ) -> dict[str, Any]:
        """One request through the lifecycle: route and load inside it, then ``answer``."""
        check_call(state, questions, {**hints, **budgets})
        check_min_confidence(min_confidence)
        policy = policy_for(self, **options)
        routed = Routed(min_confidence)
        with ExitStack() as leases:

            def prepare(ctx: PredictContext) -> None:
                decision = self._route_fired(policy, state, questions, **hints)
                routed.record(ctx, decision, hints["lang"])
                ctx.decision, ctx.model = dict(decision), self.resolve(decision["model"])
                ctx.agent = self._lease(leases, ctx.model)
                ctx.started_at = time.perf_counter()

            def infer(pending: list[PredictContext]) -> None:
                for ctx in pending:
                    ctx.results = [answer(ctx, routed.langs[ctx])]

            ctx = PredictContext(states=[state], questions=questions, router=self, **budgets)
            run_lifecycle(policy, [ctx], infer, prepare=prepare, finalize=routed.finalize)
        return single_result(ctx.results)

    def _lease(self, leases: ExitStack, key: str) -> Any:
        """The runtime for ``key``, held open until the call ends; load events fired now."""
        events: list[Event] = []
        runtime = leases.enter_context(self._residency.use(key, events))
        self._fire(events)
        return runtime

    def predict_batch(
        self,
        requests: Sequence[dict[str, Any]],
        batch_size: int | None = None,
        hooks_timeout: Any = None,
        min_confidence: Any = None,
        sort_by_length: bool = False,
        hooks: Any = None,
        on_predict_start: Any = None,
        on_predict_end: Any = None,
        hooks_raise: bool | None = None,
        *,
        tournament: Any = None,
        shortlist: int | None = None,
    ) -> list[dict[str, Any]]:
        """Answer many requests: route all, then one shared batch per checkpoint and question set.

        Each request gets its own hook context (as :meth:`predict` would give it); results come
        back in input order, each with ``routing``. Rows are always packed by length, so
        ``sort_by_length`` cannot change answers. ``tournament`` / ``shortlist``: see predict.
        """
        mode = mode_argument(tournament, shortlist)
        checked = check_requests(requests)
        check_count("batch_size", batch_size, "states")
        check_min_confidence(min_confidence)
        options = hook_options(hooks, on_predict_start, on_predict_end, hooks_raise, hooks_timeout)
        policy = policy_for(self, **options)
        decisions = self._route_all(policy, checked)
        groups: dict[str, list[int]] = {}
        for i, decision in enumerate(decisions):
            groups.setdefault(self.resolve(decision["model"]), []).append(i)
        results: list[Any] = [None] * len(checked)
        routed = Routed(min_confidence)
        for name, indices in groups.items():
            contexts = [batch_context(checked[i], decisions[i], name, self) for i in indices]
            for i, ctx in zip(indices, contexts, strict=True):
                routed.record(ctx, decisions[i], checked[i].get("lang"))
            self._run_group(policy, name, contexts, routed, batch_size, mode)
            for i, ctx in zip(indices, contexts, strict=True):
                results[i] = single_result(ctx.results)
        return results

    predict_many = predict_batch

    def _decision_results(
        self, states: list[Any], questions: dict[str, Any], min_confidence: Any, options: dict
    ) -> list[dict[str, Any]]:
        """``decide_batch``'s one prediction: a request per state, routing keys on each."""
        per_request = {k: options[k] for k in REQUEST_KEYS if options.get(k) is not None}
        options = {k: v for k, v in options.items() if k not in REQUEST_KEYS}
        requests = [{"state": s, "questions": questions, **per_request} for s in states]
        return self.predict_batch(requests, min_confidence=min_confidence, **options)

    def _run_group(
        self,
        policy: HookPolicy,
        name: str,
        contexts: list[PredictContext],
        routed: Routed,
        batch_size: int | None,
        mode: dict[str, Any],
    ) -> None:
        """One checkpoint's requests through the lifecycle, loaded before any of them starts (a
        failed load fires no start or end for the group, hooks.md §6)."""
        with ExitStack() as leases:
            runtime = self._lease(leases, name)

            def prepare(ctx: PredictContext) -> None:
                ctx.agent = runtime
                ctx.started_at = time.perf_counter()

            def infer(pending: list[PredictContext]) -> None:
                answer_shared(pending, routed.langs, batch_size, mode)

            run_lifecycle(policy, contexts, infer, prepare=prepare, finalize=routed.finalize)
