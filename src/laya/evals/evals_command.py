"""``laya eval run|validate|compare|agreement|evidence`` (also the ``laya-evals`` script): score a
checkpoint on a labelled dataset and gate CI on the figures (docs/cli.md, "laya eval").

``laya eval DATA --model M`` without one of these words is laya's own evaluation of its training
data (:mod:`laya.training.evaluate`); the first word tells them apart. Exit codes: 0 ok, 1 a
limit, the baseline or the gate policy failed (``FAIL: ...`` lines on stderr), 2 a usage error.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..commands import (
    EXIT_FAILED,
    CommandParser,
    HelpFormatter,
    check_output_file,
    command_parser,
    progress,
    run_command,
)
from ..files.atomic import write_atomically
from ..files.row_input import BadRows
from .dataset import Dataset, EvalError, file_fingerprint, questions_fingerprint
from .policy import Limit, check_limits, check_policy, read_policy
from .report import SLICE_DIMENSIONS, EvalReport, read_report
from .runs import EvalRunner, EvalSettings, OnnxRunner, RouterRunner, run_evaluation

if TYPE_CHECKING:
    from .policy import Rule
    from .scoring import Evaluator

__all__ = ["ACTIONS", "eval_main", "main"]

ACTIONS = ("run", "validate", "compare", "agreement", "evidence")
_SHOWN = (
    "n_answers",
    "choice_accuracy",
    "noul_accuracy",
    "score_mae",
    "mean_confidence",
    "ece",
)


def eval_main(argv: Sequence[str] | None = None) -> int:
    """``laya eval``: one of :data:`ACTIONS` first runs the evaluation CLI (:func:`main`),
    anything else laya's own ``laya eval DATA --model M``."""
    args = list(argv or [])
    if args and args[0] in ACTIONS:
        return main(args)
    from ..training.evaluate import eval_main as own_eval_main

    return own_eval_main(args)


def main(argv: Sequence[str] | None = None) -> int:
    """``laya eval ACTION ...``: exit 0 ok, 1 a gate failed, 2 usage."""
    return run_command("laya eval", argv, _parser().parse_args, _work)


# --------------------------------------------------------------------------- arguments


def _finite(text: str) -> float:
    """An argparse type: a finite number (a limit of NaN or infinity would gate nothing)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _pair(text: str) -> tuple[str, float]:
    """An argparse type: ``METRIC=VALUE`` with a finite value."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected METRIC=VALUE, got {text!r}")
    return name.strip(), _finite(value)


def _tolerance(text: str) -> tuple[str, float]:
    """``--tolerance 0.02`` (every figure) or ``--tolerance ece=0.005`` (one figure), >= 0."""
    name, value = _pair(text) if "=" in text else ("default", _finite(text))
    if value < 0:
        raise argparse.ArgumentTypeError(f"a tolerance is >= 0, got {text!r}")
    return name, value


def _count(text: str) -> int:
    """An argparse type: a whole number >= 0."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


def _shift(text: str) -> float:
    """An argparse type: a probability change in [0, 1]."""
    value = _finite(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}")
    return value


def _revision(text: str) -> tuple[str | None, str]:
    """``--revision SHA`` (the pinned checkpoint) or ``--revision NAME=SHA``."""
    name, sep, sha = text.rpartition("=")
    if (sep and not name) or not sha:
        raise argparse.ArgumentTypeError(f"expected SHA or NAME=SHA, got {text!r}")
    return (name or None), sha


def _parser() -> argparse.ArgumentParser:
    from ..cli.command import fraction, positive_int

    parser = command_parser(
        "laya eval",
        "Score a checkpoint on a labelled dataset and gate CI on the figures (also laya-evals); "
        "laya eval DATA --model M without an action is laya's own evaluation.",
    )
    actions = parser.add_subparsers(dest="action", required=True, parser_class=CommandParser)
    run = _action(actions, "run", "answer DATASET and print, gate and write its figures")
    run.add_argument("dataset", help="labelled rows, one JSON object per line")
    run.add_argument(
        "--model",
        metavar="NAME|PATH",
        help="checkpoint (mini: the bundled offline model), or auto (the default): route each row "
        "by language (a row's own model field pins that row)",
    )
    run.add_argument("--device", help="answer on PyTorch on this device (default: see laya --help)")
    run.add_argument("--onnx", metavar="PATH", help="answer with this exported checkpoint (ONNX)")
    run.add_argument("--calibration", metavar="FILE", help="calibrate the checkpoint with FILE")
    _repeatable(
        run,
        "--revision",
        "the Hub revision of the pinned checkpoint, or of NAME (repeatable)",
        kind=_revision,
        metavar="SHA|NAME=SHA",
    )
    run.add_argument("--batch-size", type=positive_int, metavar="N", help="rows per call")
    run.add_argument("--sort-by-length", action="store_true", help="group similar lengths")
    run.add_argument("--min-confidence", type=fraction, metavar="P", help="abstain below P")
    run.add_argument(
        "--on-error",
        choices=("fail", "skip"),
        help="a row the model refuses stops the run, or is skipped and counted (default: fail; "
        "skip with --skip-bad)",
    )
    _skip_bad(run, "; also skips the rows the model refuses (--on-error skip)")
    run.add_argument("--min-accuracy", type=_finite, metavar="X", help="fail below this accuracy")
    run.add_argument("--max-ece", type=_finite, metavar="X", help="fail above this ECE")
    run.add_argument(
        "--score-within", type=_finite, metavar="TOL", help="also report score_within_TOL"
    )
    _limits(run)
    _repeatable(
        run,
        "--slice",
        "also print the figures per language, model, qid or tag (repeatable)",
        choices=SLICE_DIMENSIONS,
    )
    run.add_argument(
        "--json",
        dest="json_out",
        metavar="OUT",
        nargs="?",
        const="-",
        help="write the report as JSON (without OUT: print it, instead of the figures)",
    )
    run.add_argument("--markdown", metavar="OUT", help="write the report as Markdown")
    validate = _action(actions, "validate", "check DATASET and count its examples and questions")
    validate.add_argument("dataset", help="labelled rows, one JSON object per line")
    _skip_bad(validate, "")
    compare = _action(actions, "compare", "gate a saved REPORT against a baseline report")
    compare.add_argument("report", help="a report written by laya eval run --json")
    _limits(compare)
    compare.add_argument(
        "--max-flips",
        type=_count,
        metavar="N",
        help="with --baseline: fail when more than N answers changed their decision",
    )
    compare.add_argument(
        "--max-shift",
        type=_shift,
        metavar="P",
        help="with --baseline: fail when an answer that kept its decision moved a probability "
        "by more than P",
    )
    agreement = _action(actions, "agreement", "teacher/student choice agreement of three reports")
    agreement.add_argument("reference", help="the reference (teacher) report")
    agreement.add_argument("repeat", help="the reference run again (its noise floor)")
    agreement.add_argument("student", help="the student's report")
    agreement.add_argument(
        "--bootstrap-samples", type=positive_int, default=2000, help="resamples per interval"
    )
    agreement.add_argument("--seed", type=int, default=0, help="seed of the resampling")
    agreement.add_argument("--json", action="store_true", help="print the figures as JSON")
    evidence = _action(
        actions, "evidence", "the calibration and evaluation evidence of a checkpoint"
    )
    evidence.add_argument(
        "--checkpoint", required=True, metavar="DIR", help="a checkpoint directory"
    )
    evidence.add_argument("--report", metavar="REPORT", help="an evaluation report of it")
    return parser


def _action(actions: Any, name: str, summary: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = actions.add_parser(
        name,
        help=summary,
        description=summary[0].upper() + summary[1:] + ".",
        formatter_class=HelpFormatter,
    )
    return parser


def _skip_bad(parser: argparse.ArgumentParser, also: str) -> None:
    """``--skip-bad``: rows that cannot be read are still named on stderr, but exit 0."""
    parser.add_argument(
        "--skip-bad",
        action="store_true",
        help="exit 0 though some rows cannot be read (they are named on stderr)" + also,
    )


def _repeatable(
    parser: argparse.ArgumentParser,
    flag: str,
    help: str,
    *,
    kind: Callable[[str], object] = str,
    metavar: str | None = None,
    choices: Sequence[str] | None = None,
) -> None:
    """A flag that may be given again, each value (read by ``kind``) added to a list."""
    parser.add_argument(
        flag, type=kind, action="append", default=[], metavar=metavar, choices=choices, help=help
    )


def _limits(parser: argparse.ArgumentParser) -> None:
    """The baseline, tolerance, limit and gate policy flags of ``run`` and ``compare``."""
    parser.add_argument("--baseline", metavar="REPORT", help="fail on regressions against it")
    _repeatable(
        parser,
        "--tolerance",
        "allowed regression against --baseline, one figure or all (default 0.01)",
        kind=_tolerance,
        metavar="[M=]V",
    )
    _repeatable(parser, "--min", "fail if M < V", kind=_pair, metavar="M=V")
    _repeatable(parser, "--max", "fail if M > V", kind=_pair, metavar="M=V")
    parser.add_argument("--gate-policy", metavar="FILE", help="fail on the rules of this policy")


# --------------------------------------------------------------------------- actions


def _work(args: argparse.Namespace) -> int:
    return {
        "run": _run,
        "validate": _validate,
        "compare": _compare,
        "agreement": _agreement,
        "evidence": _evidence,
    }[args.action](args)


def _validate(args: argparse.Namespace) -> int:
    bad = BadRows()
    dataset = Dataset.from_jsonl(args.dataset, bad)
    counts: dict[str, int] = {}
    for example in dataset:
        for qid in example.expected:
            counts[qid] = counts.get(qid, 0) + 1
    print(f"examples {len(dataset)}")
    print(f"question_ids {len(counts)}")
    for qid, count in counts.items():
        print(f"  {qid} {count}")
    return bad.report("laya eval", args.skip_bad)


def _on_error(args: argparse.Namespace) -> str:
    """``--on-error``: ``skip`` under ``--skip-bad`` (which skips every row that cannot be
    used), else as given (default ``fail``)."""
    if args.skip_bad and args.on_error == "fail":
        raise EvalError("--skip-bad skips the rows the model refuses too; drop --on-error fail")
    return "skip" if args.skip_bad else args.on_error or "fail"


def _run(args: argparse.Namespace) -> int:
    for path, flag in ((args.json_out, "--json"), (args.markdown, "--markdown")):
        if path and path != "-":
            check_output_file(path, flag)
    on_error = _on_error(args)
    bad = BadRows()
    dataset = Dataset.from_jsonl(args.dataset, bad)
    baseline = read_report(args.baseline, "--baseline") if args.baseline else None
    rules = read_policy(args.gate_policy) if args.gate_policy else []
    if baseline is not None:
        _check_comparable(dataset, baseline)
    limits = _all_limits(args)

    runner, identity = _runner(args, dataset)
    evaluators = _evaluators(args.score_within)

    how = EvalSettings.of(
        evaluators, args.batch_size, on_error, args.sort_by_length, args.min_confidence
    )
    config = {**identity, "thresholds": _thresholds(limits)}
    with progress(len(dataset)) as advance:
        report = run_evaluation(runner, dataset, how, config, advance)
    if args.json_out != "-":
        _print_figures(report, args.slice)
    _write(report, args)
    gated = _gate(report.to_json(), limits, rules, baseline, dict(args.tolerance))
    return bad.report("laya eval", args.skip_bad) or gated


def _check_comparable(dataset: Dataset, baseline: dict[str, Any]) -> None:
    """Refuse, before answering anything, a baseline made on other data or questions."""
    probe = EvalReport(
        config={
            "dataset_sha256": file_fingerprint(str(dataset.path)),
            "questions_sha256": questions_fingerprint(dataset),
        }
    )
    comparable, reasons = probe.comparable_to(baseline)
    if not comparable:
        raise EvalError(f"--baseline: not comparable: {'; '.join(reasons)}")


def _all_limits(args: argparse.Namespace) -> list[Limit]:
    limits = [Limit(m, "min", v) for m, v in args.min] + [Limit(m, "max", v) for m, v in args.max]
    if getattr(args, "min_accuracy", None) is not None:
        limits.append(Limit("accuracy", "min", args.min_accuracy))
    if getattr(args, "max_ece", None) is not None:
        limits.append(Limit("ece", "max", args.max_ece))
    return limits


def _thresholds(limits: list[Limit]) -> dict[str, dict[str, float]]:
    found: dict[str, dict[str, float]] = {}
    for limit in limits:
        found.setdefault(limit.metric, {})[limit.kind] = limit.value
    return found


def _evaluators(score_within: float | None) -> list[Evaluator]:
    from .scoring import ScoreWithin, default_evaluators

    evaluators = default_evaluators()
    if score_within is not None:
        if score_within < 0:
            raise EvalError(f"--score-within: a tolerance is >= 0, got {score_within}")
        evaluators.append(ScoreWithin(score_within))
    return evaluators


def _runner(args: argparse.Namespace, dataset: Dataset) -> tuple[EvalRunner, dict[str, object]]:
    """The runner ``--onnx`` or ``--model`` names, loaded now (a load failure is one line), and
    what the report records of it."""
    from ..engine.calibration import config_digest

    if args.onnx:
        from ..runtime import ONNXAgent

        if args.device or args.revision:
            raise EvalError("--onnx answers on ONNX Runtime: drop --device and --revision")
        path = Path(args.onnx)
        where = (path.parent, path.name) if path.suffix == ".onnx" else (path, "laya.onnx")
        agent = ONNXAgent(str(where[0]), onnx_path=where[1], calibration=args.calibration)
        return OnnxRunner(agent), {
            "model": str(args.onnx),
            "checkpoint_config_sha256": config_digest(agent.checkpoint_config.file),
        }
    return _router_runner(args, dataset)


def _router_runner(
    args: argparse.Namespace, dataset: Dataset
) -> tuple[EvalRunner, dict[str, object]]:
    from ..cli.command import calibrate, load_routed, pin
    from ..engine.calibration import config_digest
    from ..router import Router, pins
    from ..runtime import Runtime

    router = Router(device=args.device, default=pins.default_model())
    name = pin(router, args.model, "--model") if args.model else None
    revisions = {}
    for who, sha in args.revision:
        if who is None and name is None:
            raise EvalError("--revision SHA needs a pinned --model; write --revision NAME=SHA")
        revisions[router.resolve(who or name)] = sha
    router.revisions.update(revisions)
    if args.calibration:
        calibrate(router, name, args.calibration)
    requests = [
        {"state": e.state, "questions": e.questions, "model": e.model or name} for e in dataset
    ]
    load_routed(router, [{k: v for k, v in r.items() if v} for r in requests], args.device)
    identity: dict[str, object] = {"model": name or "auto", "revisions": revisions}
    runtime = None if name is None else router.load(name)
    if isinstance(runtime, Runtime):  # a runtime of this process: its checkpoint config is known
        identity["checkpoint_config_sha256"] = config_digest(runtime.checkpoint_config.file)
    return RouterRunner(router, model=name), identity


def _print_figures(report: EvalReport, dimensions: list[str]) -> None:
    """``metric value`` per overall figure, then the main figures of each slice asked for."""
    for name, value in report.overall.items():
        print(f"{name} {_value(value)}")
    for dimension in dimensions:
        for group, figures in (report.slices.get(dimension) or {}).items():
            for name in _SHOWN:
                if name in figures:
                    print(f"{name}[{dimension}={group}] {_value(figures[name])}")


def _value(value: object) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4f}"
    return str(value)


def _write(report: EvalReport, args: argparse.Namespace) -> None:
    if args.json_out:
        text = json.dumps(report.to_json(), indent=2, ensure_ascii=False)
        if args.json_out == "-":
            print(text)
        else:
            write_atomically(args.json_out, text + "\n")
    if args.markdown:
        write_atomically(args.markdown, report.to_markdown())


def _gate(
    report: dict[str, Any],
    limits: list[Limit],
    rules: list[Rule],
    baseline: dict[str, Any] | None,
    tolerances: dict[str, float],
) -> int:
    """Print a ``FAIL:`` line per broken limit, regression and policy rule; 1 if any."""
    overall = _with_accuracy(report["overall"])
    failures = check_limits(overall, limits)
    if baseline is not None:
        rows = _report(report).compare(baseline, tolerances)
        failures += [
            f"{name} regressed: {row['candidate']:.4f} vs baseline {row['baseline']:.4f} "
            f"(tolerance {row['tolerance']:g})"
            for name, row in rows.items()
            if row["regressed"]
        ]
    failures += check_policy(report, rules, baseline) if rules else []
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return EXIT_FAILED if failures else 0


def _with_accuracy(overall: dict[str, Any]) -> dict[str, Any]:
    """The figures and ``accuracy``: choice accuracy, else noul accuracy (``--min-accuracy``)."""
    accuracy = overall.get("choice_accuracy")
    if accuracy is None:
        accuracy = overall.get("noul_accuracy")
    return {**overall, "accuracy": accuracy}


def _report(data: dict[str, Any]) -> EvalReport:
    return EvalReport(
        config=data.get("config") or {},
        overall=data.get("overall") or {},
        slices=data.get("slices") or {},
        cases=data.get("cases") or [],
    )


def _compare(args: argparse.Namespace) -> int:
    report = read_report(args.report, "REPORT")
    baseline = read_report(args.baseline, "--baseline") if args.baseline else None
    rules = read_policy(args.gate_policy) if args.gate_policy else []
    if baseline is None and (args.max_flips is not None or args.max_shift is not None):
        raise EvalError("--max-flips and --max-shift compare with a baseline: give --baseline OLD")
    flips: list[str] = []
    if baseline is not None:
        comparable, reasons = _report(report).comparable_to(baseline)
        if not comparable:
            raise EvalError(f"--baseline: not comparable: {'; '.join(reasons)}")
        for name, row in _report(report).compare(baseline, dict(args.tolerance)).items():
            print(
                f"{name} {row['candidate']:.4f} baseline {row['baseline']:.4f} delta {row['delta']:+.4f}"
            )
        flips = _changes(report, baseline, args)
    status = _gate(report, _all_limits(args), rules, baseline, dict(args.tolerance))
    for failure in flips:
        print(f"FAIL: {failure}", file=sys.stderr)
    return EXIT_FAILED if flips else status


def _changes(
    report: dict[str, Any], baseline: dict[str, Any], args: argparse.Namespace
) -> list[str]:
    """Print the flips and shifts between the two reports; the limits they break."""
    from .changes import compare_rows

    changes = compare_rows(report, baseline)
    for line in changes.lines():
        print(line)
    return changes.failures(args.max_flips, args.max_shift)


def _agreement(args: argparse.Namespace) -> int:
    from .agreement import compare_agreement

    reports = [
        read_report(p, w)
        for p, w in (
            (args.reference, "REFERENCE"),
            (args.repeat, "REPEAT"),
            (args.student, "STUDENT"),
        )
    ]
    figures = compare_agreement(*reports, bootstrap_samples=args.bootstrap_samples, seed=args.seed)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    for name in ("reference_repeat", "reference_student"):
        part = figures[name]
        low, high = part["interval"]
        print(f"{name} {part['agreement']:.4f} [{low:.4f}, {high:.4f}] n {part['n']}")
    print(f"gap {figures['gap']:+.4f}")
    return 0


def _evidence(args: argparse.Namespace) -> int:
    from ..checkpoint import resolve_source
    from .evidence import format_summary, inspect_checkpoint

    repo, subfolder = resolve_source(args.checkpoint)
    directory = Path(repo) / subfolder if subfolder else Path(repo)
    if not directory.is_dir():
        raise EvalError(
            f"--checkpoint {args.checkpoint!r}: no checkpoint directory here; give a directory "
            "(a Hub checkpoint is in the Hugging Face cache once laya.load has fetched it)"
        )
    print(format_summary(inspect_checkpoint(str(directory), args.report)))
    return 0
