"""Evaluating the strategies for choices with many options: a shortlist (does the expected label
survive the narrowing, and is it then picked?) and a tournament (does it reach the final group,
and is it then picked?). Each is an evaluation report with two figures more
(docs/many-options.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .dataset import Dataset
from .report import EvalReport
from .runs import evaluate

if TYPE_CHECKING:
    from ..engine.strategies.shortlist import Embedder
    from ..runtime import Runtime

__all__ = [
    "DEFAULT_SHORTLIST_K",
    "DEFAULT_TOURNAMENT_GROUP",
    "SHORTLIST_REPORT_SCHEMA",
    "TOURNAMENT_REPORT_SCHEMA",
    "evaluate_shortlist",
    "evaluate_tournament",
]

DEFAULT_SHORTLIST_K = 20
DEFAULT_TOURNAMENT_GROUP = 16
SHORTLIST_REPORT_SCHEMA = "laya-shortlist-evals-report/1"
TOURNAMENT_REPORT_SCHEMA = "laya-tournament-evals-report/1"


Answer = Callable[[Any, dict[str, Any], Any], Mapping[str, Any]]  # (state, questions, gate)


class _StrategyRunner:
    """A runner answering each state with one strategy call, keeping every result."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.results: list[dict[str, Any]] = []

    def predict_batch(
        self, states: Sequence[Any], questions: dict[str, Any], **options: Any
    ) -> list[dict[str, Any]]:
        found = [dict(self.answer(s, questions, options.get("min_confidence"))) for s in states]
        self.results.extend(found)
        return found


@dataclass(frozen=True)
class _Strategy:
    """What a strategy's report is called and which part of an answer says what it kept."""

    schema: str
    part: str  # the answer's field the strategy adds
    kept: str  # the key in it listing the labels kept
    figures: tuple[str, str]  # the names of the survival share and the accuracy on survivors


_SHORTLIST = _Strategy(
    SHORTLIST_REPORT_SCHEMA,
    "shortlist",
    "candidates",
    ("shortlist_recall_at_k", "shortlist_accuracy_on_recalled"),
)
_TOURNAMENT = _Strategy(
    TOURNAMENT_REPORT_SCHEMA,
    "tournament",
    "finalists",
    ("tournament_survival_rate", "tournament_accuracy_on_survivors"),
)


def _strategy_report(
    strategy: _Strategy, answer: Answer, dataset: Dataset, config: dict[str, object]
) -> EvalReport:
    """Every example answered by ``answer``: the report (``config`` after the strategy's schema)
    with the share of expected labels the strategy kept and the accuracy on those added
    (:func:`_survival`)."""
    runner = _StrategyRunner(answer)
    report = evaluate(runner, dataset, config={"schema": strategy.schema, **config})
    kept, accuracy = _survival(report, dataset, runner.results, strategy.part, strategy.kept)
    report.overall.update(dict(zip(strategy.figures, (kept, accuracy))))
    return report


def _source(dataset_path: str | None) -> dict[str, object]:
    """The dataset's path for a report's config, where it has one."""
    return {"dataset": dataset_path} if dataset_path else {}


def _survival(
    report: EvalReport, dataset: Dataset, results: list[dict[str, Any]], field: str, key: str
) -> tuple[float, float]:
    """The share of choice answers whose expected label is in each answer's ``field[key]`` (all
    labels when the strategy left the question whole), and the accuracy on those (NaN, shown as
    null, without them)."""
    kept = right = total = 0
    for example, result in zip(dataset, results):
        for qid, expected in example.expected.items():
            answer = (result.get("answers") or {}).get(qid) or {}
            if answer.get("type") != "choice":
                continue
            total += 1
            labels = (answer.get(field) or {}).get(key)
            if labels is None or expected in labels:
                kept += 1
                right += answer.get("choice") == expected
    if not total:
        return math.nan, math.nan
    return kept / total, (right / kept if kept else math.nan)


def evaluate_shortlist(
    agent: Runtime,
    dataset: Dataset,
    embed_fn: Embedder,
    *,
    k: int = DEFAULT_SHORTLIST_K,
    checkpoint_id: str,
    embedder_id: str,
    dataset_path: str | None = None,
) -> EvalReport:
    """Every example answered by ``agent.predict_shortlist(k, embed_fn)``: the usual figures,
    ``shortlist_recall_at_k`` and ``shortlist_accuracy_on_recalled``."""
    identity = {"checkpoint_id": checkpoint_id, "embedder_id": embedder_id, "k": k}
    return _strategy_report(
        _SHORTLIST,
        lambda state, questions, gate: agent.predict_shortlist(
            state, questions, k, embed=embed_fn, min_confidence=gate
        ),
        dataset,
        {**identity, **_source(dataset_path)},
    )


def evaluate_tournament(
    agent: Runtime,
    dataset: Dataset,
    *,
    group_size: int = DEFAULT_TOURNAMENT_GROUP,
    checkpoint_id: str,
    dataset_path: str | None = None,
) -> EvalReport:
    """Every example answered by ``agent.predict_tournament(group_size)``: the usual figures,
    ``tournament_survival_rate`` and ``tournament_accuracy_on_survivors``."""
    identity = {"checkpoint_id": checkpoint_id, "group_size": group_size}
    return _strategy_report(
        _TOURNAMENT,
        lambda state, questions, gate: agent.predict_tournament(
            state, questions, group_size, min_confidence=gate
        ),
        dataset,
        {**identity, **_source(dataset_path)},
    )
