"""What a call returns, typed once: answers, usage and results, and the steps that finish them.

Users get plain dicts (the wire format is these shapes); the TypedDicts below are their one
description, which the type checker reads and the server's OpenAPI document is generated from.
Everything that builds or changes a result lives here: the answer builders decoding calls, usage,
and the post-steps a call runs once, in order, after inference (:func:`finish_results`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Literal, cast

from typing_extensions import NotRequired, TypedDict

from ..lang.detect import Detection  # a Routing field: the server's reply schema reads it
from .questions import Label, QuestionId

if TYPE_CHECKING:
    from ..hooks import PredictContext
    from .automation import Certification
    from .encoding import Head
    from .questions import Question

__all__ = [
    "Action",
    "Answer",
    "CalibrationStamp",
    "ChoiceAnswer",
    "ChoiceFields",
    "LanguageWarning",
    "NoulAnswer",
    "NoulFields",
    "Result",
    "Routing",
    "ScoreAnswer",
    "ScoreFields",
    "Usage",
    "Window",
    "answer_columns",
    "as_plain",
    "empty_result",
    "finish_results",
    "make_result",
    "merge_round_usage",
    "merge_window_usage",
    "reporting_question_cuts",
    "results_of",
    "single_result",
    "state_usage",
]

GateState = Literal["passed", "abstained", "unevaluated"]


class Action(TypedDict):
    """The act head's reading."""

    act_probability: float
    """The probability of the act head's first action."""


class Window(TypedDict):
    """The ``predict_long`` window that decided an answer (token offsets in the whole state)."""

    index: int
    token_start: int
    token_end: int
    count: int
    """How many windows the document was read in."""


class Tournament(TypedDict):
    """How a tournament decided a choice."""

    finalists: list[str]
    """The labels of the last group."""
    rounds: int
    """Rounds of groups, the last one included."""
    option_order_dropped: NotRequired[bool]
    """True when the caller's ``option_order`` could not apply: the groups order the options."""


class Shortlist(TypedDict):
    """How a shortlist narrowed a choice."""

    candidates: list[Label]
    """The labels the model read, nearest the state first."""
    scores: list[float] | None
    """Their cosine similarities to the state (rounded to 4), in the same order."""


class AnswerFields(TypedDict):
    """What every answer carries, and what the ``min_confidence`` gate adds (the published
    runtime's fields: a server reply keeps their names, docs/server.md)."""

    confidence: float
    """choice and score: 1 - the normalised entropy of the probabilities; noul: max(p, 1 - p)."""
    answer_confidence: float
    """The top probability (through the calibration's confidence map, where it has one)."""
    action: Action
    abstention: NotRequired[GateState]
    """With ``min_confidence``: whether the answer passed the gate."""
    abstention_threshold: NotRequired[float]
    """With ``min_confidence``: the threshold the answer was held to."""
    low_confidence: NotRequired[bool]
    """With ``min_confidence``: present (true) when the answer fell below it."""
    window: NotRequired[Window]


class ChoiceFields(AnswerFields):
    """A ``choice`` as the published runtime answers it: the label picked and every label's
    probability."""

    type: Literal["choice"]
    choice: Label | None
    """The label picked; null when "none of these" (``abstain``) won."""
    probabilities: dict[Label, float]
    """Over the caller's labels, summing to 1 (with ``abstain``: renormalised without it)."""


class ScoreFields(AnswerFields):
    """A ``score``: the expected level and the probability of every level."""

    type: Literal["score"]
    score: float
    """The expected level index."""
    legend: dict[str, str]
    probabilities: dict[str, float]


class NoulFields(AnswerFields):
    """A ``noul``: the probability that the statement is true."""

    type: Literal["noul"]
    noul: float
    """P(the statement is true)."""


class ChoiceAnswer(ChoiceFields):
    """A ``choice``, with what laya adds (a server reply prefixes these with ``x_``)."""

    unsure: NotRequired[bool]
    """Present (true) when ``answer_confidence`` is under the checkpoint's
    ``recommended_min_confidence``: an answer to read as unsure, not as a decision."""
    abstain: NotRequired[float]
    """With ``"abstain": true``: the probability of "none of these", scored in the same pass."""
    tournament: NotRequired[Tournament]
    shortlist: NotRequired[Shortlist]
    automate: NotRequired[bool]
    """With a calibration file fitted with ``--risk``: whether the answer reaches its certified
    threshold (among such answers at most ``risk`` are wrong, with probability ``1 - delta``)."""
    prediction_set: NotRequired[list[Label]]
    """With a calibration file fitted with ``--risk``: the labels whose probability reaches the
    split-conformal level, most probable first; it holds the right label with probability at
    least ``1 - risk``."""


class ScoreAnswer(ScoreFields):
    """A ``score``, with laya's ``unsure`` marker and ``automate``."""

    unsure: NotRequired[bool]
    automate: NotRequired[bool]
    """With a calibration file fitted with ``--risk``: whether the answer reaches its certified
    threshold (among such answers at most ``risk`` are wrong, with probability ``1 - delta``)."""


class NoulAnswer(NoulFields):
    """A ``noul``, with laya's ``unsure`` marker and ``automate``."""

    unsure: NotRequired[bool]
    automate: NotRequired[bool]
    """With a calibration file fitted with ``--risk``: whether the answer reaches its certified
    threshold (among such answers at most ``risk`` are wrong, with probability ``1 - delta``)."""


Answer = ChoiceAnswer | ScoreAnswer | NoulAnswer


class OptionCollision(TypedDict):
    """A question whose options became indistinguishable once cut to fit the head budget."""

    total: int
    distinct: int
    tokens_per_option: int | None


class Usage(TypedDict):
    """Tokens a result cost, and what truncation dropped."""

    input_tokens: int
    output_tokens: int
    state_tokens: NotRequired[int]
    state_tokens_dropped: NotRequired[int]
    truncated: NotRequired[bool | int]
    """Whether the state was cut (a long document: how many windows were)."""
    truncated_questions: NotRequired[list[QuestionId]]
    """The questions whose row cut the state."""
    question_tokens_dropped: NotRequired[dict[QuestionId, int]]
    """Only inside :func:`reporting_question_cuts`, and only when ``head_max_len`` cut a
    question's own text (its instructions or options): how many of its tokens the model did not
    read, by question. Off by default: the published results carry no such key."""
    options: NotRequired[dict[QuestionId, OptionCollision]]
    windows: NotRequired[int]
    """``predict_long``: how many windows were scored."""


class CalibrationStamp(TypedDict):
    """Which calibration file produced a result."""

    file: str
    sha256: str
    version: int


class LanguageWarning(TypedDict):
    """A state in a language the checkpoint does not read."""

    type: Literal["language"]
    language: str
    message: str


class Routing(TypedDict):
    """How a Router chose the checkpoint that answered."""

    model: str
    reason: str
    repo: NotRequired[str | None]
    detection: NotRequired[Detection | None]
    workflow: NotRequired[str | None]


class Result(TypedDict):
    """One state's answers: ``answers`` maps each question id to its answer."""

    model: str
    answers: dict[QuestionId, Answer]
    usage: Usage
    calibration: NotRequired[CalibrationStamp]
    warnings: NotRequired[list[LanguageWarning]]
    routing: NotRequired[Routing]


def as_plain(results: list[Result]) -> list[dict[str, Any]]:
    """Results as ``ctx.results`` holds them for hooks: plain dicts (the same objects)."""
    return cast("list[dict[str, Any]]", results)


def results_of(ctx: PredictContext) -> list[Result]:
    """What a call returns: the results its lifecycle left, as the engine or a hook made them."""
    return cast("list[Result]", ctx.results)


def single_result(results: object) -> Result:
    """The one result of a one-state call; hooks that left no list holding it are named."""
    if not isinstance(results, (list, tuple)) or not results:
        raise ValueError(
            f"the call's hooks left ctx.results={results!r} (an end hook replaced it, or a start "
            "hook emptied ctx.states); a one-state call returns one result, so leave a list "
            "holding it"
        )
    return cast(Result, results[0])  # what the engine or a hook left


def make_result(model: str, answers: Mapping[QuestionId, Answer], usage: Usage) -> Result:
    """A result dict (question ids keep the caller's keys)."""
    return {"model": model, "answers": dict(answers), "usage": usage}


def empty_result(model: str) -> Result:
    """The result for a call with no questions: no tokens read."""
    return make_result(model, {}, {"input_tokens": 0, "output_tokens": 0})


# --------------------------------------------------------------------------- usage


_REPORT_CUTS: ContextVar[bool] = ContextVar("laya_report_question_cuts", default=False)


@contextmanager
def reporting_question_cuts() -> Iterator[None]:
    """Inside the block, a result whose questions ``head_max_len`` cut says so in its usage
    (``question_tokens_dropped``): what ``laya serve`` reports as ``x_question_tokens_dropped``."""
    reset = _REPORT_CUTS.set(True)
    try:
        yield
    finally:
        _REPORT_CUTS.reset(reset)


def state_usage(
    questions: Sequence[Question],
    row_lengths: Sequence[int],
    state_tokens: int,
    kept: Sequence[int],
    heads: Sequence[Head],
) -> Usage:
    """Usage of one state: every question row's tokens, and what truncation dropped."""
    dropped = [state_tokens - used for used in kept]
    usage: Usage = {
        "input_tokens": int(sum(row_lengths)),
        "output_tokens": 0,
        "state_tokens": state_tokens,
        "state_tokens_dropped": max(dropped, default=0),
        "truncated": max(dropped, default=0) > 0,
        "truncated_questions": [q.qid for q, d in zip(questions, dropped) if d > 0],
    }
    cut = {q.qid: head.dropped for q, head in zip(questions, heads) if head.dropped > 0}
    if cut and _REPORT_CUTS.get():
        usage["question_tokens_dropped"] = cut
    collided: dict[QuestionId, OptionCollision] = {
        q.qid: {
            "total": len(q.read_options),
            "distinct": head.options_distinct,
            "tokens_per_option": head.tokens_per_option,
        }
        for q, head in zip(questions, heads)
        if head.options_distinct < len(q.read_options)
    }
    if collided:
        usage["options"] = collided
    return usage


def merge_round_usage(rounds: Sequence[Usage]) -> Usage:
    """One state's usage over a tournament's rounds: tokens summed, truncation and collisions
    combined."""
    first = rounds[0]
    truncated = [qid for usage in rounds for qid in usage.get("truncated_questions", [])]
    merged: Usage = {
        "input_tokens": sum(usage["input_tokens"] for usage in rounds),
        "output_tokens": 0,
        "state_tokens": first.get("state_tokens", 0),
        "state_tokens_dropped": max(usage.get("state_tokens_dropped", 0) for usage in rounds),
        "truncated": any(usage.get("truncated") for usage in rounds),
        "truncated_questions": list(dict.fromkeys(truncated)),
    }
    cut: dict[QuestionId, int] = {}
    for usage in rounds:
        for qid, tokens in usage.get("question_tokens_dropped", {}).items():
            cut[qid] = max(tokens, cut.get(qid, 0))
    if cut:
        merged["question_tokens_dropped"] = cut
    collided = {qid: s for usage in rounds for qid, s in usage.get("options", {}).items()}
    if collided:
        merged["options"] = collided
    return merged


def merge_window_usage(blocks: Sequence[Mapping[str, object]]) -> Usage:
    """A document's usage over its windows: numbers summed (so ``truncated`` counts cut
    windows), dicts merged, the last of anything else; ``windows`` counts them."""
    merged: dict[str, Any] = {}
    for block in blocks:
        for key, value in block.items():
            if isinstance(value, (int, float)) and isinstance(merged.get(key, 0), (int, float)):
                merged[key] = merged.get(key, 0) + value
            elif isinstance(value, dict):
                merged[key] = {**merged.get(key, {}), **value}
            else:
                merged[key] = value
    merged["output_tokens"] = 0
    merged["windows"] = len(blocks)
    return cast(Usage, merged)  # the windows' usages, key by key: a Usage's keys and kinds


# --------------------------------------------------------------------------- post-steps


def finish_results(
    results: object,
    states: Iterable[object] = (),
    *,
    calibration: CalibrationStamp | None = None,
    languages: Sequence[str] | None = None,
    min_confidence: Any = None,
    routing: Mapping[str, object] | None = None,
    unsure_below: float | None = None,
    automation: Certification | None = None,
) -> None:
    """The post-steps of a call, in this order and each once: the calibration stamp, the
    language warning, the unsure marker, certified automation and prediction sets (with a file
    that has them), the ``min_confidence`` gate (``"certified"``: on ``automate``), the routing
    record.

    ``results`` are what the lifecycle holds just before ``on_predict_end`` (inferred, or given
    by a start hook's ``skip``); a step adds only what a result lacks, so a result replayed from
    a cache is not stamped or warned twice.
    """
    if not isinstance(results, (list, tuple)):
        return
    kept = [r for r in results if isinstance(r, dict)]
    if calibration is not None:
        for result in kept:
            result.setdefault("calibration", dict(calibration))
    if languages:
        for result, state in zip(results, states):
            if isinstance(result, dict):
                _warn_language(result, state, languages)
    if unsure_below is not None:
        from .gate import mark_unsure

        mark_unsure(kept, unsure_below)
    certified_gate = isinstance(min_confidence, str) and automation is not None
    if automation is not None:
        from .automation import mark_automation

        mark_automation(kept, automation, gate=certified_gate)
    if min_confidence is not None and not certified_gate:
        from .gate import apply_confidence_gate

        apply_confidence_gate(kept, min_confidence)
    if routing is not None:
        for result in kept:
            result.setdefault("routing", dict(routing))


def language_warning(state: object, languages: Sequence[str] | None) -> LanguageWarning | None:
    """A warning when a checkpoint that declares the languages it reads (``languages`` in its
    config, e.g. ``["en"]`` for mini) is handed a state in another language; None otherwise."""
    if not languages:
        return None
    from ..lang.detect import analyse

    seen = analyse(state)
    language = "en" if seen["is_english"] else seen["identified_language"] or "undecided"
    if language in languages:
        return None
    return {
        "type": "language",
        "language": language,
        "message": (
            f"this model reads {', '.join(languages)} only and the state looks like "
            f"{language} ({seen['script']} script): its answers are likely wrong"
        ),
    }


def _warn_language(result: dict[str, Any], state: object, languages: Sequence[str]) -> None:
    """Add the state's language warning to ``result['warnings']`` unless one is there (or the
    result holds no answers the warning could be about)."""
    if not result.get("answers"):
        return
    warnings = result.get("warnings")
    if isinstance(warnings, list) and any(
        isinstance(w, dict) and w.get("type") == "language" for w in warnings
    ):
        return
    warning = language_warning(state, languages)
    if warning is not None:
        result.setdefault("warnings", []).append(warning)


# --------------------------------------------------------------------------- columns


def answer_columns(
    results: Sequence[Mapping[str, Any]], questions: Mapping[str, object], prefix: str = ""
) -> dict[str, list[object]]:
    """Results as table columns (``laya batch``, Ray Data): per question its answer and confidence,
    plus the whole result as JSON."""
    columns: dict[str, list[object]] = {}
    for qid in questions:
        answers = [(r.get("answers") or {}).get(qid) or {} for r in results]
        columns[prefix + qid] = [_headline(a) for a in answers]
        columns[f"{prefix}{qid}_confidence"] = [a.get("confidence") for a in answers]
    columns[prefix + "result"] = [json.dumps(r, ensure_ascii=False) for r in results]
    return columns


def _headline(answer: Mapping[str, object]) -> object:
    """The label of a choice, the expected level of a score, P(true) of a noul."""
    kind = answer.get("type")
    return (
        answer.get(kind) if isinstance(kind, str) and kind in ("choice", "score", "noul") else None
    )
