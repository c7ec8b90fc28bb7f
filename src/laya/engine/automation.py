"""Certified automation and prediction sets, as a calibration file carries them and answers show
them (docs/calibration.md, "Certified automation").

A file fitted with ``laya calibrate --risk A --delta D`` holds, per question id with enough
labels and per bucket (``choice:3-5``...), the threshold Learn-then-Test certified and, for
choices, the least probability an option needs to enter the split-conformal prediction set. With
such a file every answer says ``automate: true|false`` and every choice carries its
``prediction_set``; ``min_confidence="certified"`` gates on ``automate``. Pure Python: applying a
file needs no NumPy (fitting it does: :mod:`laya.training.certify`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from ..errors import InvalidRequest
from .gate import (
    GATE_BUCKETS,
    answer_bucket,
    answer_confidence_value,
    gate_on_automate,
    is_fraction,
)

__all__ = [
    "METHOD",
    "Certification",
    "Entry",
    "certification_from_json",
    "mark_automation",
    "prediction_set",
]

METHOD = "learn-then-test"  # and split conformal for the prediction sets
BUCKETS = GATE_BUCKETS - {"default"}
Fail = Callable[[str, str], InvalidRequest]


@dataclass(frozen=True)
class Entry:
    """One question id's or bucket's certificate: the ``n`` labelled answers it was fitted on,
    the certified ``threshold`` (None: no threshold could be certified, nothing automates) with
    the answers it ``automated`` there, their ``errors`` and the Clopper-Pearson ``error_upper``;
    for a choice, ``set_level``, the least probability an option needs to enter the prediction
    set (0.0: every option). ``needed`` is set when ``n`` was too few to certify anything."""

    bucket: str
    n: int
    threshold: float | None
    automated: int = 0
    errors: int = 0
    error_upper: float = 1.0
    set_level: float | None = None
    needed: int | None = None

    def to_json(self) -> dict[str, object]:
        """The entry as the file holds it."""
        out: dict[str, object] = {
            "bucket": self.bucket,
            "n": self.n,
            "threshold": self.threshold,
            "automated": self.automated,
            "errors": self.errors,
            "error_upper": round(self.error_upper, 6),
        }
        if self.set_level is not None:
            out["set_level"] = self.set_level
        if self.needed is not None:
            out["needed"] = self.needed
        return out


@dataclass(frozen=True)
class Certification:
    """A file's ``certified`` block: the ``risk`` (alpha) and ``delta`` it was fitted for, the
    fewest labels (``min_labels``) at which anything can be certified, and the entries per
    question id and per bucket."""

    risk: float
    delta: float
    min_labels: int
    questions: dict[str, Entry] = field(default_factory=dict)
    buckets: dict[str, Entry] = field(default_factory=dict)

    def entry(self, qid: str, bucket: str) -> Entry | None:
        """The certificate an answer uses: its question id's, when it has one for this bucket
        (whether or not a threshold was certified there), else its bucket's, else none."""
        own = self.questions.get(qid)
        if own is not None and own.bucket == bucket:
            return own
        return self.buckets.get(bucket)

    def to_json(self) -> dict[str, object]:
        """The block as the file holds it."""
        return {
            "method": METHOD,
            "risk": self.risk,
            "delta": self.delta,
            "min_labels": self.min_labels,
            "questions": {q: e.to_json() for q, e in self.questions.items()},
            "buckets": {b: e.to_json() for b, e in self.buckets.items()},
        }


# --------------------------------------------------------------------------- applying


def mark_automation(
    results: Iterable[object], certification: Certification, gate: bool = False
) -> None:
    """Write ``automate`` on every answer (and ``prediction_set`` on every choice) that lacks
    it; with ``gate``, also the gate's fields as ``min_confidence="certified"`` reads them."""
    for result in results:
        answers = result.get("answers") if isinstance(result, dict) else None
        for qid, answer in (answers or {}).items():
            if not isinstance(answer, dict):
                continue
            entry = certification.entry(str(qid), answer_bucket(answer))
            threshold = None if entry is None else entry.threshold
            answer.setdefault("automate", _automates(answer, threshold))
            if answer.get("type") == "choice" and "prediction_set" not in answer:
                answer["prediction_set"] = prediction_set(answer, entry)
            if gate:
                gate_on_automate(answer, threshold)


def _automates(answer: Mapping[str, object], threshold: float | None) -> bool:
    """Whether an answer is automated: a certified threshold it reaches, and a decision to
    automate (a choice that "none of these" won has none)."""
    value = answer_confidence_value(answer)
    if threshold is None or value is None or value < threshold:
        return False
    return not (answer.get("type") == "choice" and answer.get("choice") is None)


def prediction_set(answer: Mapping[str, object], entry: Entry | None) -> list[object]:
    """A choice's prediction set: its labels whose probability reaches the entry's
    ``set_level``, most probable first (every label without one); never empty (the most
    probable label is always in it)."""
    probabilities = answer.get("probabilities")
    if not isinstance(probabilities, Mapping) or not probabilities:
        return []
    ranked = sorted(probabilities, key=lambda label: -float(probabilities[label]))
    level = None if entry is None else entry.set_level
    if level is None:
        return ranked
    kept = [label for label in ranked if float(probabilities[label]) >= level]
    return kept or ranked[:1]


# --------------------------------------------------------------------------- reading


def certification_from_json(value: object, fail: Fail) -> Certification | None:
    """A file's ``certified`` block checked field by field (None when absent)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise fail(
            "certified", f"must be an object written by laya calibrate --risk, got {value!r}"
        )
    risk = _level(value.get("risk"), "certified.risk", fail)
    delta = _level(value.get("delta"), "certified.delta", fail)
    floor = value.get("min_labels")
    if isinstance(floor, bool) or not isinstance(floor, int) or floor < 1:
        raise fail("certified.min_labels", f"must be a whole number >= 1, got {floor!r}")
    questions = _entries(value.get("questions"), "certified.questions", fail, by_question=True)
    buckets = _entries(value.get("buckets"), "certified.buckets", fail, by_question=False)
    return Certification(risk, delta, floor, questions, buckets)


def _level(value: object, name: str, fail: Fail) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 < value < 1
    ):
        raise fail(name, f"must be a number strictly between 0 and 1, got {value!r}")
    return float(value)


def _entries(value: object, name: str, fail: Fail, *, by_question: bool) -> dict[str, Entry]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise fail(name, f"must map a name to an entry, got {value!r}")
    out = {}
    for key, entry in value.items():
        where = f"{name}.{key}"
        if not by_question and key not in BUCKETS:
            raise fail(where, "the key must be a bucket like 'choice:3-5'")
        out[str(key)] = _entry(entry, where, fail)
        if not by_question and out[key].bucket != key:
            raise fail(f"{where}.bucket", f"must be {key!r}, got {out[key].bucket!r}")
    return out


def _entry(value: object, where: str, fail: Fail) -> Entry:
    if not isinstance(value, dict):
        raise fail(where, f"must be an object with bucket, n and threshold, got {value!r}")
    bucket = value.get("bucket")
    if bucket not in BUCKETS:
        raise fail(f"{where}.bucket", f"must be a bucket like 'choice:3-5', got {bucket!r}")
    counts = {k: value.get(k, 0) for k in ("n", "automated", "errors")}
    for key, count in counts.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise fail(f"{where}.{key}", f"must be a whole number >= 0, got {count!r}")
    threshold = value.get("threshold")
    if threshold is not None and not is_fraction(threshold):
        raise fail(f"{where}.threshold", f"must be null or a number in [0, 1], got {threshold!r}")
    upper = value.get("error_upper", 1.0)
    if not is_fraction(upper):
        raise fail(f"{where}.error_upper", f"must be a number in [0, 1], got {upper!r}")
    set_level = value.get("set_level")
    if set_level is not None and not is_fraction(set_level):
        raise fail(f"{where}.set_level", f"must be null or a number in [0, 1], got {set_level!r}")
    needed = value.get("needed")
    if needed is not None and (isinstance(needed, bool) or not isinstance(needed, int)):
        raise fail(f"{where}.needed", f"must be a whole number, got {needed!r}")
    return Entry(
        bucket,
        counts["n"],
        None if threshold is None else float(threshold),
        counts["automated"],
        counts["errors"],
        float(upper),
        None if set_level is None else float(set_level),
        needed,
    )
