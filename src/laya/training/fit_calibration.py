"""Fit a calibration on labelled decisions: temperatures, a confidence map, abstention thresholds.

``laya calibrate DATA.jsonl --model M --out calib.json`` (and :func:`calibrate`) reads every
answer's raw logits once, then fits

* one temperature per question type and per option-count bucket (``choice:3-5``...) by the
  negative log-likelihood of the gold options, on a grid over [0.5, 5] (the grid ``laya train``
  fits with, so a refit of a trained checkpoint reproduces its temperatures);
* optionally (``--binning``) a monotone binning map for ``answer_confidence`` per bucket:
  equal-width bins holding the accuracy of their answers, made non-decreasing (isotonic);
* abstention thresholds per bucket (and a ``default`` over all answers) that reach a target
  precision (``--target-precision``: the lower one-sided 90 % Wilson bound of the kept answers'
  precision) or a
  target coverage (``--target-coverage``: the share of answers kept);
* with ``--risk A [--delta D]``, certified automation thresholds and prediction-set levels
  (:mod:`laya.training.certify`).

The file records the data's hash and the figures before (the checkpoint's own temperatures) and
after, on the fitting data and on ``--eval`` data when given. See docs/calibration.md.

This is also the published runtime's ``laya.calibrate`` (docs/migrating.md): its functions take
records ``(qtype, logits, target[, k])`` (``target`` a gold index or a weight per option) and
fit as that runtime does (the exact NLL optimum, clamped; its sample floors), giving its numbers.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..checkpoint import check_path
from ..commands import Advance, check_output_file, progress, run_command
from ..engine.calibration import (
    PUBLISHED_VERSION,
    Calibration,
    calibration_payload,
    config_digest,
    read_calibration,
)
from ..engine.decoding import Temperatures
from ..engine.fitting import (
    ECE_HOLDOUT_FRAC,
    LOG_T_MARGIN,
    MIN_ABSTAIN_BUCKET_N,
    MIN_BINNING_BUCKET_N,
    MIN_BUCKET_N,
    MIN_TYPE_N,
    N_QTYPES,
    TEMP_MAX,
    TEMP_MIN,
    Sample,
    apply_binning_map,
    apply_calibration_payload,
    decoded_records,
    fit_abstention_thresholds,
    fit_binning,
    fit_binning_map,
    fit_grid_temperatures,
    fit_one_temperature,
    fit_temperature_map,
    fit_temperatures,
    gate_inputs,
)
from ..engine.questions import QTYPE_NAMES, QTYPES
from ..errors import InvalidRequest
from ..files.row_input import BadRows
from .certify import automated_figures, certify, check_risk, format_certification
from .evaluate import (
    Example,
    LoadOptions,
    brier,
    decisions_parser,
    ece,
    example_from_row,
    read_decisions,
)
from .selective import selective_figures

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ..runtime import Runtime
    from .records import CalibrationRecord

__all__ = [
    "CALIBRATION_VERSION",
    "ECE_HOLDOUT_FRAC",
    "LOG_T_MARGIN",
    "MIN_ABSTAIN_BUCKET_N",
    "MIN_BINNING_BUCKET_N",
    "MIN_BUCKET_N",
    "MIN_TYPE_N",
    "N_QTYPES",
    "QTYPES",
    "QTYPE_NAMES",
    "TEMP_MAX",
    "TEMP_MIN",
    "Sample",
    "apply_binning_map",
    "apply_calibration_payload",
    "calibrate",
    "calibrate_main",
    "calibration_payload",
    "fit_abstention_thresholds",
    "fit_binning_map",
    "fit_one_temperature",
    "fit_grid_temperatures",
    "fit_temperature_map",
    "fit_temperatures",
    "format_calibration",
    "records_from_labeled",
]

MIN_GATE_ANSWERS = 30  # a bucket threshold needs this many answers, else "default" applies
# The precision bound is one-sided 90 %: on halves of data/decisions/dev.jsonl for mini, thresholds
# fitted on one half for 0.9 kept 0.91 on the other (benchmarks/calibration.py --halves).
WILSON_Z = 1.2816
CALIBRATION_VERSION = PUBLISHED_VERSION  # the published runtime's laya.calibrate constant


# --------------------------------------------------------------------------- samples


def collect(
    runtime: Runtime, examples: Sequence[Example], advance: Advance | None = None
) -> list[Sample]:
    """The raw logits of every labelled answer (one pass per state, no hooks; ``advance(1)``
    after each state)."""
    samples = []
    for ex in examples:
        rows = runtime.raw_logits([ex.state], ex.raw_questions)
        for q, z, gold in zip(ex.questions, rows, ex.gold):
            shown = np.asarray(z[: len(q.options)], dtype=np.float32)
            canonical = np.empty_like(shown)
            canonical[list(q.order)] = shown
            samples.append(Sample(q, ex.domain, canonical, gold))
        if advance is not None:
            advance(1)
    return samples


# --------------------------------------------------------------------------- thresholds


def wilson_lower(right: int, n: int, z: float = WILSON_Z) -> float:
    """Lower Wilson bound of a proportion: the precision a kept set reaches with confidence."""
    if n == 0:
        return 0.0
    p = right / n
    centre = p + z * z / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - margin) / (1 + z * z / n)


def _cut(
    conf: np.ndarray, right: np.ndarray, precision: float | None, coverage: float | None
) -> float:
    """The lowest threshold meeting the target (1.0 when no threshold reaches the precision)."""
    order = np.argsort(-conf, kind="stable")
    conf, right = conf[order], right[order]
    if coverage is not None:
        return float(conf[max(0, math.ceil(coverage * len(conf)) - 1)])
    if precision is None:
        raise InvalidRequest("fit_thresholds needs a target: give precision or coverage")
    hits = np.cumsum(right)
    best = 1.0
    for k in range(len(conf)):
        last_of_tie = k + 1 == len(conf) or conf[k + 1] < conf[k]
        if last_of_tie and wilson_lower(int(hits[k]), k + 1) >= precision:
            best = float(conf[k])
    return best


def fit_thresholds(
    conf: np.ndarray,
    right: np.ndarray,
    buckets: Sequence[str],
    precision: float | None = None,
    coverage: float | None = None,
) -> dict[str, float]:
    """A ``min_confidence`` map: per bucket with enough answers, and ``default`` over all."""
    out = {"default": _cut(conf, right, precision, coverage)}
    groups: dict[str, list[int]] = defaultdict(list)
    for i, b in enumerate(buckets):
        groups[b].append(i)
    for bucket, idx in sorted(groups.items()):
        if len(idx) >= MIN_GATE_ANSWERS:
            out[bucket] = _cut(conf[idx], right[idx], precision, coverage)
    return out


# --------------------------------------------------------------------------- figures


def figures(
    samples: Sequence[Sample],
    temperatures: Temperatures,
    thresholds: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Accuracy, ECE, Brier, AURC, accuracy at coverage; and what ``thresholds`` keep."""
    recs = decoded_records(samples, temperatures)
    conf, right, buckets = gate_inputs(samples, temperatures, recs)
    gate = None
    if thresholds:
        gate = [thresholds.get(b, thresholds.get("default", 0.0)) for b in buckets]
    out = {
        "answers": len(recs),
        "accuracy": float(right.mean()),
        "ece": ece(recs),
        "brier": brier(recs),
        **selective_figures(conf, right, gate),
    }
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in out.items()}


# --------------------------------------------------------------------------- the fit


class CalibrateOptions(LoadOptions, total=False):
    """:func:`calibrate`'s keywords: what it fits and writes (docs/calibration.md), beside how
    it loads a model named (:class:`~laya.training.evaluate.LoadOptions`)."""

    out: str | Path | None
    target_precision: float | None
    target_coverage: float | None
    binning: bool
    eval_data: str | Path | None
    advance: Advance | None
    bad_rows: BadRows | None
    risk: float | None
    delta: float | None


def calibrate(
    data: str | Path,
    model: Runtime | str | os.PathLike[str],
    **options: Unpack[CalibrateOptions],
) -> Calibration:
    """Fit a calibration for ``model`` (a runtime, a name or a path) on labelled ``data``.

    Returns the :class:`~laya.engine.calibration.Calibration` (written to ``out`` when given); its
    ``payload["figures"]`` holds the figures before and after, on ``data`` and ``eval_data``.
    ``advance(1)`` is called after each labelled state is read (for a progress bar). With
    ``bad_rows``, rows that cannot be used go there and the fit uses the others (else the first
    one raises). ``risk`` (and ``delta``, default 0.1) also certifies automation thresholds and
    prediction sets. The other keywords load a ``model`` given by name or path.
    """
    from ..runtime import load

    # what is left once the fit's own options are taken out is how to load the model
    target_precision = options.pop("target_precision", None)
    target_coverage = options.pop("target_coverage", None)
    out, eval_data = options.pop("out", None), options.pop("eval_data", None)
    advance, bad_rows = options.pop("advance", None), options.pop("bad_rows", None)
    binning = options.pop("binning", False)
    _check_targets(target_precision, target_coverage)
    levels = check_risk(options.pop("risk", None), options.pop("delta", None))
    if out is not None:
        check_output_file(out, "out")
    runtime = load(model, **options) if isinstance(model, (str, os.PathLike)) else model
    path = Path(data)
    samples = collect(runtime, read_decisions(path, bad_rows), advance)
    before = Temperatures(
        runtime.checkpoint_config.temperature, runtime.checkpoint_config.temperature_by_options
    )
    after, nll = fit_scales(samples, binning, before)
    thresholds = {}
    if target_precision is not None or target_coverage is not None:
        conf, right, buckets = gate_inputs(samples, after)
        thresholds = fit_thresholds(conf, right, buckets, target_precision, target_coverage)
    certified = None if levels is None else certify(samples, after, *levels)
    evaluated = {
        "fit": {"before": figures(samples, before), "after": figures(samples, after, thresholds)}
    }
    if eval_data is not None:
        held = collect(runtime, read_decisions(eval_data, bad_rows), advance)
        evaluated["eval"] = {
            "data": _data_entry(Path(eval_data), held),
            "before": figures(held, before),
            "after": figures(held, after, thresholds),
        }
        if certified is not None:
            evaluated["eval"]["certified"] = automated_figures(held, after, certified)
    payload = {
        "checkpoint": {"model": str(getattr(runtime, "model_id_or_path", model))},
        "data": _data_entry(path, samples),
        "target": {"precision": target_precision, "coverage": target_coverage},
        "temperature_fit": nll,
        "figures": evaluated,
    }
    calibration = Calibration(
        after.by_type,
        dict(after.by_bucket),
        dict(after.bins),
        thresholds,
        config_digest(runtime.checkpoint_config.file),
        payload=payload,
        certified=certified,
    )
    if out is not None:
        calibration = read_calibration(calibration.save(out))
    return calibration


def fit_scales(
    samples: Sequence[Sample], binning: bool = False, base: Temperatures | None = None
) -> tuple[Temperatures, dict[str, dict[str, float]]]:
    """The fitted temperatures (and binning map), with the NLL table of the temperature fit; a
    type the samples do not ask keeps ``base``'s temperatures."""
    by_type, by_bucket, nll = fit_grid_temperatures(
        [s.logits.astype(np.float64) for s in samples],
        [s.gold for s in samples],
        [s.question for s in samples],
        base.by_type if base else None,
        base.by_bucket if base else None,
    )
    scales = Temperatures(tuple(by_type), by_bucket)
    if binning:
        bins = fit_binning(decoded_records(samples, scales), [s.question.bucket for s in samples])
        scales = Temperatures(scales.by_type, scales.by_bucket, {}, bins)
    return scales, nll


def _data_entry(path: Path, samples: Sequence[Sample]) -> dict[str, object]:
    return {
        "file": path.name,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "answers": len(samples),
    }


def _check_targets(precision: float | None, coverage: float | None) -> None:
    if precision is not None and coverage is not None:
        raise InvalidRequest("give target_precision or target_coverage, not both")
    for name, value in (("target_precision", precision), ("target_coverage", coverage)):
        if value is not None and not (
            isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 1
        ):
            raise InvalidRequest(f"{name} must be a number in (0, 1], got {value!r}")


# --------------------------------------------------------------------------- report and command


def format_calibration(calibration: Calibration) -> str:
    """The fitted temperatures, the figures before and after, and the thresholds, as a table."""
    payload = calibration.payload
    lines = [
        f"calibration for {payload['checkpoint']['model']}, fitted on {payload['data']['file']} "
        f"({payload['data']['answers']} answers)",
        "temperatures  "
        + "  ".join(
            f"{t} {v:g}" for t, v in zip(("choice", "score", "noul"), calibration.temperature)
        )
        + "  "
        + "  ".join(f"{b} {v:g}" for b, v in sorted(calibration.temperature_by_options.items())),
        "",
        f"{'data':<10} {'':<7} {'answers':>7} {'accuracy':>8} {'ECE':>7} {'Brier':>7} {'AURC':>7} "
        f"{'acc@80%':>7} {'kept':>6} {'precision':>9} {'abstain':>7}",
    ]
    for split, parts in payload["figures"].items():
        for when in ("before", "after"):
            f = parts[when]
            gate = f.get("gate") or {}
            lines.append(
                f"{split:<10} {when:<7} {f['answers']:>7} {f['accuracy']:>8.4f} {f['ece']:>7.4f} "
                f"{f['brier']:>7.4f} {f['aurc']:>7.4f} {f['accuracy_at_80']:>7.4f} "
                f"{_opt(gate.get('coverage'), 6)} {_opt(gate.get('precision'), 9)} "
                f"{_opt(gate.get('abstention_rate'), 7)}"
            )
    if calibration.thresholds:
        lines += [
            "",
            "thresholds    "
            + "  ".join(f"{b} {t:.4f}" for b, t in sorted(calibration.thresholds.items())),
        ]
    if calibration.certified is not None:
        lines += ["", format_certification(calibration.certified)]
        lines += _held_out_automation(payload["figures"].get("eval", {}).get("certified"))
    return "\n".join(lines)


def _held_out_automation(figures: dict[str, Any] | None) -> list[str]:
    """The certificate's figures on --eval data, one line (none without them)."""
    if not figures:
        return []
    error = figures["automated_error"]
    shown = "-" if error is None else f"{error:.4f}"
    line = (
        f"eval: automated {figures['automated']:.4f}, error among them {shown} "
        f"(95 % upper {figures['automated_error_upper']:.4f})"
    )
    if figures.get("set_coverage") is not None:
        line += f", choice sets cover {figures['set_coverage']:.4f} (mean size {figures['set_size']:.2f})"
    return [line]


def _opt(value: object, width: int) -> str:
    return (
        f"{value:>{width}.4f}"
        if isinstance(value, float) and not math.isnan(value)
        else " " * (width - 1) + "-"
    )


def calibrate_main(argv: Sequence[str] | None = None) -> int:
    """``laya calibrate DATA.jsonl --model M --out calib.json [--target-precision P | --target-coverage C] [--binning] [--risk A [--delta D]] [--eval TEST.jsonl]``."""
    return run_command("laya calibrate", argv, _arg_parser().parse_args, _calibrate_command)


def _arg_parser() -> argparse.ArgumentParser:
    parser = decisions_parser(
        "laya calibrate",
        "Fit temperatures, an optional confidence map and abstention thresholds on labelled "
        "decisions, and write them as a calibration file.",
        data_help="labelled decisions to fit on (JSONL, as laya eval reads)",
    )
    parser.add_argument("--out", required=True, help="where to write the calibration file")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--target-precision", type=float, metavar="P", help="abstain to reach P")
    target.add_argument("--target-coverage", type=float, metavar="C", help="keep a share C")
    parser.add_argument("--binning", action="store_true", help="also fit a confidence map")
    parser.add_argument(
        "--risk",
        type=float,
        metavar="A",
        help="certify automation: at most a share A wrong among the answers automated",
    )
    parser.add_argument(
        "--delta",
        type=float,
        metavar="D",
        help="with --risk: the promise may fail with probability at most D (default 0.1)",
    )
    parser.add_argument("--eval", dest="eval_data", help="labelled data to report figures on")
    parser.add_argument(
        "--skip-bad", action="store_true", help="exit 0 though some rows cannot be used"
    )
    return parser


def _calibrate_command(args: argparse.Namespace) -> int:
    check_output_file(args.out, "out")  # refused before the data is read
    check_risk(args.risk, args.delta)
    check_path(args.model, "--model")
    settings = dict(vars(args))
    skip_bad = settings.pop("skip_bad")
    files = [args.data, *([args.eval_data] if args.eval_data else [])]
    counted = BadRows()
    total = sum(len(read_decisions(path, counted)) for path in files)
    bad = BadRows()
    with progress(total) as advance:
        calibration = calibrate(**settings, advance=advance, bad_rows=bad)
    print(format_calibration(calibration))
    print(f"\nwrote {args.out}")
    return bad.report("laya calibrate", skip_bad)


def records_from_labeled(agent: Runtime, pairs: Sequence[Any]) -> list[CalibrationRecord]:
    """Records ``(qtype, logits, gold index, k)`` from labelled ``(state, questions, targets)``
    (targets: per question id its gold label, score level index or bool), read with
    ``agent``'s raw logits (no hooks)."""
    examples = [
        example_from_row(f"pair {i}", {"state": state, "questions": questions, "answers": gold})
        for i, (state, questions, gold) in enumerate(pairs)
    ]
    return [
        (s.question.qtype, s.logits.tolist(), s.gold, len(s.question.options))
        for s in collect(agent, examples)
    ]
