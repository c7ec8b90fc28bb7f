"""Backends that run the decision model's forward pass (PyTorch, ONNX Runtime)."""
