"""What a backend is: the one interface every forward pass sits behind (runtime.md §1.7).

A backend turns one packed :class:`~laya.encoding.Pass` into marker logits and act logits. The
runtime owns everything else (tokens, packing, decoding, hooks), so a new backend (another
accelerator, a remote service) implements these members and nothing more. A backend that can
also embed texts (for shortlists) says so with ``can_embed`` and has :meth:`Embeds.embed`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from ..encoding import Pass

__all__ = ["Backend", "Embeds"]


@runtime_checkable
class Backend(Protocol):
    """One forward pass at a time over packed rows; the runtime owns all the rest."""

    name: str
    precision: str  # what the forward computes in: fp32, bf16, fp16, int8

    @property
    def batch_tokens(self) -> int:
        """Padded tokens per pass this backend runs best (the runtime's packing budget)."""
        ...

    def forward(self, batch: Pass) -> tuple[np.ndarray, np.ndarray]:
        """``(logits [R, K], act_logits [R, A])`` of one pass, float32, in the pass's row order."""
        ...

    def close(self) -> None:
        """Free the model; the backend cannot run afterwards."""
        ...


@runtime_checkable
class Embeds(Protocol):
    """A backend that may embed texts: rows ``[CLS] text [SEP]`` in, one vector per row out."""

    can_embed: bool  # False where this backend's model lacks it (an old ONNX graph)

    def embed(self, batch: Pass) -> np.ndarray:
        """``[R, H]`` float32: each row's last encoder states averaged over its real tokens."""
        ...
