"""The wire format of ``/v1/systemone`` and ``/v1/systemone/batch`` as pydantic v2 models.

The request models say what a body may hold (their JSON schema is the OpenAPI request body);
:func:`parse_single` / :func:`parse_batch` validate a decoded body against them, then apply the
rules that belong to laya (the question checker, the empty-input and nesting rules, and the
caps), and return what to hand the Router (whose rows the work budget counts, ``laya.engine.work``). Every refusal is an
:class:`~laya.errors.InvalidRequest` (or one of the wire's own, :mod:`laya.server.statuses`)
naming the field; unknown top-level keys are ignored, as Jev clients send some.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic.json_schema import SkipJsonSchema, WithJsonSchema
from pydantic_core import ErrorDetails, PydanticCustomError

from ..engine.gate import MinConfidence, check_min_confidence
from ..engine.questions import Question as ParsedQuestion
from ..engine.questions import parse_questions, with_abstain
from ..engine.states import check_state
from ..errors import InvalidRequest
from ..request import CONTROL_KEYS, FIELDS
from .limits import json_type
from .settings import Settings
from .statuses import MalformedBody, TooLarge

__all__ = [
    "BatchRequest",
    "MAX_BATCH_STATES",
    "MAX_CHOICE_OPTIONS",
    "MAX_INSTRUCTION_CHARS",
    "MAX_JEV_OPTIONS",
    "MAX_MANY_OPTIONS",
    "MAX_MANY_TOTAL",
    "MAX_OPTION_CHARS",
    "MAX_QUESTIONS",
    "MAX_SCORE_LEVELS",
    "MAX_STATE_CHARS",
    "MAX_TOTAL_OPTIONS",
    "SingleRequest",
    "SystemOneBatchBody",
    "SystemOneBody",
    "parse_batch",
    "parse_single",
    "with_instructions",
]

ChoiceMode = dict[str, bool | int]  # the request's tournament (a group size or true), shortlist
MAX_QUESTIONS = 64
MAX_STATE_CHARS = 50_000
MAX_BATCH_STATES = 64
MAX_CHOICE_OPTIONS = 100  # a choice's cap with "tournament": false (one pass reads it whole)
MAX_JEV_OPTIONS = 255  # Jev's documented cap: more than fit one pass are answered by tournament
MAX_SCORE_LEVELS = 32
MAX_TOTAL_OPTIONS = 512
MAX_MANY_OPTIONS = 1000  # a choice's cap when the request asks for a tournament or a shortlist
MAX_MANY_TOTAL = 2048  # and the options of all its questions together
MAX_INSTRUCTION_CHARS = 32_768  # a question's instructions (4 x the largest head budget, 8192)
MAX_OPTION_CHARS = 4_096  # one option as the model reads it: its label and description


# --------------------------------------------------------------------------- field rules


def _refuse(message: str, status: int = 422, sep: str | None = " ") -> PydanticCustomError:
    """A refusal pydantic reports at the field's location; ``status`` travels in its context.

    ``sep`` joins the location and ``message``; None when ``message`` already names its field.
    """
    context = {"message": message, "status": status, "sep": sep}
    return PydanticCustomError("laya", "{message}", context)


def _string(value: object) -> object:
    if value is not None and not isinstance(value, str):
        raise _refuse(f"must be a string, got {json_type(value)}")
    return value


def _positive_int(value: object) -> object:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise _refuse(f"must be a positive integer, got {value!r}")
    return value


def _boolean(value: object) -> object:
    if value is not None and not isinstance(value, bool):
        raise _refuse(f"must be true or false, got {value!r}")
    return value


def _group(value: object) -> object:
    if value is None or isinstance(value, bool):
        return value
    if not isinstance(value, int) or value < 2:
        raise _refuse(f"must be true, false or a group size of at least 2, got {value!r}")
    return value


def _min_confidence(value: object) -> object:
    try:
        return check_min_confidence(value)
    except (TypeError, ValueError) as exc:
        raise _refuse(str(exc), sep=None) from None  # laya.engine.gate's message names the field


def _state(value: object) -> object:
    if value is None:
        raise _refuse("must not be null; send a string, object or array", 400)
    return value


def _refused(value: object) -> object:
    if value is not None:
        raise _refuse("hooks run in the server process and cannot be sent", sep=": ")
    return value


def _question(value: object) -> object:
    if not isinstance(value, dict):
        raise _refuse(f"definition must be an object, got {json_type(value)}")
    if "type" in value and not isinstance(value["type"], str):
        raise _refuse(f"type must be a string, got {json_type(value['type'])}")
    return value


def _questions(value: object) -> object:
    if not isinstance(value, dict):
        raise _refuse(f"must be a JSON object, got {json_type(value)}", 400)
    if not value:
        raise _refuse("must hold at least one question", 400)
    if len(value) > MAX_QUESTIONS:
        raise _refuse(f"holds {len(value)} questions; at most {MAX_QUESTIONS}", 413)
    return value


def _states(value: object) -> object:
    if not isinstance(value, list) or not value:
        raise _refuse("must be a non-empty array of states", 400)
    if len(value) > MAX_BATCH_STATES:
        raise _refuse(f"holds {len(value)} states; at most {MAX_BATCH_STATES}", 413)
    return value


def _refuse_diagnostics(value: object) -> object:
    if value is not None:
        raise _refuse("is an in-process option and is not accepted over HTTP")
    return value


def _published(name: str) -> WithJsonSchema:
    """The JSON schema :data:`laya.request.FIELDS` gives a nullable field ``name``: its value's
    branches, then null (null: the default)."""
    nullable = FIELDS[name].json_schema()["anyOf"]
    if not isinstance(nullable, list):
        raise TypeError(f"request field {name!r} is not nullable")
    value, null = nullable
    branches = value["anyOf"] if set(value) == {"anyOf"} else [value]
    return WithJsonSchema({"anyOf": [*branches, null]})


def _about(name: str, more: str = "") -> FieldInfo:
    """The description :data:`laya.request.FIELDS` gives field ``name`` (and ``more``)."""
    described: FieldInfo = Field(description=FIELDS[name].description + more)
    return described


Text = Annotated[str | None, BeforeValidator(_string), _published("model")]
Budget = Annotated[int | None, BeforeValidator(_positive_int), _published("max_len")]
Group = Annotated[bool | int | None, BeforeValidator(_group), _published("tournament")]
Refused = SkipJsonSchema[Annotated[object, BeforeValidator(_refused)]]  # present, not null: 422
Threshold = Annotated[
    float | dict[str, float] | Literal["certified"] | None,
    BeforeValidator(_min_confidence),
    _published("min_confidence"),
]
State = Annotated[
    object,
    BeforeValidator(_state),
    WithJsonSchema({"not": {"type": "null"}}),
    _about("state"),
]


class Question(BaseModel):
    """One question; its content rules are laya's question checker's (laya.engine.questions)."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(json_schema_extra={"enum": ["choice", "score", "noul"]})
    instructions: object = Field(
        None,
        description="the question; absent or null: its id, '_' and '-' read as spaces",
        json_schema_extra={"type": ["string", "object", "array", "number", "null"]},
    )
    criteria: object = Field(
        None,
        description="choice: {label: description} or [label]; score: [level, ...]; "
        "noul: {true?, false?}",
        json_schema_extra={"type": ["object", "array"]},
    )
    abstain: object = Field(
        False,
        description='choice only: also score "none of these"; its probability is the answer\'s '
        "abstain, and choice is null when it wins",
        json_schema_extra={"type": "boolean"},
    )


QuestionSet = Annotated[
    dict[str, Annotated[Question, BeforeValidator(_question)]],
    BeforeValidator(_questions),
    Field(json_schema_extra={"minProperties": 1, "maxProperties": MAX_QUESTIONS}),
]


_SERVER_DEFAULT = (
    " (a choice that overflows one pass is then refused); null: the server's default, else a "
    "tournament only for such a choice"
)


class Controls(BaseModel):
    """What both decision routes take besides the state(s) and the questions."""

    model_config = ConfigDict(extra="ignore")

    model: Annotated[Text, _about("model")] = None
    task: Annotated[Text, _about("task")] = None
    lang: Annotated[Text, _about("lang")] = None
    lang_guess: Annotated[Text, _about("lang_guess")] = None
    max_len: Annotated[Budget, _about("max_len")] = None
    head_max_len: Annotated[Budget, _about("head_max_len")] = None
    min_confidence: Annotated[Threshold, _about("min_confidence")] = None
    tournament: Annotated[Group, _about("tournament", _SERVER_DEFAULT)] = None
    shortlist: Annotated[Budget, _about("shortlist")] = None
    hooks: Refused = None
    on_predict_start: Refused = None
    on_predict_end: Refused = None
    hooks_raise: Refused = None
    hooks_timeout: Refused = None


class SystemOneBody(Controls):
    """``POST /v1/systemone``: one state, many questions."""

    state: State
    questions: QuestionSet


class SystemOneBatchBody(Controls):
    """``POST /v1/systemone/batch``: up to 64 states, one shared question set."""

    states: Annotated[
        list[State], BeforeValidator(_states), Field(min_length=1, max_length=MAX_BATCH_STATES)
    ]
    questions: QuestionSet
    batch_size: Annotated[Budget, _about("batch_size")] = None
    sort_by_length: Annotated[bool | None, BeforeValidator(_boolean)] = None
    diagnostics: SkipJsonSchema[Annotated[object, BeforeValidator(_refuse_diagnostics)]] = None


# --------------------------------------------------------------------------- parsed requests


@dataclass(frozen=True)
class SingleRequest:
    """A validated ``/v1/systemone`` body: what to pass to ``Router.predict``.

    ``choice_mode``: the tournament or shortlist the request (or the server's default) asks
    for; ``overflow``: without one, whether a choice of more options than one pass reads is
    answered by tournament (``laya.engine.strategies.tournament.OVERFLOW``) rather than refused;
    ``most_options``: the options of its largest choice (a server's fair turns read it).
    """

    state: object
    questions: dict[str, Any]
    controls: dict[str, Any]
    min_confidence: MinConfidence | None = None
    choice_mode: ChoiceMode = field(default_factory=dict)
    overflow: bool = True
    most_options: int = 0


@dataclass(frozen=True)
class BatchRequest:
    """A validated ``/v1/systemone/batch`` body: what to pass to ``Router.predict_batch``."""

    states: list[object]
    questions: dict[str, Any]
    controls: dict[str, Any]
    min_confidence: MinConfidence | None = None
    batch_size: int | None = None
    sort_by_length: bool = False
    choice_mode: ChoiceMode = field(default_factory=dict)
    overflow: bool = True


def parse_single(body: dict[str, Any], settings: Settings | None = None) -> SingleRequest:
    """Validate a ``/v1/systemone`` body; the refusal names the first bad field."""
    settings = settings or Settings()
    checked = _validate(SystemOneBody, body, ("state", "questions"))
    questions = _asked(with_instructions(body["questions"]), settings)
    _check_states([body["state"]], ["state"])
    controls = _checked_controls(checked, settings)
    mode, overflow = _choice_mode(checked, settings)
    most = _check_questions(questions, mode, overflow)
    minimum = checked.min_confidence
    return SingleRequest(body["state"], questions, controls, minimum, mode, overflow, most)


def parse_batch(body: dict[str, Any], settings: Settings | None = None) -> BatchRequest:
    """Validate a ``/v1/systemone/batch`` body; the refusal names the first bad field."""
    settings = settings or Settings()
    checked = _validate(SystemOneBatchBody, body, ("states", "questions"))
    states, questions = body["states"], _asked(with_instructions(body["questions"]), settings)
    _check_states(states, [f"states[{i}]" for i in range(len(states))])
    controls = _checked_controls(checked, settings)
    mode, overflow = _choice_mode(checked, settings)
    _check_questions(questions, mode, overflow)
    return BatchRequest(
        states,
        questions,
        controls,
        checked.min_confidence,
        checked.batch_size,
        bool(checked.sort_by_length),
        mode,
        overflow,
    )


def with_instructions(questions: dict[str, Any]) -> dict[str, Any]:
    """Jev makes ``instructions`` optional: a question without them (or with null) is asked with
    its id, ``_`` and ``-`` read as spaces (``refund_requested`` asks "refund requested")."""
    if all(q.get("instructions") is not None for q in questions.values()):
        return questions
    return {
        qid: q if q.get("instructions") is not None else {**q, "instructions": _words(qid)}
        for qid, q in questions.items()
    }


def _words(qid: str) -> str:
    return " ".join(qid.replace("_", " ").replace("-", " ").split()) or qid


Body = TypeVar("Body", bound=BaseModel)


def _validate(model: type[Body], body: dict[str, Any], required: tuple[str, ...]) -> Body:
    """``body`` through ``model``; the first error as the refusal its field calls for."""
    missing = [key for key in required if key not in body]
    if missing:
        raise MalformedBody(f"request body is missing required field(s): {', '.join(missing)}")
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise _refusal(exc.errors(include_url=False)[0]) from None


def _refusal(error: ErrorDetails) -> InvalidRequest:
    """One pydantic error as a one-line refusal naming its field."""
    loc = [str(part) for part in error["loc"]]
    if loc[:1] == ["questions"] and len(loc) > 1:
        where = f"question {loc[1]!r}:" + ("".join(f" {p}" for p in loc[2:3]) or "")
    elif loc[:1] == ["states"] and len(loc) > 1:
        where = f"states[{loc[1]}]"
    else:
        where = ".".join(loc)
    if error["type"] == "laya":
        context = error["ctx"]
        message, status, sep = context["message"], context["status"], context["sep"]
    else:
        message, status, sep = error["msg"][:1].lower() + error["msg"][1:], 422, " "
    text = message if sep is None else f"{where}{sep}{message}".strip()
    if status == 400:
        return MalformedBody(text)
    if status == 413:
        return TooLarge(text)
    return InvalidRequest(text)


def _check_states(states: list[object], names: list[str]) -> None:
    """Each state within the nesting limit and not empty (the package's rules, checked first: a
    body that did not come through ``decode_body`` may be nested too deep to serialise), then
    within the size cap."""
    import json

    for state, name in zip(states, names, strict=True):
        check_state(state, name)
        size = len(state) if isinstance(state, str) else len(json.dumps(state, ensure_ascii=False))
        if size > MAX_STATE_CHARS:
            raise TooLarge(f"{name} is {size} characters; at most {MAX_STATE_CHARS}")


def _checked_controls(checked: Controls, settings: Settings) -> dict[str, Any]:
    """The per-request controls that are set (null = absent); budgets within the server limit."""
    controls = {key: getattr(checked, key) for key in CONTROL_KEYS}
    for key in ("max_len", "head_max_len"):
        value = controls[key]
        if value is not None and value > settings.max_token_budget:
            raise InvalidRequest(
                f"{key} exceeds server limit ({value} > {settings.max_token_budget})"
            )
    return {key: value for key, value in controls.items() if value is not None}


def _asked(questions: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """The request's questions, with "none of these" on its choices under ``--abstain``."""
    return with_abstain(questions) if settings.abstain else questions


def _choice_mode(checked: Controls, settings: Settings) -> tuple[ChoiceMode, bool]:
    """``tournament`` / ``shortlist`` for the Router (the server's tournament default when
    absent), and whether, without them, a choice that overflows one pass is answered by
    tournament: unless the request says ``"tournament": false``."""
    tournament = settings.default_tournament if checked.tournament is None else checked.tournament
    asked = {"tournament": tournament or None, "shortlist": checked.shortlist}
    mode: ChoiceMode = {key: value for key, value in asked.items() if value is not None}
    return mode, not mode and checked.tournament is not False


def _check_questions(questions: dict[str, Any], mode: ChoiceMode, overflow: bool) -> int:
    """The question checker's rules (422), then the text and option caps (413); the options of
    the largest choice.

    Every text the model would read is bounded before any tokenizer sees it, each in time linear
    in its length: a question's instructions by :data:`MAX_INSTRUCTION_CHARS`, each option (its
    label and description, as read) by :data:`MAX_OPTION_CHARS`. A choice holds at most
    :data:`MAX_MANY_OPTIONS` options with a tournament or shortlist, Jev's
    :data:`MAX_JEV_OPTIONS` when one that overflows a pass is answered by tournament, and
    :data:`MAX_CHOICE_OPTIONS` with ``"tournament": false``; all questions together
    :data:`MAX_MANY_TOTAL` with a tournament or shortlist, else :data:`MAX_TOTAL_OPTIONS`.
    """
    parsed = parse_questions(questions)
    for question in parsed:
        _check_texts(question)
    choices = MAX_MANY_OPTIONS if mode else MAX_JEV_OPTIONS if overflow else MAX_CHOICE_OPTIONS
    caps = {"choice": ("options", choices), "score": ("levels", MAX_SCORE_LEVELS)}
    total = most = 0
    for question in parsed:
        if question.type == "choice":
            most = max(most, len(question.options))
        if question.type in caps:
            noun, cap = caps[question.type]
            n = len(question.options)
            if n > cap:
                hint = "" if mode or question.type != "choice" else _MANY_HINT
                raise TooLarge(
                    f"question {question.qid!r} has {n} {noun}; a {question.type} takes at most "
                    f"{cap}{hint}"
                )
            total += n
    cap = MAX_MANY_TOTAL if mode else MAX_TOTAL_OPTIONS
    if total > cap:
        raise TooLarge(f"questions hold {total} options in all; at most {cap}")
    return most


def _check_texts(question: ParsedQuestion) -> None:
    """413 for a question whose instructions or one of whose options is longer than its cap."""
    size = len(question.instructions)
    if size > MAX_INSTRUCTION_CHARS:
        raise TooLarge(
            f"question {question.qid!r}: instructions are {size} characters; at most "
            f"{MAX_INSTRUCTION_CHARS} (the model reads at most head_max_len tokens of them)"
        )
    for slot, text in enumerate(question.options):
        if len(text) > MAX_OPTION_CHARS:
            raise TooLarge(
                f"question {question.qid!r}: option {slot} ({str(question.keys[slot])[:40]!r}) is "
                f"{len(text)} characters with its description; at most {MAX_OPTION_CHARS} (the "
                "model reads at most 48 tokens of an option)"
            )


_MANY_HINT = (
    f" (at most {MAX_MANY_OPTIONS} with tournament or shortlist): send tournament: true or "
    "shortlist: k"
)
