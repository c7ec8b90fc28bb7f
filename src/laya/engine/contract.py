"""What a backend is: the one interface every forward pass sits behind (docs/architecture.md).

A backend turns one packed :class:`~laya.engine.encoding.Pass` into marker logits and act logits. The
runtime owns everything else (tokens, packing, decoding, hooks), so a new backend (another
accelerator, a remote service) implements these members and nothing more; ``embed`` serves
shortlists, and ``can_embed`` says whether this backend's model has it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from .encoding import Pass

__all__ = ["Backend"]


@runtime_checkable
class Backend(Protocol):
    """One forward pass at a time over packed rows; the runtime owns all the rest."""

    name: str
    precision: str  # what the forward computes in: fp32, bf16, fp16, int8
    can_embed: bool  # False where the model cannot embed texts (an ONNX graph without it)

    @property
    def batch_tokens(self) -> int:
        """Padded tokens per pass this backend runs best (the runtime's packing budget)."""
        ...

    def forward(self, batch: Pass) -> tuple[np.ndarray, np.ndarray]:
        """``(logits [R, K], act_logits [R, A])`` of one pass, float32, in the pass's row order."""
        ...

    def embed(self, batch: Pass) -> np.ndarray:
        """``[R, hidden]`` float32: each row (``[CLS] text [SEP]``) of encoder output averaged over
        its real tokens; raises where ``can_embed`` is False."""
        ...

    def close(self) -> None:
        """Free the model; the backend cannot run afterwards."""
        ...
