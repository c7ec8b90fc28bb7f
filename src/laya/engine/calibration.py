"""Calibration files: what ``laya calibrate`` writes and ``calibration=PATH`` applies.

A file replaces the checkpoint's temperatures (per type, per option-count bucket), may remap
``answer_confidence`` through a binning map, and may carry abstention thresholds (a
``min_confidence`` map the runtime gates with when a call gives none). It names the checkpoint it
was fitted for, and a file for another checkpoint is refused before any weight is read.

Versions 1 and 2 are the published runtime's files (``temperature``, ``temperature_by_options``,
``binning_map``; version 2 adds ``model_id_or_path``, ``subfolder`` and ``config``). Version 3
is ours: the same keys plus ``thresholds``, ``checkpoint`` (the config digest), ``data`` (what it
was fitted on) and ``figures`` (before and after). Version 4 adds ``certified``, the certified
automation and prediction sets of ``laya calibrate --risk`` (:mod:`laya.engine.automation`); a
file without it is written as version 3. See docs/calibration.md.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, SupportsFloat

from ..checkpoint import clamp_temperature, warn_replaced_temperatures
from ..errors import InvalidRequest
from ..files.atomic import write_atomically
from .automation import Certification, certification_from_json
from .gate import GATE_BUCKETS, MinConfidence, check_min_confidence

if TYPE_CHECKING:
    from .decoding import Temperatures
    from .result import CalibrationStamp

__all__ = [
    "CERTIFIED_VERSION",
    "FORMAT",
    "PUBLISHED_VERSION",
    "VERSION",
    "Calibration",
    "attach_calibration",
    "calibration_payload",
    "config_digest",
    "from_payload",
    "read_calibration",
    "write_json",
]

FORMAT = "laya-calibration"
VERSION = 3
CERTIFIED_VERSION = 4  # a file with a ``certified`` block: older readers refuse it, not drop it
PUBLISHED_VERSION = 2  # the published runtime's format, which save_calibration writes
BUCKETS = GATE_BUCKETS - {"default"}
_TEMPERATURE_KEYS = ("temperature", "temperature_by_options")
# What the digest leaves out: how answers are read, not what the model computes.
_READING_KEYS = (*_TEMPERATURE_KEYS, "recommended_min_confidence")
Fail = Callable[[str, str], InvalidRequest]  # (field, problem) -> the error naming both
_REFIT = "fit one for this checkpoint: laya calibrate DATA.jsonl --model CHECKPOINT --out FILE"


def config_digest(config: Mapping[str, object]) -> str:
    """SHA-256 of a checkpoint config without its temperatures (and recommended threshold): what
    a calibration is fitted for."""
    kept = {k: v for k, v in config.items() if k not in _READING_KEYS}
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Calibration:
    """A checked calibration: temperatures, binning map, thresholds, identity and provenance."""

    temperature: tuple[float, ...]
    temperature_by_options: dict[str, float]
    binning_map: dict[str, tuple[float, ...]] = field(default_factory=dict)
    thresholds: dict[str, float] = field(default_factory=dict)
    config_sha256: str | None = None
    version: int = VERSION
    source: str = "<memory>"
    sha256: str = ""
    payload: dict[str, Any] = field(default_factory=dict)
    replaced: tuple[str, ...] = ()
    certified: Certification | None = None

    @property
    def stamp(self) -> CalibrationStamp:
        """What a result says about the calibration that produced it."""
        return {"file": Path(self.source).name, "sha256": self.sha256[:16], "version": self.version}

    def check_for(self, config: Mapping[str, object], name: str) -> None:
        """Refuse a file fitted for another checkpoint (by config digest), naming both."""
        if self.config_sha256 is None or self.config_sha256 == config_digest(config):
            return
        raise InvalidRequest(
            f"calibration file {self.source} was fitted for another checkpoint (config sha256 "
            f"{self.config_sha256[:12]}), not for {name} ({config_digest(config)[:12]}); "
            f"{_REFIT}"
        )

    def temperatures(self, base: Temperatures) -> Temperatures:
        """The runtime's temperatures with this file's in place (language entries kept)."""
        warn_replaced_temperatures(list(self.replaced))
        from .decoding import Temperatures  # NumPy: only once a runtime applies the file

        return Temperatures(
            self.temperature, dict(self.temperature_by_options), base.by_language, self.binning_map
        )

    def gate(self, min_confidence: MinConfidence | None) -> MinConfidence | None:
        """The thresholds a call gates with: its own ``min_confidence``, else this file's."""
        return min_confidence if min_confidence is not None else (self.thresholds or None)

    def to_json(self) -> dict[str, object]:
        """The file's JSON object (version 3; version 4 with a ``certified`` block)."""
        return {
            "format": FORMAT,
            "version": VERSION if self.certified is None else CERTIFIED_VERSION,
            "temperature": list(self.temperature),
            "temperature_by_options": dict(self.temperature_by_options),
            **(
                {
                    "binning_map": {
                        b: {"bins": len(v), "values": list(v)} for b, v in self.binning_map.items()
                    }
                }
                if self.binning_map
                else {}
            ),
            "thresholds": dict(self.thresholds),
            "checkpoint": {
                **self.payload.get("checkpoint", {}),
                "config_sha256": self.config_sha256,
            },
            **({} if self.certified is None else {"certified": self.certified.to_json()}),
            **{k: v for k, v in self.payload.items() if k not in _OWN_KEYS},
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the file (indented JSON, atomically replaced) and return its path."""
        return write_json(path, self.to_json())


def write_json(path: str | os.PathLike[str], payload: Mapping[str, object]) -> Path:
    """Write a calibration object as indented JSON with a trailing newline, atomically replacing
    ``path`` (a reader never sees half a file; laya.files.atomic: a ``tempfile`` beside it, the
    mode the umask or the replaced file gives)."""
    return write_atomically(path, json.dumps(payload, indent=2) + "\n")


def calibration_payload(
    temperature: Iterable[SupportsFloat],
    temperature_by_options: Mapping[str, SupportsFloat] | None,
    model_id_or_path: object = None,
    subfolder: str | None = None,
    config: Mapping[str, object] | None = None,
    binning_map: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, object]:
    """A version 2 calibration object (the published runtime's format): temperatures, the
    checkpoint it is for (its config without temperatures), and a confidence map if any."""
    payload: dict[str, object] = {
        "version": PUBLISHED_VERSION,
        "temperature": [float(t) for t in temperature],
        "temperature_by_options": {
            str(k): float(v) for k, v in (temperature_by_options or {}).items()
        },
        "model_id_or_path": None if model_id_or_path is None else str(model_id_or_path),
        "subfolder": subfolder,
        "config": None
        if config is None
        else {k: v for k, v in config.items() if k not in _TEMPERATURE_KEYS},
    }
    if binning_map:
        payload["binning_map"] = {
            str(b): {"bins": int(e["bins"]), "values": [float(v) for v in e["values"]]}
            for b, e in binning_map.items()
        }
    return payload


_OWN_KEYS = frozenset(
    {"format", "version", "temperature", "temperature_by_options", "binning_map"}
    | {"thresholds", "checkpoint", "model_id_or_path", "subfolder", "config", "certified"}
)


# --------------------------------------------------------------------------- reading


def attach_calibration(spec: object, config: Mapping[str, object], name: str) -> Calibration | None:
    """The calibration a runtime applies (None for none), checked against its checkpoint."""
    if spec is None:
        return None
    calibration = read_calibration(spec)
    calibration.check_for(config, name)
    return calibration


def read_calibration(spec: object) -> Calibration:
    """A :class:`Calibration` from a path (or one already read); bad files raise naming the field."""
    if isinstance(spec, Calibration):
        return spec
    if not isinstance(spec, (str, os.PathLike)):
        raise InvalidRequest(
            f"calibration must be the path of a calibration file, got {type(spec).__name__}"
        )
    path = Path(spec).expanduser()
    if not path.is_file():
        raise InvalidRequest(f"calibration file {path} not found; {_REFIT}")
    data = path.read_bytes()
    try:
        payload = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidRequest(f"calibration file {path} is not JSON ({exc}); {_REFIT}") from None
    return from_payload(payload, str(path), hashlib.sha256(data).hexdigest())


def from_payload(payload: object, source: str = "<memory>", sha256: str = "") -> Calibration:
    """Check a calibration object (versions 1 to 4); every error names the file and the field."""

    def fail(field_name: str, problem: str) -> InvalidRequest:
        return InvalidRequest(f"calibration file {source}, field '{field_name}': {problem}")

    if not isinstance(payload, dict):
        raise InvalidRequest(f"calibration file {source} must hold a JSON object")
    version = _version(payload.get("version"), fail)
    replaced: list[str] = []
    temperature = _temperature(payload.get("temperature"), fail, replaced)
    by_bucket = _bucket_map(payload.get("temperature_by_options"), fail, replaced)
    bins = _binning(payload.get("binning_map"), fail)
    thresholds = _thresholds(payload.get("thresholds"), fail)
    digest = _identity(payload, version, fail)
    certified = certification_from_json(payload.get("certified"), fail) if version >= 3 else None
    return Calibration(
        temperature,
        by_bucket,
        bins,
        dict(thresholds),
        digest,
        version,
        source,
        sha256,
        payload,
        tuple(replaced),
        certified,
    )


def _version(value: object, fail: Fail) -> int:
    version = 1 if value is None else value
    newest = CERTIFIED_VERSION
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= newest:
        raise fail(
            "version",
            f"unsupported version {value!r}; this laya reads versions 1 to {newest} "
            f"(refit with: laya calibrate DATA.jsonl --model CHECKPOINT --out FILE)",
        )
    return version


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _temperature(value: object, fail: Fail, replaced: list[str]) -> tuple[float, ...]:
    if not isinstance(value, list) or len(value) != 3 or not all(map(_number, value)):
        raise fail(
            "temperature", f"must be a list of 3 numbers (choice, score, noul), got {value!r}"
        )
    return tuple(_clamped(f"temperature[{i}]", v, replaced) for i, v in enumerate(value))


def _bucket_map(value: object, fail: Fail, replaced: list[str]) -> dict[str, float]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise fail("temperature_by_options", f"must map a bucket to a number, got {value!r}")
    for key, t in value.items():
        if key not in BUCKETS or not _number(t):
            raise fail(
                f"temperature_by_options.{key}",
                f"expected a bucket like 'choice:3-5' with a number, got {key!r}: {t!r}",
            )
    return {k: _clamped(k, v, replaced) for k, v in value.items()}


def _clamped(name: str, value: object, replaced: list[str]) -> float:
    result = clamp_temperature(value)
    if result != value:
        replaced.append(f"{name}={value!r} -> {result:g}")
    return result


def _binning(value: object, fail: Fail) -> dict[str, tuple[float, ...]]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise fail("binning_map", f"must map a bucket to {{bins, values}}, got {value!r}")
    out = {}
    for bucket, entry in value.items():
        where = f"binning_map.{bucket}"
        if bucket not in BUCKETS:
            raise fail(where, "the key must be a bucket like 'choice:3-5'")
        values = _bin_values(entry)
        if values is None:
            raise fail(where, "must be {'bins': n >= 1, 'values': n numbers in [0, 1]}")
        out[bucket] = values
    return out


def _bin_values(entry: object) -> tuple[float, ...] | None:
    """A binning entry's values, or None unless it is ``{'bins': n, 'values': n numbers}``."""
    bins = entry.get("bins") if isinstance(entry, dict) else None
    values = entry.get("values") if isinstance(entry, dict) else None
    if not (
        isinstance(bins, int)
        and not isinstance(bins, bool)
        and bins >= 1
        and isinstance(values, list)
        and len(values) == bins
        and all(_number(v) and 0.0 <= v <= 1.0 for v in values)
    ):
        return None
    return tuple(float(v) for v in values)


def _thresholds(value: object, fail: Fail) -> dict[str, float]:
    """The file's abstention thresholds: a bucket map (``{}`` or absent: none)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise fail(
            "thresholds",
            f"must be a map of bucket -> threshold such as {{'default': 0.6}}, got {value!r}",
        )
    try:
        check_min_confidence(value or None)
    except ValueError as exc:
        raise fail("thresholds", str(exc)) from None
    return value


def _identity(payload: Mapping[str, object], version: int, fail: Fail) -> str | None:
    """The config digest a file was fitted for (v3 ``checkpoint``, v2 ``config``), if any."""
    if version >= 3:
        checkpoint = payload.get("checkpoint") or {}
        if not isinstance(checkpoint, dict):
            raise fail("checkpoint", f"must be an object holding config_sha256, got {checkpoint!r}")
        digest = checkpoint.get("config_sha256")
        if digest is not None and not isinstance(digest, str):
            raise fail("checkpoint.config_sha256", f"must be a hex digest, got {digest!r}")
        return digest
    config = payload.get("config") if version == 2 else None
    if config is None:
        return None
    if not isinstance(config, dict):
        raise fail("config", f"must be the checkpoint's config object, got {config!r}")
    return config_digest(config)
