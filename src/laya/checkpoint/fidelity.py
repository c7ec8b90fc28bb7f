"""A checkpoint's fidelity record: what a cheaper precision changes in its decisions.

``fidelity.json`` beside ``model.safetensors`` says, per precision and per labelled file, how
many of the checkpoint's decisions flip against fp32 and how far any probability moves; it is
written by ``python benchmarks/fidelity.py --record`` (docs/performance.md, "int8"). ``fast=True``
picks int8 only where this record exists, was measured on these very weights (their SHA-256)
with the int8 recipe this laya runs, and shows at most :data:`MAX_FLIP_RATE` of the decisions
flipped in every file it lists; otherwise fast stays on bf16 (``laya.engine.precision``).
"""

from __future__ import annotations

import json
import warnings
from functools import cache
from pathlib import Path
from typing import Any

from .config import file_sha256

__all__ = [
    "FIDELITY_FILE",
    "MAX_FLIP_RATE",
    "RECORD_FORMAT",
    "keeps_decisions",
    "read_record",
]

FIDELITY_FILE = "fidelity.json"
RECORD_FORMAT = 1  # the record's layout version
MAX_FLIP_RATE = 0.01  # at most 1 decision in 100 flipped against fp32, in every labelled file


def read_record(directory: Path) -> dict[str, Any] | None:
    """The checkpoint's fidelity record, or None where it has none; an unreadable one warns
    (one line) and counts as none, so a broken record never stops a load."""
    path = directory / FIDELITY_FILE
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("format") != RECORD_FORMAT or not isinstance(record.get("precisions"), dict):
            raise ValueError(f"not a format-{RECORD_FORMAT} record")
    except (OSError, ValueError, AttributeError) as exc:
        warnings.warn(
            f"laya: {path} is unreadable ({exc}); fast=True ignores it. Write it again with "
            "`python benchmarks/fidelity.py --record`",
            RuntimeWarning,
            stacklevel=3,
        )
        return None
    return dict(record)


def keeps_decisions(directory: Path, weights: Path, precision: str, recipe: str) -> bool:
    """Whether the record of the checkpoint in ``directory`` shows ``precision`` (run with
    ``recipe``) flipping at most :data:`MAX_FLIP_RATE` of the decisions of every labelled file,
    measured on ``weights`` as they are now."""
    record = read_record(directory)
    if record is None:
        return False
    entry = record["precisions"].get(precision)
    if not isinstance(entry, dict) or entry.get("recipe") != recipe:
        return False
    files = entry.get("files")
    if not isinstance(files, dict) or not files:
        return False
    try:
        within = all(
            int(row["flipped"]) <= MAX_FLIP_RATE * int(row["decisions"]) and int(row["decisions"])
            for row in files.values()
        )
    except (KeyError, TypeError, ValueError):
        return False
    return within and record.get("weights_sha256") == _digest(weights)


def _digest(weights: Path) -> str:
    """The weights' SHA-256, hashed once per file version in this process."""
    stat = weights.stat()
    return _hashed(str(weights.resolve()), stat.st_size, stat.st_mtime_ns)


@cache
def _hashed(path: str, size: int, mtime_ns: int) -> str:
    return file_sha256(Path(path))
