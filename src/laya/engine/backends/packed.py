"""The exact forward pass with no padding through the linear layers (docs/performance.md).

Every layer of the encoder and of the head is per-token except attention. So a pass runs as one
packed sequence of its rows' real tokens ``[1, T]``, positions restarting at each row, and only
attention sees rows again: :func:`packed_attention` (an attention implementation registered with
transformers) scatters queries, keys and values into ``[rows, width]``, attends under each row's
own mask, sliding window included, and gathers the real tokens back. After the last head layer
only ``[CLS]`` and the markers are read, so that layer computes its query projection, attention
output and MLP for those positions alone. Same maths as the padded forward, less of it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .kernels import linear

if TYPE_CHECKING:
    from transformers import PreTrainedModel

__all__ = ["ATTENTION", "Layout", "packed_forward", "register_attention"]

ATTENTION = "laya_packed"
# A prepared 4-D mask is passed through by transformers' mask builders untouched: handing them
# this placeholder keeps them from building a [T, T] mask that packed attention never reads.
_NO_MASK = torch.ones(1, 1, 1, 1, dtype=torch.bool)


class _Head(Protocol):
    @property
    def transformer_layers(self) -> list[nn.TransformerEncoderLayer]: ...


class DecisionNetwork(Protocol):
    """What the packed pass reads of a ``DecisionModel`` (backends/torch.py, which imports this
    module): its encoder, head layers, type embedding, readout, and the padded forward."""

    @property
    def encoder(self) -> PreTrainedModel: ...

    @property
    def head(self) -> _Head | None: ...

    @property
    def type_emb(self) -> nn.Embedding: ...

    def readout(
        self, cls: torch.Tensor, markers: torch.Tensor, marker_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]: ...

    def parameters(self, recurse: bool = True) -> Iterator[nn.Parameter]: ...

    def __call__(self, *inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]: ...


@dataclass
class Layout:
    """Where each real token of a pass sits: packed index <-> (row, position)."""

    lengths: torch.Tensor  # [B] real tokens per row
    width: int  # the longest row
    slots: torch.Tensor  # [T] index of each packed token in the flat [B * width] grid
    positions: torch.Tensor  # [T] position of each token inside its row
    rows: torch.Tensor  # [T] row of each token
    starts: torch.Tensor  # [B] packed index of each row's first token
    _masks: dict[int | None, torch.Tensor] = field(default_factory=dict)

    @classmethod
    def of(cls, lengths: np.ndarray, device: torch.device) -> Layout:
        """The layout of a pass whose rows hold ``lengths`` real tokens each."""
        b, width = len(lengths), int(lengths.max())
        real = np.arange(width)[None, :] < lengths[:, None]
        columns = np.broadcast_to(np.arange(width), (b, width))
        row_of = np.broadcast_to(np.arange(b)[:, None], (b, width))

        def tensor(a: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(np.ascontiguousarray(a, dtype=np.int64)).to(device)

        return cls(
            lengths=tensor(lengths),
            width=width,
            slots=tensor((row_of * width + columns)[real]),
            positions=tensor(columns[real]),
            rows=tensor(row_of[real]),
            starts=tensor(np.cumsum(lengths) - lengths),
        )

    @property
    def batch(self) -> int:
        return int(self.lengths.shape[0])

    def pad(self, x: torch.Tensor) -> torch.Tensor:
        """``[T, H, D]`` packed -> ``[B, H, width, D]`` (padding zero)."""
        grid = x.new_zeros(self.batch * self.width, *x.shape[1:])
        grid.index_copy_(0, self.slots, x)
        return grid.view(self.batch, self.width, *x.shape[1:]).transpose(1, 2)

    def unpad(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, H, width, D]`` -> ``[T, H, D]``, the real tokens only."""
        return (
            x.transpose(1, 2)
            .reshape(self.batch * self.width, *x.shape[1::2])
            .index_select(0, self.slots)
        )

    def mask(self, window: int | None = None) -> torch.Tensor:
        """Keys a query may attend to: its row's real tokens, within ``window`` when given."""
        if window not in self._masks:
            ar = torch.arange(self.width, device=self.lengths.device)
            keys = ar[None, :] < self.lengths[:, None]  # [B, width]
            if window is None:
                self._masks[window] = keys[:, None, None, :]
            else:  # transformers passes flash attention's inclusive bound: |i - j| < window
                near = (ar[:, None] - ar[None, :]).abs() < window
                self._masks[window] = keys[:, None, None, :] & near[None, None]
        return self._masks[window]


def packed_attention(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float | None = None,
    dropout: float = 0.0,
    sliding_window: int | None = None,
    laya_layout: Layout | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """transformers' attention interface: per-row attention over a packed ``[1, H, T, D]`` pass.

    Without a layout (the padded forward: export, training, direct calls) it is SDPA exactly.
    """
    if laya_layout is None:
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(
            module, query, key, value, attention_mask, scaling=scaling, dropout=dropout, **kwargs
        )
    q, k, v = (laya_layout.pad(t[0].transpose(0, 1)) for t in (query, key, value))
    out = attend(q, k, v, laya_layout.mask(sliding_window), scaling)
    return laya_layout.unpad(out)[None], None


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor,
    scale: float | None = None,
) -> torch.Tensor:
    """SDPA; on a CPU under autocast in fp32, which its flash kernel runs faster than bf16."""
    if q.device.type == "cpu" and torch.is_autocast_enabled("cpu"):
        with torch.autocast("cpu", enabled=False):
            return F.scaled_dot_product_attention(
                q.float(), k.float(), v.float(), attn_mask=mask, scale=scale
            )
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)


def register_attention() -> None:
    """Register :func:`packed_attention` (and SDPA's mask builder) under ``laya_packed``."""
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

    AttentionInterface.register(ATTENTION, packed_attention)
    AttentionMaskInterface.register(ATTENTION, ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])


# --------------------------------------------------------------------------- the model


def packed_forward(
    model: DecisionNetwork,
    ids: np.ndarray,
    lengths: np.ndarray,
    marker_pos: torch.Tensor,
    marker_mask: torch.Tensor,
    qtype: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``DecisionModel.forward`` of a pass given as its rows' real tokens back to back."""
    device = marker_pos.device
    layout = Layout.of(lengths, device)
    packed_ids = torch.from_numpy(ids).to(device)
    h = model.encoder(
        input_ids=packed_ids[None],
        attention_mask=_NO_MASK,
        position_ids=layout.positions[None],
        laya_layout=layout,
    ).last_hidden_state[0]
    h = h + model.type_emb(qtype)[layout.rows]
    # [CLS] and every marker of each row, as packed indices [B, 1 + K]
    read = layout.starts[:, None] + F.pad(marker_pos.clamp(min=0), (1, 0))
    layers = [] if model.head is None else model.head.transformer_layers
    for layer in layers[:-1]:
        h = _layer(layer, h, layout)
    h = _last_layer(layers[-1], h, layout, read) if layers else h[read]
    return model.readout(h[:, 0], h[:, 1:], marker_mask)


def _layer(layer: nn.TransformerEncoderLayer, x: torch.Tensor, layout: Layout) -> torch.Tensor:
    """A pre-norm head layer on packed tokens ``[T, d]``."""
    attn = layer.self_attn
    qkv = linear(layer.norm1(x), attn.in_proj_weight, attn.in_proj_bias)
    q, k, v = (layout.pad(t.unflatten(-1, (attn.num_heads, -1))) for t in qkv.chunk(3, -1))
    out = attend(q, k, v, layout.mask())
    x = x + _project(attn.out_proj, layout.unpad(out).flatten(1))
    return x + _mlp(layer, x)


def _last_layer(
    layer: nn.TransformerEncoderLayer, x: torch.Tensor, layout: Layout, read: torch.Tensor
) -> torch.Tensor:
    """The last head layer for the positions read afterwards only: ``[B, 1 + K, d]``."""
    attn = layer.self_attn
    d, heads = x.shape[-1], attn.num_heads
    y = layer.norm1(x)
    w, b = attn.in_proj_weight, attn.in_proj_bias
    q = linear(y[read], w[:d], None if b is None else b[:d])  # [B, 1 + K, d]
    kv = linear(y, w[d:], None if b is None else b[d:])
    k, v = (layout.pad(t.unflatten(-1, (heads, -1))) for t in kv.chunk(2, -1))
    q = q.unflatten(-1, (heads, -1)).transpose(1, 2)
    out = attend(q, k, v, layout.mask())
    x = x[read] + _project(attn.out_proj, out.transpose(1, 2).flatten(2))
    return x + _mlp(layer, x)


def _mlp(layer: nn.TransformerEncoderLayer, x: torch.Tensor) -> torch.Tensor:
    return _project(layer.linear2, layer.activation(_project(layer.linear1, layer.norm2(x))))


def _project(module: nn.Linear, x: torch.Tensor) -> torch.Tensor:
    return linear(x, module.weight, module.bias)


# --------------------------------------------------------------------------- switching it on

PROBE_TOLERANCE = 1e-3


def enable(model: DecisionNetwork) -> bool:
    """Switch ``model``'s encoder to packed attention if it reproduces the padded forward.

    Probed once on two rows longer than any sliding window: an encoder that ignores
    ``position_ids`` or attends outside transformers' attention interface gives other numbers,
    and then stays on SDPA with padded passes.
    """
    encoder = model.encoder
    if not hasattr(encoder, "set_attn_implementation"):
        return False
    register_attention()
    try:
        encoder.set_attn_implementation(ATTENTION)
        if _reproduces(model):
            return True
    except Exception:  # noqa: BLE001 - any failure means: keep the padded forward
        pass
    encoder.set_attn_implementation("sdpa")
    return False


def _reproduces(model: DecisionNetwork) -> bool:
    """Whether the packed forward gives the padded forward's outputs on a probe pass."""
    config = model.encoder.config
    window = int(getattr(config, "sliding_window", None) or 8)
    limit = int(getattr(config, "max_position_embeddings", 512) or 512)
    width = min(2 * window + 5, limit)
    lengths = np.array([width, max(3, width // 2)])
    attention_mask = (np.arange(width)[None] < lengths[:, None]).astype(np.int64)
    vocab = int(getattr(config, "vocab_size", 100))
    ids = np.random.default_rng(0).integers(min(5, vocab - 1), vocab, (2, width))
    ids = np.where(attention_mask == 1, ids, 0)
    device = next(model.parameters()).device
    rest = [
        torch.tensor([[1, 2], [1, 2]], device=device),
        torch.tensor([[True, True], [True, False]], device=device),
        torch.tensor([0, 2], device=device),
    ]
    with torch.inference_mode():
        padded = model(
            torch.from_numpy(ids).to(device), torch.from_numpy(attention_mask).to(device), *rest
        )
        packed = packed_forward(model, ids[attention_mask == 1], lengths, *rest)
    return all(
        torch.allclose(
            a.float(), b.float(), rtol=0, atol=PROBE_TOLERANCE * max(1.0, float(a.abs().max()))
        )
        for a, b in zip(padded, packed)
    )
