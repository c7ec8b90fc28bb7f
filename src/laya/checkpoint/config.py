"""A checkpoint's files: ``rl_agent_config.json`` parsed with its strict checks, temperatures
clamped, digests verified."""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from ..errors import (
    CheckpointError,
    InvalidRequest,
    MissingCheckpointFile,
)

TEMPERATURE_RANGE = (0.5, 5.0)
OPTION_LAYOUTS = ("sequential", "parallel")  # how the encoder reads the options (docs/agent.md)
BUDGET_DEFAULTS = {"max_len": 512, "head_max_len": 192}  # when the config names none


@dataclass
class CheckpointConfig:
    """The parts of ``rl_agent_config.json`` the runtime uses, with temperatures clamped.

    ``raw`` is the config object itself, which a runtime's ``cfg`` hands out as the published
    dict: its token budgets are read from it at each call, so ``cfg["max_len"] = 256`` budgets
    the calls after it. ``file`` is the object as read, never written: what identifies the
    checkpoint (calibration files, evaluation reports)."""

    raw: dict[str, Any]
    file: dict[str, Any]
    head_layers: int
    n_act: int
    temperature: tuple[float, float, float]
    temperature_by_options: dict[str, float]
    amp_dtype: str
    option_layout: str = "sequential"
    replaced: list[str] = field(default_factory=list)
    unsure_below: float | None = None
    """``recommended_min_confidence``: answers under it are marked unsure (docs/calibration.md)."""

    @property
    def max_len(self) -> int:
        """Tokens of a row when a call gives no ``max_len``: ``raw["max_len"]`` (512 if absent)."""
        return self._budget("max_len")

    @property
    def head_max_len(self) -> int:
        """Tokens of a question's head when a call gives none: ``raw["head_max_len"]`` (192)."""
        return self._budget("head_max_len")

    def _budget(self, key: str) -> int:
        value = self.raw.get(key, BUDGET_DEFAULTS[key])
        if not _whole(value):
            raise InvalidRequest(
                f"the checkpoint config's {key} must be a whole number >= 1, got {value!r} "
                f"(was cfg[{key!r}] set to something else?)"
            )
        return value


def read_json_object(path: Path, missing_ok: bool = False) -> dict[str, Any]:
    """A checkpoint's JSON file, which must hold an object; a bad one raises naming the file."""
    if missing_ok and not path.is_file():
        return {}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise CheckpointError(f"{path} must hold a JSON object, got {type(raw).__name__}")
    return raw


def read_config(directory: Path, model_id: str) -> CheckpointConfig:
    """Parse and check ``rl_agent_config.json`` (missing file or keys raise, naming the file)."""
    path = directory / "rl_agent_config.json"
    if not path.is_file():
        raise MissingCheckpointFile(
            f"Incompatible model: {model_id!r} does not contain 'rl_agent_config.json' (looked in "
            f"{directory}). A Laya checkpoint has rl_agent_config.json, model.safetensors, "
            f"encoder/ and tokenizer/."
        )
    raw = read_json_object(path)
    missing = [key for key in ("encoder", "head_layers") if key not in raw]
    if missing:
        raise CheckpointError(
            f"Incompatible model config for {model_id!r}: missing configuration keys {missing} "
            f"in {path}"
        )
    layout = raw.get("option_layout", "sequential")
    if not isinstance(layout, str) or layout not in OPTION_LAYOUTS:
        raise CheckpointError(
            f"{path}: option_layout must be one of {', '.join(OPTION_LAYOUTS)}, got {layout!r}"
        )
    unsure_below = raw.get("recommended_min_confidence")
    if unsure_below is not None and not _fraction(unsure_below):
        raise CheckpointError(
            f"{path}: recommended_min_confidence must be a number in [0, 1] or absent, "
            f"got {unsure_below!r}"
        )
    for key, default in BUDGET_DEFAULTS.items():
        if not _whole(raw.get(key, default)):
            raise CheckpointError(f"{path}: {key} must be a whole number >= 1, got {raw[key]!r}")
    replaced: list[str] = []
    return CheckpointConfig(
        raw=raw,
        file=copy.deepcopy(raw),
        head_layers=int(raw.get("head_layers", 2)),
        n_act=len(raw.get("act_costs") or {}) + 1,
        temperature=_temperature_list(raw.get("temperature", [1.0, 1.0, 1.0]), model_id, replaced),
        temperature_by_options=_temperature_map(raw.get("temperature_by_options"), replaced),
        amp_dtype=str(raw.get("amp_dtype", "fp16")),
        option_layout=layout,
        replaced=replaced,
        unsure_below=unsure_below,
    )


def _whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _fraction(value: object) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0.0 <= value <= 1.0
    )


def encoder_positions(directory: Path) -> int | None:
    """How many token positions the encoder can embed (``max_position_embeddings``), if stated."""
    path = directory / "encoder" / "config.json"
    try:
        value = json.loads(path.read_text(encoding="utf-8")).get("max_position_embeddings")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def verify_sha256(path: Path, expected: str | None) -> None:
    """Refuse a weights file whose SHA-256 is not ``expected`` (None: no check), before reading it."""
    if expected is None:
        return
    want = str(expected).strip().lower()
    if not re.fullmatch(r"[0-9a-f]{64}", want):
        raise InvalidRequest(
            f"expected_sha256 must be 64 hexadecimal digits (the SHA-256 of {path.name}), "
            f"got {expected!r}"
        )
    found = file_sha256(path)
    if found != want:
        raise CheckpointError(
            f"{path} has SHA-256 {found}, not the expected {want}; the file is "
            "corrupt or another version: download it again or pin the right revision"
        )


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, as 64 hexadecimal digits."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def snapshot_revision(path: str | Path) -> str | None:
    """The Hub commit a directory was downloaded at (``.../snapshots/<commit>/...``), else None."""
    directory = Path(path)
    for folder in (directory, *directory.parents):
        if folder.parent.name == "snapshots":
            return folder.name
    return None


def clamp_temperature(
    t: Any, lo: float = TEMPERATURE_RANGE[0], hi: float = TEMPERATURE_RANGE[1]
) -> float:
    """A usable temperature: invalid or non-finite -> 1.0, else clamped to [lo, hi]
    ([0.5, 5] unless given)."""
    try:
        number = float(t)
    except (TypeError, ValueError):
        return 1.0
    if isinstance(t, bool) or not math.isfinite(number):
        return 1.0
    return min(hi, max(lo, number))


def _clamped(name: str, value: object, replaced: list[str]) -> float:
    result = clamp_temperature(value)
    if not (isinstance(value, (int, float)) and not isinstance(value, bool) and value == result):
        replaced.append(f"{name}={value!r} -> {result:g}")
    return result


def _temperature_list(
    value: object, model_id: str, replaced: list[str]
) -> tuple[float, float, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise CheckpointError(
            f"Incompatible model: {model_id} temperature must be a list of 3 floats "
            f"[choice, score, noul], got {value!r}"
        )
    choice, score, noul = (_clamped(f"temperature[{i}]", v, replaced) for i, v in enumerate(value))
    return choice, score, noul


def _temperature_map(value: object, replaced: list[str]) -> dict[str, float]:
    if not value:
        return {}
    if not isinstance(value, dict):
        raise CheckpointError(
            f"temperature_by_options must be a mapping of bucket -> float, got "
            f"{type(value).__name__}"
        )
    return {str(k): _clamped(str(k), v, replaced) for k, v in value.items()}


def warn_replaced_temperatures(replaced: list[str]) -> None:
    """One warning listing every temperature the checkpoint ships outside the usable range."""
    if replaced:
        warnings.warn(
            "laya: this checkpoint ships invalid temperatures or values outside [0.5, 5]; using "
            + ", ".join(replaced)
            + ". Treat confidence from the affected entries as uncalibrated.",
            RuntimeWarning,
            stacklevel=3,
        )
