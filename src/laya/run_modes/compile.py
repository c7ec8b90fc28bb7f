"""The compiled backend: the Agent's forward under ``torch.compile``, warmed up on install and
its kernels optionally cached on disk (the published ``laya.backends.compile``;
docs/performance.md)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..engine.engine import WARMUP_SHAPES
from .base import Backend, PyTorchAgent

__all__ = [
    "CACHE_DIR_ENV",
    "DEFAULT_CACHE_DIR",
    "WARMUP_ENV",
    "WARMUP_SHAPES",
    "CompileBackend",
    "configure_inductor_cache",
    "warmup_enabled",
]

CACHE_DIR_ENV = "LAYA_INDUCTOR_CACHE_DIR"
DEFAULT_CACHE_DIR = "~/.cache/laya/inductor"
WARMUP_ENV = "LAYA_COMPILE_WARMUP"


def warmup_enabled(default: bool = True) -> bool:
    """``LAYA_COMPILE_WARMUP``: off with 0, false, no or off, on with anything else; ``default``
    when unset."""
    value = os.environ.get(WARMUP_ENV, "").strip().lower()
    if not value:
        return default
    return value not in ("0", "false", "no", "off")


def configure_inductor_cache() -> str:
    """Keep compiled kernels on disk: ``LAYA_INDUCTOR_CACHE_DIR`` (default
    ``~/.cache/laya/inductor``) as Inductor's cache directory, unless one is set already."""
    directory = os.path.expanduser(os.environ.get(CACHE_DIR_ENV, "").strip() or DEFAULT_CACHE_DIR)
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", directory)
    return os.environ["TORCHINDUCTOR_CACHE_DIR"]


class CompileBackend(Backend):
    """``torch.compile`` with ``mode`` (one of ``torch.compile``'s modes); ``warmup`` compiles
    the common shapes on install (None: unless ``LAYA_COMPILE_WARMUP`` turns it off)."""

    name = "compile"
    bucketed = True  # rows padded to a bucketed count: fewer shapes to compile

    def __init__(
        self, agent: PyTorchAgent, mode: str = "reduce-overhead", warmup: bool | None = None
    ) -> None:
        super().__init__(agent)
        self.mode = mode
        self.warm_on_install = warmup_enabled() if warmup is None else bool(warmup)

    def install(self) -> None:
        """Compile the forward (each new shape compiles on its first pass, or here in warm-up)."""
        self.torch_backend.use_mode("compile", self.mode)
        if self.warm_on_install:
            self.warmup()

    def warmup(self, shapes: Sequence[Sequence[int]] | None = None) -> float:
        """Compile and run each ``(rows, tokens, markers)`` shape (:data:`WARMUP_SHAPES`)."""
        return super().warmup(WARMUP_SHAPES if shapes is None else shapes)
