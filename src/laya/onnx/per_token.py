"""Per-token activations for the int8 graph (docs/performance.md, "int8").

ONNX Runtime's dynamic quantizer gives each int8 matmul's input one scale for the whole pass
(``DynamicQuantizeLinear``), so one token's outlier coarsens every other token's codes, and an
answer changes with what it is batched with. :func:`per_token_activations` swaps each of those
quantizers for one scale per token (symmetric: the token's largest magnitude at 127, codes as
uint8 around 128, as ``precision="int8"`` on PyTorch does) built from standard ONNX operators.
The products stay ONNX Runtime's ``MatMulInteger`` on the quantizer's per-channel int8 weights;
each is scaled back by its weights' scales and then by its tokens' (two ``Mul``), a shape ONNX
Runtime does not fuse into ``MatMulIntegerToFloat``, whose input scale is one per tensor.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

__all__ = ["per_token_activations"]

_ZERO_POINT = 128
_TINY = 1e-12
_PREFIX = "laya_per_token"
_CONSTANTS: dict[str, np.ndarray] = {
    "inv127": np.array(1 / 127, np.float32),
    "tiny": np.array(_TINY, np.float32),
    "zero_point": np.array(_ZERO_POINT, np.uint8),
    "shift": np.array(_ZERO_POINT, np.float32),
    "low": np.array(0, np.float32),
    "high": np.array(255, np.float32),
    "last_axis": np.array([-1], np.int64),
}


def per_token_activations(graph: onnx.ModelProto) -> int:
    """Rewrite ``graph`` (the output of ``quantize_dynamic``) in place so every int8 matmul
    quantizes its input per token; returns how many quantizers were swapped."""
    const = {name: f"{_PREFIX}_{name}" for name in _CONSTANTS}
    producers = {out: node for node in graph.graph.node for out in node.output}
    token_scales: set[str] = set()  # each swapped quantizer's scale: per token now
    nodes: list[onnx.NodeProto] = []
    for node in graph.graph.node:
        if node.op_type == "DynamicQuantizeLinear":
            nodes += _quantize_per_token(node, const, _opset(graph))
            token_scales.add(node.output[1])
        elif _is_scales_product(node, token_scales):
            continue  # each product is scaled by the two scales in turn instead
        elif node.op_type == "Mul" and _is_output_scale(node, producers, token_scales):
            nodes += _scale_back(node, producers, token_scales)
        else:
            nodes.append(node)
    graph.graph.initializer.extend(
        numpy_helper.from_array(value, const[name]) for name, value in _CONSTANTS.items()
    )
    del graph.graph.node[:]
    graph.graph.node.extend(nodes)
    return len(token_scales)


def _opset(graph: onnx.ModelProto) -> int:
    return int(next(o.version for o in graph.opset_import if o.domain in ("", "ai.onnx")))


def _quantize_per_token(
    node: onnx.NodeProto, const: dict[str, str], opset: int
) -> list[onnx.NodeProto]:
    """``DynamicQuantizeLinear``'s three outputs (codes, scale, zero point), per token."""
    x, (codes, scale, zero_point) = node.input[0], node.output
    step = f"{node.name}_{_PREFIX}"
    largest = (  # ReduceMax takes its axes as an input from opset 18 on
        helper.make_node("ReduceMax", [f"{step}_abs", const["last_axis"]], [f"{step}_max"])
        if opset >= 18
        else helper.make_node("ReduceMax", [f"{step}_abs"], [f"{step}_max"], axes=[-1])
    )
    return [
        helper.make_node("Abs", [x], [f"{step}_abs"]),
        largest,
        helper.make_node("Max", [f"{step}_max", const["tiny"]], [f"{step}_range"]),
        helper.make_node("Mul", [f"{step}_range", const["inv127"]], [scale]),
        helper.make_node("Div", [x, scale], [f"{step}_steps"]),
        helper.make_node("Round", [f"{step}_steps"], [f"{step}_rounded"]),
        helper.make_node("Add", [f"{step}_rounded", const["shift"]], [f"{step}_shifted"]),
        helper.make_node(
            "Clip", [f"{step}_shifted", const["low"], const["high"]], [f"{step}_clipped"]
        ),
        helper.make_node("Cast", [f"{step}_clipped"], [codes], to=TensorProto.UINT8),
        helper.make_node("Identity", [const["zero_point"]], [zero_point]),
    ]


def _is_scales_product(node: onnx.NodeProto, token_scales: set[str]) -> bool:
    """Whether ``node`` is the quantizer's ``Mul`` of an input's and the weights' scales."""
    return node.op_type == "Mul" and any(name in token_scales for name in node.input)


def _is_output_scale(
    node: onnx.NodeProto, producers: dict[str, onnx.NodeProto], token_scales: set[str]
) -> bool:
    """Whether ``node`` multiplies a product back by the scales' product of a swapped input."""
    return any(
        (scales := producers.get(name)) is not None and _is_scales_product(scales, token_scales)
        for name in node.input
    )


def _scale_back(
    node: onnx.NodeProto, producers: dict[str, onnx.NodeProto], token_scales: set[str]
) -> list[onnx.NodeProto]:
    """``node`` (product times both scales) as product times the weights' scales, then
    times the tokens' scales."""
    scales_name = next(
        name
        for name in node.input
        if (p := producers.get(name)) is not None and _is_scales_product(p, token_scales)
    )
    product = next(name for name in node.input if name != scales_name)
    scales = producers[scales_name]
    tokens = next(name for name in scales.input if name in token_scales)
    weights = next(name for name in scales.input if name != tokens)
    by_weights = f"{node.name}_{_PREFIX}_channels"
    return [
        helper.make_node("Mul", [product, weights], [by_weights]),
        helper.make_node("Mul", [by_weights, tokens], list(node.output), name=node.name),
    ]
