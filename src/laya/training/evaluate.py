"""Labelled decision data: read and check it, score a model on it, and report the figures.

A labelled row is ``{"id", "domain", "state", "questions": {qid: question}, "answers": {qid:
gold}}`` (one JSON object per line): a choice gold is a criteria label, a score gold a level
index, a noul gold a bool. ``evaluate`` answers every row with a real ``Agent`` (so the figures
are what users get) and computes accuracy, score MAE, Brier, ECE, latency and a per-domain table.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from ..checkpoint import check_path
from ..commands import (
    Advance,
    check_output_file,
    command_parser,
    progress,
    read_input_text,
    run_command,
)
from ..engine.decoding import binned
from ..engine.questions import Question, QuestionId, option_bucket, parse_question
from ..engine.scores import ECE_BINS, Record, is_correct
from ..engine.states import check_state
from ..errors import InvalidRequest
from ..files.atomic import replacing, write_atomically
from ..files.row_input import BadRows, read_rows
from .selective import (
    calibration_error,
    compare,
    format_selective,
    read_baseline,
    reliability_bins,
    selective_figures,
    tolerance_problem,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ..runtime import Runtime

__all__ = [
    "Example",
    "Record",
    "ece",
    "eval_main",
    "evaluate",
    "format_report",
    "json_safe",
    "pair_accuracy",
    "plot_reliability",
    "read_decisions",
    "selective_report",
    "summarise",
]

TYPES = ("choice", "score", "noul")


@dataclass(frozen=True)
class Example:
    """One labelled state: its questions (validated) and the gold option index of each."""

    where: str
    domain: str
    state: object
    raw_questions: dict[QuestionId, Any]
    questions: tuple[Question, ...]
    gold: tuple[int, ...]
    pair: str | None = None


# --------------------------------------------------------------------------- reading


def read_decisions(path: str | Path, bad: BadRows | None = None) -> list[Example]:
    """Every row of a labelled JSONL file, checked; bad input raises :class:`InvalidRequest`
    naming file, line and field. With ``bad`` (the commands), a row that cannot be used goes
    there (``FILE:LINE: field ...``) and the others are returned."""
    path = Path(path)
    if not path.is_file():
        raise InvalidRequest(f"{path}: no such data file")
    if bad is not None:
        return _usable_decisions(path, bad)
    lines = enumerate(read_input_text(path, "data file").split("\n"), start=1)
    examples = [_example(f"{path}, line {n}", line) for n, line in lines if line.strip()]
    if not examples:
        raise InvalidRequest(f"{path}: the split is empty (no labelled rows)")
    return examples


def _usable_decisions(path: Path, bad: BadRows) -> list[Example]:
    """The rows of ``path`` that can be used; the others go to ``bad``."""
    examples = []
    for row in read_rows(path, "data file", bad, format="jsonl").rows:
        try:
            examples.append(example_from_row(row.where, row.value))
        except InvalidRequest as exc:
            bad.add(row.where, bad.problem(row.where, str(exc)))
    if not examples:
        raise bad.none_usable(path, "labelled row")
    return examples


def _example(where: str, line: str) -> Example:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidRequest(f"{where}: malformed JSON ({exc.msg} at column {exc.colno})") from exc
    return example_from_row(where, row)


def example_from_row(where: str, row: object) -> Example:
    """One labelled row (a decoded JSONL object) checked; ``where`` prefixes every error."""
    if not isinstance(row, dict):
        raise InvalidRequest(f"{where}: a row must be a JSON object, got {type(row).__name__}")
    if row.get("state") is None:
        raise InvalidRequest(f"{where}, field 'state': missing")
    check_state(row["state"], f"{where}, field 'state':")
    for key in ("questions", "answers"):
        if not isinstance(row.get(key), dict):
            raise InvalidRequest(f"{where}, field '{key}': missing or not a JSON object")
    if not row["questions"]:
        raise InvalidRequest(f"{where}, field 'questions': no questions")
    questions, gold = [], []
    for qid, definition in row["questions"].items():
        try:
            question = parse_question(qid, definition)
        except (TypeError, ValueError) as exc:
            raise InvalidRequest(f"{where}, field 'questions.{qid}': {exc}") from exc
        if qid not in row["answers"]:
            raise InvalidRequest(
                f"{where}, field 'answers.{qid}': no gold answer for this question"
            )
        questions.append(question)
        gold.append(_gold_index(where, question, row["answers"][qid]))
    extra = sorted(set(row["answers"]) - set(row["questions"]), key=str)
    if extra:
        raise InvalidRequest(
            f"{where}, field 'answers.{extra[0]}': answers a question that is not asked"
        )
    domain = str(row.get("domain") or "unknown")
    pair = row.get("pair")
    if pair is not None and not isinstance(pair, str):
        raise InvalidRequest(f"{where}, field 'pair': a pair id must be a string, got {pair!r}")
    return Example(
        where, domain, row["state"], row["questions"], tuple(questions), tuple(gold), pair
    )


def _gold_index(where: str, q: Question, gold: object) -> int:
    """Index of the gold option in criteria order (noul: false 0, true 1)."""
    field = f"{where}, field 'answers.{q.qid}'"
    if q.type == "noul":
        if not isinstance(gold, bool):
            raise InvalidRequest(f"{field}: a noul answer must be true or false, got {gold!r}")
        return int(gold)
    if q.type == "score":
        k = len(q.options)
        if not isinstance(gold, int) or isinstance(gold, bool) or not 0 <= gold < k:
            raise InvalidRequest(
                f"{field}: a score answer must be a level index 0..{k - 1}, got {gold!r}"
            )
        return gold
    matches = [i for i, key in enumerate(q.keys) if key == gold and type(key) is type(gold)]
    if not matches:
        raise InvalidRequest(
            f"{field}: gold label {gold!r} is not among the options {list(q.keys)!r}"
        )
    return matches[0]


# --------------------------------------------------------------------------- metrics


def brier(records: Sequence[Record]) -> float:
    """Multi-class Brier score: mean over answers of the squared error to the one-hot gold."""
    return _mean(float(((r.probs - np.eye(len(r.probs))[r.gold]) ** 2).sum()) for r in records)


def _top_and_right(records: Sequence[Record]) -> tuple[np.ndarray, np.ndarray]:
    """Per answer its max probability and whether it is right."""
    conf = np.array([float(r.probs.max()) for r in records], dtype=np.float64)
    return conf, np.array([is_correct(r) for r in records], dtype=bool)


def reliability(records: Sequence[Record], bins: int = ECE_BINS) -> list[dict[str, float]]:
    """Equal-width bins on max probability: count, mean confidence and accuracy of each."""
    return reliability_bins(*_top_and_right(records), bins)


def ece(records: Sequence[Record], bins: int = ECE_BINS) -> float:
    """Expected calibration error: count-weighted |accuracy - confidence| over the bins."""
    return calibration_error(*_top_and_right(records), bins)


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else math.nan


def type_metrics(records: Sequence[Record]) -> dict[str, float]:
    """Accuracy (choice, noul) or MAE and exact accuracy (score), plus Brier, of one type."""
    if not records:
        return {"n": 0}
    out: dict[str, float] = {"n": len(records)}
    if records[0].type == "score":
        out["mae"] = _mean(abs(float(np.arange(len(r.probs)) @ r.probs) - r.gold) for r in records)
        out["exact"] = _mean(float(is_correct(r)) for r in records)
    else:
        out["accuracy"] = _mean(float(is_correct(r)) for r in records)
    out["brier"] = brier(records)
    return out


def pair_accuracy(records: Sequence[Record]) -> dict[str, float]:
    """Minimal pairs: the share of pairs (rows sharing a ``pair`` id) with every answer right.

    The states of a pair differ in one fact that flips the gold answer, so a model that answers
    by topic gets at most one of the two right.
    """
    groups: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        if r.pair is not None:
            groups[r.pair].append(r)
    pairs = [rs for rs in groups.values() if len(rs) >= 2]
    if not pairs:
        return {"n": 0}
    return {"n": len(pairs), "accuracy": _mean(float(all(map(is_correct, rs))) for rs in pairs)}


def summarise(records: Sequence[Record]) -> dict[str, Any]:
    """Every figure of a set of answers: per type, overall Brier and ECE, pairs, per domain."""
    by_domain: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        by_domain[r.domain].append(r)
    return {
        "answers": len(records),
        **_by_type(records),
        "brier": brier(records),
        "ece": ece(records),
        "pairs": pair_accuracy(records),
        "by_domain": {d: _by_type(rs) for d, rs in sorted(by_domain.items())},
    }


def _by_type(records: Sequence[Record]) -> dict[str, dict[str, float]]:
    return {t: type_metrics([r for r in records if r.type == t]) for t in TYPES}


# --------------------------------------------------------------------------- evaluation


class LoadOptions(TypedDict, total=False):
    """How ``laya.load`` loads a model that :func:`evaluate` (or ``calibrate``) is given by name
    or path (any other keyword of ``laya.load`` is handed on too)."""

    device: str | None
    token: str | None
    subfolder: str | None
    revision: str | None
    fast: bool
    precision: str | None
    backend: str | None
    onnx_path: str | os.PathLike[str] | None
    calibration: str | os.PathLike[str] | None


def evaluate(
    data: str | Path | Sequence[Example],
    model: Runtime | str | os.PathLike[str],
    *,
    advance: Advance | None = None,
    **load_options: Unpack[LoadOptions],
) -> dict[str, Any]:
    """Answer every labelled row with ``model`` (an Agent, a name or a path) and score it
    (``advance(1)`` after each row, for a progress bar)."""
    examples = read_decisions(data) if isinstance(data, (str, Path)) else list(data)
    if not examples:
        raise InvalidRequest("evaluate: no labelled rows to score; pass a JSONL file or Examples")
    agent = _load(model, **load_options) if isinstance(model, (str, os.PathLike)) else model
    records, elapsed = _answer_all(agent, examples, advance)
    report = summarise(records)
    report["states"] = len(examples)
    report["latency_ms_per_state"] = 1000.0 * elapsed / len(examples)
    report["reliability"] = reliability(records)
    report["selective"] = selective_report(records, getattr(agent, "calibration", None))
    return report


def _load(model: str | os.PathLike[str], **options: Unpack[LoadOptions]) -> Runtime:
    from ..runtime import load

    return load(model, **options)


def _answer_all(
    agent: Runtime, examples: Sequence[Example], advance: Advance | None = None
) -> tuple[list[Record], float]:
    """Answer every row with one ``predict_batch`` call per state, timing the calls; a row the
    model refuses is named by its file and line."""
    records, seconds = [], 0.0
    for ex in examples:
        started = time.perf_counter()
        try:
            result = agent.predict_batch([ex.state], ex.raw_questions)[0]
        except InvalidRequest as exc:
            raise InvalidRequest(f"{ex.where}: {exc}") from None
        seconds += time.perf_counter() - started
        for q, gold in zip(ex.questions, ex.gold):
            probs = answer_probs(q, result["answers"][q.qid])
            records.append(Record(q.type, ex.domain, probs, gold, ex.pair))
        if advance is not None:
            advance(1)
    return records, seconds


def answer_probs(q: Question, answer: Mapping[str, Any]) -> np.ndarray:
    """The option distribution of an answer dict, in criteria order (noul: [false, true])."""
    if q.type == "noul":
        return np.array([1.0 - answer["noul"], answer["noul"]])
    probabilities = answer["probabilities"]
    keys = q.keys if q.type == "choice" else [str(i) for i in range(len(q.keys))]
    return np.array([probabilities[k] for k in keys], dtype=np.float64)


# --------------------------------------------------------------------------- selective


def selective_report(records: Sequence[Record], calibration: object = None) -> dict[str, Any]:
    """Accuracy at coverage and AURC of the answers; with a calibration that has thresholds, what
    its gate keeps (coverage, precision, abstention rate)."""
    conf, right = answer_confidences(records, calibration)
    gate = getattr(calibration, "thresholds", None)
    thresholds = [_threshold(r, gate) for r in records] if gate else None
    return selective_figures(conf, right, thresholds)


def answer_confidences(
    records: Sequence[Record], calibration: object = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per answer, what the gate reads (max probability, through the calibration's binning map
    when it has one) and whether the answer is right."""
    bins = getattr(calibration, "binning_map", None) or {}
    conf = []
    for r in records:
        top, table = float(r.probs.max()), bins.get(option_bucket(r.type, len(r.probs)))
        conf.append(round(binned(top, table), 4) if table else top)
    return np.asarray(conf), np.asarray([is_correct(r) for r in records], dtype=bool)


def _threshold(record: Record, gate: dict[str, float]) -> float:
    bucket = option_bucket(record.type, len(record.probs))
    return float(gate.get(bucket, gate.get("default", 0.0)))


def _tolerance(text: str) -> tuple[str, float]:
    """``--tolerance 0.02`` (every metric) or ``--tolerance ece=0.005`` (one gated metric)."""
    name, _, value = text.rpartition("=")
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    problem = tolerance_problem(name or "default", number)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return name or "default", number


def _gate(
    report: Mapping[str, object], baseline: Mapping[str, object], tolerances: dict[str, float]
) -> int:
    """Exit status of ``--gate``: 1 (one FAIL line per metric) when a metric regressed."""
    failures = compare(report, baseline, tolerances)
    for line in failures:
        print(f"FAIL {line}", file=sys.stderr)
    if not failures:
        print("gate: no metric regressed against the baseline")
    return 1 if failures else 0


# --------------------------------------------------------------------------- reporting


def format_report(report: dict[str, Any]) -> str:
    """A readable table: per-type figures, calibration, latency and the per-domain breakdown."""
    lines = [
        f"states {report.get('states', '-')}   answers {report['answers']}   "
        f"brier {report['brier']:.4f}   ece {report['ece']:.4f}"
        + (
            f"   latency {report['latency_ms_per_state']:.1f} ms/state"
            if "latency_ms_per_state" in report
            else ""
        ),
        "",
        f"{'domain':<20} {'choice acc':>10} {'noul acc':>9} {'score mae':>9} {'score exact':>11} "
        f"{'answers':>7}",
    ]
    rows = [("ALL", report), *report["by_domain"].items()]
    for name, part in rows:
        count = sum(part[t]["n"] for t in TYPES)
        lines.append(
            f"{name:<20} {_fmt(part['choice'], 'accuracy'):>10} {_fmt(part['noul'], 'accuracy'):>9} "
            f"{_fmt(part['score'], 'mae'):>9} {_fmt(part['score'], 'exact'):>11} {count:>7}"
        )
    pairs = report.get("pairs", {"n": 0})
    if pairs["n"]:
        lines += ["", f"minimal pairs {pairs['n']}   pair accuracy {pairs['accuracy']:.4f}"]
    return "\n".join(lines)


def _fmt(metrics: dict[str, float], key: str) -> str:
    value = metrics.get(key)
    return "-" if value is None or math.isnan(value) else f"{value:.4f}"


def plot_reliability(report: dict[str, Any], path: str | Path) -> Path:
    """Save a reliability diagram (accuracy against confidence per bin) as an image."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bins = [b for b in report["reliability"] if b["count"]]
    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
    ax.bar(
        [(b["low"] + b["high"]) / 2 for b in bins],
        [b["accuracy"] for b in bins],
        width=1 / len(report["reliability"]),
        edgecolor="black",
        alpha=0.7,
        label="accuracy",
    )
    ax.plot([b["confidence"] for b in bins], [b["accuracy"] for b in bins], "o-", color="C1")
    ax.set(xlabel="confidence (max probability)", ylabel="accuracy", xlim=(0, 1), ylim=(0, 1))
    ax.set_title(f"Reliability (ECE {report['ece']:.3f})")
    ax.legend(loc="upper left")
    fig.tight_layout()
    with replacing(path) as (fd, _), os.fdopen(fd, "wb", closefd=False) as out:
        fig.savefig(out, dpi=120, format=Path(path).suffix.lstrip(".") or "png")
    plt.close(fig)
    return Path(path)


def json_safe(value: Any) -> Any:
    """NaN and infinities as None, recursively, so a report is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def decisions_parser(prog: str, description: str, data_help: str) -> argparse.ArgumentParser:
    """A command's parser reading labelled decisions (DATA) with a checkpoint (--model, --device)."""
    parser = command_parser(prog, description)
    parser.add_argument("data", help=data_help)
    parser.add_argument("--model", required=True, help="checkpoint name (e.g. mini) or directory")
    parser.add_argument("--device", default="cpu", help="torch device")
    return parser


def eval_main(argv: Sequence[str] | None = None) -> int:
    """``laya eval DATA.jsonl --model NAME_OR_PATH [--json OUT] [--plot OUT.png]
    [--calibration FILE] [--gate BASELINE.json [--tolerance [METRIC=]T]]``."""
    return run_command("laya eval", argv, _parse_args, _eval_command)


def _parse_args(argv: list[str]) -> argparse.Namespace:
    parser = decisions_parser(
        "laya eval",
        "Score a checkpoint on labelled decisions: accuracy, score MAE, calibration (ECE, Brier) "
        "per question type, selective accuracy; --gate fails on a regression.",
        data_help="labelled decisions (JSONL)",
    )
    parser.add_argument("--json", dest="json_out", help="also write the report as JSON here")
    parser.add_argument("--plot", help="also save a reliability diagram (PNG) here")
    parser.add_argument("--calibration", help="apply this calibration file (laya calibrate)")
    parser.add_argument(
        "--gate", metavar="BASELINE.json", help="exit 1 when a metric regresses past this report"
    )
    parser.add_argument(
        "--skip-bad", action="store_true", help="exit 0 though some rows cannot be used"
    )
    parser.add_argument(
        "--tolerance",
        type=_tolerance,
        action="append",
        default=[],
        metavar="[METRIC=]T",
        help="allowed regression for --gate; 0.01 when not given (e.g. ece=0.005)",
    )
    args = parser.parse_args(argv)
    if args.tolerance and not args.gate:
        parser.error("--tolerance sets what --gate allows; add --gate BASELINE.json")
    return args


def _eval_command(args: argparse.Namespace) -> int:
    extra = {"calibration": args.calibration} if args.calibration else {}
    check_path(args.model, "--model")
    for path, flag in ((args.json_out, "--json"), (args.plot, "--plot")):
        if path:
            check_output_file(path, flag)
    baseline = read_baseline(args.gate) if args.gate else None
    bad = BadRows()
    examples = read_decisions(args.data, bad)
    with progress(len(examples)) as advance:
        report = evaluate(examples, args.model, advance=advance, device=args.device, **extra)
    print(format_report(report))
    print(format_selective(report["selective"]))
    if args.json_out:
        write_atomically(args.json_out, json.dumps(json_safe(report), indent=2) + "\n")
    if args.plot:
        print(f"reliability diagram: {plot_reliability(report, args.plot)}")
    gated = 0 if baseline is None else _gate(report, baseline, dict(args.tolerance))
    return bad.report("laya eval", args.skip_bad) or gated
