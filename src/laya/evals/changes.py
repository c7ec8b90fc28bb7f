"""What a new checkpoint changes, answer by answer: two evaluation reports of the same rows,
their *flips* (the decision changed) told apart from their *shifts* (the probabilities moved,
the decision stayed); ``laya eval compare NEW.json --baseline OLD.json`` prints them and fails
past ``--max-flips N`` or ``--max-shift P`` (docs/cli.md, "laya eval compare").

Rows are matched by a digest of their state and questions, not of the model or the line, so a
row skipped by one run (``--on-error skip``) or answered by another checkpoint is still paired
with its twin; rows that repeat pair in order. A decision is a choice's label, a noul's side of
0.5, a score's most probable level. An answer's shift is the largest change of any option's
probability (a noul: of P(true)); reports written before the probabilities were kept fall back
to the change of the confidence.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Changes", "Flip", "compare_rows", "row_digest"]


def row_digest(state: object, questions: object) -> str:
    """The SHA-256 of a row's state and questions (canonical JSON), hex: what pairs rows."""
    text = json.dumps(
        {"questions": questions, "state": state},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Flip:
    """One answer whose decision changed: where it is in each report, and both decisions."""

    line: int | None
    baseline_line: int | None
    qid: str
    baseline: object
    new: object
    baseline_confidence: float | None
    new_confidence: float | None

    def to_json(self) -> dict[str, object]:
        """The flip as a JSON object."""
        return dict(self.__dict__)


@dataclass
class Changes:
    """Flips and shifts between two reports: rows ``matched`` (and those ``only_new`` /
    ``only_baseline``), ``answers`` compared, the ``flips``, the answers that ``shifted`` (same
    decision, probabilities moved) with the largest and mean shift among them, and the answers
    whose ``automate`` changed."""

    matched: int = 0
    only_new: int = 0
    only_baseline: int = 0
    answers: int = 0
    flips: list[Flip] = field(default_factory=list)
    shifted: int = 0
    max_shift: float = 0.0
    mean_shift: float = 0.0
    automate_changed: int = 0

    def to_json(self) -> dict[str, object]:
        """The comparison as a JSON object."""
        out = {k: v for k, v in self.__dict__.items() if k != "flips"}
        out["flips"] = [f.to_json() for f in self.flips]
        return out

    def failures(self, max_flips: int | None, max_shift: float | None) -> list[str]:
        """One line per limit broken (``--max-flips``, ``--max-shift``)."""
        failed = []
        if max_flips is not None and len(self.flips) > max_flips:
            failed.append(f"flips {len(self.flips)} > --max-flips {max_flips}")
        if max_shift is not None and self.max_shift > max_shift + 1e-12:
            failed.append(f"max shift {self.max_shift:.4f} > --max-shift {max_shift:g}")
        return failed

    def lines(self) -> list[str]:
        """The comparison as printed: a summary, then one line per flip."""
        out = [
            f"rows matched {self.matched} (only in the report {self.only_new}, only in the "
            f"baseline {self.only_baseline})",
            f"answers {self.answers} flips {len(self.flips)} shifts {self.shifted} "
            f"max shift {self.max_shift:.4f} mean shift {self.mean_shift:.4f}"
            + (f" automate changed {self.automate_changed}" if self.automate_changed else ""),
        ]
        for f in self.flips:
            out.append(
                f"flip line {f.line} (baseline line {f.baseline_line}) {f.qid}: "
                f"{_shown(f.baseline)} -> {_shown(f.new)} "
                f"(confidence {_number(f.baseline_confidence)} -> {_number(f.new_confidence)})"
            )
        return out


def compare_rows(new: Mapping[str, Any], baseline: Mapping[str, Any]) -> Changes:
    """Flips and shifts between two reports written by ``laya eval run --json``."""
    theirs = _by_digest(baseline.get("cases") or [])
    ours = list(_answered(new.get("cases") or []))
    changes = Changes()
    shifts: list[float] = []
    for digest, case in ours:
        queue = theirs.get(digest)
        if not queue:
            changes.only_new += 1
            continue
        old = queue.pop(0)
        changes.matched += 1
        _compare_case(case, old, changes, shifts)
    changes.only_baseline = sum(len(queue) for queue in theirs.values())
    changes.shifted = len(shifts)
    changes.max_shift = max(shifts, default=0.0)
    changes.mean_shift = sum(shifts) / len(shifts) if shifts else 0.0
    return changes


def _answered(cases: Sequence[object]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each case that holds answers (a row the run refused holds none), with its digest."""
    for case in cases:
        if isinstance(case, Mapping) and isinstance(case.get("answers"), Mapping):
            yield row_digest(case.get("state"), case.get("questions")), case


def _by_digest(cases: Sequence[object]) -> dict[str, list[Mapping[str, Any]]]:
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for digest, case in _answered(cases):
        groups[digest].append(case)
    return groups


def _compare_case(
    case: Mapping[str, Any], old: Mapping[str, Any], changes: Changes, shifts: list[float]
) -> None:
    questions = case.get("questions") or {}
    for qid, answer in case["answers"].items():
        before = old["answers"].get(qid)
        if not isinstance(answer, Mapping) or not isinstance(before, Mapping):
            continue
        kind = (questions.get(qid) or {}).get("type")
        changes.answers += 1
        if isinstance(answer.get("automate"), bool) and isinstance(before.get("automate"), bool):
            changes.automate_changed += answer["automate"] != before["automate"]
        decided, was = _decision(kind, answer), _decision(kind, before)
        if decided != was:
            changes.flips.append(
                Flip(
                    case.get("line"),
                    old.get("line"),
                    str(qid),
                    was,
                    decided,
                    before.get("confidence"),
                    answer.get("confidence"),
                )
            )
            continue
        moved = _shift(kind, answer, before)
        if moved > 0:
            shifts.append(moved)


def _decision(kind: object, answer: Mapping[str, object]) -> object:
    """A choice's label, a noul's side of 0.5, a score's most probable level."""
    value = answer.get("answer")
    if kind == "noul":
        return None if not isinstance(value, (int, float)) else bool(value >= 0.5)
    if kind == "score":
        probabilities = answer.get("probabilities")
        if isinstance(probabilities, Mapping) and probabilities:
            return int(max(probabilities, key=lambda k: float(probabilities[k])))
        return None if not isinstance(value, (int, float)) else round(value)
    return value


def _shift(kind: object, answer: Mapping[str, Any], before: Mapping[str, Any]) -> float:
    """The largest change of any option's probability (a noul: of P(true)); without
    probabilities in both, the change of the confidence."""
    if kind == "noul" and _both_numbers(answer.get("answer"), before.get("answer")):
        return round(abs(float(answer["answer"]) - float(before["answer"])), 6)
    now, then = answer.get("probabilities"), before.get("probabilities")
    if isinstance(now, Mapping) and isinstance(then, Mapping) and now and then:
        keys = set(now) | set(then)
        return round(max(abs(float(now.get(k, 0.0)) - float(then.get(k, 0.0))) for k in keys), 6)
    if _both_numbers(answer.get("confidence"), before.get("confidence")):
        return round(abs(float(answer["confidence"]) - float(before["confidence"])), 6)
    return 0.0


def _both_numbers(a: object, b: object) -> bool:
    return all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in (a, b)
    )


def _shown(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _number(value: object) -> str:
    return f"{value:.4f}" if isinstance(value, (int, float)) else "-"
