"""The int8 graph: ``laya export-onnx CHECKPOINT --quantize int8`` (docs/performance.md, "int8").

ONNX Runtime's dynamic quantization (``onnxruntime.quantization.quantize_dynamic``) on the linears
PyTorch's ``precision="int8"`` quantizes and no others (``laya.engine.backends.int8``: the head
layers' and the encoder's attention output projections; the linears it keeps stay fp32 here).
Weights get one int8 scale per output channel; activations are quantized at run time with one
scale per token (:mod:`~laya.onnx.per_token` swaps the quantizer's per-tensor scale for it), and
the products are ONNX Runtime's ``MatMulInteger``. Embeddings, norms, attention scores and
softmax, the scorer and the act head stay fp32. A matmul is told apart by its weight's values
(the exporter renames weights it transposes or slices), matched against the model's own.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .quiet import quiet_logger

if TYPE_CHECKING:
    import onnx

    from ..engine.backends.torch import DecisionModel

__all__ = ["quantize_graph"]

Key = tuple[tuple[int, ...], bytes]


def quantize_graph(
    model: DecisionModel,
    traced: Path,
    target: Path,
    external_data: bool = False,
    keep: Callable[[str], bool] | None = None,
) -> int:
    """Write ``traced`` (an fp32 graph of ``model``) to ``target`` with its int8 matmuls, its
    weights in a sidecar file with ``external_data``; returns how many matmuls run in int8.
    ``keep`` names the linears that stay fp32 (default: those ``precision="int8"`` keeps)."""
    import onnx
    import onnxscript.optimizer
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from ..engine.backends.int8 import kept
    from ..engine.backends.onnx import PRECISION_KEY
    from .per_token import per_token_activations

    graph = onnx.load(str(traced))
    # fold every constant, however large (slices of the last layer's in-projection included),
    # so each matmul reads its weight as one initializer the quantizer can see
    graph = onnxscript.optimizer.optimize(
        graph, input_size_limit=1 << 62, output_size_limit=1 << 62
    )
    _name_nodes(graph)
    nodes = _int8_matmuls(model, graph, keep or kept)
    graph.metadata_props.add(key=PRECISION_KEY, value="int8")
    per_tensor = target.parent / "per-tensor" / target.name
    per_tensor.parent.mkdir(exist_ok=True)
    with quiet_logger():
        quantize_dynamic(
            graph,
            per_tensor,
            op_types_to_quantize=["MatMul"],
            per_channel=True,
            weight_type=QuantType.QInt8,
            nodes_to_quantize=nodes,
            use_external_data_format=external_data,
            extra_options={"MatMulConstBOnly": True},
        )
    quantized = onnx.load(str(per_tensor))
    per_token_activations(quantized)
    shutil.rmtree(per_tensor.parent)
    onnx.save_model(
        quantized,
        str(target),
        save_as_external_data=external_data,
        location=target.name + ".data",
    )
    return len(nodes)


def _name_nodes(graph: onnx.ModelProto) -> None:
    """Give every node a unique name (the quantizer selects nodes by name)."""
    seen: set[str] = set()
    for i, node in enumerate(graph.graph.node):
        if not node.name or node.name in seen:
            node.name = f"{node.op_type}_{i}"
        seen.add(node.name)


def _int8_matmuls(
    model: DecisionModel, graph: onnx.ModelProto, keep: Callable[[str], bool]
) -> list[str]:
    """Names of the graph's MatMul nodes whose weight is a linear ``keep`` leaves to int8."""
    from onnx import numpy_helper

    index = _linear_index(model, keep)
    weights = {t.name: t for t in graph.graph.initializer}
    chosen = []
    for node in graph.graph.node:
        if node.op_type != "MatMul" or node.input[1] not in weights:
            continue
        values = numpy_helper.to_array(weights[node.input[1]])
        if values.ndim == 2 and values.dtype == np.float32 and _key(values) in index:
            chosen.append(node.name)
    return chosen


def _linear_index(model: DecisionModel, keep: Callable[[str], bool]) -> set[Key]:
    """Keys of the weights (as stored, transposed, and the head attention's query and key-value
    slices) of every linear ``keep`` leaves to int8."""
    from torch import nn

    keys: set[Key] = set()

    def add(values: np.ndarray) -> None:
        keys.add(_key(values))
        keys.add(_key(values.T))

    for prefix in ("encoder", "head"):
        root = getattr(model, prefix, None)
        if root is None:
            continue
        for name, module in root.named_modules(prefix=prefix):
            if isinstance(module, nn.Linear) and not keep(name):
                add(module.weight.detach().float().numpy())
            elif isinstance(module, nn.MultiheadAttention):
                if keep(f"{name}.in_proj"):
                    continue
                w, d = module.in_proj_weight.detach().float().numpy(), module.embed_dim
                for values in (w, w[:d], w[d:]):
                    add(values)
    return keys


def _key(values: np.ndarray) -> Key:
    return values.shape, hashlib.sha256(np.ascontiguousarray(values).tobytes()).digest()
