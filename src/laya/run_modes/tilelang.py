"""The TileLang backend: the published runtime's fused GPU kernels (``laya.backends.tilelang``).

It needs the ``tilelang`` package, a CUDA GPU and the kernels themselves (the published
``laya.tl_kernels``, an extra this package does not ship). Selecting it where any is missing
raises :class:`~laya.errors.BackendUnavailable` naming what to install; ``set_backend`` without
``strict`` then warns and runs eager (docs/migrating.md).
"""

from __future__ import annotations

from importlib.util import find_spec

from ..errors import BackendUnavailable
from .base import Backend, PyTorchAgent

__all__ = ["KERNELS", "TileLangBackend", "requirement"]

KERNELS = "laya.tl_kernels"


def requirement() -> str:
    """What this install lacks to run TileLang kernels, in one line: the package first, then
    the kernels (never here: they are the published runtime's GPU extra)."""
    if find_spec("tilelang") is None:
        return "backend 'tilelang' needs the tilelang package and a CUDA GPU: pip install tilelang"
    return (
        f"backend 'tilelang' needs the TileLang kernels ({KERNELS}), which this laya does not "
        "ship; use 'eager' or 'compile'"
    )


class TileLangBackend(Backend):
    """The TileLang kernels: refused with :class:`BackendUnavailable`, naming what is missing."""

    name = "tilelang"

    def __init__(self, agent: PyTorchAgent, use_graphs: bool = True, verbose: bool = False) -> None:
        super().__init__(agent)
        raise BackendUnavailable(requirement())
