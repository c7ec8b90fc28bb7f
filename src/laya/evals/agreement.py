"""Teacher/student agreement: how often a student's choices match a reference run's, measured
against how often the reference agrees with itself when run again (its noise floor).

Each input is an evaluation report (``laya eval run --json``) over the same dataset: the
reference, a repeat of the reference, and the student. Agreement is the share of the choice
answers (case line and question id) on which two runs picked the same label; each figure comes
with a bootstrap interval over cases (docs/cli.md, "laya eval agreement").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .dataset import Dataset, EvalError, Example
from .runs import evaluate

__all__ = ["compare_agreement", "evaluate_agreement"]

CONFIDENCE = 0.95


def _choices(report: Mapping[str, object], what: str) -> dict[tuple[object, str], str]:
    """(case line, question id) -> the label picked, for every choice answer of a report."""
    cases = report.get("cases") if isinstance(report, Mapping) else None
    if not isinstance(cases, list):
        raise EvalError(f"{what}: not a laya eval report with cases; write it with --json")
    picked = {}
    for case in cases:
        if not isinstance(case, Mapping):
            continue
        for qid, answer in (case.get("answers") or {}).items():
            if isinstance(answer, Mapping) and isinstance(answer.get("answer"), str):
                picked[(case.get("line"), qid)] = answer["answer"]
    return picked


def _agreement(
    left: dict[tuple[object, str], str],
    right: dict[tuple[object, str], str],
    keys: list[tuple[object, str]],
    draws: np.ndarray,
) -> dict[str, Any]:
    """The share of ``keys`` both runs answered alike, with its bootstrap interval."""
    same = np.array([left[k] == right[k] for k in keys], dtype=np.float64)
    resampled = same[draws].mean(axis=1) if len(same) else np.array([np.nan])
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(resampled, [tail, 100 - tail])
    return {
        "agreement": float(same.mean()) if len(same) else None,
        "interval": [float(low), float(high)],
        "n": int(len(same)),
    }


def compare_agreement(
    reference: Mapping[str, object],
    repeat: Mapping[str, object],
    student: Mapping[str, object],
    *,
    bootstrap_samples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Reference/repeat and reference/student agreement over the choice answers all three runs
    gave, each with a 95 % bootstrap interval, and the student's gap to the noise floor."""
    if isinstance(bootstrap_samples, bool) or not isinstance(bootstrap_samples, int):
        raise EvalError(f"bootstrap_samples must be a whole number, got {bootstrap_samples!r}")
    if bootstrap_samples < 1:
        raise EvalError(f"bootstrap_samples must be at least 1, got {bootstrap_samples}")
    runs = [
        _choices(r, w)
        for r, w in ((reference, "reference"), (repeat, "repeat"), (student, "student"))
    ]
    keys = sorted(set(runs[0]) & set(runs[1]) & set(runs[2]), key=str)
    if not keys:
        raise EvalError("the three reports share no choice answers; run them on the same dataset")
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(keys), size=(bootstrap_samples, len(keys)))
    floor = _agreement(runs[0], runs[1], keys, draws)
    student_figure = _agreement(runs[0], runs[2], keys, draws)
    return {
        "n": len(keys),
        "bootstrap_samples": bootstrap_samples,
        "seed": seed,
        "reference_repeat": floor,
        "reference_student": student_figure,
        "gap": float(floor["agreement"] - student_figure["agreement"]),
    }


def evaluate_agreement(
    runner: object,
    reference: dict[str, Any],
    repeat: Mapping[str, object],
    *,
    student_provenance: Mapping[str, object],
    model: str | None = None,
    bootstrap_samples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Answer the reference report's cases with ``runner`` (the student), then
    :func:`compare_agreement`; the result records ``student_provenance``."""
    cases = [c for c in reference.get("cases") or [] if isinstance(c, Mapping) and "state" in c]
    if not cases:
        raise EvalError("the reference report holds no cases with their states to answer again")
    examples = [
        Example(
            c["state"],
            c["questions"],
            {q: a["expected"] for q, a in c["answers"].items()},
            model=model,
        )
        for c in cases
    ]
    lines = [int(c["line"]) for c in cases]
    student = evaluate(runner, Dataset(examples, None, lines)).to_json()
    figures = compare_agreement(
        reference, repeat, student, bootstrap_samples=bootstrap_samples, seed=seed
    )
    return {**figures, "student_provenance": dict(student_provenance)}
