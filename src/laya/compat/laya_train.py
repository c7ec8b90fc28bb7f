"""The published ``laya.train`` module: its fine-tuning API (``finetune``, ``dry_run``,
``TrainConfig``), its loop (``train_model``, the RLCD and soft cross-entropy objectives), its
items and records, and its constants, each over the laya module that does that job
(docs/training.md, "The published loop"; docs/migrating.md)."""

from __future__ import annotations

from ..engine.fitting import MIN_TYPE_N, TEMP_MAX, TEMP_MIN
from ..engine.questions import QTYPE_NAMES, QTYPES
from ..training.finetune import (
    LOSSES,
    OPTION_LAYOUTS,
    TrainConfig,
    dry_run,
    finetune,
    optimizer_updates,
    read_data,
    read_jsonl,
    rows_from_csv,
    split_calibration,
    update_budget_message,
)
from ..training.items import (
    draw_option_order,
    encode_item,
    encode_state,
    items_from_rows,
    make_item,
    target_from_expected,
    target_from_gold,
    to_internal,
)
from ..training.loop import resolve_checkpoint_dir, resolve_device, train_model
from ..training.losses import rlcd_loss, sigma_at, soft_ce_loss
from ..training.records import (
    CALIB_WARN_N,
    COLLAPSE_CE_REL,
    COLLAPSE_LOGIT_RANGE,
    calibration_records,
    calibration_report,
    collapse_stats,
    evaluate_records,
    prior_collapse_message,
)
from ..training.run_files import load_checkpoint, save_checkpoint

__all__ = [
    "CALIB_WARN_N",
    "COLLAPSE_CE_REL",
    "COLLAPSE_LOGIT_RANGE",
    "LOSSES",
    "MIN_TYPE_N",
    "OPTION_LAYOUTS",
    "QTYPES",
    "QTYPE_NAMES",
    "TEMP_MAX",
    "TEMP_MIN",
    "TrainConfig",
    "calibration_records",
    "calibration_report",
    "collapse_stats",
    "draw_option_order",
    "dry_run",
    "encode_item",
    "encode_state",
    "evaluate_records",
    "finetune",
    "items_from_rows",
    "load_checkpoint",
    "make_item",
    "optimizer_updates",
    "prior_collapse_message",
    "read_data",
    "read_jsonl",
    "resolve_checkpoint_dir",
    "resolve_device",
    "rlcd_loss",
    "rows_from_csv",
    "save_checkpoint",
    "sigma_at",
    "soft_ce_loss",
    "split_calibration",
    "target_from_expected",
    "target_from_gold",
    "to_internal",
    "train_model",
    "update_budget_message",
]
