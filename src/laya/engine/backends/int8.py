"""The int8 recipe of ``precision="int8"`` (docs/performance.md, "int8").

Each quantized ``nn.Linear`` keeps its weight as int8 with one scale per output channel
(symmetric, the largest magnitude of the row at 127) and quantizes its input at run time, one
scale per token (symmetric, each token's largest magnitude at 127, stored as uint8 around 128),
so no token's range depends on another row of the pass: an answer does not change with what it
is batched with. The product runs on oneDNN's int8 matmul (``torch.ops.onednn.qlinear_pointwise``,
the kernel Inductor's x86 int8 linears use: VNNI or AMX dot products) into fp32, is scaled back
per token and gets its fp32 bias.

Which linears: every linear of the head layers and the encoder's attention output projections
run in int8. The encoder's other linears (attention in, MLP in, MLP out) moved ``mini``'s
decisions most in int8 (``python benchmarks/fidelity.py --sensitivity``): :func:`kept` names
them, and they run in bf16 (:class:`Bf16Linear`) where the CPU multiplies bf16 natively, else
in fp32. Embeddings, norms, attention (scores and softmax), the residual stream, the scorer and
the act head stay fp32.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, cast

import torch
from torch import nn

__all__ = [
    "AVAILABLE",
    "RECIPE",
    "Bf16Linear",
    "Int8Linear",
    "dequantize",
    "in_projection",
    "kept",
    "quantize",
]

AVAILABLE = torch.backends.mkldnn.is_available() and hasattr(torch.ops.onednn, "qlinear_pointwise")
# The id a fidelity record names (laya.checkpoint.fidelity): change it whenever what is
# quantized, or how, changes, so records measured with another recipe stop counting.
RECIPE = "int8:head,encoder-attention-out;bf16:encoder-rest;w8-channel.a8-token.v1"
_ZERO_POINT = 128  # uint8 activations, symmetric around 128
_TINY = 1e-12
IN_PROJ = "int8_in_proj"  # the head attention's quantized in-projection ({"q", "kv"})


class Int8Linear(nn.Module):
    """An ``nn.Linear`` for inference with int8 weights (per output channel) and int8 inputs
    (per token), on oneDNN; returns fp32 of the input's shape but the last dimension."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None) -> None:
        super().__init__()
        weight = weight.detach().float()
        self.in_features, self.out_features = int(weight.shape[1]), int(weight.shape[0])
        scales = weight.abs().amax(1).clamp(min=_TINY) / 127
        values = torch.round(weight / scales[:, None]).clamp(-127, 127).to(torch.int8)
        # oneDNN's own blocked layout: not parameters, not in a state dict
        self.packed = torch.ops.onednn.qlinear_prepack(values, None)
        self.scales = scales
        self.zero_points = torch.zeros(self.out_features, dtype=torch.int64)
        self.bias = None if bias is None else bias.detach().float().clone()

    @classmethod
    def of(cls, linear: nn.Linear) -> Int8Linear:
        """The quantized twin of ``linear``."""
        return cls(linear.weight, linear.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, self.in_features).float()
        step = rows.abs().amax(-1, keepdim=True).clamp(min=_TINY) / 127
        codes = torch.round(rows / step).add_(_ZERO_POINT).to(torch.uint8)
        out = torch.ops.onednn.qlinear_pointwise(
            codes, 1.0, _ZERO_POINT, self.packed, self.scales, self.zero_points,
            None, 1.0, 0, torch.float32, "none", [], "",
        )  # fmt: skip
        out = out.mul_(step) if self.bias is None else torch.addcmul(self.bias, out, step)
        return out.view(*x.shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, int8"


class Bf16Linear(nn.Linear):
    """An ``nn.Linear`` holding its weight and bias in bf16 that takes and returns fp32 (the
    product on the CPU's bf16 units, accumulated in fp32): the linears the recipe keeps out of
    int8. Made from a linear in place (:func:`quantize`), so its state dict keeps its names."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(x.to(self.weight.dtype), self.weight, self.bias).float()


# --------------------------------------------------------------------------- which linears

# What each linear of a transformer layer does, by its name in BERT, ModernBERT and the head's
# nn.TransformerEncoderLayer (attention.self.query, attn.Wqkv, self_attn.in_proj...).
ROLES = {
    "attention in": r"(\.query|\.key|\.value|\.Wqkv|\.in_proj)$",
    "attention out": r"(attention\.output\.dense|attn\.Wo|\.out_proj)$",
    "mlp in": r"(intermediate\.dense|mlp\.Wi|\.linear1)$",
    "mlp out": r"((?<!attention)\.output\.dense|mlp\.Wo|\.linear2)$",
}
# The encoder's roles kept out of int8 (see the module docstring).
KEPT_ROLES = ("attention in", "mlp in", "mlp out")


def role(name: str) -> str | None:
    """The role (a key of :data:`ROLES`) of the linear at ``name``, None for any other."""
    return next((key for key, pattern in ROLES.items() if re.search(pattern, name)), None)


def kept(name: str) -> bool:
    """Whether the linear at ``name`` (a name in the DecisionModel) stays out of int8."""
    return name.startswith("encoder.") and role(name) in KEPT_ROLES


def _quantizable(
    model: nn.Module, parts: tuple[str, ...]
) -> Iterator[tuple[nn.Module, str, str, nn.Linear]]:
    """(parent, attribute, full name, linear) of every linear of the model's ``parts``."""
    for prefix in parts:
        root = getattr(model, prefix, None)
        if root is None:
            continue
        for parent_name, parent in root.named_modules(prefix=prefix):
            for attribute, child in parent.named_children():
                if isinstance(child, nn.Linear):
                    yield parent, attribute, f"{parent_name}.{attribute}", child


def quantize(
    model: Any,
    head: bool = True,
    keep: Callable[[str], bool] = kept,
    lowered: torch.dtype | None = None,
) -> int:
    """Swap the encoder's linears, and with ``head`` the head layers', for :class:`Int8Linear`,
    giving each head layer's attention its quantized in-projection; those ``keep`` names
    (:func:`kept`; the fidelity benchmark tries others) stay, as :class:`Bf16Linear` with
    ``lowered=torch.bfloat16``. Returns how many products run in int8."""
    swapped = 0
    parts = ("encoder", "head") if head else ("encoder",)
    for parent, attribute, name, linear in list(_quantizable(model, parts)):
        if not keep(name):
            setattr(parent, attribute, Int8Linear.of(linear))
            swapped += 1
        elif lowered is not None:
            linear.__class__ = Bf16Linear
            linear.to(lowered)
    layers = model.head.layers if head and model.head is not None else []
    for i, layer in enumerate(layers):
        attn = layer.self_attn
        if keep(f"head.layers.{i}.self_attn.in_proj"):
            continue
        d, w, b = attn.embed_dim, attn.in_proj_weight, attn.in_proj_bias
        blocks = {"q": slice(0, d), "kv": slice(d, None)}
        projections = {
            part: Int8Linear(w[rows], None if b is None else b[rows])
            for part, rows in blocks.items()
        }
        setattr(attn, IN_PROJ, nn.ModuleDict(projections))
        swapped += 2
    return swapped


def dequantize(model: nn.Module) -> None:
    """Put plain fp32 ``nn.Linear`` layers of the same shapes back (their weights are the
    caller's to load) and drop the attention in-projections :func:`quantize` added."""
    for parent in list(model.modules()):
        for attribute, child in list(parent.named_children()):
            if isinstance(child, Int8Linear):
                shape = (child.in_features, child.out_features, child.bias is not None)
                setattr(parent, attribute, nn.utils.skip_init(nn.Linear, *shape))
            elif isinstance(child, Bf16Linear):
                cast(nn.Module, child).__class__ = nn.Linear
                child.float()
        if hasattr(parent, IN_PROJ):
            delattr(parent, IN_PROJ)


def in_projection(attn: nn.MultiheadAttention, x: torch.Tensor, part: str) -> torch.Tensor | None:
    """The head attention's int8 projection ``part`` (``q`` or ``kv``) of ``x``, or None where
    the attention runs in fp32."""
    projections = getattr(attn, IN_PROJ, None)
    return None if projections is None else projections[part](x)
