"""ONNX export and the ONNX Runtime agent: ``laya.onnx.export(checkpoint)``, ``ONNXAgent``.

Importing this module does not import torch; ``export`` does, when called.
"""

from __future__ import annotations

from .backends.onnx import export
from .runtime import ONNXAgent

__all__ = ["ONNXAgent", "export"]
