"""Route each request to the checkpoint that can read it, and keep a few checkpoints resident.

A :class:`Router` holds named checkpoints (three built in, more registered at run time), decides
per request which one answers (:meth:`Router.route`), builds an ``Agent`` for it on first use and
keeps at most ``max_loaded`` of them in memory (least recently used goes first). Every prediction
runs through :func:`laya.lifecycle.run_lifecycle`, so hooks see the same lifecycle as on an Agent.

Importing this module does not import torch: the runtime and the language detector are imported
the first time they are needed.
"""

from __future__ import annotations

import gc
import inspect
import os
import re
import sys
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .checkpoint import ALIASES, BUILTIN, canonical_name, unknown_name
from .hooks import HookRegistry, PredictContext, defaults_suppressed
from .lifecycle import HookPolicy, policy_for, run_lifecycle

__all__ = [
    "STANDALONE_REPOS",
    "TYPED_DECISIONS_WORKFLOWS",
    "RouteDecision",
    "Router",
    "english_from_code",
    "match_typed_decisions_workflow",
]

Source = tuple[str, str | None]

# The built-in names, their aliases and places in the bundle repo live in ``laya.checkpoint``
# (``laya.load`` reads the same table). Only ``standalone_repos=True`` differs: these names then
# load from their own repos; any other built-in keeps its bundled source.
STANDALONE_REPOS: dict[str, Source] = {
    "multilingual": ("convaiinnovations/laya-multilingual", None),
    "typed-decisions": ("convaiinnovations/laya-typed-decisions", None),
}

TYPED_DECISIONS_WORKFLOWS: dict[str, frozenset[str]] = {
    "agent_trace_observability": frozenset(
        {"action", "needs_review", "outcome", "risk", "urgency"}
    ),
    "customer_service": frozenset({"action", "category", "churn_risk", "needs_human", "urgency"}),
    "invoice_processing": frozenset(
        {"discrepancy_severity", "disposition", "duplicate", "matches_order", "urgency"}
    ),
    "security_incidents": frozenset(
        {"credential_compromise", "disposition", "severity", "true_positive", "urgency"}
    ),
}

_NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_ABSTAINING_CODES = frozenset({"c", "posix", "und", "zxx", "mul"})
_ENGLISH_CODES = frozenset({"en", "eng", "english"})
_ROUTING_KEYS = ("model", "task", "lang", "lang_guess")
_BUDGET_KEYS = ("max_len", "head_max_len")
_RESERVED_AGENT_KWARGS = frozenset(
    {
        "model_id_or_path",
        "device",
        "token",
        "subfolder",
        "hooks",
        "on_predict_start",
        "on_predict_end",
        "hooks_raise",
        "hooks_concurrent",
        "hooks_timeout",
    }
)


# --------------------------------------------------------------------------- names


def match_typed_decisions_workflow(questions: Any) -> str | None:
    """The typed-decisions workflow whose question ids are exactly these, if any."""
    ids = set(questions or ())
    return next((wf for wf, sig in TYPED_DECISIONS_WORKFLOWS.items() if ids == sig), None)


def _edit_distance(a: str, b: str) -> int:
    """Optimal-string-alignment distance: insert, delete, substitute, swap neighbours cost 1."""
    before, prev = [0] * (len(b) + 1), list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], before[j - 2] + 1)
        before, prev = prev, row
    return prev[-1]


def _repo_str(source: Source | None) -> str | None:
    """``"repo/subfolder"`` for display, or the repo (or path) alone."""
    if source is None:
        return None
    repo, sub = source
    return f"{repo}/{sub}" if sub else repo


def _as_source(name: str, source: Any) -> Source | None:
    """Normalise a local path, Hub id or ``(repo, subfolder)`` pair; ``~`` is expanded."""
    if source is None:
        return None
    if isinstance(source, str):
        source = (source, None)
    if (
        not isinstance(source, (tuple, list))
        or len(source) != 2
        or not isinstance(source[0], str)
        or not isinstance(source[1], (str, type(None)))
    ):
        raise TypeError(
            f"checkpoint source for {name!r} must be a repo id, a local path or a "
            f"(repo, subfolder) pair, got {source!r}"
        )
    repo, sub = source
    return (os.path.expanduser(repo) if repo.startswith("~") else repo, sub or None)


def _check_new_name(name: Any, key: str) -> None:
    """Rules for a name that is not built in; one edit from a built-in warns (a likely typo)."""
    if not isinstance(name, str) or not _NAME_PATTERN.match(key):
        raise ValueError(
            f"invalid checkpoint name {name!r}: use lowercase letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    if key == "auto":
        raise ValueError(
            f"invalid checkpoint name {name!r}: 'auto' means automatic routing in every "
            "model= argument"
        )
    near = next((b for b in BUILTIN if _edit_distance(key, b) == 1), None)
    if near is not None:
        warnings.warn(
            f"laya: checkpoint name {key!r} is one edit from the built-in {near!r}; it is "
            f"registered as a separate checkpoint and {near!r} is unchanged.",
            RuntimeWarning,
            stacklevel=4,
        )


# --------------------------------------------------------------------------- language hints


def english_from_code(value: Any) -> bool | None:
    """Read a language code or locale as English (True), not English (False) or abstain (None).

    ``en``, ``en-US``, ``en_US.UTF-8`` and ``English`` are English; ``C``, ``POSIX``, ``und``,
    ``zxx``, ``mul`` and blanks abstain. A bool is taken as the answer to "is it English?".
    """
    if value is None or isinstance(value, bool):
        return value
    code = str(value).strip().lower().split(".", 1)[0]
    primary = code.replace("_", "-").split("-", 1)[0]
    if not primary or primary in _ABSTAINING_CODES:
        return None
    return primary in _ENGLISH_CODES


def _check_hint(name: str, value: Any, *, allow_callable: bool) -> None:
    """A language hint is a code string (or, for ``lang_guess``, a callable taking the state)."""
    if value is None or isinstance(value, str) or (allow_callable and callable(value)):
        return
    kinds = "a language code or a callable taking the state" if allow_callable else "a code"
    raise TypeError(f"{name} must be {kinds}, got {type(value).__name__}")


# --------------------------------------------------------------------------- decisions


class RouteDecision(dict):
    """Which checkpoint answers a request and why: keys model, repo, reason, detection, workflow."""

    __slots__ = ()

    @property
    def model(self) -> str:
        """The checkpoint name."""
        return self["model"]

    @property
    def reason(self) -> str:
        """A sentence saying why this checkpoint was chosen."""
        return self["reason"]

    def __repr__(self) -> str:
        return f"RouteDecision(model={self['model']!r}, reason={self['reason']!r})"


def _detected_route(det: Mapping[str, Any], default: str) -> tuple[str, str]:
    """Rows 7-13 of the precedence table: checkpoint and reason from the language detector."""
    script = det["script"]
    if script == "unknown":
        return default, f"no letters detected in state; using default ({default})"
    if script != "latin":
        share = 100 * det["non_latin_fraction"]
        return "multilingual", (
            f"non-Latin script ({script}, {share:.0f}% of letters); "
            "the English checkpoint cannot read it"
        )
    if det["is_english"]:
        if det["language_undecided"]:
            return default, (
                "Latin script, language not identified and no non-English letters; "
                f"using default ({default})"
            )
        return "english", "English Latin text"
    language, segment = det["language"], det.get("mixed_segment")
    if segment:
        return "multilingual", (
            f"Latin script, mostly English, but a line or field reads as {language!r} "
            f"({segment[:60]!r}); the English checkpoint cannot read it"
        )
    if language:
        return "multilingual", f"Latin script but language looks like {language!r}, not English"
    share = 100 * det["diacritic_rate"]
    return "multilingual", (
        f"Latin script, language not identified but {share:.0f}% non-English letters; "
        "not safe for the English checkpoint"
    )


def _effective_lang(lang: str | None, decision: Any) -> str | None:
    """The caller's ``lang``, else the language the detector found (None-safe)."""
    if lang is not None:
        return lang
    detection = decision.get("detection") if isinstance(decision, Mapping) else None
    return detection.get("language") if isinstance(detection, Mapping) else None


# --------------------------------------------------------------------------- request checks


def _check_call(state: Any, questions: Any) -> None:
    """The checks every Router call makes before any hook fires."""
    if state is None:
        raise TypeError("state must not be None; pass a string, dict, or list")
    if not isinstance(questions, dict):
        raise TypeError(
            f"questions must be a dict of question id -> definition, got {type(questions).__name__}"
        )


def _check_requests(requests: Any) -> list[dict[str, Any]]:
    """Validate a batch of request dicts, naming the index and key of the first bad one."""
    if isinstance(requests, (str, bytes, Mapping)) or not isinstance(requests, Sequence):
        raise TypeError("requests must be a sequence of request dictionaries")
    for i, request in enumerate(requests):
        if not isinstance(request, dict):
            raise TypeError(f"request {i} must be a dict, got {type(request).__name__}")
        for key in ("state", "questions"):
            if key not in request:
                raise ValueError(f"request {i} is missing required key {key!r}")
        if request["state"] is None:
            raise TypeError(f"request {i} 'state' must not be None; pass a string, dict, or list")
        if not isinstance(request["questions"], dict):
            raise TypeError(
                f"request {i} 'questions' must be a dict, got {type(request['questions']).__name__}"
            )
        try:
            _check_hint("lang", request.get("lang"), allow_callable=False)
            _check_hint("lang_guess", request.get("lang_guess"), allow_callable=True)
        except TypeError as exc:
            raise TypeError(f"request {i} {exc}") from None
    return list(requests)


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` takes a keyword argument ``name`` (True when it cannot be inspected)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(
        (p.name == name and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        or p.kind is p.VAR_KEYWORD
        for p in params
    )


def _lang_for(agent: Any, lang: str | None) -> str | None:
    """Pass a language to the agent only where it changes the answer (per-language temperatures)."""
    return lang if getattr(agent, "lang_temperatures", None) else None


def _call_kwargs(
    fn: Callable[..., Any], *, lang: str | None = None, sort_by_length: bool = False, **kwargs: Any
) -> dict[str, Any]:
    """The call's set arguments; the hints ``lang`` / ``sort_by_length`` only where ``fn`` takes them."""
    hints = {"lang": lang, "sort_by_length": sort_by_length or None}
    given = {k: v for k, v in kwargs.items() if v is not None}
    return given | {k: v for k, v in hints.items() if v is not None and _accepts(fn, k)}


def _release_memory() -> None:
    """Give freed checkpoints' memory back: collect, then empty the accelerator cache if in use."""
    gc.collect()
    torch = sys.modules.get("torch")
    if torch is None:
        return
    for backend in ("cuda", "mps"):
        module = getattr(torch, backend, None)
        try:
            if module is not None and module.is_available():
                module.empty_cache()
        except Exception:  # noqa: BLE001 - best effort: freeing memory must never fail a call
            pass


def _single(ctx: PredictContext) -> dict[str, Any]:
    """The one result of a Router context (end hooks may have replaced the list)."""
    results = ctx.results
    if not results:
        raise ValueError(
            f"an on_predict_end hook left ctx.results={results!r}; a Router call returns one "
            "result per request, so leave a list holding it"
        )
    return results[0]


# --------------------------------------------------------------------------- residency


@dataclass(eq=False)
class _Build:
    """One checkpoint build in flight: waiters block on ``done`` and share its outcome."""

    done: threading.Event = field(default_factory=threading.Event)
    agent: Any = None
    error: BaseException | None = None


@dataclass(eq=False)
class _Routed:
    """What one Router call remembers per context: the route-time decision and language."""

    min_confidence: Any = None
    decisions: dict[PredictContext, Any] = field(default_factory=dict)
    langs: dict[PredictContext, str | None] = field(default_factory=dict)

    def record(self, ctx: PredictContext, decision: Any, lang: str | None) -> None:
        """Remember a context's decision and the language its request was read in."""
        self.decisions[ctx] = decision
        self.langs[ctx] = _effective_lang(lang, decision)

    def finalize(self, ctx: PredictContext) -> None:
        """Before on_predict_end: add ``routing`` where absent, then apply the confidence gate."""
        decision = self.decisions.get(ctx)
        for result in ctx.results or ():
            if isinstance(result, dict) and decision is not None:
                result.setdefault("routing", dict(decision))
        if self.min_confidence is not None:
            from .decoding import apply_confidence_gate

            apply_confidence_gate(ctx.results, self.min_confidence)


def _check_min_confidence(value: Any) -> None:
    """Validate ``min_confidence`` before any hook fires (the decoding module owns the rule)."""
    if value is not None:
        from .decoding import check_min_confidence

        check_min_confidence(value)


# --------------------------------------------------------------------------- router


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
    ) -> None:
        self._init_hooks(
            hooks, on_predict_start, on_predict_end, hooks_raise, hooks_concurrent, hooks_timeout
        )
        self._lock = threading.RLock()
        self._build_lock = threading.Lock()
        self._agents: OrderedDict[str, Any] = OrderedDict()
        self._building: dict[str, _Build] = {}
        self.models: dict[str, Source | None] = {
            **BUILTIN,
            **(STANDALONE_REPOS if standalone_repos else {}),
        }
        for name, source in (models or {}).items():
            self._add(name, source)
        self.device = device
        self.token = token
        self.agent_kwargs = _check_agent_kwargs(agent_kwargs)
        self.max_loaded = _check_max_loaded(max_loaded)
        self.default = self.resolve(default)
        self.auto_task_detection = bool(auto_task_detection)
        _check_hint("lang_guess", lang_guess, allow_callable=True)
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

    # ----------------------------------------------------------------------- registry

    def resolve(self, name: Any) -> str:
        """The canonical checkpoint name for ``name`` (an alias, any case); unknown → InvalidRequest."""
        key = canonical_name(name)
        if key in self.models:
            return key
        raise unknown_name(name, self.models, ALIASES)

    def _add(self, name: Any, source: Any) -> str:
        """Register or re-point one checkpoint name (the rules shared by every way in)."""
        key = canonical_name(name)
        if key not in BUILTIN:
            _check_new_name(name, key)
        normalised = _as_source(key, source)
        with self._lock:
            self.models = {**self.models, key: normalised}
        return key

    def register(self, name: str, source: Any) -> str:
        """Add a checkpoint name, or re-point one; a re-pointed resident checkpoint is unloaded."""
        with self._lock:
            key = canonical_name(name)
            existed, before = key in self.models, self.models.get(key)
            key = self._add(name, source)
        if existed and before != self.models[key]:
            self._free(key)
        return key

    def unregister(self, name: str) -> None:
        """Remove a registered (not built-in, not default) checkpoint, unloading it if resident."""
        key = self.resolve(name)
        if key in BUILTIN:
            raise ValueError(f"{key!r} is a built-in checkpoint and cannot be unregistered")
        if key == self.default:
            raise ValueError(
                f"{key!r} is this Router's default checkpoint; set another default before "
                "unregistering it"
            )
        with self._lock:
            self.models = {k: v for k, v in self.models.items() if k != key}
        self._free(key)

    # ----------------------------------------------------------------------- routing

    def _decide(
        self,
        state: Any,
        questions: Any,
        model: Any = None,
        task: Any = None,
        lang: Any = None,
        lang_guess: Any = None,
        explain: bool = False,
    ) -> RouteDecision:
        """The routing decision by the precedence table (no hooks, no loading)."""
        if model is not None and canonical_name(model) != "auto":
            return self._explicit(model, f"explicit model={model!r}")
        if task is not None:
            typed = str(task).lower().replace("-", "_") == "typed_decisions"
            return self._explicit("typed-decisions" if typed else task, f"explicit task={task!r}")
        workflow = match_typed_decisions_workflow(questions)
        if workflow and self.auto_task_detection:
            reason = f"question ids match the {workflow!r} typed-decisions workflow"
            return self._decision("typed-decisions", reason, workflow=workflow)
        hinted = self._hinted(state, lang, lang_guess)
        if hinted is not None:
            english, reason = hinted
            return self._decision(
                "english" if english else "multilingual", reason, workflow=workflow
            )
        from .lang import analyse

        detection = analyse(state, explain=explain)
        name, reason = _detected_route(detection, self.default)
        return self._decision(name, reason, detection, workflow)

    def _hinted(self, state: Any, lang: Any, lang_guess: Any) -> tuple[bool, str] | None:
        """Rows 4-6: an explicit ``lang``, the call's ``lang_guess``, the Router's ``lang_guess``."""
        english = english_from_code(lang)
        if english is not None:
            return english, f"explicit lang={lang!r}"
        for guess, who in ((lang_guess, "lang_guess"), (self.lang_guess, "Router(lang_guess=...)")):
            english = english_from_code(guess(state) if callable(guess) else guess)
            if english is not None:
                text = "English text" if english else "non-English text"
                return english, f"{who}: the caller identified this as {text}"
        return None

    def _explicit(self, name: Any, reason: str) -> RouteDecision:
        return self._decision(self.resolve(name), reason)

    def _decision(self, name: str, reason: str, detection=None, workflow=None) -> RouteDecision:
        repo = _repo_str(self.models.get(name))
        return RouteDecision(
            model=name, repo=repo, reason=reason, detection=detection, workflow=workflow
        )

    def _route_fired(
        self, policy: HookPolicy, state: Any, questions: Any, explain: bool = False, **hints: Any
    ) -> Any:
        """Decide, then let ``on_route`` hooks see (and possibly replace) the decision."""
        decision = self._decide(state, questions, explain=explain, **hints)
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
        _check_call(state, {} if questions is None else questions)
        _check_hint("lang", lang, allow_callable=False)
        _check_hint("lang_guess", lang_guess, allow_callable=True)
        policy = policy_for(self, hooks=hooks, hooks_raise=hooks_raise, hooks_timeout=hooks_timeout)
        return self._route_fired(
            policy,
            state,
            questions,
            explain,
            model=model,
            task=task,
            lang=lang,
            lang_guess=lang_guess,
        )

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
        checked = _check_requests(requests)
        policy = policy_for(self, hooks=hooks, hooks_raise=hooks_raise, hooks_timeout=hooks_timeout)
        return self._route_all(policy, checked, explain)

    def _route_all(self, policy: HookPolicy, requests: list[dict], explain: bool = False) -> list:
        return [
            self._route_fired(
                policy,
                r["state"],
                r["questions"],
                explain,
                **{k: r.get(k) for k in _ROUTING_KEYS},
            )
            for r in requests
        ]

    # ----------------------------------------------------------------------- residency

    @property
    def loaded(self) -> list[str]:
        """Resident checkpoint names, least recently used first."""
        with self._lock:
            return list(self._agents)

    def load(self, name: str) -> Any:
        """The resident Agent for ``name``, building it on first use (fires on_evict, on_load)."""
        key = self.resolve(name)
        with self._lock:
            agent = self._touch(key)
            if agent is not None:
                return agent
            build = self._building.get(key)
            if build is None:
                build = self._building[key] = _Build()
                waiting = False
            else:
                waiting = True
        if waiting:
            build.done.wait()
            if build.error is not None:
                raise build.error
            return build.agent
        agent, evicted = self._run_build(key, build)
        self._fire_lifecycle([("on_evict", n, None) for n in evicted] + [("on_load", key, agent)])
        return agent

    def _touch(self, key: str) -> Any:
        """Under the lock: the resident agent for ``key`` made most recent, or None."""
        agent = self._agents.get(key)
        if agent is not None:
            self._agents.move_to_end(key)
        return agent

    def _run_build(self, key: str, build: _Build) -> tuple[Any, list[str]]:
        """Build ``key`` (one build at a time per Router), make it resident, wake the waiters."""
        try:
            with self._build_lock:
                with self._lock:
                    agent = self._touch(key)
                    source = self.models.get(key)
                evicted: list[str] = []
                if agent is None:
                    agent, evicted = self._insert(key, self._build(key, source))
        except BaseException as exc:
            build.error = exc
            raise
        else:
            build.agent = agent
        finally:
            with self._lock:
                self._building.pop(key, None)
            build.done.set()
        if evicted:
            _release_memory()
        return agent, evicted

    def _build(self, key: str, source: Source | None) -> Any:
        """Construct the Agent for one checkpoint (outside the Router's lock)."""
        if source is None:
            raise ValueError(
                f"checkpoint {key!r} has no source to load from: it was attached as a built "
                "Agent and is no longer resident; attach it again, or register a path or repo"
            )
        from .runtime import Agent

        repo, sub = source
        return Agent(repo, device=self.device, token=self.token, subfolder=sub, **self.agent_kwargs)

    def _insert(self, key: str, agent: Any) -> tuple[Any, list[str]]:
        """Make a built agent resident and evict the least recently used beyond ``max_loaded``."""
        with self._lock:
            attached = self._touch(key)
            if attached is not None:
                return attached, []
            self._agents[key] = agent
            evicted = []
            while len(self._agents) > self.max_loaded:
                evicted.append(self._agents.popitem(last=False)[0])
            return agent, evicted

    def _wait_for_build(self, key: str | None = None) -> None:
        """Block until the build of ``key`` (or every build in flight) has finished."""
        with self._lock:
            builds = [b for k, b in self._building.items() if key is None or k == key]
        for build in builds:
            build.done.wait()

    def unload(self, name: str | None = None) -> None:
        """Free one checkpoint, or all of them; fires ``on_evict`` per freed name (LRU order)."""
        self._free(None if name is None else self.resolve(name))

    def _free(self, key: str | None) -> None:
        """Drop ``key`` (or every checkpoint) once its build in flight is done; fire on_evict."""
        self._wait_for_build(key)
        with self._lock:
            freed = [k for k in self._agents if key is None or k == key]
            for k in freed:
                del self._agents[k]
        if freed:
            _release_memory()
            self._fire_lifecycle([("on_evict", k, None) for k in freed])

    def preload(self, names: Sequence[str] | None = None) -> Router:
        """Build several checkpoints now; ``max_loaded`` is raised so none of them is evicted."""
        with self._lock:
            if names is None:
                keys = [k for k, source in self.models.items() if source is not None]
            else:
                keys = list(dict.fromkeys(self.resolve(n) for n in names))
            self.max_loaded = max(self.max_loaded, len(set(keys) | set(self._agents)))
        for key in keys:
            self.load(key)
        return self

    def attach(self, name: str, agent: Any) -> Any:
        """Make an already built agent resident under ``name`` (registered if new); no on_load."""
        with self._lock:
            key = canonical_name(name)
            if key not in self.models:
                key = self._add(name, None)
            self._agents[key] = agent
            self._agents.move_to_end(key)
            self.max_loaded = max(self.max_loaded, len(self._agents))
        return agent

    def _fire_lifecycle(self, events: list[tuple[str, str, Any]]) -> None:
        """Fire on_load / on_evict with the installed hooks and defaults, on the Router's policy."""
        policy = policy_for(self)
        for event, name, agent in events:
            policy.fire(
                event,
                PredictContext(states=[], questions={}, model=name, agent=agent, router=self),
            )

    # ----------------------------------------------------------------------- predictions

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
    ) -> dict[str, Any]:
        """Route one state, load its checkpoint and answer; the result carries ``routing``."""

        def answer(ctx: PredictContext, effective_lang: str | None) -> dict[str, Any]:
            agent = ctx.agent
            kwargs = _call_kwargs(
                agent.system_one,
                lang=_lang_for(agent, effective_lang),
                max_len=ctx.max_len,
                head_max_len=ctx.head_max_len,
            )
            with defaults_suppressed():
                return agent.system_one(ctx.states[0], ctx.questions, **kwargs)

        return self._answer_one(
            answer,
            state,
            questions,
            dict(model=model, task=task, lang=lang, lang_guess=lang_guess),
            dict(
                hooks=hooks,
                on_predict_start=on_predict_start,
                on_predict_end=on_predict_end,
                hooks_raise=hooks_raise,
                hooks_timeout=hooks_timeout,
            ),
            min_confidence,
            max_len=max_len,
            head_max_len=head_max_len,
        )

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
        """Like :meth:`predict`, but the state may be longer than one window: ``ctx.agent`` scans it."""

        def answer(ctx: PredictContext, effective_lang: str | None) -> dict[str, Any]:
            scan = getattr(ctx.agent, "predict_long", None)
            if scan is None:
                raise TypeError(
                    f"{type(ctx.agent).__name__} has no predict_long, so a state longer than its "
                    "window cannot be scanned; the PyTorch Agent and ONNXAgent implement it, and "
                    "an agent attached by hand needs it too"
                )
            kwargs = _call_kwargs(scan, lang=_lang_for(ctx.agent, effective_lang))
            with defaults_suppressed():
                return scan(
                    ctx.states[0],
                    ctx.questions,
                    window=window,
                    stride=stride,
                    aggregate=aggregate,
                    batch_size=batch_size,
                    **kwargs,
                )

        return self._answer_one(
            answer,
            state,
            questions,
            dict(model=model, task=task, lang=lang, lang_guess=lang_guess),
            dict(
                hooks=hooks,
                on_predict_start=on_predict_start,
                on_predict_end=on_predict_end,
                hooks_raise=hooks_raise,
                hooks_timeout=hooks_timeout,
            ),
            min_confidence,
        )

    def _prepare_call(
        self, state: Any, questions: Any, hints: dict, hook_args: dict, min_confidence: Any
    ) -> HookPolicy:
        """The pre-checks of a single call (before any hook): input, hints, gate, hooks."""
        _check_call(state, questions)
        _check_hint("lang", hints["lang"], allow_callable=False)
        _check_hint("lang_guess", hints["lang_guess"], allow_callable=True)
        _check_min_confidence(min_confidence)
        return policy_for(self, **hook_args)

    def _answer_one(
        self,
        answer: Callable[[PredictContext, str | None], dict[str, Any]],
        state: Any,
        questions: dict[str, Any],
        hints: dict[str, Any],
        hook_args: dict[str, Any],
        min_confidence: Any,
        **budgets: Any,
    ) -> dict[str, Any]:
        """One request through the lifecycle: route and load inside it, then ``answer``."""
        policy = self._prepare_call(state, questions, hints, hook_args, min_confidence)
        routed = _Routed(min_confidence)

        def prepare(ctx: PredictContext) -> None:
            decision = self._route_fired(policy, state, questions, **hints)
            routed.record(ctx, decision, hints["lang"])
            ctx.decision, ctx.model = dict(decision), self.resolve(decision["model"])
            ctx.agent = self.load(ctx.model)
            ctx.started_at = time.perf_counter()

        def infer(pending: list[PredictContext]) -> None:
            for ctx in pending:
                ctx.results = [answer(ctx, routed.langs[ctx])]

        ctx = PredictContext(states=[state], questions=questions, router=self, **budgets)
        run_lifecycle(policy, [ctx], infer, prepare=prepare, finalize=routed.finalize)
        return _single(ctx)

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
    ) -> list[dict[str, Any]]:
        """Answer many requests: route all, then one shared batch per checkpoint and question set.

        Each request gets its own hook context (as :meth:`predict` would give it); results come
        back in input order, each with ``routing``.
        """
        checked = _check_requests(requests)
        _check_min_confidence(min_confidence)
        policy = policy_for(
            self,
            hooks=hooks,
            on_predict_start=on_predict_start,
            on_predict_end=on_predict_end,
            hooks_raise=hooks_raise,
            hooks_timeout=hooks_timeout,
        )
        decisions = self._route_all(policy, checked)
        groups: dict[str, list[int]] = {}
        for i, decision in enumerate(decisions):
            groups.setdefault(self.resolve(decision["model"]), []).append(i)
        results: list[Any] = [None] * len(checked)
        routed = _Routed(min_confidence)
        for name, indices in groups.items():
            contexts = [self._batch_context(checked[i], decisions[i], name) for i in indices]
            for i, ctx in zip(indices, contexts, strict=True):
                routed.record(ctx, decisions[i], checked[i].get("lang"))
            self._run_group(policy, name, contexts, routed, batch_size, sort_by_length)
            for i, ctx in zip(indices, contexts, strict=True):
                results[i] = _single(ctx)
        return results

    predict_many = predict_batch

    def _batch_context(self, request: dict, decision: Any, name: str) -> PredictContext:
        return PredictContext(
            states=[request["state"]],
            questions=request["questions"],
            decision=dict(decision),
            model=name,
            router=self,
            **{k: request.get(k) for k in _BUDGET_KEYS},
        )

    def _run_group(
        self,
        policy: HookPolicy,
        name: str,
        contexts: list[PredictContext],
        routed: _Routed,
        batch_size: int | None,
        sort_by_length: bool,
    ) -> None:
        """One checkpoint's requests through the lifecycle; load happens as the first one starts."""
        agents: list[Any] = []

        def prepare(ctx: PredictContext) -> None:
            if not agents:
                agents.append(self.load(name))
            ctx.agent = agents[0]
            ctx.started_at = time.perf_counter()

        def infer(pending: list[PredictContext]) -> None:
            self._infer_shared(pending, routed.langs, batch_size, sort_by_length)

        run_lifecycle(policy, contexts, infer, prepare=prepare, finalize=routed.finalize)

    def _infer_shared(
        self,
        pending: list[PredictContext],
        langs: dict[PredictContext, str | None],
        batch_size: int | None,
        sort_by_length: bool,
    ) -> None:
        """Answer contexts that share agent, questions, budgets and language in one predict_batch."""
        groups: dict[tuple, list[PredictContext]] = {}
        for ctx in pending:
            lang = _lang_for(ctx.agent, langs[ctx])
            key = (id(ctx.agent), repr(ctx.questions), ctx.max_len, ctx.head_max_len, lang)
            groups.setdefault(key, []).append(ctx)
        for (_, _, max_len, head_max_len, lang), members in groups.items():
            agent = members[0].agent
            kwargs = _call_kwargs(
                agent.predict_batch,
                batch_size=batch_size,
                lang=lang,
                max_len=max_len,
                head_max_len=head_max_len,
                sort_by_length=sort_by_length,
            )
            with defaults_suppressed():
                answers = agent.predict_batch(
                    [c.states[0] for c in members], members[0].questions, **kwargs
                )
            if len(answers) != len(members):
                raise RuntimeError(
                    f"internal error: {type(agent).__name__}.predict_batch returned "
                    f"{len(answers)} results for {len(members)} states"
                )
            for ctx, result in zip(members, answers, strict=True):
                ctx.results = [result]


# --------------------------------------------------------------------------- constructor checks


def _check_max_loaded(value: Any) -> int:
    """``max_loaded`` is a whole number of resident checkpoints, at least one."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"max_loaded must be a positive integer, got {value!r}")
    return value


def _check_agent_kwargs(agent_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """Extra Agent arguments; the ones the Router sets itself are refused."""
    kwargs = dict(agent_kwargs or {})
    reserved = sorted(_RESERVED_AGENT_KWARGS & set(kwargs))
    if reserved:
        raise ValueError(
            f"Router sets {', '.join(map(repr, reserved))} itself; pass them to Router(...) "
            "instead of in agent_kwargs"
        )
    return kwargs
