"""Which precision a forward pass runs in: ``fast=True`` picks what this machine runs fast.

fp32 is the exact path. ``fast=True`` asks for speed over the fourth decimal, and the answer
depends on the machine (docs/performance.md, "Fast path"):

- a CPU with native bf16 matmuls (AVX-512 BF16 or AMX) runs bf16; any other CPU runs fp32,
  because emulated bf16 is slower than fp32 there, and ``fast`` must never be slower;
- CUDA always autocasts, to the checkpoint's ``amp_dtype`` (fp16 below compute capability 8);
- MPS runs fp16.

``precision="fp32" | "bf16" | "fp16"`` overrides the choice; one this machine cannot run fast
warns (one line, at load) and runs fp32. int8 is the quantized ONNX graph (``laya export-onnx --quantize int8``),
not a torch precision: it is measured against fp32 in docs/performance.md and never chosen
silently. CPU flags come from ``/proc/cpuinfo``; where it is absent the CPU counts as without.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection
from functools import cache
from pathlib import Path

from ..errors import InvalidRequest

__all__ = ["PRECISIONS", "choose_precision", "cpu_flags", "native_bf16"]

PRECISIONS = ("fp32", "bf16", "fp16")
ALIASES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16", "half": "fp16"}
BF16_FLAGS = ("avx512_bf16", "amx_bf16")


@cache
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags as Linux lists them (empty where ``/proc/cpuinfo`` is absent);
    read once per process (the kernel choice and every fast Agent ask)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


def native_bf16(flags: Collection[str]) -> bool:
    """Whether a CPU with these flags multiplies bf16 natively (AVX-512 BF16 or AMX)."""
    return any(flag in flags for flag in BF16_FLAGS)


def choose_precision(
    device_type: str,
    fast: bool = False,
    precision: str | None = None,
    amp_dtype: str = "fp16",
    cuda_capability: int = 8,
    flags: Collection[str] | None = None,
) -> str:
    """The precision a model on ``device_type`` runs in (``fp32``, ``bf16`` or ``fp16``).

    ``flags`` are the CPU's (default: :func:`cpu_flags`); tests pass others to stand in for
    another machine. An unknown ``precision`` is an :class:`InvalidRequest`.
    """
    wanted = _parse(precision)
    if device_type == "cuda":
        return _cuda(wanted or _amp(amp_dtype), cuda_capability)
    if wanted is None:
        wanted = _fastest(device_type, flags) if fast else "fp32"
    return wanted if _runs(device_type, wanted, flags) else _fallback(device_type, wanted)


def _parse(precision: str | None) -> str | None:
    if precision is None or precision == "auto":
        return None
    text = ALIASES.get(str(precision).strip().lower(), str(precision).strip().lower())
    if text == "int8":
        raise InvalidRequest(
            "precision: int8 is the quantized ONNX graph, not a torch precision; export it with "
            "`laya export-onnx DIR --quantize int8` and load it with laya.load(DIR, "
            "backend='onnx', onnx_path='laya.int8.onnx'), or use fp32, bf16, fp16 or auto"
        )
    if text not in PRECISIONS:
        raise InvalidRequest(f"precision: {precision!r} is not one of auto, fp32, bf16, fp16")
    return text


def _amp(amp_dtype: str) -> str:
    """The checkpoint's CUDA autocast type as the published runtime reads it: bf16, else fp16."""
    return "bf16" if amp_dtype.strip().lower() in ("bf16", "bfloat16") else "fp16"


def _cuda(wanted: str, capability: int) -> str:
    if wanted == "fp32":
        return wanted
    return "fp16" if capability < 8 else wanted


def _fastest(device_type: str, flags: Collection[str] | None) -> str:
    if device_type == "mps":
        return "fp16"
    if device_type == "cpu" and native_bf16(cpu_flags() if flags is None else flags):
        return "bf16"
    return "fp32"


def _runs(device_type: str, precision: str, flags: Collection[str] | None) -> bool:
    """Whether ``device_type`` runs ``precision`` at least as fast as fp32."""
    if precision == "fp32":
        return True
    if device_type == "cpu":
        return precision == "bf16" and native_bf16(cpu_flags() if flags is None else flags)
    return device_type == "mps" and precision == "fp16"


def _fallback(device_type: str, precision: str) -> str:
    """One warning (per load) and fp32."""
    need = "a CPU with AVX-512 BF16 or AMX" if device_type == "cpu" else "another device"
    warnings.warn(
        f"laya: precision={precision!r} runs fast only on {need}; this {device_type} runs fp32",
        RuntimeWarning,
        stacklevel=2,
    )
    return "fp32"
