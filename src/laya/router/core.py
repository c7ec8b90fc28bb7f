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
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, Literal

from ..checkpoint import BUILTIN, Source, canonical_name
from ..checkpoint.revisions import router_digests_from_env
from ..engine.calibration import read_calibration
from ..engine.gate import check_min_confidence
from ..engine.questions import check_count
from ..engine.result import Result, as_plain, single_result
from ..errors import InvalidRequest
from ..hooks import HookRegistry, PredictContext
from ..hooks.lifecycle import (
    HookPolicy,
    policy_for,
    run_each,
    run_lifecycle,
)
from ..hooks.registry import HookArguments
from ..request import Request
from ..typed import decisions as typed_decisions
from ..typed import values as typed_values
from .fetch import Fetcher
from .names import Names, display_source, name_map
from .pins import DEFAULT_MODEL
from .requests import (
    CONTROL_KEYS,
    Asked,
    Routed,
    answer_shared,
    answer_single,
    batch_context,
    check_agent_kwargs,
    check_call,
    check_max_loaded,
    check_request,
    check_route_state,
    read_item,
    read_items,
    sort_diagnostics,
)
from .residency import Event, Residency
from .table import Table, check_hint, choose

if TYPE_CHECKING:
    from ..runtime import RuntimeProtocol

__all__ = ["Router"]


def _single_or_error(ctx: PredictContext) -> Result | Exception:
    """A context's one result, or the error its hooks caused (a request's own)."""
    try:
        return single_result(ctx.results)
    except ValueError as exc:
        return exc


class Router(HookRegistry):
    """Pick the checkpoint that can read each request, keep a few resident, answer through them."""

    decision = typed_decisions.decision  # the decision functions, the runner their first parameter
    decision_batch = typed_decisions.decision_batch
    decide = typed_values.decide
    decide_batch = typed_values.decide_batch

    def __init__(
        self,
        models: Mapping[str, object] | None = None,
        device: object = None,
        token: str | None = None,
        max_loaded: int = 2,
        default: str = DEFAULT_MODEL,
        auto_task_detection: bool = False,
        standalone_repos: bool = False,
        preload: bool = False,
        lang_guess: object = None,
        hooks: object = None,
        on_predict_start: object = None,
        on_predict_end: object = None,
        hooks_raise: bool = True,
        hooks_concurrent: bool = True,
        hooks_timeout: object = None,
        revision: str | None = None,
        revisions: Mapping[str, str | None] | None = None,
        agent_kwargs: Mapping[str, object] | None = None,
        sha256_digests: Mapping[str, Mapping[str, str] | None] | None = None,
        downloads: str = "inline",
        calibration: Mapping[str, object] | None = None,
    ) -> None:
        hook_arguments = HookArguments(
            hooks, on_predict_start, on_predict_end, hooks_raise, hooks_concurrent, hooks_timeout
        )
        HookRegistry.__init__(self, *hook_arguments)
        self._names = Names(models, standalone_repos)
        self._residency = Residency(self._build_named, check_max_loaded(max_loaded))
        self.device = device
        self.token = token
        self.fetch = Fetcher(downloads, token)
        self.agent_kwargs = check_agent_kwargs(agent_kwargs)
        self.revision = _pin(revision, "revision")
        self.revisions = {
            self.resolve(k): pin
            for k, v in name_map("revisions", revisions)
            if (pin := _pin(v, f"revisions[{k!r}]")) is not None
        }
        self.sha256_digests = {
            key: files
            for name, files in router_digests_from_env().items()
            if (key := canonical_name(name)) in self.models
        }  # LAYA_SHA256_DIGESTS per checkpoint; names this Router does not know are ignored
        for name, files in name_map("sha256_digests", sha256_digests):
            self.sha256_digests[self.resolve(name)] = dict(
                name_map(f"sha256_digests[{name!r}]", files)
            )
        self.descriptions: dict[str, str] = {}
        self.calibrations = {
            self.resolve(k): read_calibration(v) for k, v in name_map("calibration", calibration)
        }  # checkpoint name -> calibration file, checked against the checkpoint when it loads
        self.default = self._names.resolve(default)
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

    def resolve(self, name: object, field: str = "model") -> str:
        """The canonical checkpoint name for ``name`` (an alias, any case: ``default`` is the
        published alias of ``english``); unknown → InvalidRequest saying ``unknown <field>``."""
        return self._names.resolve(name, field)

    def register(self, name: str, source: object, description: str | None = None) -> str:
        """Add a checkpoint name, or re-point one; a re-pointed resident checkpoint is unloaded.
        ``description`` is shown in :attr:`registered`."""
        key, changed = self._names.add(name, source)
        if description is not None:
            self.descriptions[key] = str(description)
        from_env = {canonical_name(n): f for n, f in router_digests_from_env().items()}
        if key not in self.sha256_digests and key in from_env:
            self.sha256_digests[key] = from_env[key]
        if changed:
            self._fire(self._residency.free(key))
        return key

    def unregister(self, name: str) -> None:
        """Remove a registered (not built-in, not default) checkpoint, unloading it if resident."""
        key = self._names.remove(name, self.default)
        for table in (self.descriptions, self.sha256_digests, self.revisions):
            table.pop(key, None)
        self._fire(self._residency.free(key))

    @property
    def registered(self) -> dict[str, dict[str, str | None]]:
        """The checkpoints added to the built-in ones: name -> ``{"source", "description"}``
        (an attached runtime's source is None)."""
        return {
            name: {"source": display_source(source), "description": self.descriptions.get(name)}
            for name, source in self.models.items()
            if name not in BUILTIN
        }

    # ----------------------------------------------------------------------- routing

    def _table(self) -> Table:
        return Table(
            self.resolve,
            self.models,
            self.default,
            self.auto_task_detection,
            self.lang_guess,
        )

    def _route_fired(
        self,
        policy: HookPolicy,
        state: object,
        questions: Any,
        hints: Mapping[str, Any],
        explain: bool = False,
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
        state: object,
        questions: Any = None,
        model: object = None,
        task: object = None,
        lang: object = None,
        lang_guess: object = None,
        hooks: object = None,
        hooks_raise: bool | None = None,
        hooks_timeout: object = None,
        *,
        explain: bool = False,
    ) -> Any:
        """Decide which checkpoint answers ``state`` and fire ``on_route``; loads nothing.

        Any state routes, ``None`` and ``""`` included (with no letters to read: the default)."""
        request = Request.read(locals())
        hints = request.hints()
        check_route_state(state, {} if questions is None else questions, hints)
        policy = policy_for(self, **request.hooks)
        return self._route_fired(policy, state, questions, hints, explain)

    def route_batch(
        self,
        requests: Sequence[dict[str, Any]],
        hooks: object = None,
        hooks_raise: bool | None = None,
        hooks_timeout: object = None,
        *,
        explain: bool = False,
    ) -> list[Any]:
        """Route many requests (all validated first), firing ``on_route`` per request in order."""
        call = Request.read(locals())
        items = read_items(requests, call)
        policy = policy_for(self, **call.hooks)
        return self._route_all(policy, items, explain)

    def _route_all(
        self, policy: HookPolicy, items: list[Asked], explain: bool = False
    ) -> list[Any]:
        return [
            self._route_fired(policy, a.state, a.questions, a.request.hints(), explain)
            for a in items
        ]

    # ----------------------------------------------------------------------- residency

    @property
    def loaded(self) -> list[str]:
        """Resident checkpoint names, least recently used first."""
        return self._residency.loaded

    @property
    def loaded_revisions(self) -> dict[str, str | None]:
        """Resident checkpoint name -> the Hub commit it was downloaded at (None: a local
        directory or an attached runtime without one)."""
        return {name: getattr(r, "revision", None) for name, r in self.resident.items()}

    @property
    def resident(self) -> dict[str, RuntimeProtocol]:
        """Resident checkpoint name -> runtime, least recently used first (reorders nothing)."""
        return self._residency.snapshot()

    @property
    def max_loaded(self) -> int:
        """At most this many checkpoints stay resident (``preload`` and ``attach`` raise it)."""
        return self._residency.max_loaded

    @max_loaded.setter
    def max_loaded(self, value: int) -> None:
        self._residency.max_loaded = check_max_loaded(value)

    def load(self, name: str) -> RuntimeProtocol:
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

    def attach(self, name: str, agent: RuntimeProtocol) -> RuntimeProtocol:
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

    def _build_named(self, key: str) -> RuntimeProtocol:
        return self._build(key, self.models.get(key))

    def _build(self, key: str, source: Source | None) -> RuntimeProtocol:
        """Construct the Agent for one checkpoint (outside the Router's locks)."""
        if source is None:
            raise InvalidRequest(
                f"checkpoint {key!r} has no source to load from: it was attached as a built "
                "Agent and is no longer resident; attach it again, or register a path or repo"
            )
        from ..runtime import Agent

        pin = self.revisions.get(key, self.revision)
        repo, sub = self.fetch.source(key, source, pin)
        kwargs = dict(self.agent_kwargs)
        if key in self.calibrations:
            kwargs["calibration"] = self.calibrations[key]
        if key in self.sha256_digests:
            kwargs["expected_sha256"] = _merged_digests(
                kwargs.get("expected_sha256"), self.sha256_digests[key]
            )
        return Agent(
            repo, device=self.device, token=self.token, subfolder=sub, revision=pin, **kwargs
        )

    # ----------------------------------------------------------------------- prediction

    def predict(
        self,
        state: object,
        questions: dict[str, Any],
        model: object = None,
        task: object = None,
        lang: object = None,
        lang_guess: object = None,
        hooks: object = None,
        on_predict_start: object = None,
        on_predict_end: object = None,
        hooks_raise: bool | None = None,
        hooks_timeout: object = None,
        max_len: int | None = None,
        head_max_len: int | None = None,
        min_confidence: object = None,
        *,
        tournament: object = None,
        shortlist: int | None = None,
    ) -> Result:
        """Route one state, load its checkpoint and answer; the result carries ``routing``.

        ``tournament`` / ``shortlist`` answer many-option choices as the runtime's
        ``predict_tournament`` / ``predict_shortlist`` do.
        """
        request = Request.read(locals())
        return self._answer_one(state, questions, request.with_choice_mode())

    system_one = predict

    def predict_long(
        self,
        state: object,
        questions: dict[str, Any],
        model: object = None,
        task: object = None,
        lang: object = None,
        lang_guess: object = None,
        window: int | None = None,
        stride: int | None = None,
        aggregate: str = "auto",
        batch_size: int | None = None,
        hooks: object = None,
        on_predict_start: object = None,
        on_predict_end: object = None,
        hooks_raise: bool | None = None,
        hooks_timeout: object = None,
        min_confidence: object = None,
    ) -> Result:
        """Like :meth:`predict`, but the state may be longer than one window: its runtime scans it."""
        check_count("window", window)  # the runtime checks these too, but after this call's
        check_count("stride", stride)  # start hooks: a caller's mistake raises before them
        check_count("batch_size", batch_size, "windows")
        request = Request.read(locals(), scan=True)
        return self._answer_one(state, questions, request)

    def _answer_one(self, state: Any, questions: dict[str, Any], request: Request) -> Result:
        """One request through the lifecycle: route and load inside it, then its runtime's
        answer (:func:`~laya.router.requests.answer_single`)."""
        hints = request.hints()
        check_call(state, questions, {**hints, **request.budgets()})
        check_min_confidence(request.min_confidence)
        policy = policy_for(self, **request.hooks)
        routed = Routed(request.min_confidence)
        with ExitStack() as leases:

            def prepare(ctx: PredictContext) -> None:
                decision = self._route_fired(policy, state, questions, hints)
                routed.record(ctx, decision, request.lang)
                ctx.decision, ctx.model = dict(decision), self.resolve(decision["model"])
                ctx.agent = self._lease(leases, ctx.model)
                ctx.started_at = time.perf_counter()

            def infer(pending: list[PredictContext]) -> None:
                for ctx in pending:
                    ctx.results = as_plain([answer_single(ctx, routed.langs[ctx], request)])
                    routed.answered.add(ctx)

            ctx = PredictContext(
                states=[state], questions=questions, router=self, **request.budgets()
            )
            run_lifecycle(policy, [ctx], infer, prepare=prepare, finalize=routed.finalize)
        return single_result(ctx.results)

    def _lease(self, leases: ExitStack, key: str) -> RuntimeProtocol:
        """The runtime for ``key``, held open until the call ends; load events fired now."""
        events: list[Event] = []
        runtime = leases.enter_context(self._residency.use(key, events))
        self._fire(events)
        return runtime

    def predict_batch(
        self,
        requests: Sequence[dict[str, Any]],
        batch_size: int | None = None,
        hooks_timeout: object = None,
        min_confidence: object = None,
        sort_by_length: bool = False,
        hooks: object = None,
        on_predict_start: object = None,
        on_predict_end: object = None,
        hooks_raise: bool | None = None,
        *,
        diagnostics: dict[str, object] | None = None,
        tournament: object = None,
        shortlist: int | None = None,
    ) -> list[Result]:
        """Answer many requests: route all, then one shared batch per checkpoint and question set.

        Each request gets its own hook context (as :meth:`predict` would give it); results come
        back in input order, each with ``routing``. Rows are always packed by length, so
        ``sort_by_length`` cannot change answers; with it, a ``diagnostics`` dict receives
        ``sort_by_length: {groups, reordered, smallest, largest}`` (docs/routing.md).
        ``tournament`` / ``shortlist``: see predict.
        """
        if diagnostics is not None and not isinstance(diagnostics, dict):
            raise TypeError(
                f"diagnostics must be a dict to fill in, got {type(diagnostics).__name__}"
            )
        call = Request.read(locals()).with_choice_mode()
        items = read_items(requests, call)
        check_count("batch_size", batch_size, "states")
        check_min_confidence(min_confidence)
        policy = policy_for(self, **call.hooks)
        decisions = self._route_all(policy, items)
        groups: dict[str, list[int]] = {}
        for i, decision in enumerate(decisions):
            groups.setdefault(self.resolve(decision["model"]), []).append(i)
        results: dict[int, Result] = {}
        routed = Routed(min_confidence)
        for name, indices in groups.items():
            contexts = [batch_context(items[i], decisions[i], name, self) for i in indices]
            for i, ctx in zip(indices, contexts, strict=True):
                routed.record(ctx, decisions[i], items[i].request.lang)
            self._run_group(policy, name, contexts, routed, call)
            for i, ctx in zip(indices, contexts, strict=True):
                results[i] = single_result(ctx.results)
        if sort_by_length and diagnostics is not None and items:
            diagnostics["sort_by_length"] = sort_diagnostics(routed.group_sizes, batch_size)
        return [results[i] for i in range(len(items))]

    predict_many = predict_batch

    def predict_each(
        self,
        requests: Sequence[dict[str, Any]],
        min_confidence: object = None,
        *,
        tournament: object = None,
        shortlist: int | None = None,
    ) -> list[Result | Exception]:
        """Answer independent requests in shared passes: each is routed, loaded and answered as
        :meth:`predict` would, in its own hook context, and gets its own result or its own
        exception (a bad request never fails the others). What a server's batcher calls."""
        call = Request.read(locals()).with_choice_mode()
        check_min_confidence(min_confidence)
        policy = policy_for(self)
        routed = Routed(min_confidence)
        outcome: list[Result | Exception | None] = [None] * len(requests)
        asked: dict[PredictContext, Asked] = {}
        where: dict[PredictContext, int] = {}
        for i, request in enumerate(requests):
            try:
                check_request(request, "request")
            except Exception as exc:  # noqa: BLE001 - this request's own refusal
                outcome[i] = exc
                continue
            item = read_item(request, call)
            ctx = PredictContext(
                states=[item.state],
                questions=item.questions,
                router=self,
                **item.request.budgets(),
            )
            asked[ctx], where[ctx] = item, i
        with ExitStack() as leases:

            def prepare(ctx: PredictContext) -> None:
                item = asked[ctx]
                hints = item.request.hints()
                decision = self._route_fired(policy, item.state, ctx.questions, hints)
                routed.record(ctx, decision, item.request.lang)
                ctx.decision, ctx.model = dict(decision), self.resolve(decision["model"])
                ctx.agent = self._lease(leases, ctx.model)
                ctx.started_at = time.perf_counter()

            def infer(pending: list[PredictContext]) -> None:
                answer_shared(pending, routed, call)

            contexts = list(asked)
            errors = run_each(policy, contexts, infer, prepare=prepare, finalize=routed.finalize)
        for ctx, error in zip(contexts, errors, strict=True):
            outcome[where[ctx]] = error if error is not None else _single_or_error(ctx)
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

    def _run_group(
        self,
        policy: HookPolicy,
        name: str,
        contexts: list[PredictContext],
        routed: Routed,
        call: Request,
    ) -> None:
        """One checkpoint's requests through the lifecycle, loaded before any of them starts (a
        failed load fires no start or end for the group, docs/hooks/lifecycle.md)."""
        with ExitStack() as leases:
            runtime = self._lease(leases, name)

            def prepare(ctx: PredictContext) -> None:
                ctx.agent = runtime
                ctx.started_at = time.perf_counter()

            def infer(pending: list[PredictContext]) -> None:
                answer_shared(pending, routed, call)

            run_lifecycle(policy, contexts, infer, prepare=prepare, finalize=routed.finalize)

    def _fire(self, events: list[Event]) -> None:
        """Fire on_load / on_evict with the installed hooks and defaults, on the Router's policy."""
        policy = policy_for(self)
        for event, name, runtime in events:
            ctx = PredictContext(states=[], questions={}, model=name, agent=runtime, router=self)
            policy.fire(event, ctx)


def _pin(value: object, where: str) -> str | None:
    """A revision pin: a non-blank string, or None (blank counts as none)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise TypeError(f"{where} must be a commit, branch or tag (a string), got {value!r}")
    return value.strip()


def _merged_digests(given: object, entry: dict[str, str]) -> object:
    """``agent_kwargs``' ``expected_sha256`` and a checkpoint's ``sha256_digests`` entry, file by
    file (the entry wins); a digest string (laya's weights-file form) is kept when no entry
    names a file."""
    if isinstance(given, Mapping):
        return {**given, **entry}
    return entry or given
