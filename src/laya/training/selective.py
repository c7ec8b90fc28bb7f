"""Selective figures: how good the answers are that a confidence threshold keeps.

Over (confidence, correct) pairs: accuracy at coverage (the accuracy of the most confident share
of answers), AURC (the area under the risk-coverage curve: mean error rate of the k most
confident answers over every k; lower is better, 0 for a perfect ranking of right answers above
wrong ones), and what a gate keeps (coverage, precision, abstention rate). ``compare`` checks a
report against a baseline report (``read_baseline``) with tolerances, for ``laya eval --gate``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..commands import read_input_text
from ..engine.scores import ECE_BINS, ece_score
from ..errors import InvalidRequest

__all__ = [
    "COVERAGES",
    "GATED_METRICS",
    "ECE_BINS",
    "accuracy_at_coverage",
    "aurc",
    "calibration_error",
    "reliability_bins",
    "check_tolerances",
    "compare",
    "format_selective",
    "gate_figures",
    "read_baseline",
    "selective_figures",
    "tolerance_problem",
]

COVERAGES = (0.5, 0.8, 0.9)
DEFAULT_TOLERANCE = 0.01
# metric path in a `laya eval` report -> True when higher is better
GATED_METRICS = {
    "choice.accuracy": True,
    "noul.accuracy": True,
    "score.exact": True,
    "score.mae": False,
    "brier": False,
    "ece": False,
    "selective.aurc": False,
    **{f"selective.accuracy_at_{int(c * 100)}": True for c in COVERAGES},
}


def reliability_bins(
    conf: np.ndarray, right: np.ndarray, bins: int = ECE_BINS
) -> list[dict[str, float]]:
    """Equal-width confidence bins: the count, mean confidence and accuracy of each."""
    index = np.minimum((np.asarray(conf, dtype=np.float64) * bins).astype(int), bins - 1)
    table = []
    for b in range(bins):
        inside = index == b
        count = int(inside.sum())
        table.append(
            {
                "low": b / bins,
                "high": (b + 1) / bins,
                "count": count,
                "confidence": float(np.mean(conf[inside])) if count else math.nan,
                "accuracy": float(np.mean(right[inside])) if count else math.nan,
            }
        )
    return table


def calibration_error(conf: np.ndarray, right: np.ndarray, bins: int = ECE_BINS) -> float:
    """Expected calibration error over equal-width bins (NaN without answers): the published
    ``ece_score``, named as the selective metrics name it."""
    return ece_score(conf, right, bins)


def _ranked(conf: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Correctness of the answers from the most to the least confident (stable on ties)."""
    return right[np.argsort(-conf, kind="stable")]


def aurc(conf: np.ndarray, right: np.ndarray) -> float:
    """Area under the risk-coverage curve: mean over k of the error rate of the top k answers."""
    if not len(conf):
        return math.nan
    errors = np.cumsum(~_ranked(conf, right))
    return float(np.mean(errors / np.arange(1, len(conf) + 1)))


def accuracy_at_coverage(conf: np.ndarray, right: np.ndarray, coverage: float) -> float:
    """Accuracy of the ``coverage`` share of answers the model is most confident about."""
    if not len(conf):
        return math.nan
    k = max(1, math.ceil(coverage * len(conf) - 1e-9))
    return float(np.mean(_ranked(conf, right)[:k]))


def gate_figures(
    conf: np.ndarray, right: np.ndarray, thresholds: Sequence[float]
) -> dict[str, float]:
    """What a gate with one threshold per answer keeps: coverage, precision, abstention rate."""
    kept = conf >= np.asarray(thresholds, dtype=np.float64)
    n = len(conf)
    return {
        "answers": n,
        "kept": int(kept.sum()),
        "coverage": float(kept.mean()) if n else math.nan,
        "abstention_rate": float(1.0 - kept.mean()) if n else math.nan,
        "precision": float(right[kept].mean()) if kept.any() else math.nan,
    }


def selective_figures(
    conf: np.ndarray, right: np.ndarray, thresholds: Sequence[float] | None = None
) -> dict[str, Any]:
    """AURC and accuracy at each of ``COVERAGES``; with per-answer thresholds, what they keep."""
    figures: dict[str, Any] = {"aurc": aurc(conf, right)}
    for c in COVERAGES:
        figures[f"accuracy_at_{int(c * 100)}"] = accuracy_at_coverage(conf, right, c)
    if thresholds is not None:
        figures["gate"] = gate_figures(conf, right, thresholds)
    return figures


def format_selective(figures: Mapping[str, Any]) -> str:
    """One line of selective figures (and one for the gate, when there is one)."""
    parts = [f"aurc {figures['aurc']:.4f}"] + [
        f"acc@{int(c * 100)}% {figures[f'accuracy_at_{int(c * 100)}']:.4f}" for c in COVERAGES
    ]
    lines = ["selective  " + "   ".join(parts)]
    gate = figures.get("gate")
    if gate:
        lines.append(
            f"gate       kept {gate['kept']} of {gate['answers']} (coverage {gate['coverage']:.4f}), "
            f"precision {gate['precision']:.4f}, abstention rate {gate['abstention_rate']:.4f}"
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------- gating in CI


def _lookup(report: Mapping[str, object], path: str) -> float | None:
    value: object = report
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return None
    return float(value)


def tolerance_problem(name: object, value: object) -> str | None:
    """What is wrong with one tolerance (None: nothing): its name must be a gated metric or
    ``default`` (an unknown one would silently gate nothing), its value a finite number >= 0."""
    known = ["default", *GATED_METRICS]
    if name not in known:
        return f"unknown metric {name!r}; use one of {', '.join(known)}"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        return f"tolerance {name}={value!r} is not a number >= 0"
    if not math.isfinite(value):
        return f"tolerance {name}={value!r} is not finite"
    return None


def check_tolerances(tolerances: Mapping[str, Any], where: str) -> dict[str, float]:
    """Tolerances by gated metric name (or ``default``), each checked by
    :func:`tolerance_problem`; a refusal names ``where``."""
    if not isinstance(tolerances, Mapping):
        raise InvalidRequest(f"{where}: tolerances must be a map of metric -> number")
    for name, value in tolerances.items():
        problem = tolerance_problem(name, value)
        if problem is not None:
            raise InvalidRequest(f"{where}: {problem}")
    return {name: float(value) for name, value in tolerances.items()}


def read_baseline(path: str | Path) -> dict[str, Any]:
    """A ``laya eval --json`` report to gate against, checked before any evaluation: a JSON
    object that holds at least one gated metric (else every gate would pass) and, if it has
    ``tolerances``, valid ones."""
    where = f"--gate {path}"
    try:
        baseline = json.loads(read_input_text(path, "baseline report"))
    except ValueError as exc:
        raise InvalidRequest(f"{where}: {exc}") from None
    if not isinstance(baseline, dict):
        raise InvalidRequest(f"{where}: a baseline is a laya eval --json report (a JSON object)")
    if all(_lookup(baseline, metric) is None for metric in GATED_METRICS):
        raise InvalidRequest(
            f"{where}: holds none of the gated metrics ({', '.join(GATED_METRICS)}); write the "
            "baseline with laya eval --json"
        )
    tolerances = baseline.get("tolerances") or {}
    baseline["tolerances"] = check_tolerances(tolerances, f"{where}, tolerances")
    return baseline


def compare(
    report: Mapping[str, Any],
    baseline: Mapping[str, Any],
    tolerances: Mapping[str, float] | None = None,
) -> list[str]:
    """Every metric of ``GATED_METRICS`` that both reports hold and that regressed past its
    tolerance (the baseline's own ``tolerances``, overridden by ``tolerances``), as one line each."""
    given = {**(baseline.get("tolerances") or {}), **(tolerances or {})}
    failures = []
    for path, higher_is_better in GATED_METRICS.items():
        now, then = _lookup(report, path), _lookup(baseline, path)
        if now is None or then is None:
            continue
        tolerance = float(given.get(path, given.get("default", DEFAULT_TOLERANCE)))
        if higher_is_better and now < then - tolerance:
            failures.append(f"{path} {now:.4f} < baseline {then:.4f} - {tolerance:g}")
        elif not higher_is_better and now > then + tolerance:
            failures.append(f"{path} {now:.4f} > baseline {then:.4f} + {tolerance:g}")
    return failures
