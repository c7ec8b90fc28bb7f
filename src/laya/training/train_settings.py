"""What a ``laya train`` run is asked to do (docs/training.md): ``TrainSettings``, built once by
the command (or by ``finetune``) and handed to ``train``, and ``TrainOptions``, the same settings
as typed keywords, so ``train(data, base, out, epochs=3, lr=3e-3)`` keeps working. Every setting
is checked when the settings are built, before anything is read or written."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from ..errors import InvalidRequest
from .losses import Rlcd

__all__ = ["TrainOptions", "TrainSettings", "check_settings"]

_COUNTS = {"epochs": 1, "max_len": 1, "batch_size": 1, "warmup_epochs": 0, "freeze_layers": 0}
_OPTIONAL_COUNTS = ("head_max_len", "threads")
_RATES = ("lr", "head_lr", "grad_clip")
_WEIGHTS = ("brier_weight", "bind_weight", "pair_weight", "weight_decay")


@dataclass(frozen=True)
class TrainSettings:
    """A training run's settings, each described under "From Python" in docs/training.md.

    ``dev`` is the labelled dev split (early stopping and the temperature fit), ``head_lr``
    defaults to ``lr``, ``device`` to the CPU; ``rlcd`` trains on the RLCD objective and
    ``min_lr`` decays the learning rates on a cosine to it."""

    epochs: int = 3
    max_len: int = 256
    dev: str | Path | None = None
    seed: int = 0
    lr: float = 5e-5
    batch_size: int = 16
    brier_weight: float = 0.0
    head_lr: float | None = None
    bind_weight: float = 0.0
    resume: bool = True
    progress: bool = True
    head_max_len: int | None = None
    encoder_id: str | None = None
    threads: int | None = None
    freeze_layers: int = 0
    keep_best: bool = True
    device: str | None = None
    warmup_epochs: int = 0
    pair_weight: float = 0.0
    languages: Sequence[str] | None = None
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    rlcd: Rlcd | None = None
    min_lr: float | None = None

    def __post_init__(self) -> None:
        check_settings(vars(self))


class TrainOptions(TypedDict, total=False):
    """:class:`TrainSettings` as keywords of ``train`` (each key is a field there)."""

    epochs: int
    max_len: int
    dev: str | Path | None
    seed: int
    lr: float
    batch_size: int
    brier_weight: float
    head_lr: float | None
    bind_weight: float
    resume: bool
    progress: bool
    head_max_len: int | None
    encoder_id: str | None
    threads: int | None
    freeze_layers: int
    keep_best: bool
    device: str | None
    warmup_epochs: int
    pair_weight: float
    languages: Sequence[str] | None
    weight_decay: float
    grad_clip: float
    rlcd: Rlcd | None
    min_lr: float | None


def check_settings(settings: Mapping[str, object]) -> None:
    """Refuse a count below its least, a learning rate that is not above 0 or a weight below 0
    (or any of them not a finite number), before anything is read or written."""

    def refuse(name: str, rule: str) -> InvalidRequest:
        return InvalidRequest(f"{name} must be {rule}, got {settings[name]!r}")

    counts = {**_COUNTS, **{n: 1 for n in _OPTIONAL_COUNTS if settings[n] is not None}}
    for name, least in counts.items():
        value = settings[name]
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
            raise refuse(name, f"a whole number of at least {least}")
    rates = [n for n in _RATES if settings[n] is not None]
    for name in (*rates, *_WEIGHTS):
        value = settings[name]
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise refuse(name, "a number")
        if not math.isfinite(value) or value < 0 or (name in rates and value == 0):
            raise refuse(name, "a finite number above 0" if name in rates else "0 or more")
