"""fp32 linear layers on oneDNN where that is faster: the same products, on the CPU's widest units.

PyTorch's CPU ``nn.Linear`` in fp32 calls MKL's sgemm, which picks its kernels by CPU vendor
(on AMD EPYC with AVX-512 it runs at about half the rate oneDNN does). oneDNN, which torch already
uses for bf16 and which Inductor uses for frozen fp32 linears, dispatches on the instruction set.
So on a CPU with AVX-512, :func:`linear` runs an inference-time fp32 product on oneDNN; on one
without it both libraries run AVX2 and MKL's is as fast or faster, so PyTorch's own kernel stays
(``benchmarks/linear_kernels.py`` measures both, docs/performance.md). Gradients, autocast, tracing for
export and other dtypes or devices always take PyTorch's. Float rounding differs between the two
by about 1e-6; the answers stay within 2e-4.
"""

from __future__ import annotations

from typing import Protocol

import torch
import torch.nn.functional as F
from torch import nn
from torch.jit import _trace

from ..precision import cpu_flags

__all__ = ["AVAILABLE", "ONEDNN", "OneDNNLinear", "linear", "store_weights_in", "use_onednn"]


AVAILABLE = torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")
ONEDNN = AVAILABLE and "avx512f" in cpu_flags()  # where oneDNN's products beat MKL's


class _Tracing(Protocol):
    """What :func:`linear` calls of torch's tracer module: ``torch.jit.is_tracing``, which torch
    leaves unannotated (and, for mypy, unexported from ``torch.jit``)."""

    def is_tracing(self) -> bool: ...


_JIT: _Tracing = _trace


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """``F.linear``, on oneDNN for fp32 CPU inference."""
    if (
        ONEDNN
        and x.dtype == torch.float32
        and weight.dtype == torch.float32
        and x.device.type == "cpu"
        and not torch.is_grad_enabled()
        and not torch.is_autocast_enabled("cpu")
        and not _JIT.is_tracing()
        and not torch.compiler.is_compiling()
    ):
        out: torch.Tensor = torch.ops.mkldnn._linear_pointwise(x, weight, bias, "none", [], "")
        return out
    return F.linear(x, weight, bias)


class OneDNNLinear(nn.Linear):
    """An ``nn.Linear`` whose forward is :func:`linear` (same parameters, same state dict)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.weight, self.bias)


def use_onednn(model: nn.Module) -> int:
    """Turn every plain ``nn.Linear`` of ``model`` into a :class:`OneDNNLinear`; returns how many."""
    if not ONEDNN:
        return 0
    swapped = 0
    for module in model.modules():
        if type(module) is nn.Linear:
            module.__class__ = OneDNNLinear
            swapped += 1
    return swapped


def store_weights_in(module: nn.Module, dtype: torch.dtype) -> None:
    """Keep the matmul weights of ``module`` in ``dtype`` (norms and embeddings stay as they are).

    Under autocast to that dtype the products read them as they are, instead of casting every
    weight again on every pass; the residual stream and the norms stay in fp32.
    """
    for sub in module.modules():
        if isinstance(sub, nn.Linear | nn.MultiheadAttention):
            sub.to(dtype)
