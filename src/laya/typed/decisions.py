"""Typed decisions: ``decision(state, Schema)`` answers a schema's questions and builds a ``Schema``.

One implementation for every runner: :func:`decision` and :func:`decision_batch` take anything
with ``predict_states`` (:class:`DecisionRunner`: the runtimes and the Router; their
``decision`` methods call these). The schema's plan comes from :mod:`laya.typed.plans` (built
once per schema), so ``decision_batch`` over N states costs one ``predict_states`` plus the
projection. The published runtime's ``decide`` (plain values) is :mod:`laya.typed.values`, on
the same plans and projection.

A field abstains when its confidence (the answer's ``answer_confidence``, which the calibration
may remap) is under its threshold: a field-name key of ``min_confidence``, else the gate's
threshold on the answer (the call's ``min_confidence``, or the thresholds of the runtime's
calibration file). With ``min_confidence="certified"`` a field abstains unless every answer it
reads automates (a certified calibration file; docs/calibration.md), and with such a file each
field's ``automate`` says whether it does. An ``Optional`` field that abstains is ``None``; any other
is kept and flagged.
With ``abstain=True`` an ``Optional`` choice field is also asked with "none of these"
(``"abstain": true``, docs/agent.md); when that wins, the field is ``None`` and abstained.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from ..engine.gate import (
    CERTIFIED,
    GATE_BUCKETS,
    MinConfidence,
    check_min_confidence,
    is_fraction,
)
from ..engine.questions import with_abstain
from ..engine.result import Result
from ..errors import InvalidRequest
from .plans import FieldPlan, Plan, plan_for

__all__ = [
    "BatchRunner",
    "Decision",
    "DecisionRunner",
    "FieldDecision",
    "RoutingRunner",
    "Runner",
    "decision",
    "decision_batch",
    "project",
    "split_min_confidence",
]

T = TypeVar("T")


@dataclass(frozen=True)
class FieldDecision:
    """One field of a decision.

    ``probability`` is the model's probability of ``value`` (a multi-label field: of its least
    sure option); ``confidence`` is what the gate reads (``answer_confidence``); ``probabilities``
    maps every option's value to its probability (multi-label: P(included)); ``automate``, with
    a certified calibration file, whether every answer of the field automates (else None).
    """

    value: Any
    probability: float
    confidence: float
    abstained: bool
    threshold: float | None
    probabilities: dict[object, float]
    automate: bool | None = None


@dataclass(frozen=True)
class Decision(Generic[T]):
    """A validated instance of the schema, a record per field, and the raw result."""

    value: T
    fields: dict[str, FieldDecision]
    raw: Result

    @property
    def abstained(self) -> bool:
        """Whether any field fell under its threshold."""
        return any(f.abstained for f in self.fields.values())

    @property
    def abstentions(self) -> list[str]:
        """The names of the fields that fell under their threshold."""
        return [name for name, f in self.fields.items() if f.abstained]


@runtime_checkable
class Runner(Protocol):
    """What a caller needs of a runtime or a Router when either will do: one result per state
    for one question set, in input order (their ``predict_states``)."""

    def predict_states(
        self, states: Sequence[Any], questions: dict[str, Any], **options: Any
    ) -> list[Result]: ...


DecisionRunner = Runner  # the name laya.typed has always published for it


@runtime_checkable
class BatchRunner(Protocol):
    """A runner of someone else's with ``predict_batch(states, questions, **options)`` only."""

    def predict_batch(
        self, states: Sequence[Any], questions: dict[str, Any], /, **options: Any
    ) -> list[Result]: ...


@runtime_checkable
class RoutingRunner(Protocol):
    """A router of someone else's: it routes, and its ``predict_batch`` takes request dicts
    (``{state, questions, model?, ...}``, laya.request.REQUEST_KEYS)."""

    def route(self, state: Any, questions: Any = None, /, **hints: Any) -> Any: ...

    def predict_batch(
        self, requests: Sequence[dict[str, Any]], /, **options: Any
    ) -> list[Result]: ...


def decision(
    runner: DecisionRunner,
    state: object,
    schema: object,
    *,
    min_confidence: object = None,
    label_threshold: float = 0.5,
    abstain: bool = False,
    **options: Any,
) -> Decision[Any]:
    """Decide ``schema`` about one state: ``decision_batch(runner, [state], ...)[0]``."""
    return decision_batch(
        runner,
        [state],
        schema,
        min_confidence=min_confidence,
        label_threshold=label_threshold,
        abstain=abstain,
        **options,
    )[0]


def decision_batch(
    runner: DecisionRunner,
    states: Sequence[object],
    schema: object,
    *,
    min_confidence: object = None,
    label_threshold: float = 0.5,
    abstain: bool = False,
    **options: Any,
) -> list[Decision[Any]]:
    """Decide ``schema`` about every state in one batched prediction, in input order.

    ``schema``: a pydantic model class, dataclass, TypedDict or JSON-schema dict.
    ``min_confidence``: a number, or a map whose keys are gate buckets (``choice:3-5``,
    ``default``) and/or field names. ``label_threshold``: P(true) at which a multi-label
    option is included. ``abstain``: ask ``Optional`` choice fields with "none of these".
    Other keyword arguments go to the runner's ``predict_states``.
    """
    plan = plan_for(schema)
    if isinstance(states, (str, bytes, Mapping)) or not isinstance(states, Sequence):
        raise TypeError(
            "decision_batch expects a list of states; pass a single state to decision()"
        )
    gate, by_field = split_min_confidence(plan, min_confidence)
    _check_fraction("label_threshold", label_threshold)
    if not isinstance(abstain, bool):
        raise InvalidRequest(f"abstain must be True or False, got {abstain!r}")
    questions = plan.questions
    if abstain:
        questions = with_abstain(questions, {f.name for f in plan.fields if f.optional})
    results = runner.predict_states(list(states), questions, min_confidence=gate, **options)
    certified = gate == CERTIFIED
    return [
        project(plan, result, by_field, label_threshold, certified=certified) for result in results
    ]


def split_min_confidence(
    plan: Plan, value: object
) -> tuple[MinConfidence | None, dict[str, float]]:
    """The gate's part of ``min_confidence`` and the per-field thresholds, both checked."""
    if not isinstance(value, Mapping) or not value:
        return check_min_confidence(value), {}
    names = {f.name for f in plan.fields}
    unknown = sorted(str(k) for k in value if k not in names and k not in GATE_BUCKETS)
    if unknown:
        raise InvalidRequest(
            f"min_confidence key {unknown[0]!r} is neither a field of {plan.name} "
            f"({', '.join(sorted(names))}) nor a bucket like 'choice:3-5' or 'default'"
        )
    by_field = {k: v for k, v in value.items() if k in names}
    for name, threshold in by_field.items():
        _check_fraction(f"min_confidence[{name!r}]", threshold)
    gate = {k: v for k, v in value.items() if k not in names}
    return check_min_confidence(gate or None), by_field


def _check_fraction(name: str, value: object) -> None:
    if not is_fraction(value):
        raise InvalidRequest(f"{name} must be a number in [0, 1], got {value!r}")


# --------------------------------------------------------------------------- projection


def project(
    plan: Plan,
    result: Result,
    by_field: Mapping[str, float],
    label_threshold: float,
    *,
    certified: bool = False,
) -> Decision[Any]:
    """A result's answers as the schema's instance plus one record per field (``certified``: the
    call gated with ``min_confidence="certified"``)."""
    answers = result.get("answers") or {}
    fields = {
        f.name: _field_decision(f, answers, by_field.get(f.name), label_threshold, certified)
        for f in plan.fields
    }
    value = plan.build({name: fd.value for name, fd in fields.items()})
    return Decision(value, fields, result)


def _field_decision(
    f: FieldPlan,
    answers: Mapping[Any, Any],
    threshold: float | None,
    label_threshold: float,
    certified: bool = False,
) -> FieldDecision:
    ids = f.question_ids()
    missing = [qid for qid in ids if not isinstance(answers.get(qid), dict)]
    if missing:
        raise ValueError(
            f"the result has no answer for question {missing[0]!r} of field {f.name!r} "
            "(did a hook remove it?)"
        )
    parts = [answers[qid] for qid in ids]
    value, probability, probabilities = _VALUE[f.kind](f, parts, label_threshold)
    confidence = min(_confidence(a) for a in parts)
    if threshold is None:
        gated = [a["abstention_threshold"] for a in parts if "abstention_threshold" in a]
        threshold = max(gated) if gated else None
    abstained = (threshold is not None and confidence < threshold) or value is None
    automate = _automate(parts)
    if certified:
        abstained = abstained or automate is not True
    if abstained and f.optional:
        value = None
    return FieldDecision(
        value, probability, confidence, abstained, threshold, probabilities, automate
    )


def _automate(parts: list[dict[str, Any]]) -> bool | None:
    """Whether every answer of a field automates (None when one does not say); a server's
    reply names it ``x_automate`` (a RemoteRouter's answers)."""
    said = [a.get("automate", a.get("x_automate")) for a in parts]
    if not all(isinstance(a, bool) for a in said):
        return None
    return all(said)


def _confidence(answer: dict[str, Any]) -> float:
    for key in ("answer_confidence", "confidence"):
        value = answer.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return 1.0


def _choice(
    f: FieldPlan, parts: list[dict[str, Any]], _: float
) -> tuple[object, float, dict[object, float]]:
    answer = parts[0]
    probabilities = {o.value: float(answer["probabilities"][o.label]) for o in f.options}
    if answer["choice"] is None:  # "none of these" won (asked only of Optional fields)
        return None, float(answer["abstain"]), probabilities
    chosen = next(o for o in f.options if o.label == answer["choice"])
    return chosen.value, probabilities[chosen.value], probabilities


def _score(
    f: FieldPlan, parts: list[dict[str, Any]], _: float
) -> tuple[object, float, dict[object, float]]:
    p = [float(parts[0]["probabilities"][str(i)]) for i in range(len(f.options))]
    best = max(range(len(p)), key=p.__getitem__)
    return f.options[best].value, p[best], {o.value: x for o, x in zip(f.options, p)}


def _noul(
    _f: FieldPlan, parts: list[dict[str, Any]], __: float
) -> tuple[object, float, dict[object, float]]:
    p = float(parts[0]["noul"])
    value = p >= 0.5
    return value, p if value else 1.0 - p, {False: 1.0 - p, True: p}


def _labels(
    f: FieldPlan, parts: list[dict[str, Any]], label_threshold: float
) -> tuple[object, float, dict[object, float]]:
    p = {o.value: float(a["noul"]) for o, a in zip(f.options, parts)}
    chosen = [value for value, x in p.items() if x >= label_threshold]
    sure = min(x if x >= label_threshold else 1.0 - x for x in p.values())
    return (f.container or list)(chosen), sure, p


_VALUE = {"choice": _choice, "score": _score, "noul": _noul, "labels": _labels}
