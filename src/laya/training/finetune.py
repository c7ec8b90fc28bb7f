"""The published runtime's fine-tuning API over laya's training loop: :class:`TrainConfig`,
:func:`finetune`, :func:`dry_run` and the data readers (``laya.train``; docs/training.md,
"finetune and laya train --data").

Data is JSONL, each row ``{state, questions, expected: {qid: value}}`` or ``{state, questions,
gold: {qid: {probabilities}}}`` (laya's own ``answers`` reads as ``expected``), or CSV with a text
and a label column (one choice question, its labels in order of appearance). laya trains on one
gold option per question: a soft target counts as its most probable option, a fractional score
as its nearest level. A question that cannot be trained on is skipped and counted by reason.
The rest is :func:`laya.training.train.train`, with a calibration slice held back to fit the
temperatures and pick the best epoch, then the figures before and after and abstention
thresholds fitted for ``target_error``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
import tempfile
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..checkpoint import Tokenizer, load_tokenizer, parse_tokenizer, read_config
from ..commands import read_input_text
from ..engine.questions import Label, Question
from ..errors import InvalidRequest
from ..files.atomic import write_atomically
from ..files.row_input import BadRows, SourceRow, read_rows
from .items import (
    SKIP_REASONS,
    Skipped,
    items_from_rows,
    question_of,
    target_from_expected,
    target_from_gold,
)
from .losses import Rlcd
from .records import CALIB_WARN_N, calibration_records, calibration_report, prior_collapse_message
from .run_files import load_checkpoint
from .train import HEAD_MAX_LEN, base_directory, train
from .train_settings import TrainSettings

__all__ = [
    "CALIB_FRAC",
    "CALIB_MAX",
    "LOSSES",
    "OPTION_LAYOUTS",
    "SKIP_REASONS",
    "TrainConfig",
    "dry_run",
    "finetune",
    "optimizer_updates",
    "read_data",
    "read_jsonl",
    "rows_from_csv",
    "split_calibration",
    "target_from_expected",
    "target_from_gold",
    "train",
    "update_budget_message",
]

LOSSES = ("soft-ce", "rlcd")
OPTION_LAYOUTS = ("sequential", "parallel")
CALIB_MAX, CALIB_FRAC = 400, 0.1
MIN_CALIBRATION_ITEMS = 20  # a smaller slice fits no temperature; train on everything instead
DEFAULT_INSTRUCTIONS = "Classify the input into the correct category."
MAX_LEN = 256
FROZEN_ENCODER = 10_000  # freeze_layers that freezes every encoder layer there is


@dataclass
class TrainConfig:
    """The settings of :func:`finetune`, with the published runtime's names and defaults.

    A step reads ``micro_batch * grad_accum`` questions; ``encoder_lr`` and ``head_lr`` are the
    two AdamW rates, ``weight_decay`` and ``grad_clip`` as named. ``loss`` is the objective:
    ``"rlcd"`` (``rl_samples`` draws, noise annealed from ``sigma_start`` to ``sigma_end``) or
    ``"soft-ce"``. The rates rise linearly over the first steps, then decay on a cosine to
    ``min_lr`` (docs/training.md); ``label_smoothing`` must be 0 and ``option_layout``
    ``sequential``.
    ``freeze_encoder`` freezes the embeddings and every encoder layer; ``shuffle_options`` lists
    the question types whose options are shuffled each epoch, which laya does for choices only.
    """

    epochs: int = 4
    micro_batch: int = 8
    grad_accum: int = 8
    encoder_lr: float = 2.5e-5
    head_lr: float = 1e-4
    min_lr: float = 1e-6
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    loss: str = "rlcd"
    rl_samples: int = 4
    sigma_start: float = 0.4
    sigma_end: float = 0.1
    label_smoothing: float = 0.0
    shuffle_options: tuple[str, ...] = ("choice",)
    freeze_encoder: bool = False
    option_layout: str = "sequential"
    seed: int = 0
    max_len: int | None = None
    head_max_len: int | None = None
    text_column: str = "text"
    label_column: str = "label"
    question_id: str = "label"
    instructions: str | None = None
    eval_data: str | None = None
    target_error: float = 0.1
    min_abstain_n: int = 10

    def validate(self) -> None:
        """Refuse a setting laya cannot honour, naming the field and the fix."""
        for name in ("epochs", "micro_batch", "grad_accum", "rl_samples", "min_abstain_n"):
            _whole(name, getattr(self, name), 1 if name != "min_abstain_n" else 0)
        for name in ("max_len", "head_max_len"):
            if getattr(self, name) is not None:
                _whole(name, getattr(self, name), 1)
        for name in ("encoder_lr", "head_lr", "grad_clip", "sigma_start", "sigma_end"):
            _real(name, getattr(self, name), above=0.0)
        for name in ("min_lr", "weight_decay", "label_smoothing"):
            _real(name, getattr(self, name), above=None)
        _real("target_error", self.target_error, above=0.0)
        if self.target_error >= 1:
            raise InvalidRequest(f"target_error must be below 1, got {self.target_error!r}")
        if self.loss not in LOSSES:
            raise InvalidRequest(f"loss must be one of {', '.join(LOSSES)}, got {self.loss!r}")
        if self.label_smoothing:
            raise InvalidRequest(
                "label_smoothing: laya trains on one gold option per question; use 0.0"
            )
        if self.option_layout != "sequential":
            raise InvalidRequest(
                f"option_layout {self.option_layout!r}: laya trains the sequential layout; "
                "use 'sequential' (docs/agent.md#option-layouts)"
            )
        extra = sorted(set(self.shuffle_options) - {"choice"})
        if extra:
            raise InvalidRequest(
                f"shuffle_options {extra[0]!r}: laya shuffles the options of choice questions "
                "only (a score's levels and a noul's sides keep their order); use ('choice',)"
            )
        for name in ("text_column", "label_column", "question_id"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise InvalidRequest(f"{name} must be a non-empty string")


def _whole(name: str, value: object, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise InvalidRequest(f"{name} must be a whole number of at least {least}, got {value!r}")


def _real(name: str, value: object, above: float | None) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
        or (above is not None and value <= above)
    ):
        rule = "a finite number above 0" if above is not None else "a finite number, 0 or more"
        raise InvalidRequest(f"{name} must be {rule}, got {value!r}")


# --------------------------------------------------------------------------- reading


def read_jsonl(path: str) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file (blank lines skipped); an error names the line."""
    rows = []
    for n, line in enumerate(read_input_text(path, "data file").split("\n"), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise InvalidRequest(f"{path}, line {n}: not JSON ({exc})") from None
        if not isinstance(row, dict):
            raise InvalidRequest(f"{path}, line {n}: a row is a JSON object")
        rows.append(row)
    return rows


def rows_from_csv(
    path: str,
    text_column: str = "text",
    label_column: str = "label",
    question_id: str = "label",
    instructions: str | None = None,
) -> list[dict[str, object]]:
    """A CSV file (a byte-order mark tolerated) as rows of one choice question whose labels are
    the label column's values in order of appearance (at least two distinct)."""
    reader = csv.DictReader(io.StringIO(read_input_text(path, "data file"), newline=""))
    missing = [c for c in (text_column, label_column) if c not in (reader.fieldnames or [])]
    if missing:
        raise InvalidRequest(
            f"{path}: no column {missing[0]!r} (columns: {', '.join(reader.fieldnames or [])}); "
            "name the columns with --text-column and --label-column"
        )
    records = [
        (row.get(text_column) or "", (row.get(label_column) or "").strip()) for row in reader
    ]
    labels = list(dict.fromkeys(label for _, label in records if label))
    if len(labels) < 2:
        raise InvalidRequest(
            f"{path}: column {label_column!r} holds {len(labels)} distinct label(s); a choice "
            "needs at least 2"
        )
    question = {
        "type": "choice",
        "instructions": instructions or DEFAULT_INSTRUCTIONS,
        "criteria": labels,
    }
    return [
        {"state": text, "questions": {question_id: question}, "expected": {question_id: label}}
        for text, label in records
    ]


def read_data(
    path: str,
    text_column: str = "text",
    label_column: str = "label",
    question_id: str = "label",
    instructions: str | None = None,
) -> list[dict[str, Any]]:
    """The rows of a ``.csv`` file (:func:`rows_from_csv`) or of a JSONL file."""
    if str(path).lower().endswith(".csv"):
        return rows_from_csv(path, text_column, label_column, question_id, instructions)
    return read_jsonl(path)


def _located_rows(path: str, config: TrainConfig, bad: BadRows) -> list[SourceRow]:
    """As :func:`read_data`, each row with where it is (``FILE:LINE``); rows that cannot be read
    (not JSON, a CSV record of the wrong length) go to ``bad``."""
    if not str(path).lower().endswith(".csv"):
        return read_rows(path, "data file", bad, format="jsonl").rows
    found = read_rows(path, "data file", bad, format="csv")
    text, label = config.text_column, config.label_column
    missing = [c for c in (text, label) if c not in found.columns]
    if missing:
        raise InvalidRequest(
            f"{path}: no column {missing[0]!r} (columns: {', '.join(found.columns)}); "
            "name the columns with --text-column and --label-column"
        )
    records = [(r, r.value[text], r.value[label].strip()) for r in found.rows]
    labels = list(dict.fromkeys(value for _, _, value in records if value))
    if len(labels) < 2:
        raise InvalidRequest(
            f"{path}: column {label!r} holds {len(labels)} distinct label(s); a choice needs at "
            "least 2"
        )
    question = {
        "type": "choice",
        "instructions": config.instructions or DEFAULT_INSTRUCTIONS,
        "criteria": labels,
    }
    qid = config.question_id
    return [
        SourceRow(
            row.where,
            row.number,
            row.index,
            {"state": state, "questions": {qid: question}, "expected": {qid: value}},
        )
        for row, state, value in records
    ]


# --------------------------------------------------------------------------- items


def _gold(question: Question, target: Sequence[float]) -> Label | bool:
    """The one option laya trains on: the most probable of ``target`` (ties: the first); in the
    answers format (a label, a level index, a truth)."""
    best = max(range(len(target)), key=lambda i: target[i])
    if target.count(target[best]) > 1 and question.type != "score":
        raise Skipped("invalid_target")
    if question.type == "noul":
        return bool(best)
    return best if question.type == "score" else question.keys[best]


# --------------------------------------------------------------------------- items


def _trainable(
    rows: Sequence[dict[str, Any]],
    tok: Tokenizer,
    max_len: int,
    head_max_len: int,
    on_skip: Callable[[int, object, str], None] | None = None,
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """The rows in laya's training format (``answers``), each with only the questions that can
    be trained on (:func:`~laya.training.items.items_from_rows`), and how many questions were
    skipped for each reason (``on_skip(row index, question id, reason)`` told of each)."""
    items, counts = items_from_rows(tok, rows, max_len, head_max_len, on_skip=on_skip)
    skipped = Counter(counts)
    kept: dict[int, dict[str, Any]] = {}
    for item in items:
        try:
            gold = _gold(question_of(item["q"]), item["target"])
        except Skipped as skip:
            skipped[skip.reason] += 1
            if on_skip is not None:
                on_skip(item["row"], item["qid"], skip.reason)
            continue
        row = kept.setdefault(item["row"], {"state": item["state"], "questions": {}, "answers": {}})
        row["questions"][item["qid"]] = item["q"]
        row["answers"][item["qid"]] = gold
    return [kept[index] for index in sorted(kept)], skipped


Item = TypeVar("Item")


def split_calibration(
    items: Sequence[Item], calib_max: int, calib_frac: float, seed: int
) -> tuple[list[Item], list[Item]]:
    """(training items, calibration items): a seeded draw of ``calib_frac`` of them, at most
    ``calib_max``; none when that would be fewer than 20."""
    size = min(calib_max, int(round(calib_frac * len(items))))
    if size < MIN_CALIBRATION_ITEMS:
        return list(items), []
    order = list(range(len(items)))
    random.Random(seed).shuffle(order)
    held = set(order[:size])
    return [x for i, x in enumerate(items) if i not in held], [items[i] for i in sorted(held)]


def optimizer_updates(n_items: int, micro_batch: int, grad_accum: int, epochs: int) -> int:
    """Optimizer steps a run of ``epochs`` takes over ``n_items`` questions."""
    return epochs * math.ceil(n_items / (micro_batch * grad_accum))


def update_budget_message(n_train: int, config: TrainConfig) -> str:
    """One line on how many optimizer updates the run will make, warning when very few."""
    steps = optimizer_updates(n_train, config.micro_batch, config.grad_accum, config.epochs)
    text = (
        f"{n_train} training questions, {config.micro_batch * config.grad_accum} per update, "
        f"{config.epochs} epochs: {steps} optimizer updates"
    )
    if steps < 50:
        text += " (few: lower --micro-batch or --grad-accum, or add epochs or data)"
    return text


# --------------------------------------------------------------------------- runs


@dataclass
class _Plan:
    """What a run will train on, read and checked before any weights load."""

    base: Path
    rows: list[dict[str, Any]]
    skipped: Counter[str]
    train_rows: list[dict[str, Any]]
    calibration_rows: list[dict[str, Any]]
    max_len: int
    head_max_len: int


def _plan(data: str, model_dir: str, config: TrainConfig, bad: BadRows | None = None) -> _Plan:
    config.validate()
    base = base_directory(model_dir)
    laya_base = (base / "rl_agent_config.json").is_file()
    base_config = read_config(base, str(base)).raw if laya_base else {}
    max_len = config.max_len or int(base_config.get("max_len", MAX_LEN))
    head_max_len = config.head_max_len or int(base_config.get("head_max_len", HEAD_MAX_LEN))
    tok = load_tokenizer(base, base_config.get("encoder")) if laya_base else parse_tokenizer(base)
    if bad is None:
        raw = read_data(
            data, config.text_column, config.label_column, config.question_id, config.instructions
        )
        rows, skipped = _trainable(raw, tok, max_len, head_max_len)
    else:
        rows, skipped = _accounted(data, config, bad, tok, max_len, head_max_len)
    if not rows:
        reasons = ", ".join(f"{r} {n}" for r, n in skipped.items() if n)
        raise InvalidRequest(f"{data}: no question can be trained on (skipped: {reasons})")
    train_rows, calibration_rows = split_calibration(rows, CALIB_MAX, CALIB_FRAC, config.seed)
    return _Plan(base, rows, skipped, train_rows, calibration_rows, max_len, head_max_len)


def _accounted(
    data: str, config: TrainConfig, bad: BadRows, tok: Tokenizer, max_len: int, head_max_len: int
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """As :func:`_trainable` over the rows of ``data``, every row with a question that cannot
    be trained on (or that cannot be read) named in ``bad``, once, with the reasons."""
    located = _located_rows(data, config, bad)
    reasons: dict[int, list[str]] = {}

    def skipped_question(index: int, qid: object, reason: str) -> None:
        shown = reason if qid is None else f"question {qid!r}: {reason}"
        reasons.setdefault(index, []).append(shown)

    rows, skipped = _trainable(
        [r.value for r in located], tok, max_len, head_max_len, skipped_question
    )
    for index in sorted(reasons):
        bad.add(located[index].where, "cannot be trained on: " + "; ".join(reasons[index]))
    return rows, skipped


def _counts(plan: _Plan, config: TrainConfig) -> dict[str, Any]:
    questions = sum(len(r["questions"]) for r in plan.train_rows)
    return {
        "rows": len(plan.rows),
        "train_rows": len(plan.train_rows),
        "calibration_rows": len(plan.calibration_rows),
        "train_questions": questions,
        "skipped": {reason: n for reason, n in plan.skipped.items() if n},
        "optimizer_updates": optimizer_updates(
            questions, config.micro_batch, config.grad_accum, config.epochs
        ),
        "max_len": plan.max_len,
        "head_max_len": plan.head_max_len,
    }


def dry_run(
    data: str,
    model_dir: str,
    config: TrainConfig | None = None,
    *,
    bad_rows: BadRows | None = None,
) -> dict[str, Any]:
    """Read and check ``data`` against the base's tokenizer (no weights load): print and return
    the counts of rows, questions kept and skipped by reason, and the optimizer updates. With
    ``bad_rows``, every row with a question skipped (or that cannot be read) is named there."""
    config = config or TrainConfig()
    plan = _plan(data, model_dir, config, bad_rows)
    counts = _counts(plan, config)
    print(
        f"{counts['rows']} rows: {counts['train_rows']} to train on, "
        f"{counts['calibration_rows']} held back for calibration"
    )
    skipped = counts["skipped"]
    print("skipped questions: " + (", ".join(f"{r} {n}" for r, n in skipped.items()) or "none"))
    print(update_budget_message(counts["train_questions"], config))
    return counts


def finetune(
    data: str,
    model_dir: str,
    output_dir: str,
    config: TrainConfig | None = None,
    device: str | None = "auto",
    *,
    progress: bool = True,
    bad_rows: BadRows | None = None,
) -> dict[str, Any]:
    """Fine-tune ``model_dir`` (a Laya checkpoint or an encoder: a directory, name or Hub id) on
    ``data`` and write the checkpoint to ``output_dir``; returns the run's summary, also written
    to ``output_dir/train_report.json`` (with ``questions.json`` and, when thresholds could be
    fitted, ``calibration.json``). With ``bad_rows`` (``laya train --data``), rows that cannot
    be read are skipped instead of stopping the run, and every row with a question skipped is
    named there and in the summary's ``bad_rows``."""
    config = config or TrainConfig()
    plan = _plan(data, model_dir, config, bad_rows)
    out = Path(output_dir)
    with tempfile.TemporaryDirectory(prefix="laya-finetune-") as folder:
        files = [_write_rows(Path(folder) / "train.jsonl", plan.train_rows)]
        calibration = (
            _write_rows(Path(folder) / "calibration.jsonl", plan.calibration_rows)
            if plan.calibration_rows
            else None
        )
        settings = TrainSettings(
            epochs=config.epochs,
            max_len=plan.max_len,
            head_max_len=plan.head_max_len,
            dev=calibration,
            seed=config.seed,
            lr=config.encoder_lr,
            head_lr=config.head_lr,
            batch_size=config.micro_batch * config.grad_accum,
            device=device or "auto",
            freeze_layers=FROZEN_ENCODER if config.freeze_encoder else 0,
            weight_decay=config.weight_decay,
            grad_clip=config.grad_clip,
            progress=progress,
            rlcd=_objective(config),
            min_lr=config.min_lr,
        )
        train(files, plan.base, out, settings)
        figures = _figures(config, out, calibration)
    figures["warnings"] = _calibration_warnings(out, plan)
    summary = {
        "output_dir": str(out),
        "base": str(plan.base),
        "config": asdict(config),
        **_counts(plan, config),
        **figures,
        **({"bad_rows": list(bad_rows.named)} if bad_rows is not None else {}),
    }
    _write_json(out / "questions.json", _question_sets(plan.rows))
    _write_json(out / "train_report.json", summary)
    return summary


def _objective(config: TrainConfig) -> Rlcd | None:
    """RLCD with the config's draws and noise schedule (``loss="rlcd"``, the default), or None
    for the soft cross-entropy (``"soft-ce"``: on one gold option, the log loss)."""
    if config.loss != "rlcd":
        return None
    return Rlcd(config.rl_samples, config.sigma_start, config.sigma_end)


def _figures(config: TrainConfig, out: Path, calibration: Path | None) -> dict[str, object]:
    """The trained model on ``eval_data`` (or the calibration slice, in-sample), and abstention
    thresholds fitted on the calibration slice for ``target_error`` (``calibration.json``)."""
    from .evaluate import evaluate, json_safe
    from .fit_calibration import calibrate

    figures: dict[str, object] = {}
    held = config.eval_data or (str(calibration) if calibration else None)
    if held is not None:
        report = evaluate(held, str(out), device="cpu")
        figures["eval"] = {
            "data": "eval_data" if config.eval_data else "calibration slice (in-sample)",
            **json_safe({k: v for k, v in report.items() if k not in ("by_domain", "reliability")}),
        }
    if calibration is not None:
        n = sum(1 for _ in calibration.open(encoding="utf-8"))
        if n >= config.min_abstain_n:
            fitted = calibrate(
                calibration,
                str(out),
                out=out / "calibration.json",
                target_precision=1 - config.target_error,
                device="cpu",
            )
            figures["abstention_thresholds"] = fitted.thresholds
    return figures


def _calibration_warnings(out: Path, plan: _Plan) -> list[str]:
    """What the published runtime warns of after training, read on the calibration slice: a
    model that does no better than the class prior, and question types whose temperatures were
    fitted on few answers (each also a RuntimeWarning)."""
    if not plan.calibration_rows:
        return []
    model, tok, config = load_checkpoint(str(out))
    items, _ = items_from_rows(tok, plan.calibration_rows, plan.max_len, plan.head_max_len)
    records = calibration_records(model, tok, items, "cpu", plan.max_len, plan.head_max_len)
    report = calibration_report(records, config["temperature"])
    messages = [
        f"{name} temperatures were fitted on {figures['n']} answers (fewer than "
        f"{CALIB_WARN_N}); treat its confidence as roughly calibrated, or add data"
        for name, figures in report.items()
        if figures["weak"]
    ]
    collapsed = prior_collapse_message(records)
    messages += [collapsed] if collapsed else []
    for message in messages:
        warnings.warn(f"laya finetune: {message}", RuntimeWarning, stacklevel=3)
    return messages


def _question_sets(rows: Sequence[Mapping[str, object]]) -> list[object]:
    """Every distinct question set of the data, in order of first use."""
    seen = dict.fromkeys(json.dumps(r["questions"], sort_keys=True) for r in rows)
    return [json.loads(text) for text in seen]


def _write_rows(path: Path, rows: Sequence[Mapping[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def _write_json(path: Path, value: object) -> None:
    write_atomically(path, json.dumps(value, indent=2, ensure_ascii=False) + "\n")
