"""The abstention gate: mark each answer ``passed`` / ``abstained`` against ``min_confidence``.

Pure Python (no NumPy), so the Router and the server validate a threshold without importing the
numeric stack. The wire format's fields: ``abstention``, ``abstention_threshold`` and
``low_confidence`` (docs/server.md).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from typing import Any, SupportsFloat, TypeGuard

from ..errors import InvalidRequest
from .questions import QTYPES, option_bucket

__all__ = [
    "GATE_BUCKETS",
    "MinConfidence",
    "apply_confidence_gate",
    "check_min_confidence",
    "is_fraction",
    "mark_unsure",
]

_BUCKET_SIZES = ("2", "3-5", "6-10", "11+")
GATE_BUCKETS = frozenset(f"{t}:{s}" for t in QTYPES for s in _BUCKET_SIZES) | {"default"}
# A checked threshold (a number in [0, 1]: int, float or NumPy scalar), or one per bucket.
MinConfidence = SupportsFloat | Mapping[str, SupportsFloat]


def is_fraction(value: object) -> TypeGuard[SupportsFloat]:
    """A real number in [0, 1]: ints, floats and NumPy scalars alike; not a bool."""
    return (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
        and 0.0 <= float(value) <= 1.0
    )


def check_min_confidence(value: object) -> MinConfidence | None:
    """Validate ``min_confidence``: a number in [0, 1], or a map of bucket -> number."""
    if value is None or is_fraction(value):
        return value
    if not isinstance(value, dict):
        raise InvalidRequest(
            f"min_confidence must be a float in [0.0, 1.0] or a dict of bucket -> float, "
            f"got {value!r}"
        )
    if not value:
        raise InvalidRequest(
            "a min_confidence map must be a non-empty dict of bucket -> float, got {}"
        )
    for key, threshold in value.items():
        if key not in GATE_BUCKETS:
            raise InvalidRequest(
                f"min_confidence map keys must be a bucket like 'choice:3-5' or 'default', "
                f"got {key!r}"
            )
        if not is_fraction(threshold):
            raise InvalidRequest(
                f"min_confidence[{key!r}] must be a float in [0.0, 1.0], got {threshold!r}"
            )
    return value


def _threshold(answer: dict[str, Any], min_confidence: MinConfidence) -> float:
    if not isinstance(min_confidence, Mapping):
        return float(min_confidence)
    probabilities = answer.get("probabilities")
    k = len(probabilities) if isinstance(probabilities, dict) else 2
    bucket = option_bucket(str(answer.get("type")), k)
    return float(min_confidence.get(bucket, min_confidence.get("default", 0.0)))


def _gate_value(answer: dict[str, Any]) -> float | None:
    for key in ("answer_confidence", "confidence"):
        value = answer.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
    return None


def apply_confidence_gate(
    results: Iterable[object] | None, min_confidence: MinConfidence | None
) -> None:
    """Mark each answer ``passed`` / ``abstained`` / ``unevaluated`` against the threshold."""
    if min_confidence is None:
        return
    for result in results or ():
        answers = result.get("answers") if isinstance(result, dict) else None
        for answer in (answers or {}).values():
            if isinstance(answer, dict):
                _gate(answer, min_confidence)


def mark_unsure(results: Any, threshold: float) -> None:
    """Mark ``unsure: true`` on each answer whose gate value is under the checkpoint's
    recommended threshold (a marker only: nothing is gated; docs/calibration.md)."""
    for result in results or ():
        answers = result.get("answers") if isinstance(result, dict) else None
        for answer in (answers or {}).values():
            value = _gate_value(answer) if isinstance(answer, dict) else None
            if value is not None and value < threshold:
                answer["unsure"] = True


def _gate(answer: dict[str, Any], min_confidence: MinConfidence) -> None:
    threshold = _threshold(answer, min_confidence)
    value = _gate_value(answer)
    answer.pop("low_confidence", None)
    if value is None:
        answer["abstention"] = "unevaluated"
    elif value < threshold:
        answer["low_confidence"] = True
        answer["abstention"] = "abstained"
    else:
        answer["abstention"] = "passed"
    answer["abstention_threshold"] = threshold
