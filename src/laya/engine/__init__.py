"""The engine: one loaded checkpoint turning questions and states into answers.

Data flows one way through its modules: :mod:`~laya.engine.questions` and
:mod:`~laya.engine.states` (what a call asks about what) -> :mod:`~laya.engine.encoding` (token
rows, packed passes) -> :mod:`~laya.engine.backends` (PyTorch or ONNX Runtime) ->
:mod:`~laya.engine.decoding` (temperatures, answers) -> :mod:`~laya.engine.result` (typed
results and their post-steps). :mod:`~laya.engine.strategies` answer long documents and choices
of many options over an :class:`Engine`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Engine", "Outputs", "Strategy"]


def __getattr__(name: str) -> Any:
    """The engine's names on first use: importing the package (as the Router does for its
    calibration files) loads no NumPy."""
    if name in __all__:
        from . import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
