"""The Router: route each request to the checkpoint that can read it, answer through it.

It composes three parts — :class:`~laya.router.names.Names` (the checkpoint table),
:func:`~laya.router.table.decide` (the routing table) and
:class:`~laya.router.residency.Residency` (which runtimes stay in memory) — and talks to a
runtime only through :class:`laya.runtime.RuntimeProtocol`. Each request gets its own hook
context; routing and loading happen inside its lifecycle, and a runtime is asked with
``defaults=False`` (process defaults fire once, at the Router's level).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from typing import Any, Literal

from ..checkpoint import Source, canonical_name
from ..engine.calibration import read_calibration
from ..engine.gate import check_min_confidence
from ..engine.questions import check_count
from ..engine.result import Result, as_plain, single_result
from ..errors import InvalidRequest
from ..hooks import HookRegistry, PredictContext
from ..hooks.lifecycle import (
    HookOptions,
    HookPolicy,
    hook_options,
    policy_for,
    run_each,
    run_lifecycle,
)
from ..typed import decisions as typed
from ..typed.decisions import Decision
from .fetch import Fetcher
from .names import Names, name_map
from .requests import (
    CONTROL_KEYS,
    ROUTING_KEYS,
    Routed,
    answer_shared,
    batch_context,
    check_agent_kwargs,
    check_call,
    check_max_loaded,
    check_request,
    check_requests,
    mode_argument,
)
from .residency import Event, Residency
from .table import Table, check_hint, choose

__all__ = ["Router"]


def _single_or_error(ctx: PredictContext) -> Result | Exception:
    """A context's one result, or the error its hooks caused (a request's own)."""
    try:
        return single_result(ctx.results)
    except ValueError as exc:
        return exc


class Router(HookRegistry):
    """Pick the checkpoint that can read each request, keep a few resident, answer through them."""

    def __init__(
        self,
        models: Mapping[str, Any] | None = None,
        device: Any = None,
        token: str | None = None,
        max_loaded: int = 2,
        default: str = "english",
        auto_task_detection: bool = False,
        standalone_repos: bool = False,
        preload: bool = False,
        lang_guess: Any = None,
        hooks: Any = None,
        on_predict_start: Any = None,
        on_predict_end: Any = None,
        hooks_raise: bool = True,
        hooks_concurrent: bool = True,
        hooks_timeout: Any = None,
        agent_kwargs: Mapping[str, Any] | None = None,
        revisions: Mapping[str, str] | None = None,
        downloads: str = "inline",
        calibration: Mapping[str, Any] | None = None,
    ) -> None:
        HookRegistry.__init__(
            self,
            hooks,
            on_predict_start,
            on_predict_end,
            hooks_raise,
            hooks_concurrent,
            hooks_timeout,
        )
        self._names = Names(models, standalone_repos)
        self._residency = Residency(self._build_named, check_max_loaded(max_loaded))
        self.device = device
        self.token = token
        self.fetch = Fetcher(downloads, token)
        self.agent_kwargs = check_agent_kwargs(agent_kwargs)
        self.revisions = {self.resolve(k): str(v) for k, v in name_map("revisions", revisions)}
        self.calibrations = {
            self.resolve(k): read_calibration(v) for k, v in name_map("calibration", calibration)
        }  # checkpoint name -> calibration file, checked against the checkpoint when it loads
        self.default = self.resolve(default)
        self.auto_task_detection = bool(auto_task_detection)
        check_hint("lang_guess", lang_guess, allow_callable=True)
        self.lang_guess = lang_guess
        if preload:
            self.preload()

    def __repr__(self) -> str:
        return (
            f"Router(loaded={self.loaded}, max_loaded={self.max_loaded}, default={self.default!r})"
        )

    def __enter__(self) -> Router:
        return self

    def __exit__(self, *exc_info: object) -> Literal[False]:
        self.unload()
        return False

    # ----------------------------------------------------------------------- names

    @property
    def models(self) -> dict[str, Source | None]:
        """Checkpoint name -> ``(repo or directory, subfolder)``; None for an attached runtime."""
        return self._names.table

    def resolve(self, name: Any, field: str = "model") -> str:
        """The canonical checkpoint name for ``name`` (an alias, any case); unknown → InvalidRequest
        saying ``unknown <field>``."""
        return self._names.resolve(name, field)

    def register(self, name: str, source: Any) -> str:
        """Add a checkpoint name, or re-point one; a re-pointed resident checkpoint is unloaded."""
        key, changed = self._names.add(name, source)
        if changed:
            self._fire(self._residency.free(key))
        return key

    def unregister(self, name: str) -> None:
        """Remove a registered (not built-in, not default) checkpoint, unloading it if resident."""
        self._fire(self._residency.free(self._names.remove(name, self.default)))

    # ----------------------------------------------------------------------- routing

    def _table(self) -> Table:
        return Table(
            self._names.resolve,
            self.models,
            self.default,
            self.auto_task_detection,
            self.lang_guess,
        )

    def _route_fired(
        self, policy: HookPolicy, state: Any, questions: Any, explain: bool = False, **hints: Any
    ) -> Any:
        """Decide, then let ``on_route`` hooks see (and possibly replace) the decision."""
        decision = choose(self._table(), state, questions, explain=explain, **hints)
        ctx = PredictContext(
            states=[state], questions=questions or {}, decision=decision, router=self
        )
        policy.fire("on_route", ctx)
        return ctx.decision

    def route(
        self,
        state: Any,
        questions: Any = None,
        model: Any = None,
        task: Any = None,
        lang: Any = None,
        lang_guess: Any = None,
        hooks: Any = None,
        hooks_raise: bool | None = None,
        hooks_timeout: Any = None,
        *,
        explain: bool = False,
    ) -> Any:
        """Decide which checkpoint answers ``state`` and fire ``on_route``; loads nothing."""
        hints = dict(model=model, task=task, lang=lang, lang_guess=lang_guess)
        check_call(state, {} if questions is None else questions, hints)
        policy = policy_for(self, hooks=hooks, hooks_raise=hooks_raise, hooks_timeout=hooks_timeout)
        return self._route_fired(policy, state, questions, explain, **hints)

    def route_batch(
        self,
        requests: Sequence[dict[str, Any]],
        hooks: Any = None,
        hooks_raise: bool | None = None,
        hooks_timeout: Any = None,
        *,
        explain: bool = False,
    ) -> list[Any]:
        """Route many requests (all validated first), firing ``on_route`` per request in order."""
        checked = check_requests(requests)
        policy = policy_for(self, hooks=hooks, hooks_raise=hooks_raise, hooks_timeout=hooks_timeout)
        return self._route_all(policy, checked, explain)

    def _route_all(self, policy: HookPolicy, requests: list[dict], explain: bool = False) -> list:
        return [
            self._route_fired(
                policy, r["state"], r["questions"], explain, **{k: r.get(k) for k in ROUTING_KEYS}
            )
            for r in requests
        ]

    # ----------------------------------------------------------------------- residency

    @property
    def loaded(self) -> list[str]:
        """Resident checkpoint names, least recently used first."""
        return self._residency.loaded

    @property
    def resident(self) -> dict[str, Any]:
        """Resident checkpoint name -> runtime, least recently used first (reorders nothing)."""
        return self._residency.snapshot()

    @property
    def max_loaded(self) -> int:
        """At most this many checkpoints stay resident (``preload`` and ``attach`` raise it)."""
        return self._residency.max_loaded

    @max_loaded.setter
    def max_loaded(self, value: int) -> None:
        self._residency.max_loaded = check_max_loaded(value)

    def load(self, name: str) -> Any:
        """The resident runtime for ``name``, building it on first use (fires on_evict, on_load)."""
        runtime, events = self._residency.load(self.resolve(name))
        self._fire(events)
        return runtime

    def preload(self, names: str | Sequence[str] | None = None) -> Router:
        """Build several checkpoints now; ``max_loaded`` is raised so none of them is evicted."""
        if isinstance(names, str):
            names = [names]
        if names is None:
            keys = [k for k, source in self.models.items() if source is not None]
        else:
            keys = list(dict.fromkeys(self.resolve(n) for n in names))
        self._residency.raise_limit(keys)
        for key in keys:
            self.load(key)
        return self

    def unload(self, name: str | None = None) -> None:
        """Close one checkpoint, or all of them; fires ``on_evict`` per freed name (LRU order)."""
        self._fire(self._residency.free(None if name is None else self.resolve(name)))

    def attach(self, name: str, agent: Any) -> Any:
        """Make an already built runtime resident under ``name`` (registered if new); no on_load.

        From then on the Router owns it: eviction and ``unload`` close it. A path or repo is not a
        runtime: that is ``register``'s job, so anything without an ``answer`` method is refused.
        """
        if not callable(getattr(agent, "answer", None)):
            raise TypeError(
                f"attach({name!r}, ...) takes a built runtime (laya.load(...), an Agent or an "
                f"ONNXAgent), got {type(agent).__name__}; to name a checkpoint directory or "
                f"repo, use register({name!r}, source)"
            )
        key = canonical_name(name)
        if key not in self.models:
            key, _ = self._names.add(name, None, attached=True)
        self._residency.attach(key, agent)
        return agent

    def _build_named(self, key: str) -> Any:
        return self._build(key, self.models.get(key))

    def _build(self, key: str, source: Any) -> Any:
        """Construct the Agent for one checkpoint (outside the Router's locks)."""
        if source is None:
            raise InvalidRequest(
                f"checkpoint {key!r} has no source to load from: it was attached as a built "
                "Agent and is no longer resident; attach it again, or register a path or repo"
            )
        from ..runtime import Agent

        repo, sub = self.fetch.source(key, source, self.revisions.get(key))
        return Agent(
            repo,
            device=self.device,
            token=self.token,
            subfolder=sub,
            revision=self.revisions.get(key),
            calibration=self.calibrations.get(key),
            **self.agent_kwargs,
        )

    # ----------------------------------------------------------------------- prediction

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
    ) -> Result:
        """Route one state, load its checkpoint and answer; the result carries ``routing``.

        ``tournament`` / ``shortlist`` answer many-option choices as the runtime's
        ``predict_tournament`` / ``predict_shortlist`` do.
        """
        mode = mode_argument(tournament, shortlist)

        def answer(ctx: PredictContext, lang: str | None) -> Result:
            budgets = dict(max_len=ctx.max_len, head_max_len=ctx.head_max_len)
            return ctx.agent.answer(
                ctx.states,
                ctx.questions,
                lang=lang,
                min_confidence=min_confidence,
                defaults=False,
                **budgets,
                **mode,
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
    ) -> Result:
        """Like :meth:`predict`, but the state may be longer than one window: its runtime scans it."""
        check_count("window", window)  # the runtime checks these too, but after this call's
        check_count("stride", stride)  # start hooks: a caller's mistake raises before them
        check_count("batch_size", batch_size, "windows")

        def answer(ctx: PredictContext, lang: str | None) -> Result:
            scan = dict(window=window, stride=stride, aggregate=aggregate, batch_size=batch_size)
            return ctx.agent.answer_long(
                ctx.states[0],
                ctx.questions,
                lang=lang,
                min_confidence=min_confidence,
                defaults=False,
                **scan,
            )

        options = hook_options(hooks, on_predict_start, on_predict_end, hooks_raise, hooks_timeout)
        hints = dict(model=model, task=task, lang=lang, lang_guess=lang_guess)
        return self._answer_one(answer, state, questions, hints, options, min_confidence, {})

    def _answer_one(
        self,
        answer: Callable[[PredictContext, str | None], Result],
        state: Any,
        questions: dict[str, Any],
        hints: dict[str, Any],
        options: HookOptions,
        min_confidence: Any,
        budgets: dict[str, Any],
    ) -> Result:
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
                    ctx.results = as_plain([answer(ctx, routed.langs[ctx])])
                    routed.answered.add(ctx)

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
    ) -> list[Result]:
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
        results: dict[int, Result] = {}
        routed = Routed(min_confidence)
        for name, indices in groups.items():
            contexts = [batch_context(checked[i], decisions[i], name, self) for i in indices]
            for i, ctx in zip(indices, contexts, strict=True):
                routed.record(ctx, decisions[i], checked[i].get("lang"))
            self._run_group(policy, name, contexts, routed, batch_size, mode)
            for i, ctx in zip(indices, contexts, strict=True):
                results[i] = single_result(ctx.results)
        return [results[i] for i in range(len(checked))]

    predict_many = predict_batch

    def predict_each(
        self,
        requests: Sequence[dict[str, Any]],
        min_confidence: Any = None,
        *,
        tournament: Any = None,
        shortlist: int | None = None,
    ) -> list[Result | Exception]:
        """Answer independent requests in shared passes: each is routed, loaded and answered as
        :meth:`predict` would, in its own hook context, and gets its own result or its own
        exception (a bad request never fails the others). What a server's batcher calls."""
        mode = mode_argument(tournament, shortlist)
        check_min_confidence(min_confidence)
        policy = policy_for(self)
        routed = Routed(min_confidence)
        outcome: list[Result | Exception | None] = [None] * len(requests)
        asked: dict[PredictContext, int] = {}
        for i, request in enumerate(requests):
            try:
                check_request(request, "request")
            except Exception as exc:  # noqa: BLE001 - this request's own refusal
                outcome[i] = exc
                continue
            state, questions = request["state"], request["questions"]
            ctx = PredictContext(
                states=[state],
                questions=questions,
                router=self,
                max_len=request.get("max_len"),
                head_max_len=request.get("head_max_len"),
            )
            asked[ctx] = i
        with ExitStack() as leases:

            def prepare(ctx: PredictContext) -> None:
                request = requests[asked[ctx]]
                hints: dict[str, Any] = {k: request.get(k) for k in ROUTING_KEYS}
                decision = self._route_fired(policy, request["state"], ctx.questions, **hints)
                routed.record(ctx, decision, hints["lang"])
                ctx.decision, ctx.model = dict(decision), self.resolve(decision["model"])
                ctx.agent = self._lease(leases, ctx.model)
                ctx.started_at = time.perf_counter()

            def infer(pending: list[PredictContext]) -> None:
                answer_shared(pending, routed, None, mode)

            contexts = list(asked)
            errors = run_each(policy, contexts, infer, prepare=prepare, finalize=routed.finalize)
        for ctx, error in zip(contexts, errors, strict=True):
            outcome[asked[ctx]] = error if error is not None else _single_or_error(ctx)
        return [r for r in outcome if r is not None]

    def predict_states(
        self, states: Sequence[Any], questions: dict[str, Any], **options: Any
    ) -> list[Result]:
        """One result per state for one question set: a request per state, the routing keys
        (``model``, ``task``, ``lang``...) on each; what typed decisions and the framework
        adapters call."""
        per_request = {k: options[k] for k in CONTROL_KEYS if options.get(k) is not None}
        options = {k: v for k, v in options.items() if k not in CONTROL_KEYS}
        requests = [{"state": s, "questions": questions, **per_request} for s in states]
        return self.predict_batch(requests, **options)

    def decide(self, state: Any, schema: Any, **options: Any) -> Decision[Any]:
        """Decide ``schema`` about one state (docs/decide.md); ``model=`` pins a checkpoint."""
        return typed.decide(self, state, schema, **options)

    def decide_batch(
        self, states: Sequence[Any], schema: Any, **options: Any
    ) -> list[Decision[Any]]:
        """Decide ``schema`` about every state in one batched prediction (docs/decide.md)."""
        return typed.decide_batch(self, states, schema, **options)

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
        failed load fires no start or end for the group, docs/hooks/lifecycle.md)."""
        with ExitStack() as leases:
            runtime = self._lease(leases, name)

            def prepare(ctx: PredictContext) -> None:
                ctx.agent = runtime
                ctx.started_at = time.perf_counter()

            def infer(pending: list[PredictContext]) -> None:
                answer_shared(pending, routed, batch_size, mode)

            run_lifecycle(policy, contexts, infer, prepare=prepare, finalize=routed.finalize)

    def _fire(self, events: list[Event]) -> None:
        """Fire on_load / on_evict with the installed hooks and defaults, on the Router's policy."""
        policy = policy_for(self)
        for event, name, runtime in events:
            ctx = PredictContext(states=[], questions={}, model=name, agent=runtime, router=self)
            policy.fire(event, ctx)
