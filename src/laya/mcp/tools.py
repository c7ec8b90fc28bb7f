"""The MCP tools' bodies, without the MCP SDK: each checks its arguments, builds the request
``laya serve`` would receive and answers it through the server's own functions
(:mod:`laya.server.inference`), or through a running ``laya serve`` (:mod:`laya.mcp.remote`).

Every function returns a JSON-ready dict. A bad argument raises :class:`ToolError` whose ``code``
names the argument (``invalid_state``, ``invalid_questions``...) and whose message says the fix;
the server (:mod:`laya.mcp.server`) sends ``{"error": code, "message": ...}`` as the tool error.
docs/integrations.md lists the tools and their arguments.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Protocol, TypeVar

from ..engine.gate import MinConfidence, check_min_confidence
from ..engine.questions import parse_questions
from ..engine.states import check_state
from ..engine.strategies.choices import predict_shortlist, shortlist_block, tournament_block
from ..engine.strategies.shortlist import Embedder
from ..engine.work import work_budget
from ..errors import (
    CheckpointUnavailable,
    InvalidRequest,
    LayaError,
    Overloaded,
    UnknownName,
    one_line,
)
from ..request import CONTROL_KEYS, ROUTING_KEYS
from ..router import Router
from ..router.table import check_hint
from ..runtime import RuntimeProtocol
from ..server.inference import (
    build_router,
    predict_batch,
    predict_each,
    predict_single,
    routed_controls,
)
from ..server.settings import Settings
from ..server.wire import SingleRequest, parse_batch, parse_single
from ..typed import presets
from ..typed.decision_json import decision_json
from ..typed.plans import plan_for
from ..typed.values import decision_result
from .device import agent_device, device_report, router_agent
from .remote import RemoteError, RemoteRouter

__all__ = [
    "AUTO",
    "BATCH_ITEM_OVERRIDES",
    "PRESETS",
    "PRESET_ALIASES",
    "VALID_TYPES",
    "AgentLike",
    "ToolError",
    "batch_item_key_doc",
    "get_available_presets",
    "laya_decide",
    "laya_predict",
    "laya_predict_batch",
    "laya_predict_long",
    "laya_preset",
    "laya_route",
    "laya_route_batch",
    "laya_shortlist",
    "laya_status",
    "laya_tournament",
    "validate_batch_requests",
    "validate_budget",
    "validate_lang",
    "validate_lang_guess",
    "validate_min_confidence",
    "validate_model",
    "validate_preset",
    "validate_questions",
    "validate_state",
    "validate_task",
]

AUTO = "auto"
VALID_TYPES = {"choice", "score", "noul"}
BATCH_ITEM_OVERRIDES = CONTROL_KEYS
PRESETS = {
    "guard": "guard_questions",
    "moderation": "moderation_questions",
    "triage": "triage_questions",
    "model_router": "router_questions",
    "email": "email_questions",
}
PRESET_ALIASES = {"router": "model_router"}


class AgentLike(Protocol):
    """What answers a tool in-process: a laya Agent or ONNXAgent."""

    def predict(self, state: object, questions: dict[str, Any]) -> dict[str, Any]: ...


Runner = Router | RemoteRouter  # what answers the tools: in this process, or a laya serve
Json = dict[str, Any]  # a tool's answer: a JSON object of any values
Answer = TypeVar("Answer")


class ToolError(LayaError):
    """A tool call that cannot be answered: ``code`` says which argument (or what) and the
    message the fix. Sent to the client as ``{"error": code, "message": message}``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message

    def payload(self) -> dict[str, str]:
        return {"error": self.code, "message": self.message}


# --------------------------------------------------------------------------- arguments


@contextmanager
def argument(name: str) -> Iterator[None]:
    """A mistake found while checking argument ``name`` becomes ``ToolError(invalid_<name>)``."""
    try:
        yield
    except ToolError:
        raise
    except (ValueError, TypeError) as exc:
        raise ToolError(f"invalid_{name}", one_line(exc)) from None


def validate_state(state: object) -> object:
    """A state: text, a JSON object or a list (not null, not empty)."""
    with argument("state"):
        check_state(state, "state")
    return state


def validate_questions(questions: object) -> dict[str, Any]:
    """A question set: ``{id: {type: choice|score|noul, instructions, criteria?...}}``."""
    with argument("questions"):
        if not isinstance(questions, dict) or not questions:
            raise InvalidRequest(
                "questions must be a non-empty object of question id -> "
                "{type: choice|score|noul, instructions, criteria?}"
            )
        parse_questions(questions)
    return questions


def _text_or_none(name: str, value: object) -> str | None:
    with argument(name):
        check_hint(name, value, allow_callable=False)
    return None if value is None else str(value)


def validate_model(model: object) -> str:
    """A checkpoint name or alias; ``auto`` (or nothing) lets the router choose."""
    return _text_or_none("model", model) or AUTO


def validate_task(task: object) -> str | None:
    return _text_or_none("task", task)


def validate_lang(lang: object) -> str | None:
    return _text_or_none("lang", lang)


def validate_lang_guess(lang_guess: object) -> str | None:
    return _text_or_none("lang_guess", lang_guess)


def validate_budget(value: object, name: str) -> int | None:
    """A positive whole number, or None / 0 for unset."""
    if value is None or (value == 0 and not isinstance(value, bool)):
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ToolError(f"invalid_{name}", f"{name} must be a positive integer, got {value!r}")
    return value


def _at_least(value: object, name: str, least: int) -> int:
    """A whole number of at least ``least`` (no 0 for unset: the tool's schema says so)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        whole = "a positive integer" if least == 1 else f"an integer of {least} or more"
        raise ToolError(f"invalid_{name}", f"{name} must be {whole}, got {value!r}")
    return value


def validate_min_confidence(value: object) -> MinConfidence | None:
    """A threshold in [0, 1], or a map of them by question kind (laya.engine.gate)."""
    with argument("min_confidence"):
        return check_min_confidence(value)


def validate_preset(preset: object) -> str:
    """A preset name (``router`` is ``model_router``)."""
    name = str(preset).strip().lower() if isinstance(preset, str) else None
    name = PRESET_ALIASES.get(name or "", name)
    if name not in PRESETS:
        known = ", ".join([*PRESETS, *PRESET_ALIASES])
        raise ToolError("invalid_preset", f"unknown preset {preset!r}; use one of {known}")
    return name


def validate_batch_requests(requests: object) -> list[dict[str, Any]]:
    """Up to 64 requests, each ``{state, questions}`` plus the per-request overrides."""
    if not isinstance(requests, list) or not requests:
        raise ToolError("invalid_request", "requests must be a non-empty array of requests")
    if len(requests) > 64:
        raise ToolError("invalid_request", f"requests holds {len(requests)}; at most 64")
    allowed = {"state", "questions", *BATCH_ITEM_OVERRIDES}
    for i, request in enumerate(requests):
        if not isinstance(request, dict):
            raise ToolError("invalid_request", f"requests[{i}] must be an object")
        unknown = sorted(set(request) - allowed, key=str)
        if unknown:
            raise ToolError(
                "invalid_request",
                f"requests[{i}].{unknown[0]} is not a per-request key; {batch_item_key_doc()}",
            )
        for key in ("state", "questions"):
            if key not in request:
                raise ToolError(f"invalid_{key}", f"requests[{i}] has no {key}")
        try:
            validate_state(request["state"])
            validate_questions(request["questions"])
        except ToolError as exc:
            raise ToolError(exc.code, f"requests[{i}]: {exc.message}") from None
    return requests


def batch_item_key_doc(omit: tuple[str, ...] = ()) -> str:
    """What a request of a batch may hold."""
    keys = [k for k in BATCH_ITEM_OVERRIDES if k not in omit]
    return f"each request takes state, questions and optionally {', '.join(keys)}"


def get_available_presets() -> dict[str, dict[str, object]]:
    """Preset name -> its questions and the state field a text is read as."""
    return {name: _preset_info(name) for name in PRESETS}


def _preset_info(name: str) -> dict[str, object]:
    questions = _preset_questions(name)
    return {"questions": questions, "state_field": presets.state_field(questions) or "text"}


def _preset_questions(name: str) -> dict[str, Any]:
    builder: Callable[[], dict[str, Any]] = getattr(presets, PRESETS[name])
    return builder()


_CHECKS: dict[str, Callable[[object], object]] = {  # a request control -> its check, in order
    "model": validate_model,
    "task": validate_task,
    "lang": validate_lang,
    "lang_guess": validate_lang_guess,
    "max_len": partial(validate_budget, name="max_len"),
    "head_max_len": partial(validate_budget, name="head_max_len"),
    "min_confidence": validate_min_confidence,
}


def _controls(arguments: Mapping[str, object]) -> dict[str, object]:
    """The request controls among a tool's arguments (its ``locals()``), to pass on."""
    return {key: arguments[key] for key in _CHECKS if key in arguments}


def _checked_controls(
    state: object, questions: object, controls: Mapping[str, object]
) -> dict[str, object]:
    """The state and questions checked, and every control (absent: unset, ``model``: auto)."""
    validate_state(state)
    validate_questions(questions)
    return {key: check(controls.get(key)) for key, check in _CHECKS.items()}


# --------------------------------------------------------------------------- answering


_DEFAULT: dict[str, Router] = {}


def _runner(
    router: Runner | None, agent: RuntimeProtocol | None, settings: Settings | None
) -> tuple[Runner, Settings]:
    """The Router (or RemoteRouter) that answers, and the server settings to check with."""
    settings = settings or Settings(preload=False)
    if agent is not None:  # the calls name it: model="agent"
        own = Router()
        own.attach("agent", agent)
        return own, settings
    if router is None:
        if "router" not in _DEFAULT:
            _DEFAULT["router"] = build_router(settings)
        router = _DEFAULT["router"]
    return router, settings


def _local(runner: Runner) -> Router:
    """The Router that routes (a RemoteRouter's own, which loads nothing)."""
    return runner.router if isinstance(runner, RemoteRouter) else runner


def _answered(work: Callable[[], Answer]) -> Answer:
    """``work()``; the package's refusals as ToolErrors (their message says the fix)."""
    try:
        return work()
    except ToolError:
        raise
    except CheckpointUnavailable as exc:
        raise ToolError("models_not_ready", one_line(exc)) from None
    except Overloaded as exc:
        raise ToolError("overloaded", one_line(exc)) from None
    except RemoteError as exc:
        raise ToolError("remote_unreachable", one_line(exc)) from None
    except (InvalidRequest, ValueError, TypeError) as exc:
        raise ToolError(_refusal_code(exc), one_line(exc)) from None
    except LayaError as exc:  # a checkpoint that is there but cannot be used
        raise ToolError("internal_error", one_line(exc)) from None


def _refusal_code(exc: Exception) -> str:
    """The published code of a refused request: ``invalid_model`` (``invalid_task``) for a
    checkpoint name that names nothing, else ``invalid_request``."""
    return f"invalid_{exc.field}" if isinstance(exc, UnknownName) else "invalid_request"


def _timed(result: Json, started: float) -> Json:
    return {**result, "latency_ms": round((time.perf_counter() - started) * 1000, 3)}


def _given(controls: Mapping[str, object]) -> dict[str, object]:
    """The controls that are set (``model: auto`` pins nothing)."""
    return {k: v for k, v in controls.items() if v is not None and (k, v) != ("model", AUTO)}


def _body(state: object, questions: object, **controls: object) -> dict[str, object]:
    """A ``/v1/systemone`` body: the state, the questions and the controls that are set."""
    return {"state": state, "questions": questions, **_given(controls)}


def _single(router: Runner, settings: Settings, body: dict[str, object]) -> Json:
    """One request answered as ``laya serve`` answers ``/v1/systemone`` (or by it)."""
    if isinstance(router, RemoteRouter):
        return router.systemone(body)
    return dict(predict_single(router, parse_single(body, settings), settings))


def _with_device(router: Runner, result: Json) -> Json:
    model = (result.get("routing") or {}).get("model")
    agent = router_agent(router, model) if model else None
    device = agent_device(agent) if agent is not None else None
    return {**result, "device": device} if device else result


def laya_predict(
    state: object,
    questions: object,
    model: object = AUTO,
    *,
    task: object = None,
    lang: object = None,
    lang_guess: object = None,
    max_len: object = None,
    head_max_len: object = None,
    min_confidence: object = None,
    tournament: object = None,
    shortlist: object = None,
    router: Runner | None = None,
    agent: RuntimeProtocol | None = None,
    settings: Settings | None = None,
) -> Json:
    """Answer typed questions about one state: the result, ``latency_ms`` and ``device``."""
    started = time.perf_counter()
    controls = _checked_controls(state, questions, _controls(locals()))
    _check_hints_unpinned(controls)
    if shortlist is not None:
        controls["shortlist"] = validate_budget(shortlist, "shortlist")
    runner, settings = _runner(router, agent, settings)
    if agent is not None:
        controls["model"] = "agent"
    body = _body(state, questions, **controls, tournament=tournament)
    result = _answered(lambda: _single(runner, settings, body))
    return _timed(_with_device(runner, result), started)


def _check_hints_unpinned(controls: Mapping[str, object]) -> None:
    """``task`` and ``lang_guess`` only steer routing: with a model pinned they would be
    silently ignored, so the call is refused naming the one to drop."""
    hints = [key for key in ("task", "lang_guess") if controls[key] is not None]
    if hints and controls["model"] != AUTO:
        raise ToolError(
            f"invalid_{hints[0]}",
            f"{hints[0]} steers routing, and model {controls['model']!r} is pinned: drop "
            f"{hints[0]}, or drop model (or send 'auto') to let the router choose",
        )


def laya_shortlist(
    state: object,
    questions: object,
    model: object = AUTO,
    k: object = None,
    *,
    task: object = None,
    lang: object = None,
    lang_guess: object = None,
    max_len: object = None,
    head_max_len: object = None,
    min_confidence: object = None,
    router: Runner | None = None,
    agent: RuntimeProtocol | None = None,
    embed_fn: Embedder | None = None,
    settings: Settings | None = None,
) -> Json:
    """A choice over many options, each read as its ``k`` (default 20) options nearest the state
    (by the answering checkpoint's encoder, or ``embed_fn``): the answers over those options and
    the published ``shortlist`` block (per choice ``labels``, ``scores``, ``k``, ``n``,
    ``passthrough``)."""
    size = 20 if k is None else _at_least(k, "k", 1)
    controls = _controls(locals())
    if embed_fn is not None:
        checked = _checked_controls(state, questions, controls)
        runner, _ = _runner(router, agent, settings)
        return _shortlisted(runner, state, questions, (size, embed_fn), checked, agent is not None)
    result = laya_predict(
        state, questions, **controls, shortlist=size, router=router, agent=agent, settings=settings
    )
    result["shortlist"] = shortlist_block(result, size)
    return result


def _shortlisted(
    runner: Runner,
    state: object,
    questions: object,
    nearest: tuple[int, Embedder],
    controls: dict[str, object],
    own_agent: bool,
) -> Json:
    """The answers over each choice's ``k`` options nearest the state by the caller's
    ``embed_fn`` (``nearest``; in-process only: the embedder cannot travel to a server)."""
    started = time.perf_counter()
    if isinstance(runner, RemoteRouter):
        raise ToolError(
            "unavailable_remotely", "embed_fn runs in-process; drop it to shortlist remotely"
        )
    given = _given(controls)
    if own_agent:
        given["model"] = "agent"
    k, embed_fn = nearest
    checked = validate_questions(questions)
    result = _answered(
        lambda: predict_shortlist(runner, state, checked, embed_fn, k, all_labels=False, **given)
    )
    return _timed(_with_device(runner, result), started)


def laya_tournament(
    state: object,
    questions: object,
    model: object = AUTO,
    group_size: object = 16,
    *,
    task: object = None,
    lang: object = None,
    lang_guess: object = None,
    max_len: object = None,
    head_max_len: object = None,
    min_confidence: object = None,
    router: Runner | None = None,
    agent: RuntimeProtocol | None = None,
    settings: Settings | None = None,
) -> Json:
    """A choice over many options, played in groups of ``group_size`` (2 or more; default 16):
    the answers (probabilities over the finalists), the published ``tournament`` block per
    question, and ``option_order_dropped`` listing the questions whose ``option_order`` the
    groups replaced."""
    size = 16 if group_size is None else _at_least(group_size, "group_size", 2)
    result = laya_predict(
        state, questions, **_controls(locals()), tournament=size, router=router, agent=agent,
        settings=settings,
    )  # fmt: skip
    result["tournament"] = block = tournament_block(result)
    dropped = [qid for qid, entry in block.items() if entry.get("option_order_dropped")]
    if dropped:
        result["option_order_dropped"] = dropped
    return result


def laya_preset(
    preset: object,
    state: object,
    *,
    model: object = AUTO,
    task: object = None,
    lang: object = None,
    lang_guess: object = None,
    max_len: object = None,
    head_max_len: object = None,
    min_confidence: object = None,
    router: Runner | None = None,
    agent: RuntimeProtocol | None = None,
    preset_builder: Callable[[str], dict[str, Any]] | None = None,
    settings: Settings | None = None,
) -> Json:
    """A ready-made question set's answers (``preset_builder(name)``'s questions when given);
    a text state is read as the preset's field."""
    controls = _controls(locals())
    name = validate_preset(preset)
    questions = _preset_questions(name) if preset_builder is None else preset_builder(name)
    if isinstance(state, str):
        state = {presets.state_field(questions) or "text": state}
    result = laya_predict(
        state, questions, **controls, router=router, agent=agent, settings=settings
    )
    return {"preset": name, **result}


def laya_predict_batch(
    requests: object = None,
    batch_size: object = None,
    hooks_timeout: object = None,
    min_confidence: object = None,
    sort_by_length: bool = False,
    *,
    states: object = None,
    questions: object = None,
    router: Runner | None = None,
    settings: Settings | None = None,
    **controls: object,
) -> Json:
    """Many requests in one batched pass per checkpoint: ``requests`` (each its own questions
    and overrides), or ``states`` sharing one ``questions``; the published shape: under
    ``requests`` one result per request in input order (``answers``, ``routing``, ``device``),
    with ``model_counts``, ``total_latency_ms`` and ``per_request_latency_ms``."""
    started = time.perf_counter()
    validate_budget(hooks_timeout, "hooks_timeout")  # hooks run server-side; accepted, unused
    size = validate_budget(batch_size, "batch_size")
    gate = validate_min_confidence(min_confidence)
    runner, settings = _runner(router, None, settings)
    if (requests is None) == (states is None):
        raise ToolError("invalid_request", "give requests, or states and questions (one form)")
    if requests is None:
        shared = {**controls, "batch_size": size, "min_confidence": gate}
        body = {"states": states, "questions": questions, **_given(shared)}
        if sort_by_length:
            body["sort_by_length"] = True
        results = _answered(lambda: _states_batch(runner, settings, body))
    else:
        checked = validate_batch_requests(requests)
        results = _answered(lambda: _requests_batch(runner, settings, checked, size, gate))
    total = (time.perf_counter() - started) * 1000
    models = Counter(str((r.get("routing") or {}).get("model")) for r in results)
    return {
        "requests": [_with_device(runner, dict(result)) for result in results],
        "model_counts": dict(models),
        "total_latency_ms": round(total, 3),
        "per_request_latency_ms": round(total / max(len(results), 1), 3),
    }


def _states_batch(router: Runner, settings: Settings, body: dict[str, object]) -> list[Json]:
    if isinstance(router, RemoteRouter):
        return router.systemone_batch(body)
    return [dict(r) for r in predict_batch(router, parse_batch(body, settings), settings)]


def _requests_batch(
    router: Runner,
    settings: Settings,
    requests: Sequence[Mapping[str, object]],
    size: int | None,
    gate: MinConfidence | None,
) -> list[Json]:
    """Each request checked as a ``/v1/systemone`` body, then answered together as the server's
    batcher answers them (in calls of at most ``size`` requests, so no pass holds more states;
    ``gate``, when given, is every request's ``min_confidence``); the first error is raised."""
    if isinstance(router, RemoteRouter):
        return router.predict_batch(requests, batch_size=size, min_confidence=gate)
    parsed = [_parsed(i, request, settings, gate) for i, request in enumerate(requests)]
    step = size or len(parsed)
    results: list[Json] = []
    for start in range(0, len(parsed), step):
        for result in predict_each(router, parsed[start : start + step], settings):
            if isinstance(result, Exception):
                raise result
            results.append(dict(result))
    return results


def _parsed(
    i: int, request: Mapping[str, object], settings: Settings, gate: MinConfidence | None
) -> SingleRequest:
    """Request ``i`` of a batch as ``/v1/systemone`` parses it, under the batch's gate if any."""
    try:
        parsed = parse_single(_body(**request), settings)
    except InvalidRequest as exc:
        raise ToolError(_refusal_code(exc), f"requests[{i}]: {one_line(exc)}") from None
    return parsed if gate is None else replace(parsed, min_confidence=gate)


def laya_route(
    state: object,
    questions: object = None,
    *,
    model: object = None,
    task: object = None,
    lang: object = None,
    lang_guess: object = None,
    router: Runner | None = None,
    settings: Settings | None = None,
) -> Json:
    """Which checkpoint would answer, and why; loads nothing."""
    validate_state(state)
    asked = validate_questions(questions) if questions else {}
    hints = {
        "model": None if validate_model(model) == AUTO else model,
        "task": validate_task(task),
        "lang": validate_lang(lang),
        "lang_guess": validate_lang_guess(lang_guess),
    }
    runner, settings = _runner(router, None, settings)
    return _answered(lambda: _route(_local(runner), settings, state, asked, hints))


def _route(router: Router, settings: Settings, state: object, questions: Json, hints: Json) -> Json:
    given = {k: v for k, v in hints.items() if v is not None}
    return dict(router.route(state, questions, **routed_controls(router, given, settings)))


def laya_route_batch(
    requests: object,
    hooks_timeout: object = None,
    *,
    router: Runner | None = None,
    settings: Settings | None = None,
) -> Json:
    """One ``{model, repo, reason}`` per request under ``decisions`` (the published key), and
    how many go to each checkpoint."""
    validate_budget(hooks_timeout, "hooks_timeout")
    checked = validate_batch_requests(requests)
    for i, request in enumerate(checked):
        if "max_len" in request or "head_max_len" in request:
            raise ToolError(
                "invalid_request", f"requests[{i}]: routing takes no budgets; "
                + batch_item_key_doc(("max_len", "head_max_len")),
            )  # fmt: skip
    routes = []
    for r in checked:
        hints = {key: r.get(key) for key in ROUTING_KEYS}
        decided = laya_route(r["state"], r["questions"], **hints, router=router, settings=settings)
        routes.append({k: decided.get(k) for k in ("model", "repo", "reason")})
    counts = dict(Counter(str(r["model"]) for r in routes))
    return {"decisions": routes, "model_counts": counts}


def laya_decide(
    state: object,
    schema: object,
    model: object = AUTO,
    *,
    min_confidence: object = None,
    router: Runner | None = None,
    agent: RuntimeProtocol | None = None,
    settings: Settings | None = None,
) -> Json:
    """A JSON schema decided about one state: the published ``values``, ``confidence``,
    ``probabilities`` and ``answer_confidence`` per field, then laya's ``value`` (the typed
    object) and ``fields`` (each field's probability, confidence and abstention)."""
    started = time.perf_counter()
    validate_state(state)
    with argument("schema"):
        if not isinstance(schema, dict):
            raise InvalidRequest("schema must be a JSON schema object with properties")
        plan_for(schema)
    gate = validate_min_confidence(min_confidence)
    pinned = "agent" if agent is not None else validate_model(model)
    runner, settings = _runner(router, agent, settings)

    def work() -> Json:
        given = {} if pinned == AUTO else {"model": pinned}
        controls = routed_controls(_local(runner), given, settings)
        with work_budget(settings.max_work_tokens):
            decision = runner.decision(state, schema, min_confidence=gate, **controls)
        details = decision_result(plan_for(schema), decision)
        published = {
            "values": details.values,
            "confidence": details.confidence,
            "probabilities": details.probabilities,
            "answer_confidence": details.answer_confidence,
        }
        return {**published, **decision_json(decision)}

    return _timed(_answered(work), started)


def laya_predict_long(
    state: object,
    questions: object,
    model: object = AUTO,
    *,
    window: object = None,
    stride: object = None,
    task: object = None,
    lang: object = None,
    router: Runner | None = None,
    agent: RuntimeProtocol | None = None,
    settings: Settings | None = None,
) -> Json:
    """A state longer than one window, read in overlapping windows (in-process only): the
    answers say which window decided each, and how many windows were read."""
    started = time.perf_counter()
    controls = _checked_controls(state, questions, _controls(locals()))
    scan = validate_budget(window, "window"), validate_budget(stride, "stride")
    runner, settings = _runner(router, agent, settings)
    if isinstance(runner, RemoteRouter):
        raise ToolError(
            "unavailable_remotely",
            "laya_predict_long reads windows in-process; laya serve has no such route "
            "(unset LAYA_BASE_URL to answer here)",
        )
    if agent is not None:
        controls["model"] = "agent"
    local = runner

    def work() -> Json:
        parsed = parse_single(_body(state, questions, **controls), settings)
        routed = routed_controls(local, parsed.controls, settings)
        with work_budget(settings.max_work_tokens):
            answer = local.predict_long(
                parsed.state, parsed.questions, window=scan[0], stride=scan[1], **routed
            )
        return dict(answer)

    return _timed(_with_device(runner, _answered(work)), started)


def laya_status(
    *,
    router: Runner | None = None,
    loaded: list[str] | None = None,
    preload: bool = True,
    settings: Settings | None = None,
) -> Json:
    """Where the server answers from: its checkpoints, their devices, versions (remote: the
    server's ``/health``)."""
    runner, settings = _runner(router, None, settings)
    versions = {name: _version(name) for name in ("laya", "mcp", "torch", "onnxruntime")}
    if isinstance(runner, RemoteRouter):
        health = _answered(runner.health)
        return {"mode": "remote", "base_url": runner.base_url, "server": health, **_v(versions)}
    resident = runner.resident
    return {
        "mode": "in-process",
        "default_model": runner.default,
        "loaded": loaded if loaded is not None else list(resident),
        "preload": preload,
        "device": device_report(),
        "checkpoint_devices": {name: agent_device(rt) for name, rt in resident.items()},
        "checkpoints": sorted(runner.models),
        **_v(versions),
    }


def _v(versions: dict[str, str | None]) -> dict[str, dict[str, str]]:
    return {"versions": {k: v for k, v in versions.items() if v is not None}}


def _version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def tool_names() -> Sequence[str]:
    """The ten tools, in the order the server lists them."""
    return (
        "laya_status", "laya_route", "laya_predict", "laya_predict_batch", "laya_route_batch",
        "laya_shortlist", "laya_tournament", "laya_preset", "laya_decide", "laya_predict_long",
    )  # fmt: skip
