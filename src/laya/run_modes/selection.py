"""Which backend runs a PyTorch Agent's forward: the names, the choice for ``auto``, and
installing one with its fallback (the published ``laya.backends``; docs/migrating.md)."""

from __future__ import annotations

from typing import Any

from ..errors import BackendUnavailable, InvalidRequest
from .base import Backend, PyTorchAgent, warn_fallback
from .compile import CompileBackend
from .eager import EagerBackend
from .tilelang import TileLangBackend, requirement

__all__ = ["NAMES", "auto_policy", "install", "make_backend", "mode_for", "normalise"]

NAMES = ("auto", "eager", "compile", "tilelang", "onnx")
_SYNONYMS = {"torch": "eager", "pytorch": "eager"}
_CLASSES: dict[str, type[Backend]] = {
    "eager": EagerBackend,
    "compile": CompileBackend,
    "tilelang": TileLangBackend,
}
_ONNX = (
    "backend='onnx' is ONNX Runtime, not a mode of the PyTorch Agent: use "
    "laya.load(..., backend='onnx') or ONNXAgent"
)


def normalise(name: object) -> str:
    """``name`` as one of :data:`NAMES` (case and spaces ignored; ``torch`` / ``pytorch`` are
    ``eager``; None is ``auto``); anything else is an InvalidRequest (a ValueError)."""
    key = "auto" if name is None else str(name).strip().lower()
    key = _SYNONYMS.get(key, key)
    if key not in NAMES:
        raise InvalidRequest(f"backend: unknown backend {name!r}; use one of {', '.join(NAMES)}")
    return key


def auto_policy(agent: PyTorchAgent) -> str:
    """What ``auto`` runs: ``eager``, laya's packed passes (``compile`` pays a compilation for
    every new shape, and TileLang's kernels are not in this package)."""
    return "eager"


def make_backend(name: str, agent: PyTorchAgent, **options: Any) -> Backend:
    """The backend ``name`` for ``agent``, not installed yet; ``options`` go to its class
    (``mode`` and ``warmup`` for ``compile``); raises BackendUnavailable where it cannot run."""
    key = normalise(name)
    if key == "auto":
        key = auto_policy(agent)
    if key == "onnx":
        raise InvalidRequest(_ONNX)
    return _CLASSES[key](agent, **options)


def install(agent: PyTorchAgent, name: str, strict: bool = False, **options: Any) -> Backend:
    """Make and install backend ``name`` on ``agent``; where it cannot run, ``strict`` raises
    :class:`BackendUnavailable`, else a warning and the eager backend."""
    try:
        backend = make_backend(name, agent, **options)
    except BackendUnavailable as exc:
        if strict:
            raise
        warn_fallback(normalise(name), exc)
        backend = EagerBackend(agent)
    backend.install()
    return backend


def mode_for(backend: object, compile: bool) -> str:
    """The PyTorch mode a new Agent's ``backend=`` asks for: ``eager`` or ``compile`` (None:
    by ``compile``); ``tilelang`` warns and runs eager, ``onnx`` is refused."""
    if backend is None:
        return "compile" if compile else "eager"
    key = normalise(backend)
    if key == "onnx":
        raise InvalidRequest(_ONNX)
    if key == "tilelang":
        warn_fallback(key, requirement())
    return "compile" if key == "compile" else "eager"
