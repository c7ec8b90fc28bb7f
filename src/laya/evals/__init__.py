"""Labelled evaluation and CI gates: ``laya eval run|validate|compare|agreement|evidence`` and
the ``laya-evals`` script, and the same in Python (docs/cli.md, "laya eval"). Importing it
loads neither torch nor a model.

``laya.evals`` holds the names of the published runtime's module of that name; the CLI is
:mod:`laya.evals.evals_command`, the many-option strategies' evaluation
:mod:`laya.evals.many_options`, a checkpoint's evidence :mod:`laya.evals.evidence`.
"""

from __future__ import annotations

from .agreement import compare_agreement, evaluate_agreement
from .dataset import (
    Dataset,
    EvalError,
    Example,
    file_fingerprint,
    questions_fingerprint,
)
from .report import (
    COVERAGE_METRIC_DEFINITION,
    REPORT_SCHEMA,
    EvalReport,
    assert_regression,
    coverage_definition_conflict,
    is_confidence_metric,
    is_coverage_metric,
)
from .runs import OnnxRunner, RouterRunner, evaluate
from .scoring import (
    DEFAULT_EVALUATORS,
    SELECTIVE_COVERAGES,
    ChoiceAccuracy,
    Evaluator,
    MeanConfidence,
    NoulAccuracy,
    ScoreMAE,
    ScoreWithin,
    aurc,
    brier,
    default_evaluators,
    ece,
    selective_accuracy,
)

__all__ = [
    "COVERAGE_METRIC_DEFINITION",
    "DEFAULT_EVALUATORS",
    "REPORT_SCHEMA",
    "SELECTIVE_COVERAGES",
    "ChoiceAccuracy",
    "Dataset",
    "EvalError",
    "EvalReport",
    "Evaluator",
    "Example",
    "MeanConfidence",
    "NoulAccuracy",
    "OnnxRunner",
    "RouterRunner",
    "ScoreMAE",
    "ScoreWithin",
    "assert_regression",
    "aurc",
    "brier",
    "compare_agreement",
    "coverage_definition_conflict",
    "default_evaluators",
    "ece",
    "evaluate",
    "evaluate_agreement",
    "file_fingerprint",
    "is_confidence_metric",
    "is_coverage_metric",
    "questions_fingerprint",
    "selective_accuracy",
]
