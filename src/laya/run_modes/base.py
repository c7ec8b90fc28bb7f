"""What an installable backend is: how a PyTorch Agent runs its forward (the published
``laya.backends.base``; docs/migrating.md).

A :class:`Backend` is made for one Agent and switches how the Agent's engine backend
(:class:`~laya.engine.backends.torch.TorchBackend`, read through :class:`TorchForward`) runs
(``install``, ``uninstall``); its ``forward`` takes the padded tensors the published runtime's
backends take and answers through that same engine backend, so every backend gives the Agent's
numbers. The batch helpers pad a pass to a bucketed shape, so a compiled forward sees few shapes.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from ..engine.encoding import Pass
from ..errors import BackendUnavailable, InvalidRequest

if TYPE_CHECKING:
    import torch

    from ..engine.engine import Engine

__all__ = [
    "DYNAMIC_MAX_L",
    "LONG_BUCKET",
    "Backend",
    "BackendUnavailable",
    "PyTorchAgent",
    "TorchForward",
    "bucket_rows",
    "bucket_shape",
    "bucket_tokens",
    "pad_batch",
    "warn_fallback",
]

DYNAMIC_MAX_L = 256  # up to this many tokens a pass is padded to a power of two
LONG_BUCKET = 64  # beyond it, to a multiple of this


class TorchForward(Protocol):
    """What a backend drives of the engine's PyTorch backend: its model, its mode, its pass."""

    @property
    def model(self) -> torch.nn.Module:
        """The loaded DecisionModel."""
        ...

    def use_mode(self, mode: str, compile_mode: str = "default") -> None:
        """Run ``eager`` (packed passes) or ``compile`` (``torch.compile`` in ``compile_mode``)."""
        ...

    def forward(self, batch: Pass) -> tuple[np.ndarray, np.ndarray]:
        """``(logits [R, K], act_logits [R, A])`` of one pass."""
        ...


@runtime_checkable
class PyTorchAgent(Protocol):
    """What a backend reads of an Agent: its engine and that engine's PyTorch backend."""

    @property
    def engine(self) -> Engine:
        """The checkpoint's engine (its config, tokenizer and warm-up)."""
        ...

    @property
    def torch_backend(self) -> TorchForward:
        """The engine's backend, PyTorch's."""
        ...


class Backend:
    """One way a PyTorch Agent runs its forward; ``name`` is what ``agent.backend`` then says."""

    name = "base"
    bucketed = False  # whether ``forward`` pads its rows to a bucketed count (a compiled one)

    def __init__(self, agent: PyTorchAgent) -> None:
        if not isinstance(agent, PyTorchAgent):
            raise InvalidRequest(
                f"agent: a backend switches a PyTorch Agent, not a {type(agent).__name__}; "
                "load the checkpoint with laya.load(path) (backend='onnx' is ONNXAgent)"
            )
        self.agent = agent
        self.engine = agent.engine
        self.torch_backend = agent.torch_backend

    def install(self) -> None:
        """Make the agent run this way from its next pass on."""
        raise NotImplementedError(f"{type(self).__name__} does not say how it installs")

    def uninstall(self) -> None:
        """Back to the agent's stock forward (eager, packed passes)."""
        self.torch_backend.use_mode("eager")

    def stock_forward(self, *args: Any, **kwargs: Any) -> Any:
        """The DecisionModel's own padded forward, unaccelerated, without gradients."""
        import torch

        with torch.inference_mode():
            return self.torch_backend.model(*args, **kwargs)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        marker_pos: torch.Tensor,
        marker_mask: torch.Tensor,
        qtype: torch.Tensor,
        detach_encoder: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(logits [B, K], act_logits [B, A])`` of right-padded rows, through the agent's engine
        backend as installed (inference only, so ``detach_encoder`` changes nothing)."""
        import torch

        tensors = (input_ids, attention_mask, marker_pos, marker_mask, qtype)
        if self.bucketed:
            max_len, pad_id = self.engine.config.max_len, self.engine.tokenizer.pad_id
            tensors = pad_batch(*tensors, max_len, pad_id, keep_one_token=True)
        logits, act = self.torch_backend.forward(_as_pass(*tensors))
        rows = input_ids.shape[0]
        return torch.from_numpy(logits[:rows]), torch.from_numpy(act[:rows])

    def warmup(self, shapes: Sequence[Sequence[int]] | None = None) -> float:
        """Run a pass of each ``(rows, tokens, markers)`` shape; the seconds it took."""
        return self.engine.warmup(shapes)


def _as_pass(
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    marker_pos: torch.Tensor,
    marker_mask: torch.Tensor,
    qtype: torch.Tensor,
) -> Pass:
    """The engine's pass of right-padded rows (their real tokens back to back)."""
    real = attention_mask.detach().cpu().numpy().astype(bool)
    return Pass(
        rows=list(range(real.shape[0])),
        ids=input_ids.detach().cpu().numpy().astype(np.int64)[real],
        lengths=real.sum(1).astype(np.int64),
        marker_pos=marker_pos.detach().cpu().numpy().astype(np.int64),
        marker_mask=marker_mask.detach().cpu().numpy().astype(bool),
        qtype=qtype.detach().cpu().numpy().astype(np.int64),
        pad_id=0,
    )


def bucket_rows(n: int) -> int:
    """Rows a pass of ``n`` rows is padded to: the next power of two."""
    return 1 << max(0, int(n) - 1).bit_length()


def bucket_tokens(n_tokens: int, max_len: int) -> int:
    """Tokens a pass is padded to: a power of two up to :data:`DYNAMIC_MAX_L` (16 at least),
    a multiple of :data:`LONG_BUCKET` beyond it; never beyond ``max_len``."""
    if n_tokens <= DYNAMIC_MAX_L:
        bucket = max(16, 1 << max(0, int(n_tokens) - 1).bit_length())
    else:
        bucket = -(-int(n_tokens) // LONG_BUCKET) * LONG_BUCKET
    return max(int(n_tokens), min(bucket, int(max_len)))


def bucket_shape(n_rows: int, n_tokens: int, max_len: int) -> tuple[int, int]:
    """``(rows, tokens)`` a pass of that size is padded to."""
    return bucket_rows(n_rows), bucket_tokens(n_tokens, max_len)


def pad_batch(
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    marker_pos: torch.Tensor,
    marker_mask: torch.Tensor,
    qtype: torch.Tensor,
    max_len: int,
    pad_id: int = 0,
    keep_one_token: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The five tensors padded to :func:`bucket_shape`: new columns with ``pad_id`` (mask 0),
    new rows empty, or holding one attended token with ``keep_one_token`` (a fully masked row
    gives NaNs in some attention kernels); read the first ``B`` rows of the outputs."""
    import torch.nn.functional as F

    rows, tokens = input_ids.shape
    new_rows, new_tokens = bucket_shape(rows, tokens, max_len)
    grow, widen = new_rows - rows, new_tokens - tokens
    input_ids = F.pad(input_ids, (0, widen, 0, grow), value=pad_id)
    attention_mask = F.pad(attention_mask, (0, widen, 0, grow), value=0)
    if keep_one_token and grow:
        attention_mask[rows:, 0] = 1
    return (
        input_ids,
        attention_mask,
        F.pad(marker_pos, (0, 0, 0, grow), value=0),
        F.pad(marker_mask, (0, 0, 0, grow), value=0),
        F.pad(qtype, (0, grow), value=0),
    )


def warn_fallback(name: str, why: object) -> None:
    """Say once per call site that backend ``name`` cannot run here and eager runs instead."""
    warnings.warn(
        f"laya: backend {name!r} is not available ({why}); running 'eager'",
        RuntimeWarning,
        stacklevel=3,
    )
