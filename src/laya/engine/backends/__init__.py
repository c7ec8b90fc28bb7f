"""What runs the decision model's forward pass, each one the engine's contract
(engine/contract.py): PyTorch (torch, packed, masks, kernels) and ONNX Runtime (onnx). How a
PyTorch Agent switches its forward (eager, compile) is laya.run_modes, the published
``laya.backends``."""
