"""Which precision a forward pass runs in: ``fast=True`` picks what this machine runs fast.

fp32 is the exact path. ``fast=True`` asks for speed over the fourth decimal, and the answer
depends on the machine and on the checkpoint (docs/performance.md, "Fast path"):

- a CPU with native int8 dot products (AVX-512 VNNI, AVX-VNNI or AMX) runs int8 where the
  checkpoint's fidelity record says int8 keeps its decisions (``laya.checkpoint.fidelity``:
  at most 1 in 100 flipped against fp32 on its labelled data); otherwise
- a CPU with native bf16 matmuls (AVX-512 BF16 or AMX) runs bf16; any other CPU runs fp32,
  because emulated bf16 is slower than fp32 there, and ``fast`` must never be slower;
- CUDA always autocasts, to the checkpoint's ``amp_dtype`` (fp16 below compute capability 8);
- MPS runs fp16.

``precision="fp32" | "bf16" | "fp16" | "int8"`` overrides the choice. A bf16 or fp16 this machine
cannot run fast warns (one line, at load) and runs fp32; int8 where it cannot run fast (no VNNI
or AMX, or not a CPU) is refused: it changes the answers, so it must never run slower than what
it replaces. CPU flags come from ``/proc/cpuinfo``; where it is absent the CPU counts as without.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection
from functools import cache
from pathlib import Path

from ..errors import InvalidRequest

__all__ = [
    "INT8_FLAGS",
    "PRECISIONS",
    "choose_precision",
    "cpu_flags",
    "native_bf16",
    "native_int8",
    "parse_precision",
]

PRECISIONS = ("fp32", "bf16", "fp16", "int8")
ALIASES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16", "half": "fp16"}
BF16_FLAGS = ("avx512_bf16", "amx_bf16")
INT8_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8")


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


def native_int8(flags: Collection[str]) -> bool:
    """Whether a CPU with these flags has int8 dot-product instructions (VNNI or AMX)."""
    return any(flag in flags for flag in INT8_FLAGS)


def choose_precision(
    device_type: str,
    fast: bool = False,
    precision: str | None = None,
    amp_dtype: str = "fp16",
    cuda_capability: int = 8,
    flags: Collection[str] | None = None,
    int8_keeps_decisions: bool = False,
) -> str:
    """The precision a model on ``device_type`` runs in (``fp32``, ``bf16``, ``fp16``, ``int8``).

    ``flags`` are the CPU's (default: :func:`cpu_flags`); tests pass others to stand in for
    another machine. ``int8_keeps_decisions``: the checkpoint's fidelity record allows int8
    (``fast`` considers int8 only then). An unknown ``precision`` is an
    :class:`InvalidRequest`, and so is int8 where it cannot run fast.
    """
    wanted = parse_precision(precision)
    if wanted == "int8":
        _check_int8(device_type, cpu_flags() if flags is None else flags)
        return wanted
    if device_type == "cuda":
        return _cuda(wanted or _amp(amp_dtype), cuda_capability)
    if wanted is None:
        wanted = _fastest(device_type, flags, int8_keeps_decisions) if fast else "fp32"
    return wanted if _runs(device_type, wanted, flags) else _fallback(device_type, wanted)


def parse_precision(precision: str | None) -> str | None:
    """``precision`` as one of :data:`PRECISIONS` (aliases and case allowed), None for auto;
    anything else is an :class:`InvalidRequest` naming the field."""
    if precision is None:
        return None
    text = str(precision).strip().lower()
    text = ALIASES.get(text, text)
    if text == "auto":
        return None
    if text not in PRECISIONS:
        raise InvalidRequest(
            f"precision: {precision!r} is not one of auto, {', '.join(PRECISIONS)}"
        )
    return text


def _check_int8(device_type: str, flags: Collection[str]) -> None:
    """Refuse int8 where it would not run fast: off the CPU, or on a CPU without VNNI or AMX."""
    if device_type != "cpu":
        raise InvalidRequest(
            f"precision: int8 runs on the CPU only (laya's int8 linears are oneDNN's), not on "
            f"{device_type}; load with device='cpu', or use fast=True or precision='auto' here"
        )
    if not native_int8(flags):
        raise InvalidRequest(
            "precision: int8 runs fast only on a CPU with AVX-512 VNNI, AVX-VNNI or AMX, and this "
            "CPU has none of them (without them int8 is no faster than bf16 or fp32 and changes "
            "the answers); use fast=True, which picks the fastest precision this CPU runs, or "
            "precision='fp32'"
        )


def _amp(amp_dtype: str) -> str:
    """The checkpoint's CUDA autocast type as the published runtime reads it: bf16, else fp16."""
    return "bf16" if amp_dtype.strip().lower() in ("bf16", "bfloat16") else "fp16"


def _cuda(wanted: str, capability: int) -> str:
    if wanted == "fp32":
        return wanted
    return "fp16" if capability < 8 else wanted


def _fastest(device_type: str, flags: Collection[str] | None, int8_keeps_decisions: bool) -> str:
    if device_type == "mps":
        return "fp16"
    if device_type != "cpu":
        return "fp32"
    found = cpu_flags() if flags is None else flags
    if int8_keeps_decisions and native_int8(found):
        return "int8"
    return "bf16" if native_bf16(found) else "fp32"


def _runs(device_type: str, precision: str, flags: Collection[str] | None) -> bool:
    """Whether ``device_type`` runs ``precision`` at least as fast as fp32."""
    if precision == "fp32":
        return True
    if device_type == "cpu":
        found = cpu_flags() if flags is None else flags
        return (
            native_int8(found)
            if precision == "int8"
            else precision == "bf16" and native_bf16(found)
        )
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
