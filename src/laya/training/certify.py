"""Fit certified automation and prediction sets on labelled answers (``laya calibrate --risk A
--delta D``; docs/calibration.md, "Certified automation").

Every answer belongs to one group, chosen by label counts alone: its question id's (in the
bucket that question id is asked in most) when that question id has at least
:data:`QUESTION_FACTOR` times :func:`~laya.engine.risk.min_labels` answers there, else its
bucket's (``choice:3-5``...), which holds the answers of every other question id of the bucket.
Each group's threshold is Learn-then-Test's (:func:`laya.engine.risk.learn_then_test`) on the
``answer_confidence`` the file's temperatures give, and each choice group's prediction-set
level the split-conformal one (:func:`laya.engine.risk.conformal_level`), so each certificate
speaks of exactly the answers that will use it.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..engine.automation import Certification, Entry
from ..engine.decoding import Temperatures
from ..engine.fitting import Sample, decoded_records, gate_inputs
from ..engine.risk import (
    automation_summary,
    check_level,
    conformal_level,
    learn_then_test,
    min_labels,
)
from ..errors import InvalidRequest

__all__ = [
    "DEFAULT_DELTA",
    "QUESTION_FACTOR",
    "automated_figures",
    "certify",
    "check_risk",
    "format_certification",
]

DEFAULT_DELTA = 0.1
# A question id is certified on its own from this many times the fewest labels that can certify
# anything: with fewer, its own test would rarely certify a threshold, and its answers are better
# certified with the rest of their bucket's.
QUESTION_FACTOR = 4


def check_risk(risk: float | None, delta: float | None) -> tuple[float, float] | None:
    """``(risk, delta)`` checked (``delta`` defaults to 0.1), or None without ``risk``; a delta
    without a risk, or either outside (0, 1), is an :class:`InvalidRequest` naming it."""
    if risk is None:
        if delta is not None:
            raise InvalidRequest("delta needs risk: give --risk A with --delta D")
        return None
    return check_level("risk", risk), check_level(
        "delta", DEFAULT_DELTA if delta is None else delta
    )


def certify(
    samples: Sequence[Sample], temperatures: Temperatures, risk: float, delta: float
) -> Certification:
    """Certified thresholds and prediction-set levels for ``samples`` decoded with
    ``temperatures``; too few labels in every group is an :class:`InvalidRequest` naming how
    many one group needs."""
    risk, delta = check_level("risk", risk), check_level("delta", delta)
    floor = min_labels(risk, delta)
    conf, right, buckets = gate_inputs(samples, temperatures)
    truth = _true_probabilities(samples, temperatures)
    by_question = _question_groups(samples, buckets)
    own = {q: idx for q, idx in by_question.items() if len(idx) >= QUESTION_FACTOR * floor}
    taken = {i for idx in own.values() for i in idx}
    by_bucket = _groups([b if i not in taken else "" for i, b in enumerate(buckets)])
    by_bucket.pop("", None)
    sizes = [len(idx) for idx in (*own.values(), *by_bucket.values())]
    largest = max(sizes, default=0)
    if largest < floor:
        raise InvalidRequest(
            f"too few labels to certify at risk {risk:g} with delta {delta:g}: a question id or "
            f"bucket needs at least {floor} labelled answers (the fewest at which even no errors "
            f"could be certified), and the largest here has {largest}; label more, or raise "
            "--risk or --delta"
        )

    def entry(idx: list[int]) -> Entry:
        bucket = buckets[idx[0]]
        level = conformal_level(truth[idx], risk) if bucket.startswith("choice:") else None
        if len(idx) < floor:
            return Entry(bucket, len(idx), None, set_level=level, needed=floor)
        found = learn_then_test(conf[idx], ~right[idx], risk, delta)
        return Entry(
            bucket,
            found.n,
            found.threshold,
            found.automated,
            found.errors,
            found.error_upper,
            level,
        )

    return Certification(
        risk,
        delta,
        floor,
        {qid: entry(idx) for qid, idx in sorted(own.items())},
        {bucket: entry(idx) for bucket, idx in sorted(by_bucket.items())},
    )


def _groups(keys: Sequence[str]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = defaultdict(list)
    for i, key in enumerate(keys):
        groups[key].append(i)
    return groups


def _question_groups(samples: Sequence[Sample], buckets: Sequence[str]) -> dict[str, list[int]]:
    """Per question id, its answers in the bucket it is asked in most (a question id names one
    question; its answers in another bucket count in that bucket only)."""
    pairs = _groups([f"{s.question.qid}\0{b}" for s, b in zip(samples, buckets)])
    sizes = Counter({key: len(idx) for key, idx in pairs.items()})
    chosen: dict[str, list[int]] = {}
    for key, _ in sizes.most_common():
        qid = key.split("\0", 1)[0]
        chosen.setdefault(qid, pairs[key])
    return chosen


def _true_probabilities(samples: Sequence[Sample], temperatures: Temperatures) -> np.ndarray:
    """The probability each answer gave its gold option, as the runtime reports it."""
    return np.array([r.probs[r.gold] for r in decoded_records(samples, temperatures)])


# --------------------------------------------------------------------------- figures


def automated_figures(
    samples: Sequence[Sample], temperatures: Temperatures, certification: Certification
) -> dict[str, Any]:
    """What a certificate automates on labelled answers (:func:`laya.engine.risk.automation_summary`,
    rounded to four decimals; NaN as None)."""
    conf, right, buckets = gate_inputs(samples, temperatures)
    recs = decoded_records(samples, temperatures)
    automate: list[bool | None] = []
    in_set: list[bool | None] = []
    sizes: list[int | None] = []
    for s, c, bucket, rec in zip(samples, conf, buckets, recs):
        entry = certification.entry(str(s.question.qid), bucket)
        threshold = None if entry is None else entry.threshold
        automate.append(threshold is not None and bool(c >= threshold))
        if not bucket.startswith("choice:"):
            in_set.append(None)
            sizes.append(None)
            continue
        level = 0.0 if entry is None or entry.set_level is None else entry.set_level
        members = rec.probs >= level
        members[int(np.argmax(rec.probs))] = True
        in_set.append(bool(members[rec.gold]))
        sizes.append(int(members.sum()))
    summary = automation_summary(automate, list(right), in_set, sizes)
    return {k: None if math.isnan(v) else round(v, 4) for k, v in summary.items()}


def format_certification(certification: Certification) -> str:
    """The certificate as a table: one row per bucket and per question id with its own."""
    c = certification
    lines = [
        f"certified automation: risk {c.risk:g}, delta {c.delta:g} (Learn-then-Test; a row "
        f"needs at least {c.min_labels} labels)",
        f"{'row':<28} {'n':>5} {'threshold':>9} {'automated':>9} {'errors':>6} {'upper':>6} "
        f"{'set level':>9}",
    ]
    rows = [("bucket " + b, e) for b, e in c.buckets.items()]
    rows += [("question " + q, e) for q, e in c.questions.items()]
    for name, e in rows:
        level = "-" if e.set_level is None else f"{e.set_level:.4f}"
        if e.threshold is None:
            note = f"too few labels ({e.needed} needed)" if e.needed else "none certified"
            cells = f"{'-':>9} {'-':>9} {'-':>6} {'-':>6} {level:>9}  {note}"
        else:
            cells = (
                f"{e.threshold:>9.4f} {e.automated:>9} {e.errors:>6} {e.error_upper:>6.3f} "
                f"{level:>9}"
            )
        lines.append(f"{name:<28} {e.n:>5} {cells}")
    return "\n".join(lines)
