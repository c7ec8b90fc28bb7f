"""The exact forward pass with no padding through the linear layers (docs/performance.md).

Every layer of the encoder and of the head is per-token except attention. So a pass runs as one
packed sequence of its rows' real tokens ``[1, T]``, positions restarting at each row, and only
attention sees rows again: :func:`packed_attention` (an attention implementation registered with
transformers) scatters queries, keys and values into ``[rows, width]``, attends under each row's
own mask, sliding window included (and, for the parallel option layout, each row's own position
ids and option slots, docs/agent.md#option-layouts), and gathers the real tokens back. The head
layers attend under the plain padding mask. After the last head layer
only ``[CLS]`` and the markers are read, so that layer computes its query projection, attention
output and MLP for those positions alone. Same maths as the padded forward, less of it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Protocol, TypedDict, cast

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..encoding import Pass, parallel_layout
from .int8 import Int8Linear, in_projection
from .kernels import linear
from .masks import allowed_keys

if TYPE_CHECKING:
    from transformers import PretrainedConfig, PreTrainedModel
    from typing_extensions import Unpack

__all__ = [
    "ATTENTION",
    "Layout",
    "active",
    "packed_forward",
    "padded_inputs",
    "register_attention",
]

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
    """Where each real token of a pass sits: packed index <-> (row, column), and the position
    id and option id each token has (the parallel option layout's, else its column and 0)."""

    lengths: torch.Tensor  # [B] real tokens per row
    width: int  # the longest row
    slots: torch.Tensor  # [T] index of each packed token in the flat [B * width] grid
    positions: torch.Tensor  # [T] position id of each token (its column, unless parallel)
    rows: torch.Tensor  # [T] row of each token
    starts: torch.Tensor  # [B] packed index of each row's first token
    grid_positions: torch.Tensor | None = None  # [B, width] position ids (parallel only)
    grid_options: torch.Tensor | None = None  # [B, width] option ids (parallel only)
    _masks: dict[int | None, torch.Tensor] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        lengths: np.ndarray,
        device: torch.device,
        positions: np.ndarray | None = None,
        option_ids: np.ndarray | None = None,
    ) -> Layout:
        """The layout of a pass whose rows hold ``lengths`` real tokens each; ``positions`` and
        ``option_ids`` ``[T]`` are the parallel option layout's (None: sequential)."""
        b, width = len(lengths), int(lengths.max())
        real = np.arange(width)[None, :] < lengths[:, None]
        columns = np.broadcast_to(np.arange(width), (b, width))
        row_of = np.broadcast_to(np.arange(b)[:, None], (b, width))

        def tensor(a: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(np.ascontiguousarray(a, dtype=np.int64)).to(device)

        def grid(values: np.ndarray | None) -> torch.Tensor | None:
            if values is None:
                return None
            out = np.zeros((b, width), dtype=np.int64)
            out[real] = values
            return tensor(out)

        return cls(
            lengths=tensor(lengths),
            width=width,
            slots=tensor((row_of * width + columns)[real]),
            positions=tensor(columns[real] if positions is None else positions),
            rows=tensor(row_of[real]),
            starts=tensor(np.cumsum(lengths) - lengths),
            grid_positions=grid(positions),
            grid_options=grid(option_ids),
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
        """Keys an encoder query may attend to: its row's real tokens, not another option slot's
        (parallel layout), within ``window`` when given."""
        if window not in self._masks:
            # transformers passes flash attention's inclusive bound: |i - j| < window
            reach = None if window is None else window - 1
            self._masks[window] = allowed_keys(
                self.real, self.grid_positions, self.grid_options, reach
            )
        return self._masks[window]

    @cached_property
    def padding(self) -> torch.Tensor:
        """Keys a head-layer query may attend to: its row's real tokens."""
        return allowed_keys(self.real)

    @cached_property
    def real(self) -> torch.Tensor:
        """``[B, width]`` bool: which grid cells hold real tokens."""
        ar = torch.arange(self.width, device=self.lengths.device)
        return ar[None, :] < self.lengths[:, None]


class AttentionKwargs(TypedDict, total=False):
    """What transformers' attention call may pass beside the tensors: the encoder layer's
    ``sliding_window``, our ``laya_layout`` (the packed pass, given to the encoder's forward), and
    SDPA's own ``is_causal`` and ``position_bias``, handed on untouched."""

    sliding_window: int | None
    laya_layout: Layout | None
    is_causal: bool | None
    position_bias: torch.Tensor | None


def packed_attention(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float | None = None,
    dropout: float = 0.0,
    **kwargs: Unpack[AttentionKwargs],
) -> tuple[torch.Tensor, None]:
    """transformers' attention interface: per-row attention over a packed ``[1, H, T, D]`` pass.

    Without a layout (the padded forward: export, training, direct calls) it is SDPA exactly.
    """
    layout = kwargs.pop("laya_layout", None)
    window = kwargs.pop("sliding_window", None)
    if layout is None:
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(
            module, query, key, value, attention_mask, scaling=scaling, dropout=dropout, **kwargs
        )
    q, k, v = (layout.pad(t[0].transpose(0, 1)) for t in (query, key, value))
    out = attend(q, k, v, layout.mask(window), scaling)
    return layout.unpad(out)[None], None


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


def padded_inputs(batch: Pass, device: torch.device) -> list[torch.Tensor]:
    """``DecisionModel.forward``'s inputs for ``batch`` on ``device``: its rows right-padded,
    with their markers and question types (and, in the parallel option layout, the padded
    position and option ids)."""
    layout = batch.padded_layout() if batch.parallel else ()
    arrays = (*batch.padded(), batch.marker_pos, batch.marker_mask, batch.qtype, *layout)
    return [torch.from_numpy(a).to(device) for a in arrays]


def packed_forward(model: DecisionNetwork, batch: Pass) -> tuple[torch.Tensor, torch.Tensor]:
    """``DecisionModel.forward`` of ``batch`` run as its rows' real tokens back to back (and, in
    the parallel option layout, their position and option ids, also back to back)."""
    device = model.type_emb.weight.device
    marker_pos, marker_mask, qtype = (
        torch.from_numpy(a).to(device) for a in (batch.marker_pos, batch.marker_mask, batch.qtype)
    )
    layout = Layout.of(batch.lengths, device, batch.positions, batch.option_ids)
    packed_ids = torch.from_numpy(batch.ids).to(device)
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
    y = layer.norm1(x)
    kv = in_projection(attn, y, "kv")
    if kv is None:
        qkv = linear(y, attn.in_proj_weight, attn.in_proj_bias).chunk(3, -1)
    else:
        qkv = (_in_projection(attn, y, "q"), *kv.chunk(2, -1))
    q, k, v = (layout.pad(t.unflatten(-1, (attn.num_heads, -1))) for t in qkv)
    out = attend(q, k, v, layout.padding)
    x = x + _project(attn.out_proj, layout.unpad(out).flatten(1))
    return x + _mlp(layer, x)


def _last_layer(
    layer: nn.TransformerEncoderLayer, x: torch.Tensor, layout: Layout, read: torch.Tensor
) -> torch.Tensor:
    """The last head layer for the positions read afterwards only: ``[B, 1 + K, d]``."""
    attn = layer.self_attn
    heads = attn.num_heads
    y = layer.norm1(x)
    q = _in_projection(attn, y[read], "q")  # [B, 1 + K, d]
    kv = _in_projection(attn, y, "kv")
    k, v = (layout.pad(t.unflatten(-1, (heads, -1))) for t in kv.chunk(2, -1))
    q = q.unflatten(-1, (heads, -1)).transpose(1, 2)
    out = attend(q, k, v, layout.padding)
    x = x[read] + _project(attn.out_proj, out.transpose(1, 2).flatten(2))
    return x + _mlp(layer, x)


def _in_projection(attn: nn.MultiheadAttention, x: torch.Tensor, part: str) -> torch.Tensor:
    """The attention's query (``q``) or key and value (``kv``) projection of ``x``."""
    out = in_projection(attn, x, part)
    if out is not None:
        return out
    d, w, b = attn.embed_dim, attn.in_proj_weight, attn.in_proj_bias
    rows = slice(0, d) if part == "q" else slice(d, None)
    return linear(x, w[rows], None if b is None else b[rows])


def _mlp(layer: nn.TransformerEncoderLayer, x: torch.Tensor) -> torch.Tensor:
    return _project(layer.linear2, layer.activation(_project(layer.linear1, layer.norm2(x))))


def _project(module: nn.Module, x: torch.Tensor) -> torch.Tensor:
    if isinstance(module, Int8Linear):
        return cast(torch.Tensor, module(x))
    assert isinstance(module, nn.Linear)  # an MLP linear of a head layer, not quantized
    return linear(x, module.weight, module.bias)


# --------------------------------------------------------------------------- switching it on

PROBE_TOLERANCE = 1e-3


def enable(model: DecisionNetwork, parallel: bool = False) -> bool:
    """Switch ``model``'s encoder to packed attention if it reproduces the padded forward.

    Probed once on two rows longer than any sliding window (in the parallel option layout when
    ``parallel``): an encoder that ignores ``position_ids`` or attends outside transformers'
    attention interface gives other numbers, and then stays on SDPA with padded passes.
    """
    encoder = model.encoder
    if not hasattr(encoder, "set_attn_implementation"):
        return False
    register_attention()
    try:
        encoder.set_attn_implementation(ATTENTION)
        if _reproduces(model, parallel):
            return True
    except Exception:  # noqa: BLE001 - any failure means: keep the padded forward
        pass
    encoder.set_attn_implementation("sdpa")
    return False


def active(model: DecisionNetwork) -> bool:
    """Whether ``model``'s encoder still attends with packed attention: a caller may switch it
    (``agent.model.encoder.set_attn_implementation("sdpa")``), and packed passes then need the
    padded forward instead, or every row would attend to the others."""
    config = getattr(model.encoder, "config", None)
    return getattr(config, "_attn_implementation", None) == ATTENTION


def disable(model: DecisionNetwork) -> None:
    """Put ``model``'s encoder back on SDPA with padded passes (what ``torch.compile`` traces)."""
    model.encoder.set_attn_implementation("sdpa")


def _reproduces(model: DecisionNetwork, parallel: bool) -> bool:
    """Whether the packed forward gives the padded forward's outputs on a probe pass."""
    probe = _probe(model.encoder.config, parallel)
    with torch.inference_mode():
        padded = model(*padded_inputs(probe, model.type_emb.weight.device))
        packed = packed_forward(model, probe)
    return all(
        torch.allclose(
            a.float(), b.float(), rtol=0, atol=PROBE_TOLERANCE * max(1.0, float(a.abs().max()))
        )
        for a, b in zip(padded, packed)
    )


def _probe(config: PretrainedConfig, parallel: bool) -> Pass:
    """Two rows of random tokens, longer than the sliding window, with three option slots each
    when ``parallel``."""
    window = int(getattr(config, "sliding_window", None) or 8)
    limit = int(getattr(config, "max_position_embeddings", 512) or 512)
    width = min(2 * window + 5, limit)
    lengths = np.array([width, max(3, width // 2)])
    vocab = int(getattr(config, "vocab_size", 100))
    ids = np.random.default_rng(0).integers(min(5, vocab - 1), vocab, int(lengths.sum()))
    positions = option_ids = None
    if parallel:  # markers at 1, 3 and 6 of a 9-token head, each layout cut to its row
        layouts = [[values[:n] for values in parallel_layout([1, 3, 6], 9, n)] for n in lengths]
        positions, option_ids = (np.concatenate(values) for values in zip(*layouts))
    return Pass(
        rows=[0, 1],
        ids=ids,
        lengths=lengths,
        marker_pos=np.array([[1, 2], [1, 2]]),
        marker_mask=np.array([[True, True], [True, False]]),
        qtype=np.array([0, 2]),
        pad_id=0,
        positions=positions,
        option_ids=option_ids,
    )
