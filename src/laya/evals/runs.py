"""Run a labelled dataset through a runner and build its :class:`~laya.evals.report.EvalReport`.

A runner answers states: a :class:`RouterRunner` (a Router, each row's ``model`` pinning its
checkpoint) or an :class:`OnnxRunner` (one runtime, e.g. an ``ONNXAgent``). Consecutive rows
with the same questions and model are answered ``batch_size`` at a time (one at a time without
it), each call timed: a row's latency is its call's time, its cost per decision the call's time
shared among the call's rows. Every answer is scored by the evaluators and paired with its
confidence and correctness for the calibration and selective figures, overall and per slice
(language, model, question id, tag), and, when the answers say whether they automate (a
calibration file fitted with ``--risk``), with the automated figures
(:func:`laya.engine.risk.automation_summary`); docs/cli.md, "laya eval run".
"""

from __future__ import annotations

import math
import statistics
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..commands import Advance
from ..engine.risk import automation_summary
from ..errors import InvalidRequest
from ..version import __version__
from .dataset import Dataset, EvalError, Example, file_fingerprint, questions_fingerprint
from .report import COVERAGE_METRIC_DEFINITION, REPORT_SCHEMA, EvalReport
from .scoring import (
    SELECTIVE_COVERAGES,
    Evaluator,
    answer_confidence,
    aurc,
    brier,
    default_evaluators,
    ece,
    is_right,
    selective_accuracy,
)

if TYPE_CHECKING:
    from ..engine.result import Result
    from ..router import Router
    from ..runtime import Runtime

__all__ = ["EvalRunner", "EvalSettings", "OnnxRunner", "RouterRunner", "evaluate", "run_evaluation"]

ON_ERROR = ("fail", "skip")


@runtime_checkable
class EvalRunner(Protocol):
    """What :func:`evaluate` answers through: one ``predict_batch`` call per chunk of rows
    sharing questions and model."""

    def predict_batch(
        self,
        states: Sequence[object],
        questions: dict[str, object],
        model: str | None = None,
        batch_size: int | None = None,
        sort_by_length: bool = False,
        min_confidence: float | None = None,
    ) -> Sequence[Mapping[str, object]]: ...


class RouterRunner:
    """Answers through a :class:`~laya.router.Router`; a call's ``model`` pins its checkpoint,
    else ``model`` given here does (None: the Router routes)."""

    def __init__(self, router: Router, model: str | None = None) -> None:
        self.router = router
        self.model = model

    def predict(
        self,
        state: object,
        questions: dict[str, object],
        model: str | None = None,
        min_confidence: float | None = None,
    ) -> Result:
        """One state's result."""
        model = model or self.model
        return self.router.predict(state, questions, model=model, min_confidence=min_confidence)

    def predict_batch(
        self,
        states: Sequence[object],
        questions: dict[str, object],
        model: str | None = None,
        batch_size: int | None = None,
        sort_by_length: bool = False,
        min_confidence: float | None = None,
    ) -> list[Result]:
        """One result per state, in one ``predict_batch`` call."""
        model = model or self.model
        pinned = {"model": model} if model else {}
        requests = [{"state": s, "questions": questions, **pinned} for s in states]
        return list(
            self.router.predict_batch(
                requests,
                batch_size=batch_size,
                sort_by_length=sort_by_length,
                min_confidence=min_confidence,
            )
        )


class OnnxRunner:
    """Answers through one runtime (an ``ONNXAgent``, or any laya runtime); a row's ``model``
    is not used (there is one model)."""

    def __init__(self, agent: Runtime) -> None:
        self.agent = agent

    def predict(
        self,
        state: object,
        questions: dict[str, object],
        model: str | None = None,
        min_confidence: float | None = None,
    ) -> dict[str, object]:
        """One state's result."""
        return dict(self.agent.predict(state, questions, min_confidence=min_confidence))

    def predict_batch(
        self,
        states: Sequence[object],
        questions: dict[str, object],
        model: str | None = None,
        batch_size: int | None = None,
        sort_by_length: bool = False,
        min_confidence: float | None = None,
    ) -> list[dict[str, object]]:
        """One result per state, in one ``predict_batch`` call."""
        results = self.agent.predict_batch(
            list(states),
            questions,
            batch_size=batch_size,
            sort_by_length=sort_by_length,
            min_confidence=min_confidence,
        )
        return [dict(r) for r in results]


def _runner(runner: Any) -> EvalRunner:
    """A Router or a runtime wrapped as a runner; anything with ``predict_batch(states,
    questions, model=...)`` as it is."""
    if hasattr(runner, "route_batch"):
        return RouterRunner(runner)
    if hasattr(runner, "answer"):
        return OnnxRunner(runner)
    if not isinstance(runner, EvalRunner) or not callable(runner.predict_batch):
        raise TypeError(
            f"runner must be a Router, a laya runtime or a RouterRunner/OnnxRunner, got "
            f"{type(runner).__name__}"
        )
    return runner


@dataclass
class _Answer:
    """One scored answer and what it is sliced by."""

    qid: str
    scores: dict[str, float]
    confidence: float | None
    right: bool
    abstained: bool
    slices: list[tuple[str, str]]
    automate: bool | None = None
    in_set: bool | None = None
    set_size: int | None = None


@dataclass(frozen=True)
class EvalSettings:
    """How a run answers and scores: the calls' options, the error mode, the evaluators
    (:meth:`of` checks them where they enter)."""

    batch_size: int | None
    sort_by_length: bool
    min_confidence: float | None
    on_error: str
    evaluators: Sequence[Evaluator]

    @classmethod
    def of(
        cls,
        evaluators: Sequence[Evaluator] | None = None,
        batch_size: int | None = None,
        on_error: str = "fail",
        sort_by_length: bool = False,
        min_confidence: float | None = None,
    ) -> EvalSettings:
        """The checked settings: ``on_error`` one of :data:`ON_ERROR`, ``batch_size`` a whole
        number of at least 1 or None, the default evaluators where none are given."""
        if on_error not in ON_ERROR:
            raise EvalError(f"on_error must be one of {', '.join(ON_ERROR)}, got {on_error!r}")
        if batch_size is not None and (isinstance(batch_size, bool) or batch_size < 1):
            raise EvalError(f"batch_size must be a whole number >= 1, got {batch_size!r}")
        chosen = list(default_evaluators() if evaluators is None else evaluators)
        return cls(batch_size, sort_by_length, min_confidence, on_error, chosen)


@dataclass
class _Run:
    """What a run has gathered so far."""

    answers: list[_Answer] = field(default_factory=list)
    cases: list[dict[str, object]] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    costs: list[float] = field(default_factory=list)
    errors: int = 0


def evaluate(
    runner: object,
    dataset: Dataset,
    evaluators: Sequence[Evaluator] | None = None,
    batch_size: int | None = None,
    on_error: str = "fail",
    config: Mapping[str, object] | None = None,
    sort_by_length: bool = False,
    min_confidence: float | None = None,
) -> EvalReport:
    """Answer every example with ``runner`` and report the figures. ``on_error="skip"``
    records a row the runner refuses as a failed case and goes on; ``"fail"`` raises
    :class:`EvalError` naming its line."""
    how = EvalSettings.of(evaluators, batch_size, on_error, sort_by_length, min_confidence)
    return run_evaluation(runner, dataset, how, config)


def run_evaluation(
    runner: object,
    dataset: Dataset,
    how: EvalSettings,
    config: Mapping[str, object] | None = None,
    advance: Advance | None = None,
) -> EvalReport:
    """:func:`evaluate` with settings already checked, calling ``advance(n)`` as each call's
    ``n`` rows are done (``laya eval``'s progress bar)."""
    answering = _runner(runner)
    started = time.time()
    run = _Run()
    for chunk in _chunks(dataset, how.batch_size or 1):
        _answer_chunk(answering, dataset, chunk, how, run)
        if advance is not None:
            advance(len(chunk))
    settings = {
        "batch_size": how.batch_size,
        "sort_by_length": how.sort_by_length,
        "min_confidence": how.min_confidence,
        "on_error": how.on_error,
        "evaluators": [e.name for e in how.evaluators],
        "timing": {"started": started, "seconds": round(time.time() - started, 3)},
    }
    return EvalReport(
        config={**_config(dataset), **settings, **(config or {})},
        overall={"n_examples": len(run.cases), **_overall(run, how.min_confidence is not None)},
        slices=_slices(run.answers),
        cases=run.cases,
    )


def _config(dataset: Dataset) -> dict[str, object]:
    """What identifies a run: the report schema, the data and questions, and laya's version."""
    return {
        "schema": REPORT_SCHEMA,
        "dataset": dataset.path,
        "dataset_sha256": file_fingerprint(dataset.path) if dataset.path else None,
        "questions_sha256": questions_fingerprint(dataset),
        "laya_version": __version__,
        "coverage_metric_definition": COVERAGE_METRIC_DEFINITION,
    }


def _chunks(dataset: Dataset, size: int) -> list[list[int]]:
    """Indices of consecutive examples sharing questions and model, at most ``size`` a chunk."""
    chunks: list[list[int]] = []
    for i, example in enumerate(dataset.examples):
        last = dataset.examples[chunks[-1][0]] if chunks else None
        same = last is not None and last.questions == example.questions
        if same and last is not None and last.model == example.model and len(chunks[-1]) < size:
            chunks[-1].append(i)
        else:
            chunks.append([i])
    return chunks


def _answer_chunk(
    runner: EvalRunner,
    dataset: Dataset,
    chunk: list[int],
    how: EvalSettings,
    run: _Run,
) -> None:
    """Answer one chunk (one call) and score it; in skip mode a refused chunk is answered row by
    row, so only the rows refused are lost."""
    examples = [dataset.examples[i] for i in chunk]
    first = examples[0]
    began = time.perf_counter()
    try:
        results = runner.predict_batch(
            [e.state for e in examples],
            first.questions,
            model=first.model,
            batch_size=how.batch_size,
            sort_by_length=how.sort_by_length,
            min_confidence=how.min_confidence,
        )
    except InvalidRequest as exc:
        if how.on_error == "fail":
            raise EvalError(f"{_where(dataset, chunk[0])}: {exc}") from None
        if len(chunk) > 1:
            for i in chunk:
                _answer_chunk(runner, dataset, [i], how, run)
            return
        run.errors += 1
        run.cases.append({"line": dataset.lines[chunk[0]], "error": str(exc)})
        return
    elapsed = 1000.0 * (time.perf_counter() - began)
    for i, example, result in zip(chunk, examples, results):
        run.latencies.append(elapsed)
        run.costs.append(elapsed / len(chunk))
        run.cases.append(_case(dataset.lines[i], example, result, elapsed, how.evaluators, run))


def _where(dataset: Dataset, index: int) -> str:
    return f"{dataset.path or 'dataset'}:{dataset.lines[index]}"


def _case(
    line: int,
    example: Example,
    result: Mapping[str, object],
    elapsed: float,
    evaluators: Sequence[Evaluator],
    run: _Run,
) -> dict[str, object]:
    """One example's case entry; its answers are added to ``run``."""
    routing, answers = result.get("routing"), result.get("answers")
    routed = routing.get("model") if isinstance(routing, Mapping) else None
    model = str(routed or example.model or "-")
    language = example.language or "-"
    shown = {}
    for qid, expected in example.expected.items():
        answer = answers.get(qid) if isinstance(answers, Mapping) else None
        if not isinstance(answer, dict):
            raise EvalError(f"line {line}: the result has no answer for question {qid!r}")
        scores = {e.name: s for e in evaluators if (s := e.score(answer, expected)) is not None}
        slices = [("language", language), ("model", model), ("qid", qid)]
        slices += [("tag", tag) for tag in example.tags]
        right = is_right(answer, expected)
        gated = bool(answer.get("low_confidence"))
        scored = _Answer(qid, scores, answer_confidence(answer), right, gated, slices)
        run.answers.append(_with_automation(scored, answer, expected))
        shown[qid] = {
            "expected": expected,
            "answer": answer.get(answer.get("type", ""), None),
            "correct": right,
            "confidence": answer_confidence(answer),
            **_case_extras(answer),
        }
    return {
        "line": line,
        "state": example.state,
        "questions": example.questions,
        "model": model,
        "language": example.language,
        "tags": list(example.tags),
        "latency_ms": round(elapsed, 3),
        "answers": shown,
    }


def _with_automation(scored: _Answer, answer: Mapping[str, object], expected: object) -> _Answer:
    """``scored`` with whether the answer automated and whether its prediction set (a choice's)
    holds the expected label."""
    automate = answer.get("automate")
    scored.automate = automate if isinstance(automate, bool) else None
    members = answer.get("prediction_set")
    if isinstance(members, list) and answer.get("type") == "choice":
        scored.in_set = expected in members
        scored.set_size = len(members)
    return scored


def _case_extras(answer: Mapping[str, object]) -> dict[str, object]:
    """What a case keeps beyond the published fields, for ``laya eval compare``'s flips and
    shifts: the probabilities, and ``automate`` / ``prediction_set`` where the answer has them."""
    return {k: answer[k] for k in ("probabilities", "automate", "prediction_set") if k in answer}


def _figures(answers: Sequence[_Answer], gated: bool = False) -> dict[str, float]:
    """The per-answer metrics averaged, and the calibration and selective figures."""
    out: dict[str, float] = {"n_answers": len(answers)}
    sums: dict[str, list[float]] = defaultdict(list)
    for a in answers:
        for name, value in a.scores.items():
            sums[name].append(value)
    out.update({name: statistics.fmean(values) for name, values in sums.items()})
    paired = [(a.confidence, a.right) for a in answers if a.confidence is not None]
    conf, right = [c for c, _ in paired], [r for _, r in paired]
    out["ece"] = _or_nan(ece(conf, right))
    out["brier"] = _or_nan(brier(conf, right))
    out["aurc"] = _or_nan(aurc(conf, right))
    for coverage in SELECTIVE_COVERAGES:
        out[f"selective_accuracy@{round(coverage * 100)}"] = _or_nan(
            selective_accuracy(conf, right, coverage) if conf else None
        )
    if gated and answers:
        out["abstention_rate"] = sum(a.abstained for a in answers) / len(answers)
    out.update(
        automation_summary(
            [a.automate for a in answers],
            [a.right for a in answers],
            [a.in_set for a in answers],
            [a.set_size for a in answers],
        )
    )
    return out


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else value


def _overall(run: _Run, gated: bool) -> dict[str, float]:
    figures = _figures(run.answers, gated)
    for name, values in (("latency", run.latencies), ("cost_per_decision", run.costs)):
        figures[f"{name}_p50_ms"] = _percentile(values, 50)
        figures[f"{name}_p95_ms"] = _percentile(values, 95)
    figures["errors"] = run.errors
    return figures


def _percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile, nearest rank (NaN without values)."""
    if not values:
        return math.nan
    ranked = sorted(values)
    return ranked[max(0, math.ceil(q / 100 * len(ranked)) - 1)]


def _slices(answers: Sequence[_Answer]) -> dict[str, dict[str, dict[str, float]]]:
    groups: dict[str, dict[str, list[_Answer]]] = defaultdict(lambda: defaultdict(list))
    for a in answers:
        for dimension, value in a.slices:
            groups[dimension][value].append(a)
    return {
        dimension: {value: _figures(members) for value, members in sorted(values.items())}
        for dimension, values in groups.items()
    }
