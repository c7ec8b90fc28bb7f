"""``laya train`` (also the ``laya-train`` script) in its two forms (docs/training.md):

* ``laya train DATA.jsonl [MORE ...] --base B --out DIR``: laya's own recipe
  (:func:`laya.training.train.train`), its flags as they were;
* ``laya train --data FILE --out DIR``: the published runtime's form, JSONL or CSV
  (:func:`laya.training.finetune.finetune`, ``--dry-run``: :func:`~laya.training.finetune.dry_run`).

The data's place tells them apart (a positional file, or ``--data``); a flag of the other form
is refused, naming it, rather than silently ignored.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from ..commands import CommandParser, command_parser, run_command

__all__ = ["build_parser", "main"]

# Flags of one form only (argparse dest -> flag), refused in the other.
RECIPE_FLAGS = {
    "dev": "--dev",
    "lr": "--lr",
    "batch_size": "--batch-size",
    "brier_weight": "--brier-weight",
    "bind_weight": "--bind-weight",
    "encoder_id": "--encoder-id",
    "threads": "--threads",
    "freeze_layers": "--freeze-layers",
    "warmup_epochs": "--warmup-epochs",
    "pair_weight": "--pair-weight",
    "languages": "--languages",
    "no_resume": "--no-resume",
    "keep_last": "--keep-last",
}
FINETUNE_FLAGS = {
    "eval_data": "--eval",
    "text_column": "--text-column",
    "label_column": "--label-column",
    "question_id": "--question-id",
    "instructions": "--instructions",
    "micro_batch": "--micro-batch",
    "grad_accum": "--grad-accum",
    "encoder_lr": "--encoder-lr",
    "loss": "--loss",
    "label_smoothing": "--label-smoothing",
    "shuffle_options": "--shuffle-options",
    "freeze_encoder": "--freeze-encoder",
    "target_error": "--target-error",
    "min_abstain_n": "--min-abstain-n",
    "dry_run": "--dry-run",
    "skip_bad": "--skip-bad",
}


def main(argv: Sequence[str] | None = None) -> int:
    """``laya train``: exit 0 trained, 1 failed, 2 usage or bad data (laya's recipe: nothing
    written; ``--data``: trained on the usable rows, the others named, unless ``--skip-bad``)."""
    parser = build_parser()
    return run_command("laya train", argv, lambda args: _parse(parser, args), _train_command)


def build_parser() -> CommandParser:
    """The parser of both forms of ``laya train``."""
    parser = command_parser(
        "laya train",
        "Fine-tune a Laya checkpoint (or a bare encoder) on labelled decisions; writes a "
        "checkpoint laya.load reads (docs/training.md).",
        epilog="laya train DATA.jsonl --base B --out DIR trains laya's recipe (with --dev, the "
        "epoch scoring best on DEV is written and the temperatures are fitted on DEV); laya train "
        "--data FILE --out DIR is the published runtime's form (JSONL or CSV, a calibration slice "
        "held back). Flags under one form's heading are refused in the other.",
    )
    add = parser.add_argument
    add("data", nargs="*", help="labelled decisions to train on (JSONL files; laya's recipe)")
    add("--data", dest="data_file", metavar="FILE", help="JSONL or CSV rows (the --data form)")
    add(
        "--base",
        "--model",
        dest="base",
        help="Laya checkpoint or encoder: directory, name or Hub id (with --data, default: "
        "convaiinnovations/laya, the published base; mini is the bundled offline one)",
    )
    add("--out", "--output-dir", dest="out", help="output checkpoint directory")
    add("--epochs", type=int, help="passes over the data (default: 3; with --data 4)")
    add("--max-len", type=int, help="tokens per training row (default: 256, or the base's)")
    add("--head-max-len", type=int, help="tokens per question (default: the base's)")
    add("--seed", type=int, default=0, help="random seed (shuffling, init, calibration slice)")
    add("--head-lr", type=float, help="head learning rate (default: --lr; with --data 1e-4)")
    add("--device", help="torch device to train on (default: cpu; with --data the best)")
    _recipe_flags(parser.add_argument_group("laya's recipe (DATA ...)").add_argument)
    _finetune_flags(parser.add_argument_group("the --data form").add_argument)
    return parser


def _recipe_flags(add: Callable[..., argparse.Action]) -> None:
    add("--dev", help="labelled decisions to fit temperatures on (JSONL)")
    add("--lr", type=float, help="encoder learning rate (default: 5e-05)")
    add("--batch-size", type=int, help="decisions per step (default: 16)")
    add("--brier-weight", type=float, help="weight of the Brier calibration loss (default: 0)")
    add("--bind-weight", type=float, help="weight of the option-binding loss (default: 0)")
    add("--encoder-id", help="Hub id of the base encoder, written to the config")
    add("--threads", type=int, help="torch CPU threads (default: torch's)")
    add("--freeze-layers", type=int, help="freeze embeddings + N layers (default: 0)")
    add(
        "--warmup-epochs",
        type=int,
        help="epochs that also train on synthetic warm-up questions (default: 0)",
    )
    add("--pair-weight", type=float, help="weight of the minimal-pair contrastive term")
    add("--languages", nargs="+", help="languages the model reads (answers on others warn)")
    add("--no-resume", action="store_true", help="ignore OUT/.train states")
    add("--keep-last", action="store_true", help="write the last epoch, not the best on --dev")


def _finetune_flags(add: Callable[..., argparse.Action]) -> None:
    add("--eval", "--eval-data", dest="eval_data", help="rows to report the trained model on")
    add("--text-column", help="CSV: the text column (default: text)")
    add("--label-column", help="CSV: the label column (default: label)")
    add("--question-id", help="CSV: the question's id (default: label)")
    add("--instructions", help="CSV: the question's instructions")
    add("--micro-batch", type=int, help="questions per micro-batch (default: 8)")
    add("--grad-accum", type=int, help="micro-batches per update (default: 8)")
    add("--encoder-lr", type=float, help="encoder learning rate (default: 2.5e-05)")
    add("--loss", choices=("soft-ce", "rlcd"), help="the objective (default: rlcd)")
    add("--label-smoothing", type=float, help="must be 0: laya trains on one gold option")
    add("--shuffle-options", action="store_true", help="shuffle choice options (laya always does)")
    add("--freeze-encoder", action="store_true", help="train the head only")
    add("--target-error", type=float, help="abstention: the error rate to keep (default: 0.1)")
    add("--min-abstain-n", type=int, help="least calibration rows for thresholds (default: 10)")
    add("--dry-run", action="store_true", help="check the data and count updates; train nothing")
    add(
        "--skip-bad",
        action="store_true",
        help="exit 0 though some rows cannot be trained on (they are named on stderr)",
    )


def _given(args: argparse.Namespace, flags: dict[str, str]) -> list[str]:
    return [flag for dest, flag in flags.items() if getattr(args, dest) not in (None, False)]


def _parse(parser: CommandParser, argv: list[str]) -> argparse.Namespace:
    """The arguments, with the form's required ones and no flag of the other form."""
    args = parser.parse_args(argv)
    if args.data and args.data_file:
        parser.error("give the data once: DATA ... (laya's recipe) or --data FILE")
    if args.data_file:
        wrong = _given(args, RECIPE_FLAGS)
        if wrong:
            parser.error(f"{wrong[0]} belongs to laya's recipe (laya train DATA ...), not --data")
        if not args.out and not args.dry_run:
            parser.error("the following arguments are required: --out")
        return args
    wrong = _given(args, FINETUNE_FLAGS)
    if wrong:
        parser.error(f"{wrong[0]} belongs to the --data form (laya train --data FILE ...)")
    missing = [flag for flag, value in (("DATA", args.data), ("--base", args.base)) if not value]
    missing += [] if args.out else ["--out"]
    if missing:
        parser.error(f"the following arguments are required: {', '.join(missing)}")
    return args


# the recipe's flags with no default of their own: absent, TrainSettings' default applies
_DEFAULTED = (
    "epochs",
    "max_len",
    "lr",
    "batch_size",
    "freeze_layers",
    "warmup_epochs",
    "brier_weight",
    "bind_weight",
    "pair_weight",
)


def _train_command(args: argparse.Namespace) -> int | None:
    from ..commands import on_terminal

    if args.data_file:
        return _finetune_command(args, on_terminal())
    from .train import train
    from .train_settings import TrainSettings

    given = {name: getattr(args, name) for name in _DEFAULTED if getattr(args, name) is not None}
    settings = TrainSettings(
        **given,
        dev=args.dev,
        seed=args.seed,
        head_lr=args.head_lr,
        head_max_len=args.head_max_len,
        encoder_id=args.encoder_id,
        threads=args.threads,
        device=args.device,
        languages=args.languages,
        resume=not args.no_resume,
        keep_best=not args.keep_last,
        progress=on_terminal(),
    )
    out = train(args.data, args.base, args.out, settings)
    print(f"Training complete! Model saved to {out}")
    return None


def _finetune_command(args: argparse.Namespace, progress: bool) -> int:
    from ..files.row_input import BadRows
    from ..runtime import DEFAULT_MODEL
    from .finetune import TrainConfig, dry_run, finetune

    settings = {
        name: getattr(args, name)
        for name in (
            "epochs",
            "micro_batch",
            "grad_accum",
            "encoder_lr",
            "head_lr",
            "loss",
            "label_smoothing",
            "target_error",
            "min_abstain_n",
            "max_len",
            "head_max_len",
            "text_column",
            "label_column",
            "question_id",
            "instructions",
            "eval_data",
        )
        if getattr(args, name) is not None
    }
    config = TrainConfig(**settings, seed=args.seed, freeze_encoder=args.freeze_encoder)
    base = args.base or DEFAULT_MODEL
    bad = BadRows()
    if args.dry_run:
        dry_run(args.data_file, base, config, bad_rows=bad)
    else:
        finetune(
            args.data_file, base, args.out, config, device=args.device, progress=progress,
            bad_rows=bad,
        )  # fmt: skip
        print(f"Training complete! Model saved to {args.out}")
    return bad.report("laya train", args.skip_bad)
