"""An evaluation report: its configuration, the overall figures, the figures per slice and per
case; JSON and Markdown forms, and the comparison with a baseline report that gates CI.

The JSON form (schema :data:`REPORT_SCHEMA`) is what ``laya eval run --json`` writes and what
``--baseline`` and ``laya eval compare`` read back (docs/cli.md, "laya eval run").
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from ..commands import read_input_text
from ..training.evaluate import json_safe
from ..training.selective import DEFAULT_TOLERANCE
from .dataset import EvalError

__all__ = [
    "COVERAGE_METRIC_DEFINITION",
    "REPORT_SCHEMA",
    "SLICE_DIMENSIONS",
    "EvalReport",
    "assert_regression",
    "coverage_definition_conflict",
    "higher_is_better",
    "is_number",
    "is_confidence_metric",
    "is_coverage_metric",
    "read_report",
]

REPORT_SCHEMA = "laya-evals-report/1"
COVERAGE_METRIC_DEFINITION = 2  # selective_accuracy@C: the ceil(C * n) most confident answers
SLICE_DIMENSIONS = ("language", "model", "qid", "tag")
_TIMING = ("latency_", "cost_per_decision_")
_LOWER = ("score_mae", "ece", "brier", "aurc", "errors")


def is_coverage_metric(name: str) -> bool:
    """Whether ``name`` is an accuracy at a coverage (``selective_accuracy@80``)."""
    return name.startswith("selective_accuracy@")


def is_confidence_metric(name: str) -> bool:
    """Whether ``name`` reads the answers' confidences (calibration and selective figures)."""
    return name in ("ece", "brier", "aurc", "mean_confidence") or is_coverage_metric(name)


def higher_is_better(name: str) -> bool | None:
    """True for an accuracy, False for an error, a distance or a time, None for a count or the
    mean confidence (neither way is better)."""
    if name in _LOWER or name.startswith(_TIMING):
        return False
    if "accuracy" in name or name.startswith("score_within_"):
        return True
    return None


def coverage_definition_conflict(candidate_config: object, baseline: object) -> str | None:
    """Why accuracies at a coverage of two reports cannot be compared (None: they can): their
    ``coverage_metric_definition`` differ."""
    theirs = _config(baseline).get("coverage_metric_definition")
    ours = _config(candidate_config).get("coverage_metric_definition", COVERAGE_METRIC_DEFINITION)
    if theirs is None or theirs == ours:
        return None
    return (
        f"the baseline's selective_accuracy@ figures use coverage definition {theirs}, this "
        f"report's {ours}; re-run the baseline with this laya"
    )


def _config(value: object) -> Mapping[str, object]:
    """The configuration block of a report, a report's JSON, or a configuration itself."""
    if isinstance(value, EvalReport):
        return value.config
    if isinstance(value, Mapping):
        inner = value.get("config")
        return inner if isinstance(inner, Mapping) else value
    return {}


@dataclass
class EvalReport:
    """The figures of one evaluation: ``config`` (what was run), ``overall``, ``slices``
    (dimension -> value -> figures) and ``cases`` (one entry per example)."""

    config: dict[str, Any] = field(default_factory=dict)
    overall: dict[str, float] = field(default_factory=dict)
    slices: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    cases: list[dict[str, object]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON object (NaN as null)."""
        reply: dict[str, Any] = json_safe(
            {
                "schema": REPORT_SCHEMA,
                "config": self.config,
                "overall": self.overall,
                "slices": self.slices,
                "cases": self.cases,
            }
        )
        return reply

    def to_markdown(self) -> str:
        """The overall figures and each slice as Markdown tables."""
        lines = ["# laya evaluation", "", "| metric | value |", "|---|---|"]
        lines += [f"| {name} | {_shown(value)} |" for name, value in self.overall.items()]
        for dimension, groups in self.slices.items():
            names = sorted({name for figures in groups.values() for name in figures})
            lines += ["", f"## by {dimension}", "", f"| {dimension} | " + " | ".join(names) + " |"]
            lines.append("|---" * (len(names) + 1) + "|")
            for value, figures in groups.items():
                cells = " | ".join(_shown(figures.get(name)) for name in names)
                lines.append(f"| {value} | {cells} |")
        return "\n".join(lines) + "\n"

    def comparable_to(self, baseline: Mapping[str, object]) -> tuple[bool, list[str]]:
        """Whether the baseline answered the same data and questions under the same metric
        definitions, and if not, why (one reason per difference)."""
        theirs, ours = _config(baseline), self.config
        reasons = []
        if baseline.get("schema", REPORT_SCHEMA) != REPORT_SCHEMA:
            reasons.append(
                f"the baseline is a {baseline.get('schema')!r} report, not {REPORT_SCHEMA}"
            )
        for key, what in (("dataset_sha256", "dataset"), ("questions_sha256", "questions")):
            if theirs.get(key) and ours.get(key) and theirs[key] != ours[key]:
                reasons.append(f"the baseline was run on another {what} ({key} differs)")
        conflict = coverage_definition_conflict(ours, baseline)
        if conflict:
            reasons.append(conflict)
        return not reasons, reasons

    def compare(
        self, baseline: Mapping[str, object], tolerances: dict[str, float] | None = None
    ) -> dict[str, dict[str, float]]:
        """Every overall figure both reports hold that has a better direction, compared:
        ``{metric: {baseline, candidate, delta, tolerance, regressed}}`` (``regressed`` 1.0 when
        it moved the wrong way by more than its tolerance: ``tolerances[metric]``, else
        ``tolerances["default"]``, else 0.01). Timings are compared only when given a tolerance.
        """
        given = dict(tolerances or {})
        theirs = baseline.get("overall") if isinstance(baseline, Mapping) else None
        if not isinstance(theirs, Mapping):
            raise EvalError("the baseline holds no 'overall' figures; write it with --json")
        rows = {}
        for name, now in self.overall.items():
            direction, then = higher_is_better(name), theirs.get(name)
            if direction is None or not is_number(now) or not is_number(then):
                continue
            if name.startswith(_TIMING) and name not in given:
                continue
            tolerance = float(given.get(name, given.get("default", DEFAULT_TOLERANCE)))
            delta = float(now) - float(then)
            worse = -delta if direction else delta
            rows[name] = {
                "baseline": float(then),
                "candidate": float(now),
                "delta": delta,
                "tolerance": tolerance,
                "regressed": float(worse > tolerance + 1e-12),
            }
        return rows


def assert_regression(
    report: EvalReport, baseline: Mapping[str, object], tolerances: dict[str, float] | None = None
) -> dict[str, dict[str, float]]:
    """:meth:`EvalReport.compare`, raising ``AssertionError`` naming every figure that
    regressed (the comparison is returned when none did)."""
    rows = report.compare(baseline, tolerances)
    regressed = [f"{name} {_regression(row)}" for name, row in rows.items() if row["regressed"]]
    if regressed:
        raise AssertionError("regressed against the baseline: " + "; ".join(regressed))
    return rows


def _regression(row: Mapping[str, float]) -> str:
    return (
        f"{row['candidate']:.4f} vs baseline {row['baseline']:.4f} "
        f"(delta {row['delta']:+.4f}, tolerance {row['tolerance']:g})"
    )


def read_report(path: str, what: str) -> dict[str, Any]:
    """A report written by ``laya eval run --json``, checked to be one; ``what`` names the flag."""
    try:
        data = json.loads(read_input_text(path, what))
    except ValueError as exc:
        raise EvalError(f"{what} {path}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("overall"), dict):
        raise EvalError(
            f"{what} {path}: not a laya eval report (no 'overall' figures); write one with "
            "laya eval run DATASET --json OUT"
        )
    return data


def is_number(value: object) -> TypeGuard[float]:
    """Whether ``value`` is a finite number (not a bool, not NaN)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _shown(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.4f}" if isinstance(value, float) else str(value)
