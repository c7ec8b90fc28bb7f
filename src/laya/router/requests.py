"""A Router's requests: the checks made before any hook fires (each refusal names the request,
the key and the fix), the contexts built for them, what is remembered per context, and how the
requests one checkpoint answers share its passes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from ..engine.nesting import check_depth
from ..engine.questions import check_count, check_nesting
from ..engine.result import Result, finish_results
from ..engine.states import check_state
from ..errors import InvalidRequest
from ..hooks import PredictContext
from ..request import BUDGET_KEYS, CONTROL_KEYS, HOOK_KEYS, REQUEST_KEYS, ROUTING_KEYS, Request
from .names import name_map
from .table import check_hint, detected_language

if TYPE_CHECKING:
    from ..runtime import RuntimeProtocol

__all__ = [
    "Asked",
    "BUDGET_KEYS",
    "CONTROL_KEYS",
    "REQUEST_KEYS",
    "ROUTING_KEYS",
    "Routed",
    "answer_shared",
    "batch_context",
    "check_agent_kwargs",
    "check_call",
    "check_max_loaded",
    "check_request",
    "check_requests",
    "check_route_state",
    "mode_argument",
    "read_item",
    "read_items",
    "sort_diagnostics",
]

_RESERVED_AGENT_KWARGS = frozenset(
    {"model_id_or_path", "device", "token", "subfolder", "revision", "hooks_concurrent", *HOOK_KEYS}
)


class Asked(NamedTuple):
    """One request of a batch, read: its state, its questions, and its options (the call's,
    with the request's own routing keys and budgets)."""

    state: object
    questions: dict[Any, Any]
    request: Request


def read_item(item: Mapping[str, Any], base: Request) -> Asked:
    """A checked request dict (:func:`check_request`) as an :class:`Asked`: ``base`` (the
    call's options) with the dict's routing keys and budgets, absent ones None."""
    request = replace(
        base,
        model=item.get("model"),
        task=item.get("task"),
        lang=item.get("lang"),
        lang_guess=item.get("lang_guess"),
        max_len=item.get("max_len"),
        head_max_len=item.get("head_max_len"),
    )  # laya.request.CONTROL_KEYS
    return Asked(item["state"], item["questions"], request)


def read_items(items: object, base: Request) -> list[Asked]:
    """A batch of request dicts, all checked first (the refusal names the index and key of
    the first bad one), each read by :func:`read_item`."""
    return [read_item(item, base) for item in check_requests(items)]


def batch_context(
    asked: Asked, decision: Mapping[str, object], name: str, router: object
) -> PredictContext:
    return PredictContext(
        states=[asked.state],
        questions=asked.questions,
        decision=dict(decision),
        model=name,
        router=router,
        **asked.request.budgets(),
    )


def check_call(state: object, questions: object, hints: Mapping[str, object]) -> None:
    """The checks every single Router call makes before any hook fires (questions only as far as
    the Router walks them itself: their nesting)."""
    if state is None:
        raise TypeError("state must not be None; pass a string, dict, or list")
    check_state(state)
    if not isinstance(questions, dict):
        raise TypeError(
            f"questions must be a dict of question id -> definition, got {type(questions).__name__}"
        )
    check_nesting(questions)
    _check_hints(hints)


def check_route_state(state: object, questions: object, hints: Mapping[str, object]) -> None:
    """What ``route`` checks: as :func:`check_call`, but any state routes (None and blank ones
    go to the default, having no letters to read); only its nesting is held to the limit."""
    check_depth(state, "state")
    if not isinstance(questions, dict):
        raise TypeError(
            f"questions must be a dict of question id -> definition, got {type(questions).__name__}"
        )
    check_nesting(questions)
    _check_hints(hints)


def sort_diagnostics(sizes: Sequence[int], batch_size: int | None) -> dict[str, int | None]:
    """What ``sort_by_length`` did over the question groups that reached a runtime: how many
    there were, how many a ``batch_size`` split into several passes (``1 < batch_size < n``),
    and the smallest and largest group (None: no group)."""
    split = [n for n in sizes if batch_size is not None and 1 < batch_size < n]
    return {
        "groups": len(sizes),
        "reordered": len(split),
        "smallest": min(sizes, default=None),
        "largest": max(sizes, default=None),
    }


def _check_hints(request: Mapping[str, object]) -> None:
    """A request's language hints and token budgets, each absent one being None."""
    check_hint("lang", request.get("lang"), allow_callable=False)
    check_hint("lang_guess", request.get("lang_guess"), allow_callable=True)
    for key in BUDGET_KEYS:
        check_count(key, request.get(key))


def check_request(request: object, where: str) -> None:
    """One request dict of a batch; a refusal names ``where`` (``request 3``) and the key."""
    if not isinstance(request, dict):
        raise TypeError(f"{where} must be a dict, got {type(request).__name__}")
    for key in ("state", "questions"):
        if key not in request:
            raise InvalidRequest(f"{where} is missing required key {key!r}")
    if request["state"] is None:
        raise TypeError(f"{where} 'state' must not be None; pass a string, dict, or list")
    check_state(request["state"], f"{where} state")
    if not isinstance(request["questions"], dict):
        raise TypeError(
            f"{where} 'questions' must be a dict, got {type(request['questions']).__name__}"
        )
    try:
        check_nesting(request["questions"])
        _check_hints(request)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{where} {exc}") from None


def check_requests(requests: object) -> list[dict[str, Any]]:
    """Validate a batch of request dicts, naming the index and key of the first bad one."""
    if isinstance(requests, (str, bytes, Mapping)) or not isinstance(requests, Sequence):
        raise TypeError("requests must be a sequence of request dictionaries")
    for i, request in enumerate(requests):
        check_request(request, f"request {i}")
    return list(requests)


def check_max_loaded(value: object) -> int:
    """``max_loaded`` is a whole number of resident checkpoints, at least one."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidRequest(f"max_loaded must be a positive integer, got {value!r}")
    return value


def check_agent_kwargs(agent_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """Extra Agent arguments; the ones the Router sets itself, and names the Agent does not
    take, are refused (a ``calibration`` here applies to every checkpoint the Router builds;
    ``Router(calibration={name: file})`` wins for its names)."""
    kwargs = dict(name_map("agent_kwargs", agent_kwargs))
    reserved = sorted(_RESERVED_AGENT_KWARGS & set(kwargs))
    if reserved:
        raise InvalidRequest(
            f"Router sets {', '.join(map(repr, reserved))} itself; pass them to Router(...) "
            "instead of in agent_kwargs"
        )
    if kwargs:
        from inspect import signature

        from ..runtime import Agent  # NumPy only: the Agent builds torch when it loads

        accepted = sorted(set(signature(Agent).parameters) - _RESERVED_AGENT_KWARGS)
        unknown = sorted(set(kwargs) - set(accepted))
        if unknown:
            raise InvalidRequest(
                f"Agent accepts none of {', '.join(map(repr, unknown))}; it accepts "
                f"{', '.join(accepted)}"
            )
    return kwargs


def mode_argument(request: Request) -> dict[str, Any]:
    """``mode=`` for a runtime's ``answer``, only when a call asked for one (any runtime takes {}).

    Checked here, before any hook fires (``Request.choice_mode``)."""
    mode = request.choice_mode()
    return {} if mode is None else {"mode": mode}


def answer_single(ctx: PredictContext, lang: str | None, request: Request) -> Result:
    """One routed request's answer from its runtime: ``answer`` (with the call's choice mode),
    or the long-document scan ``answer_long`` for a ``scan`` request."""
    runtime: RuntimeProtocol = ctx.agent
    if request.scan:
        return runtime.answer_long(
            ctx.states[0],
            ctx.questions,
            lang=lang,
            min_confidence=request.min_confidence,
            defaults=False,
            window=request.window,
            stride=request.stride,
            aggregate=request.aggregate,
            batch_size=request.batch_size,
        )
    return runtime.answer(
        ctx.states,
        ctx.questions,
        lang=lang,
        min_confidence=request.min_confidence,
        defaults=False,
        max_len=ctx.max_len,
        head_max_len=ctx.head_max_len,
        **mode_argument(request),
    )[0]


def answer_shared(pending: list[PredictContext], routed: Routed, call: Request) -> None:
    """Contexts sharing runtime, questions and budgets answered in one ``answer`` call."""
    groups: dict[tuple[int, str, int | None, int | None], list[PredictContext]] = {}
    for ctx in pending:
        key = (id(ctx.agent), repr(ctx.questions), ctx.max_len, ctx.head_max_len)
        groups.setdefault(key, []).append(ctx)
    for members in groups.values():
        first = members[0]
        answers = first.agent.answer(
            [c.states[0] for c in members],
            first.questions,
            lang=[routed.langs[c] for c in members],
            max_len=first.max_len,
            head_max_len=first.head_max_len,
            batch_size=call.batch_size,
            min_confidence=routed.min_confidence,
            defaults=False,
            **mode_argument(call),
        )
        routed.group_sizes.append(len(members))
        if len(answers) != len(members):
            raise RuntimeError(
                f"internal error: {type(first.agent).__name__}.answer returned "
                f"{len(answers)} results for {len(members)} states"
            )
        for ctx, result in zip(members, answers, strict=True):
            ctx.results = [result]
            routed.answered.add(ctx)


@dataclass(eq=False)
class Routed:
    """What one Router call remembers per context: the route-time decision and language, and
    which contexts a runtime answered (its lifecycle gated them already)."""

    min_confidence: object = None
    decisions: dict[PredictContext, Any] = field(default_factory=dict)  # on_route hooks may swap
    langs: dict[PredictContext, str | None] = field(default_factory=dict)
    answered: set[PredictContext] = field(default_factory=set)
    group_sizes: list[int] = field(default_factory=list)  # states per shared answer call

    def record(self, ctx: PredictContext, decision: object, lang: object) -> None:
        """Remember a context's decision and the language its request was read in."""
        self.decisions[ctx] = decision
        self.langs[ctx] = detected_language(lang, decision)

    def finalize(self, ctx: PredictContext) -> None:
        """Before on_predict_end: the routing record, and the gate for results a start hook
        gave (a runtime's own post-steps gated the rest)."""
        finish_results(
            ctx.results,
            min_confidence=None if ctx in self.answered else self.min_confidence,
            routing=self.decisions.get(ctx),
        )
