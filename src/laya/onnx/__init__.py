"""ONNX export: ``laya.onnx.export(checkpoint)`` writes the graph an ``ONNXAgent`` runs (and
``laya export-onnx``), checked against PyTorch; :mod:`~laya.onnx.linked_weights` lets a graph
read the checkpoint's own ``model.safetensors`` (docs/agent.md, "ONNX Runtime")."""

from .graph import export, export_main

__all__ = ["export", "export_main"]
