"""Graphs that keep no copy of the weights: ``laya export-onnx CHECKPOINT --weights checkpoint``.

Every float initializer of a traced graph that holds a tensor of the checkpoint's
``model.safetensors`` (or its transpose: the exporter stores matmul weights transposed, under new
names) becomes an ONNX external-data reference into that file, at the tensor's byte offset and in
its own dtype, followed by a Cast to float32 (and a Transpose where needed). ONNX Runtime folds
these constants when it opens the session, so the graph runs the fp32 weights the PyTorch Agent
loads, and the graph file holds only the graph. It records the weights file's size and SHA-256
(``laya.weights``) so the backend refuses it once that file changes (docs/agent.md).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..checkpoint import file_sha256
from ..engine.backends.onnx import WEIGHTS_KEY
from ..errors import CheckpointError, InvalidRequest

__all__ = ["link_weights", "weights_location"]

HEADER_BYTES = 8  # a safetensors file: an 8-byte little-endian header size, the JSON header, data
FLOAT_TYPES = {"F32": 1, "F16": 10, "BF16": 16}  # safetensors dtype -> onnx.TensorProto type
Index = dict[tuple[tuple[int, ...], bytes], tuple[str, bool]]


def weights_location(weights: Path, folder: Path) -> str:
    """``weights`` relative to the graph's ``folder``; refused where ONNX Runtime will not read it.

    ONNX Runtime reads external data only inside the graph's folder, links resolved.
    """
    inside = weights.resolve().is_relative_to(folder.resolve())
    if not inside:
        raise InvalidRequest(
            f"out: with weights='checkpoint' the graph must be written in the folder of "
            f"{weights} or a folder above it ({weights.resolve()} after links; ONNX Runtime reads "
            f"external data only inside the graph's folder); a Hub cache snapshot holds links to "
            f"elsewhere: copy the checkpoint to a folder of its own, or use weights='graph'"
        )
    return Path(os.path.relpath(weights, folder)).as_posix()


def link_weights(traced: Path, target: Path, weights: Path) -> None:
    """Write the graph ``traced`` to ``target``, its checkpoint tensors read from ``weights``."""
    import onnx

    location = weights_location(weights, target.parent)
    start, header = _header(weights)
    index = _index(weights, start, header)
    model = onnx.load(str(traced))
    initializers, nodes = [], []
    for tensor in model.graph.initializer:
        found = _find(index, onnx.numpy_helper.to_array(tensor))
        if found is None:  # a constant of the graph (shapes, scales), not a checkpoint tensor
            initializers.append(tensor)
            continue
        name, transposed = found
        reference, steps = _reference(tensor.name, header[name], location, start, transposed)
        initializers.append(reference)
        nodes.extend(steps)
    del model.graph.initializer[:]
    model.graph.initializer.extend(initializers)
    rest = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(nodes + rest)
    record = {"file": location, "bytes": weights.stat().st_size, "sha256": file_sha256(weights)}
    model.metadata_props.add(key=WEIGHTS_KEY, value=json.dumps(record))
    onnx.save(model, str(target))


def _header(weights: Path) -> tuple[int, dict[str, Any]]:
    """Where a safetensors file's data starts, and its tensors' dtype, shape and offsets."""
    with weights.open("rb") as stream:
        size = int.from_bytes(stream.read(HEADER_BYTES), "little")
        try:
            header = json.loads(stream.read(size))
        except ValueError:
            raise CheckpointError(f"{weights} is not a safetensors file") from None
    header.pop("__metadata__", None)
    return HEADER_BYTES + size, header


def _index(weights: Path, start: int, header: dict[str, Any]) -> Index:
    """(shape, digest of the fp32 bytes) -> (tensor name, transposed) for every float tensor."""
    data = np.memmap(weights, dtype=np.uint8, mode="r")
    index: Index = {}
    for name, info in header.items():
        if info["dtype"] not in FLOAT_TYPES:
            continue
        begin, end = info["data_offsets"]
        values = _as_float32(data[start + begin : start + end], info["dtype"], info["shape"])
        index.setdefault(_key(values), (name, False))
        if values.ndim == 2:
            index.setdefault(_key(values.T), (name, True))
    return index


def _as_float32(raw: np.ndarray, dtype: str, shape: list[int]) -> np.ndarray:
    if dtype == "BF16":  # the upper half of a float32
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).reshape(shape)
    return raw.view(np.float16 if dtype == "F16" else np.float32).astype(np.float32).reshape(shape)


def _key(values: np.ndarray) -> tuple[tuple[int, ...], bytes]:
    return values.shape, hashlib.sha256(np.ascontiguousarray(values).tobytes()).digest()


def _find(index: Index, values: np.ndarray) -> tuple[str, bool] | None:
    return index.get(_key(values)) if values.dtype == np.float32 else None


def _reference(
    name: str, info: dict[str, Any], location: str, start: int, transposed: bool
) -> tuple[Any, list[Any]]:
    """The external tensor for ``name`` and the Cast/Transpose nodes that rebuild it in fp32."""
    from onnx import TensorProto, helper

    dtype = FLOAT_TYPES[info["dtype"]]
    steps: list[tuple[str, dict[str, Any]]]  # (op, its attributes: any value ONNX takes)
    steps = [("Cast", {"to": TensorProto.FLOAT})] if dtype != TensorProto.FLOAT else []
    steps += [("Transpose", {"perm": [1, 0]})] if transposed else []
    tensor = TensorProto(name=f"{name}.stored" if steps else name, data_type=dtype)
    tensor.dims.extend(info["shape"])
    tensor.data_location = TensorProto.EXTERNAL
    begin, end = info["data_offsets"]
    for key, value in (("location", location), ("offset", start + begin), ("length", end - begin)):
        tensor.external_data.add(key=key, value=str(value))
    nodes, source = [], tensor.name
    for i, (op, attributes) in enumerate(steps):
        output = name if i == len(steps) - 1 else f"{name}.{op.lower()}"
        nodes.append(helper.make_node(op, [source], [output], **attributes))
        source = output
    return tensor, nodes
