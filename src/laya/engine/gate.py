"""The abstention gate: mark each answer ``passed`` / ``abstained`` against ``min_confidence``.

Pure Python (no NumPy), so the Router and the server validate a threshold without importing the
numeric stack. The wire format's fields: ``abstention``, ``abstention_threshold`` and
``low_confidence`` (docs/server.md). This is also the published runtime's ``laya.confidence``
module (docs/migrating.md): its bucket constants, the gate's pieces one by one
(:func:`flag_low_confidence`, :func:`resolve_min_confidence`...) and Jev's confidence formula.
``min_confidence="certified"`` (laya's) gates on the answers' ``automate`` instead of a number
(docs/calibration.md, "Certified automation").
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from typing import SupportsFloat, TypeGuard

from ..errors import InvalidRequest
from .questions import QTYPES, option_bucket

__all__ = [
    "BUCKET_QTYPES",
    "BUCKET_SIZES",
    "CERTIFIED",
    "DEFAULT_BUCKET_KEY",
    "GATE_ABSTAINED",
    "GATE_BUCKETS",
    "GATE_PASSED",
    "GATE_STATES",
    "GATE_UNEVALUATED",
    "MinConfidence",
    "answer_bucket",
    "answer_confidence_value",
    "apply_confidence_gate",
    "bucket_keys",
    "check_min_confidence",
    "check_min_confidence_map",
    "flag_low_confidence",
    "gate_on_automate",
    "is_fraction",
    "jev_confidence",
    "mark_unsure",
    "resolve_min_confidence",
]

BUCKET_QTYPES = tuple(QTYPES)
BUCKET_SIZES = ("2", "3-5", "6-10", "11+")
DEFAULT_BUCKET_KEY = "default"
GATE_PASSED, GATE_ABSTAINED, GATE_UNEVALUATED = "passed", "abstained", "unevaluated"
GATE_STATES = (GATE_PASSED, GATE_ABSTAINED, GATE_UNEVALUATED)
GATE_BUCKETS = frozenset(f"{t}:{s}" for t in BUCKET_QTYPES for s in BUCKET_SIZES) | {
    DEFAULT_BUCKET_KEY
}
CERTIFIED = "certified"  # gate on the certified automation of the runtime's calibration file
# A checked threshold (a number in [0, 1]: int, float or NumPy scalar), one per bucket, or
# "certified".
MinConfidence = SupportsFloat | Mapping[str, SupportsFloat] | str


def bucket_keys() -> set[str]:
    """Every key a ``min_confidence`` map may hold: the twelve buckets and ``default``."""
    return set(GATE_BUCKETS)


def is_fraction(value: object) -> TypeGuard[SupportsFloat]:
    """A real number in [0, 1]: ints, floats and NumPy scalars alike; not a bool."""
    return (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
        and 0.0 <= float(value) <= 1.0
    )


def check_min_confidence(v: object) -> MinConfidence | None:
    """Validate ``min_confidence``: a number in [0, 1], a map of bucket -> number, or
    ``"certified"``."""
    if v is None or is_fraction(v) or (isinstance(v, str) and v == CERTIFIED):
        return v
    if not isinstance(v, dict):
        raise InvalidRequest(
            f"min_confidence must be a float in [0.0, 1.0], a dict of bucket -> float or "
            f"'certified', got {v!r}"
        )
    return check_min_confidence_map(v)


def check_min_confidence_map(m: object) -> dict[str, float]:
    """Validate a ``min_confidence`` map: non-empty, bucket (or ``default``) -> number in [0, 1]."""
    if not isinstance(m, dict) or not m:
        raise InvalidRequest(
            f"a min_confidence map must be a non-empty dict of bucket -> float, got {m!r}"
        )
    for key, threshold in m.items():
        if key not in GATE_BUCKETS:
            raise InvalidRequest(
                f"min_confidence map keys must be a bucket like 'choice:3-5' or 'default', "
                f"got {key!r}"
            )
        if not is_fraction(threshold):
            raise InvalidRequest(
                f"min_confidence[{key!r}] must be a float in [0.0, 1.0], got {threshold!r}"
            )
    return m


def _threshold(
    answer: Mapping[str, object], min_confidence: SupportsFloat | Mapping[str, SupportsFloat]
) -> float:
    if not isinstance(min_confidence, Mapping):
        return float(min_confidence)
    return resolve_min_confidence(answer, min_confidence)


def answer_bucket(answer: Mapping[str, object]) -> str:
    """The gate bucket of an answer (``choice:3-5``...), from its type and its options."""
    probabilities = answer.get("probabilities")
    k = len(probabilities) if isinstance(probabilities, dict) else 2
    return option_bucket(str(answer.get("type")), k)


def resolve_min_confidence(
    answer: Mapping[str, object], thresholds: Mapping[str, SupportsFloat], default: float = 0.0
) -> float:
    """The threshold of ``answer``'s bucket in a map, else its ``default`` entry, else ``default``."""
    bucket = answer_bucket(answer)
    return float(thresholds.get(bucket, thresholds.get(DEFAULT_BUCKET_KEY, default)))


def _finite(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def answer_confidence_value(answer: Mapping[str, object]) -> float | None:
    """The answer's ``answer_confidence`` when it is a finite number, else None."""
    value = answer.get("answer_confidence")
    return float(value) if value is not None and _finite(value) else None


def _gate_value(answer: Mapping[str, object]) -> float | None:
    """What the gate reads: ``answer_confidence``, else a finite ``confidence``, else nothing."""
    value = answer_confidence_value(answer)
    confidence = answer.get("confidence")
    if value is None and _finite(confidence):
        value = float(confidence)
    return value


def flag_low_confidence(results: Iterable[object] | None, min_confidence: MinConfidence) -> None:
    """Set ``low_confidence: True`` on each answer under its threshold and clear it elsewhere
    (the flag alone, without the ``abstention`` fields :func:`apply_confidence_gate` writes)."""
    check_min_confidence(min_confidence)
    for answer in _answers(results):
        value = _gate_value(answer)
        answer.pop("low_confidence", None)
        if isinstance(min_confidence, str):
            if answer.get("automate") is False:
                answer["low_confidence"] = True
        elif value is not None and value < _threshold(answer, min_confidence):
            answer["low_confidence"] = True


def _answers(results: Iterable[object] | None) -> list[dict[str, object]]:
    """Every answer dict of a list of results (anything else in it is skipped)."""
    found: list[dict[str, object]] = []
    for result in results or ():
        answers = result.get("answers") if isinstance(result, dict) else None
        found.extend(a for a in (answers or {}).values() if isinstance(a, dict))
    return found


def jev_confidence(answer: object) -> float | None:
    """Jev's confidence formula on a choice or score answer's probabilities (None for a noul or
    an answer without usable probabilities): choice ``(max p - 1/n) / (1 - 1/n)``; score
    ``max(0, 1 - spread around the mode / D)``, D the spread of a uniform distribution around
    the scale's centre, as Jev's spec defines it (docs/server.md)."""
    if not isinstance(answer, dict) or answer.get("type") not in ("choice", "score"):
        return None
    p = _option_probabilities(answer)
    if p is None:
        return None
    return _jev_choice(p) if answer["type"] == "choice" else _jev_score(p)


def _option_probabilities(answer: Mapping[str, object]) -> list[float] | None:
    """The answer's probabilities in option order (score levels by index), or None if unusable."""
    probs = answer.get("probabilities")
    if not isinstance(probs, dict) or not probs:
        return None
    items = list(probs.items())
    if answer["type"] == "score":
        try:
            items.sort(key=lambda kv: int(kv[0]))
        except ValueError:
            return None
    values = [v for _, v in items]
    return [float(v) for v in values] if all(map(_finite, values)) else None


def _jev_choice(p: list[float]) -> float:
    n = len(p)
    return 1.0 if n == 1 else (max(p) - 1 / n) / (1 - 1 / n)


def _jev_score(p: list[float]) -> float:
    n = len(p)
    if n == 1:
        return 1.0
    mode = max(range(n), key=p.__getitem__)  # the first of tied modes, as Jev's reference takes
    centre = (n - 1) / 2
    uniform = sum(abs(i - centre) for i in range(n)) / n
    spread = sum(pi * abs(i - mode) for i, pi in enumerate(p))
    return max(0.0, 1 - spread / uniform)


def apply_confidence_gate(
    results: Iterable[object] | None, min_confidence: MinConfidence | None = None
) -> None:
    """Mark each answer ``passed`` / ``abstained`` / ``unevaluated`` against the threshold
    (``"certified"``: against the answer's ``automate``)."""
    if min_confidence is None:
        return
    if isinstance(min_confidence, str):
        check_min_confidence(min_confidence)  # "certified" is the one word it takes
    for answer in _answers(results):
        if isinstance(min_confidence, str):
            gate_on_automate(answer, None)
        else:
            _gate(answer, min_confidence)


def gate_on_automate(answer: dict[str, object], threshold: float | None) -> None:
    """The gate of ``min_confidence="certified"``: ``passed`` when the answer automates,
    ``abstained`` (and ``low_confidence``) when it does not, ``unevaluated`` when it does not say;
    ``abstention_threshold`` is the certified threshold where there is one."""
    automate = answer.get("automate")
    answer.pop("low_confidence", None)
    answer.pop("abstention_threshold", None)
    if not isinstance(automate, bool):
        answer["abstention"] = GATE_UNEVALUATED
    elif automate:
        answer["abstention"] = GATE_PASSED
    else:
        answer["low_confidence"] = True
        answer["abstention"] = GATE_ABSTAINED
    if threshold is not None:
        answer["abstention_threshold"] = threshold


def mark_unsure(results: Iterable[object] | None, threshold: float) -> None:
    """Mark ``unsure: true`` on each answer whose gate value is under the checkpoint's
    recommended threshold (a marker only: nothing is gated; docs/calibration.md)."""
    for result in results or ():
        answers = result.get("answers") if isinstance(result, dict) else None
        for answer in (answers or {}).values():
            value = _gate_value(answer) if isinstance(answer, dict) else None
            if value is not None and value < threshold:
                answer["unsure"] = True


def _gate(
    answer: dict[str, object], min_confidence: SupportsFloat | Mapping[str, SupportsFloat]
) -> None:
    threshold = _threshold(answer, min_confidence)
    value = _gate_value(answer)
    answer.pop("low_confidence", None)
    if value is None:
        answer["abstention"] = GATE_UNEVALUATED
    elif value < threshold:
        answer["low_confidence"] = True
        answer["abstention"] = GATE_ABSTAINED
    else:
        answer["abstention"] = GATE_PASSED
    answer["abstention_threshold"] = threshold
