"""The ways a PyTorch Agent runs its forward (eager, compile, tilelang): the published
``laya.backends`` (docs/migrating.md). Each mode drives the engine's PyTorch backend
(engine/backends/torch.py); what runs a pass is the engine's contract (engine/contract.py). The
published names load on first use, so importing one mode does not import them all."""

from importlib import import_module
from typing import Any

__all__ = [
    "NAMES",
    "Backend",
    "BackendUnavailable",
    "auto_policy",
    "bucket_shape",
    "install",
    "make_backend",
    "normalise",
    "pad_batch",
    "warn_fallback",
]

_HOMES = {
    "Backend": "base",
    "BackendUnavailable": "base",
    "bucket_shape": "base",
    "pad_batch": "base",
    "warn_fallback": "base",
    "NAMES": "selection",
    "auto_policy": "selection",
    "install": "selection",
    "make_backend": "selection",
    "normalise": "selection",
}


def __getattr__(name: str) -> Any:
    """A published name, from the module that holds it."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{home}"), name)
