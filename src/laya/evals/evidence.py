"""What evidence a checkpoint carries for its confidences: is it calibrated, on how much data,
and does an evaluation report belong to it (``laya eval evidence``, docs/cli.md).

Each part gets one state: ``PRESENT`` (there, and enough), ``MISSING`` (not there),
``INSUFFICIENT`` (there, on too little data), ``UNKNOWN`` (cannot be told), and for a report
beside a checkpoint ``INCOMPARABLE`` (it was made with another checkpoint configuration).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ..engine.calibration import config_digest
from .dataset import EvalError
from .report import REPORT_SCHEMA, read_report

__all__ = [
    "INCOMPARABLE",
    "INSUFFICIENT",
    "MISSING",
    "PRESENT",
    "UNKNOWN",
    "format_summary",
    "inspect_calibration",
    "inspect_checkpoint",
    "inspect_report",
    "relate",
]

PRESENT, MISSING, INSUFFICIENT, UNKNOWN = "PRESENT", "MISSING", "INSUFFICIENT", "UNKNOWN"
INCOMPARABLE = "INCOMPARABLE"
MIN_CALIBRATION_ANSWERS = 50  # fewer dev answers than this fit temperatures poorly
MIN_EVAL_ANSWERS = 100  # fewer answers than this make ECE and selective figures noise


def _state(status: str, detail: str, **extra: object) -> dict[str, object]:
    return {"status": status, "detail": detail, **extra}


def _counted(answers: int, minimum: int, few: str, enough: str) -> dict[str, object]:
    """``INSUFFICIENT`` (``few``, fewer than ``minimum``) or ``PRESENT`` (``enough``), by how
    many answers the figures stand on."""
    if answers < minimum:
        return _state(INSUFFICIENT, f"{few} (fewer than {minimum})", answers=answers)
    return _state(PRESENT, enough, answers=answers)


def inspect_calibration(config: dict[str, Any]) -> dict[str, object]:
    """Whether a checkpoint config (``rl_agent_config.json``) holds fitted temperatures, and on
    how many answers they were fitted."""
    if not isinstance(config, Mapping):
        return _state(UNKNOWN, "not a checkpoint configuration")
    by_type = config.get("temperature") or []
    by_options = config.get("temperature_by_options") or {}
    if all(t == 1.0 for t in by_type) and not by_options:
        return _state(MISSING, "the temperatures are the defaults (1.0): never calibrated")
    dev = ((config.get("training") or {}).get("metrics") or {}).get("dev") or {}
    answers = dev.get("answers")
    if not isinstance(answers, int):
        return _state(UNKNOWN, "temperatures are set, but the checkpoint does not say on what")
    fitted = f"temperatures fitted on {answers}"
    return _counted(answers, MIN_CALIBRATION_ANSWERS, f"{fitted} answers", f"{fitted} dev answers")


def inspect_report(report: dict[str, Any]) -> dict[str, object]:
    """Whether an evaluation report holds enough answers for its calibration figures."""
    if not isinstance(report, Mapping) or not isinstance(report.get("overall"), Mapping):
        return _state(UNKNOWN, "not a laya eval report")
    if report.get("schema", REPORT_SCHEMA) != REPORT_SCHEMA:
        return _state(UNKNOWN, f"a {report.get('schema')!r} report, not {REPORT_SCHEMA}")
    overall = report["overall"]
    answers = overall.get("n_answers")
    if not isinstance(answers, int) or overall.get("ece") is None:
        return _state(INSUFFICIENT, "the report has no calibration figures")
    evaluated = f"{answers} answers evaluated"
    return _counted(answers, MIN_EVAL_ANSWERS, evaluated, f"{evaluated}, ECE {overall['ece']:.4f}")


def relate(config: dict[str, Any], report: dict[str, Any]) -> dict[str, object]:
    """Whether ``report`` was made with this checkpoint configuration (its digest, temperatures
    aside, as a calibration file records it)."""
    recorded = (report.get("config") or {}).get("checkpoint_config_sha256")
    if not recorded:
        return _state(UNKNOWN, "the report does not record which checkpoint it evaluated")
    if recorded != config_digest(config):
        return _state(INCOMPARABLE, "the report evaluated another checkpoint configuration")
    return _state(PRESENT, "the report evaluated this checkpoint")


def inspect_checkpoint(checkpoint_dir: str, report_path: str | None = None) -> dict[str, object]:
    """The calibration evidence of a checkpoint directory and, with ``report_path``, the
    evaluation evidence of that report and whether it belongs to the checkpoint."""
    path = os.path.join(checkpoint_dir, "rl_agent_config.json")
    try:
        with open(path, encoding="utf-8") as handle:
            config = json.load(handle)
    except OSError as exc:
        raise EvalError(
            f"--checkpoint {checkpoint_dir}: cannot read rl_agent_config.json ({exc.strerror}); "
            "give a checkpoint directory"
        ) from None
    except ValueError as exc:
        raise EvalError(f"{path}: not JSON ({exc})") from None
    result: dict[str, object] = {
        "checkpoint": checkpoint_dir,
        "calibration": inspect_calibration(config),
    }
    if report_path is None:
        result["eval"] = _state(MISSING, "no report given (--report)")
        return result
    report = read_report(report_path, "--report")
    result["eval"] = inspect_report(report)
    result["relation"] = relate(config, report)
    return result


def format_summary(result: Mapping[str, object]) -> str:
    """One line per part: its name, state and why."""
    parts = [(k, v) for k, v in result.items() if isinstance(v, Mapping) and "status" in v]
    return "\n".join(f"{name:<12} {part['status']:<13} {part['detail']}" for name, part in parts)
