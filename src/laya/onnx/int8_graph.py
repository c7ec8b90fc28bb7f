"""The int8 graph: ``laya export-onnx CHECKPOINT --quantize int8`` (docs/performance.md, "int8").

ONNX Runtime's dynamic quantization (``onnxruntime.quantization.quantize_dynamic``) on the linears
PyTorch's ``precision="int8"`` quantizes and no others (``laya.engine.backends.int8``: the head
layers' and the encoder's attention output projections; the linears it keeps stay fp32 here). Weights get one int8 scale per
output channel; activations are quantized at run time (ONNX Runtime's ``DynamicQuantizeMatMul``:
one scale per tensor, the finest its CPU kernels offer). Embeddings, norms, attention scores and
softmax, the scorer and the act head stay fp32. A matmul is told apart by its weight's values
(the exporter renames weights it transposes or slices), matched against the model's own.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from .quiet import quiet_logger

__all__ = ["quantize_graph"]

Key = tuple[tuple[int, ...], bytes]


def quantize_graph(model: Any, traced: Path, target: Path, external_data: bool = False) -> int:
    """Write ``traced`` (an fp32 graph of ``model``) to ``target`` with its int8 matmuls, its
    weights in a sidecar file with ``external_data``; returns how many matmuls run in int8."""
    import onnx
    import onnxscript.optimizer
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from ..engine.backends.onnx import PRECISION_KEY

    graph = onnx.load(str(traced))
    # fold every constant, however large (slices of the last layer's in-projection included),
    # so each matmul reads its weight as one initializer the quantizer can see
    graph = onnxscript.optimizer.optimize(
        graph, input_size_limit=1 << 62, output_size_limit=1 << 62
    )
    _name_nodes(graph)
    nodes = _int8_matmuls(model, graph)
    graph.metadata_props.add(key=PRECISION_KEY, value="int8")
    with quiet_logger():
        quantize_dynamic(
            graph,
            target,
            op_types_to_quantize=["MatMul"],
            per_channel=True,
            weight_type=QuantType.QInt8,
            nodes_to_quantize=nodes,
            use_external_data_format=external_data,
            extra_options={"MatMulConstBOnly": True},
        )
    return len(nodes)


def _name_nodes(graph: Any) -> None:
    """Give every node a unique name (the quantizer selects nodes by name)."""
    seen: set[str] = set()
    for i, node in enumerate(graph.graph.node):
        if not node.name or node.name in seen:
            node.name = f"{node.op_type}_{i}"
        seen.add(node.name)


def _int8_matmuls(model: Any, graph: Any) -> list[str]:
    """Names of the graph's MatMul nodes whose weight is a linear PyTorch runs in int8."""
    from onnx import numpy_helper

    index = _linear_index(model)
    weights = {t.name: t for t in graph.graph.initializer}
    chosen = []
    for node in graph.graph.node:
        if node.op_type != "MatMul" or node.input[1] not in weights:
            continue
        values = numpy_helper.to_array(weights[node.input[1]])
        if values.ndim == 2 and values.dtype == np.float32 and _key(values) in index:
            chosen.append(node.name)
    return chosen


def _linear_index(model: Any) -> set[Key]:
    """Keys of the weights (as stored, transposed, and the head attention's query and key-value
    slices) of every linear PyTorch's int8 quantizes."""
    from torch import nn

    from ..engine.backends import int8

    keys: set[Key] = set()

    def add(values: np.ndarray) -> None:
        keys.add(_key(values))
        keys.add(_key(values.T))

    for prefix in ("encoder", "head"):
        root = getattr(model, prefix, None)
        if root is None:
            continue
        for name, module in root.named_modules(prefix=prefix):
            if isinstance(module, nn.Linear) and not int8.kept(name):
                add(module.weight.detach().float().numpy())
            elif isinstance(module, nn.MultiheadAttention):
                if int8.kept(f"{name}.in_proj"):
                    continue
                w, d = module.in_proj_weight.detach().float().numpy(), module.embed_dim
                for values in (w, w[:d], w[d:]):
                    add(values)
    return keys


def _key(values: np.ndarray) -> Key:
    return values.shape, hashlib.sha256(np.ascontiguousarray(values).tobytes()).digest()
