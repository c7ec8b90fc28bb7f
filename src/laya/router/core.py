"""The Router: route each request to the checkpoint that can read it, answer through it.

It composes three parts — :class:`~laya.router.names.Names` (the checkpoint table),
:func:`~laya.router.decide.decide` (the routing table) and
:class:`~laya.router.residency.Residency` (which runtimes stay in memory) — and talks to a
runtime only through :class:`laya.runtime.RuntimeProtocol`. Its prediction calls are
:class:`~laya.router.calls.RouterCalls`; this file holds the names, routing and residency they
use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..calibration import read_calibration
from ..checkpoint import canonical_name
from ..errors import InvalidRequest
from ..hooks import HookRegistry, PredictContext
from ..lifecycle import HookPolicy, policy_for
from ..typed import Decider
from .calls import RouterCalls
from .decide import Table, check_hint, decide
from .fetch import Fetcher
from .names import Names, name_map
from .requests import (
    ROUTING_KEYS,
    check_agent_kwargs,
    check_call,
    check_max_loaded,
    check_requests,
)
from .residency import Event, Residency

__all__ = ["Router"]


class Router(HookRegistry, RouterCalls, Decider):
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
        self._init_hooks(
            hooks, on_predict_start, on_predict_end, hooks_raise, hooks_concurrent, hooks_timeout
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

    def __exit__(self, *exc_info: Any) -> bool:
        self.unload()
        return False

    # ----------------------------------------------------------------------- names

    @property
    def models(self) -> dict[str, Any]:
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
        decision = decide(self._table(), state, questions, explain=explain, **hints)
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

    def _fire(self, events: list[Event]) -> None:
        """Fire on_load / on_evict with the installed hooks and defaults, on the Router's policy."""
        policy = policy_for(self)
        for event, name, runtime in events:
            ctx = PredictContext(states=[], questions={}, model=name, agent=runtime, router=self)
            policy.fire(event, ctx)
