"""The eager backend: the Agent's stock PyTorch forward, packed passes where the encoder allows
them (the published ``laya.backends.eager``; docs/performance.md)."""

from __future__ import annotations

from .base import Backend

__all__ = ["EagerBackend"]


class EagerBackend(Backend):
    """PyTorch as it is, no compilation: the default, and what every other backend falls back to."""

    name = "eager"

    def install(self) -> None:
        """Run the stock forward from the next pass on."""
        self.torch_backend.use_mode("eager")

    def uninstall(self) -> None:
        """Nothing to undo: eager is the stock forward."""
