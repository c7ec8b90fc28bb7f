"""Schema decisions as plain values: the published runtime's ``decide`` (``laya.structured``).

``decide(runner, state, Schema)`` asks a schema's questions (or a ``questions=`` dict) and
returns plain values: an instance of a model class, or a dict for a JSON schema or questions, a
field under its ``min_confidence`` being ``None``; with ``return_details=True`` a
:class:`DecisionResult` holding the values with every field's confidence and probabilities. It
runs on the same plans and projection as laya's own :func:`~laya.typed.decisions.decision`,
which returns a :class:`~laya.typed.decisions.Decision` instead (docs/decide.md,
docs/migrating.md). A runner class (Agent, ONNXAgent, Router, RemoteRouter) takes these four
functions as its methods (``decide = values.decide`` in its body), the runner being their first
parameter: composed, not inherited (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from ..engine.gate import CERTIFIED
from ..engine.questions import QuestionId, parse_question
from ..engine.result import Result
from ..errors import InvalidRequest, InvalidSchema
from ..request import CONTROL_KEYS
from .decisions import (
    BatchRunner,
    Decision,
    FieldDecision,
    RoutingRunner,
    Runner,
    project,
    split_min_confidence,
)
from .plans import FieldPlan, Option, Plan, plan_for

__all__ = [
    "DecisionResult",
    "SchemaError",
    "answer_to_pydantic",
    "answers_to_json",
    "decide",
    "decide_batch",
    "plan_from_json_schema",
    "questions_from_json_schema",
    "questions_from_pydantic",
]

SchemaError = InvalidSchema  # the published runtime's name (a ValueError there and here)


@dataclass
class DecisionResult:
    """A decision with its details: ``values`` per field (None where it abstained), each
    field's ``confidence`` and ``answer_confidence``, its ``probabilities`` (a yes/no field as
    ``{"false", "true"}``), the raw ``answers``, and the result's ``usage`` and ``routing``;
    ``automate`` per field with a certified calibration file (docs/calibration.md)."""

    values: dict[str, Any]
    confidence: dict[str, float]
    probabilities: dict[str, dict[str, Any]]
    answers: dict[QuestionId, Any]
    usage: dict[str, object] | None = None
    routing: dict[str, object] | None = None
    answer_confidence: dict[str, float | None] = field(default_factory=dict)
    automate: dict[str, bool] = field(default_factory=dict)


def decide(
    runner: object,
    state: object,
    schema: object = None,
    *,
    questions: dict[str, Any] | None = None,
    return_details: bool = False,
    min_confidence: object = None,
    **predict_kwargs: Any,
) -> Any:
    """Decide ``schema`` (or ``questions``) about one state with ``runner`` (an Agent, an
    ONNXAgent or a Router): ``decide_batch(runner, [state], ...)[0]``."""
    return decide_batch(
        runner,
        [state],
        schema,
        questions=questions,
        return_details=return_details,
        min_confidence=min_confidence,
        **predict_kwargs,
    )[0]


def decide_batch(
    runner: object,
    states: Sequence[object],
    schema: object = None,
    *,
    questions: dict[str, Any] | None = None,
    return_details: bool = False,
    min_confidence: object = None,
    **predict_kwargs: Any,
) -> list[Any]:
    """Decide ``schema`` (or ``questions``) about every state in one batched prediction.

    Exactly one of ``schema`` and ``questions``. ``min_confidence``: a number, a bucket map, or
    (laya's) field names too; a field under it is None. Other keyword arguments go to the
    runner's prediction (a Router's ``model``, ``lang``... onto every request).
    """
    if (schema is None) == (questions is None):
        raise InvalidRequest("decide takes exactly one of schema= and questions=; pass one")
    if isinstance(states, (str, bytes, Mapping)) or not isinstance(states, Sequence):
        raise TypeError("decide_batch expects a list of states; pass a single state to decide()")
    plan = plan_for(schema) if schema is not None else _questions_plan(questions)
    gate, by_field = split_min_confidence(plan, min_confidence)
    results = _predict(runner, list(states), plan.questions, gate, predict_kwargs)
    certified = gate == CERTIFIED
    decisions = [project(plan, r, by_field, 0.5, certified=certified) for r in results]
    if return_details:
        return [decision_result(plan, d) for d in decisions]
    if schema is None or isinstance(schema, Mapping):
        return [_values(d) for d in decisions]
    return [_instance(plan, _values(d)) for d in decisions]


def _predict(
    runner: object,
    states: list[object],
    questions: dict[str, Any],
    gate: object,
    kwargs: dict[str, Any],
) -> list[Result]:
    """One result per state from the runner: laya's (a :class:`Runner`), a router of someone
    else's (a :class:`RoutingRunner`: one request per state) or any ``predict_batch``."""
    if gate is not None:
        kwargs = {**kwargs, "min_confidence": gate}
    if isinstance(runner, Runner):
        return runner.predict_states(states, questions, **kwargs)
    if isinstance(runner, RoutingRunner):
        per_request = {k: kwargs.pop(k) for k in CONTROL_KEYS if k in kwargs}
        requests = [{"state": s, "questions": questions, **per_request} for s in states]
        return list(runner.predict_batch(requests, **kwargs))
    if isinstance(runner, BatchRunner):
        return list(runner.predict_batch(states, questions, **kwargs))
    raise TypeError(
        f"{type(runner).__name__} has no predict_batch; decide needs an Agent, an ONNXAgent, "
        "a Router, or a runner with predict_batch"
    )


def _questions_plan(questions: object) -> Plan:
    """A plan for raw questions: a choice is its label, a score its most likely level index, a
    noul P(true) >= 0.5; each question is checked as a prediction would check it."""
    if not isinstance(questions, dict) or not questions:
        raise InvalidRequest("questions= must be a non-empty dict of question id -> definition")
    fields = []
    for qid, definition in questions.items():
        q = parse_question(qid, definition)
        options: tuple[Option, ...] = ()
        if q.type == "choice":
            options = tuple(Option(key, key) for key in q.keys)
        elif q.type == "score":
            options = tuple(Option(str(i), i) for i in range(len(q.options)))
        fields.append(FieldPlan(qid, q.type, q.instructions, options))
    return Plan("questions", tuple(fields), dict(questions), dict)


def _values(decision: Decision[Any]) -> dict[str, Any]:
    """Each field's value, None where it fell under its threshold."""
    return {name: None if f.abstained else f.value for name, f in decision.fields.items()}


def _instance(plan: Plan, values: dict[str, Any]) -> Any:
    """The schema's instance (a required pydantic field that abstained fails its validation:
    declare it ``Optional`` to receive None)."""
    return plan.build(values)


def decision_result(plan: Plan, decision: Decision[Any]) -> DecisionResult:
    """``decision`` (of ``plan``) as the published :class:`DecisionResult` (the MCP tool
    ``laya_decide`` sends its fields)."""
    answers = decision.raw.get("answers") or {}
    plans = {f.name: f for f in plan.fields}
    return DecisionResult(
        values=_values(decision),
        confidence={n: _least(plans[n], answers, "confidence") for n in decision.fields},
        probabilities={n: _probabilities(plans[n], f) for n, f in decision.fields.items()},
        answers=dict(answers),
        usage=dict(decision.raw.get("usage") or {}) or None,
        routing=dict(routing) if (routing := decision.raw.get("routing")) else None,
        answer_confidence={
            n: _least(plans[n], answers, "answer_confidence") for n in decision.fields
        },
        automate={n: f.automate for n, f in decision.fields.items() if f.automate is not None},
    )


def _least(f: FieldPlan, answers: Mapping[Any, Any], key: str) -> Any:
    """A field's ``key`` (the least of its questions' for a multi-label field), or None."""
    values = [answers[qid].get(key) for qid in f.question_ids()]
    numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return min(numbers) if len(numbers) == len(values) else None


def _probabilities(f: FieldPlan, decided: FieldDecision) -> dict[str, float]:
    """A field's probabilities keyed by option label (a yes/no field: ``false`` / ``true``)."""
    if f.kind == "noul":
        return {"false": decided.probabilities[False], "true": decided.probabilities[True]}
    return {str(o.label): decided.probabilities[o.value] for o in f.options}


# --------------------------------------------------------------------------- helpers


def plan_from_json_schema(schema: Mapping[str, object]) -> list[FieldPlan]:
    """The fields a JSON schema plans: one :class:`~laya.typed.plans.FieldPlan` each."""
    _require_mapping(schema)
    return list(plan_for(schema).fields)


def questions_from_json_schema(schema: Mapping[str, object]) -> dict[str, dict[str, object]]:
    """The questions laya asks for a JSON schema."""
    _require_mapping(schema)
    return dict(plan_for(schema).questions)


def questions_from_pydantic(model: object) -> dict[str, dict[str, object]]:
    """The questions laya asks for a pydantic model class (or any class :func:`plan_for` takes)."""
    return dict(plan_for(model).questions)


def answers_to_json(answers: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A result's ``answers`` as the JSON schema's values (plain, no threshold applied)."""
    _require_mapping(schema)
    return _values(project(plan_for(schema), _answers_only(answers), {}, 0.5))


def answer_to_pydantic(model: Any, answers: dict[str, Any]) -> Any:
    """A result's ``answers`` as an instance of ``model`` (a pydantic model class)."""
    plan = plan_for(model)
    return _instance(plan, _values(project(plan, _answers_only(answers), {}, 0.5)))


def _answers_only(answers: dict[str, Any]) -> Result:
    """A result holding only ``answers``: all that the projection reads of one."""
    return cast("Result", {"answers": answers})


def _require_mapping(schema: object) -> None:
    if not isinstance(schema, Mapping):
        raise InvalidSchema(f"a JSON schema is a dict, got {type(schema).__name__}")
