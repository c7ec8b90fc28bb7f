"""Backends that run the decision model's forward pass (PyTorch, ONNX Runtime), and the
installable ways a PyTorch Agent runs it (eager, compile, tilelang: the published
``laya.backends``, docs/migrating.md)."""

from ...errors import BackendUnavailable
from .base import Backend, bucket_shape, pad_batch, warn_fallback
from .selection import NAMES, auto_policy, install, make_backend, normalise

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
