"""How one answer is scored against its expected value, and the figures over many answers.

Per answer, each :class:`Evaluator` gives a number or None (it does not apply): the exact label
of a choice, P(true) >= 0.5 against a noul's truth, a score's distance to the expected level.
Over (confidence, correct) pairs: ECE, Brier, AURC and accuracy at a coverage, the figures of
``laya.training.selective`` read as a CI gate reads them (docs/cli.md, "laya eval run").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..training.selective import accuracy_at_coverage, calibration_error
from ..training.selective import aurc as _aurc

__all__ = [
    "DEFAULT_EVALUATORS",
    "SELECTIVE_COVERAGES",
    "ChoiceAccuracy",
    "Evaluator",
    "MeanConfidence",
    "NoulAccuracy",
    "ScoreMAE",
    "ScoreWithin",
    "answer_confidence",
    "aurc",
    "brier",
    "default_evaluators",
    "ece",
    "is_right",
    "selective_accuracy",
]

SELECTIVE_COVERAGES = (0.5, 0.8)


class Evaluator:
    """Scores one answer against its expected value; ``name`` is the metric it adds to a report
    (the mean of its numbers over the answers it applies to)."""

    name = "evaluator"

    def score(self, answer: dict[str, object], expected: object) -> float | None:
        """The answer's number for this metric, or None when the metric does not apply."""
        raise NotImplementedError


class ChoiceAccuracy(Evaluator):
    """1 when a choice picked the expected label, else 0."""

    name = "choice_accuracy"

    def score(self, answer: dict[str, object], expected: object) -> float | None:
        if answer.get("type") != "choice":
            return None
        return float(answer.get("choice") == expected)


class NoulAccuracy(Evaluator):
    """1 when a noul's P(true) >= 0.5 agrees with the expected truth, else 0."""

    name = "noul_accuracy"

    def score(self, answer: dict[str, object], expected: object) -> float | None:
        if answer.get("type") != "noul":
            return None
        return float((_number(answer["noul"]) >= 0.5) == bool(expected))


class ScoreMAE(Evaluator):
    """The distance between a score's expected level and the level expected of it."""

    name = "score_mae"

    def score(self, answer: dict[str, object], expected: object) -> float | None:
        if answer.get("type") != "score":
            return None
        return abs(_number(answer["score"]) - _number(expected))


class ScoreWithin(Evaluator):
    """1 when a score lies within ``tolerance`` levels of the level expected, else 0."""

    def __init__(self, tolerance: float = 0.1) -> None:
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)):
            raise TypeError(f"tolerance must be a number of levels, got {tolerance!r}")
        if not math.isfinite(tolerance) or tolerance < 0:
            raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
        self.tolerance = float(tolerance)
        self.name = f"score_within_{self.tolerance:g}"

    def score(self, answer: dict[str, object], expected: object) -> float | None:
        if answer.get("type") != "score":
            return None
        return float(abs(_number(answer["score"]) - _number(expected)) <= self.tolerance)


class MeanConfidence(Evaluator):
    """The confidence of every answer (:func:`answer_confidence`), averaged."""

    name = "mean_confidence"

    def score(self, answer: dict[str, object], expected: object) -> float | None:
        return answer_confidence(answer)


DEFAULT_EVALUATORS: tuple[type[Evaluator], ...] = (
    ChoiceAccuracy,
    NoulAccuracy,
    ScoreMAE,
    MeanConfidence,
)


def default_evaluators() -> list[Evaluator]:
    """A fresh instance of each of :data:`DEFAULT_EVALUATORS`."""
    return [kind() for kind in DEFAULT_EVALUATORS]


def answer_confidence(answer: Mapping[str, object]) -> float | None:
    """What the gate reads of an answer: ``answer_confidence``, else ``confidence``, else its top
    probability (None when it has none of them)."""
    for key in ("answer_confidence", "confidence"):
        value = answer.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    probabilities = answer.get("probabilities")
    if isinstance(probabilities, Mapping) and probabilities:
        return float(max(probabilities.values()))
    return None


def is_right(answer: Mapping[str, object], expected: object) -> bool:
    """Whether an answer is right: a choice's label, a noul's side of 0.5, a score's most probable
    level equal to the expected level rounded."""
    kind = answer.get("type")
    if kind == "choice":
        return bool(answer.get("choice") == expected)
    if kind == "noul":
        return (_number(answer["noul"]) >= 0.5) == bool(expected)
    probabilities = answer.get("probabilities")
    if not isinstance(probabilities, Mapping) or not probabilities:
        return False
    top = max(probabilities, key=lambda level: _number(probabilities[level]))
    return int(top) == round(_number(expected))


def _number(value: object) -> float:
    """``float(value)`` for what a decoded answer or label holds: a number or its text (any
    other value is a TypeError, as ``float`` raises)."""
    if isinstance(value, (int, float, str)):
        return float(value)
    raise TypeError(f"expected a number, got {type(value).__name__}: {value!r}")


def _pairs(confidences: Sequence[float], corrects: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    if len(confidences) != len(corrects):
        raise ValueError(
            f"confidences and corrects must have the same length, got {len(confidences)} and "
            f"{len(corrects)}"
        )
    return np.asarray(confidences, dtype=np.float64), np.asarray(corrects, dtype=bool)


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def ece(confidences: Sequence[float], corrects: Sequence[bool], bins: int = 15) -> float | None:
    """Expected calibration error over ``bins`` equal-width bins (None without answers)."""
    return _finite(calibration_error(*_pairs(confidences, corrects), bins))


def brier(confidences: Sequence[float], corrects: Sequence[bool]) -> float | None:
    """Mean of (confidence - correct)^2 (None without answers)."""
    conf, right = _pairs(confidences, corrects)
    return float(np.mean((conf - right) ** 2)) if len(conf) else None


def aurc(confidences: Sequence[float], corrects: Sequence[bool]) -> float | None:
    """Area under the risk-coverage curve, most confident first (None without answers)."""
    return _finite(_aurc(*_pairs(confidences, corrects)))


def selective_accuracy(
    confidences: Sequence[float], corrects: Sequence[bool], coverage: float
) -> float | None:
    """Accuracy of the ``coverage`` share of answers with the highest confidence."""
    if isinstance(coverage, bool) or not 0 < float(coverage) <= 1:
        raise ValueError(f"coverage must be in (0, 1], got {coverage!r}")
    return _finite(accuracy_at_coverage(*_pairs(confidences, corrects), float(coverage)))
