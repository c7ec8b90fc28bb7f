"""Graphs that keep no copy of the weights: ``laya export-onnx CHECKPOINT --weights checkpoint``.

Every float initializer of a traced graph that holds a tensor of the checkpoint's
``model.safetensors`` (or its transpose: the exporter stores matmul weights transposed, under new
names), or a block of its consecutive rows (the last head layer's query and key-value parts of
its in-projection), becomes an ONNX external-data reference into that file, at those bytes'
offset and in their own dtype, followed by a Cast to float32 (and a Transpose where needed). ONNX Runtime folds
these constants when it opens the session, so the graph runs the fp32 weights the PyTorch Agent
loads, and the graph file holds only the graph. It records the weights file's size and SHA-256
(``laya.weights``) so the backend refuses it once that file changes (docs/agent.md).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import numpy as np

from ..checkpoint import file_sha256
from ..engine.backends.onnx import WEIGHTS_KEY
from ..errors import CheckpointError, InvalidRequest

if TYPE_CHECKING:
    import onnx

__all__ = ["link_weights", "weights_location"]

HEADER_BYTES = 8  # a safetensors file: an 8-byte little-endian header size, the JSON header, data
FLOAT_TYPES = {"F32": 1, "F16": 10, "BF16": 16}  # safetensors dtype -> onnx.TensorProto type
Key = tuple[tuple[int, ...], bytes]


class TensorInfo(TypedDict):
    """A tensor's entry in a safetensors header."""

    dtype: str
    shape: list[int]
    data_offsets: list[int]


@dataclass(frozen=True)
class Found:
    """Where an initializer's values are in the weights file: tensor ``name``, its rows from
    ``row`` (``rows`` of them, None: all), stored ``transposed`` in the graph or not."""

    name: str
    transposed: bool
    row: int = 0
    rows: int | None = None


@dataclass
class Index:
    """The checkpoint's float tensors by (shape, digest) as stored and transposed, and each
    row of every 2-D tensor by its digest (to find blocks of rows)."""

    tensors: dict[Key, Found] = field(default_factory=dict)
    rows: dict[bytes, list[tuple[str, int]]] = field(default_factory=dict)
    values: dict[str, np.ndarray] = field(default_factory=dict)


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
        reference, steps = _reference(tensor.name, header[found.name], location, start, found)
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


def _header(weights: Path) -> tuple[int, dict[str, TensorInfo]]:
    """Where a safetensors file's data starts, and its tensors' dtype, shape and offsets."""
    with weights.open("rb") as stream:
        size = int.from_bytes(stream.read(HEADER_BYTES), "little")
        try:
            raw = json.loads(stream.read(size))
        except ValueError:
            raise CheckpointError(f"{weights} is not a safetensors file") from None
    raw.pop("__metadata__", None)  # the file's own strings; every other entry is a tensor
    header: dict[str, TensorInfo] = raw
    return HEADER_BYTES + size, header


def _index(weights: Path, start: int, header: dict[str, TensorInfo]) -> Index:
    """Every float tensor of the weights file, as :class:`Index` finds them."""
    data = np.memmap(weights, dtype=np.uint8, mode="r")
    index = Index()
    for name, info in header.items():
        if info["dtype"] not in FLOAT_TYPES:
            continue
        begin, end = info["data_offsets"]
        values = _as_float32(data[start + begin : start + end], info["dtype"], info["shape"])
        index.tensors.setdefault(_key(values), Found(name, False))
        if values.ndim == 2:
            index.tensors.setdefault(_key(values.T), Found(name, True))
            index.values[name] = values
            for row, digest in enumerate(map(_digest, values)):
                index.rows.setdefault(digest, []).append((name, row))
    return index


def _as_float32(raw: np.ndarray, dtype: str, shape: list[int]) -> np.ndarray:
    if dtype == "BF16":  # the upper half of a float32
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).reshape(shape)
    return raw.view(np.float16 if dtype == "F16" else np.float32).astype(np.float32).reshape(shape)


def _digest(values: np.ndarray) -> bytes:
    return hashlib.sha256(np.ascontiguousarray(values).tobytes()).digest()


def _key(values: np.ndarray) -> Key:
    return values.shape, _digest(values)


def _find(index: Index, values: np.ndarray) -> Found | None:
    """Where ``values`` are in the weights file: a whole tensor, or a block of its rows."""
    if values.dtype != np.float32:
        return None
    found = index.tensors.get(_key(values))
    if found is not None or values.ndim != 2:
        return found
    for block, transposed in ((values, False), (values.T, True)):
        for name, row in index.rows.get(_digest(block[0]), []):
            whole = index.values[name]
            rows = block.shape[0]
            if whole.shape[1] == block.shape[1] and np.array_equal(whole[row : row + rows], block):
                return Found(name, transposed, row, rows)
    return None


def _reference(
    name: str, info: TensorInfo, location: str, start: int, found: Found
) -> tuple[onnx.TensorProto, list[onnx.NodeProto]]:
    """The external tensor for ``name`` and the Cast/Transpose nodes that rebuild it in fp32."""
    from onnx import TensorProto, helper

    dtype = FLOAT_TYPES[info["dtype"]]
    steps: list[tuple[str, str, int | list[int]]]  # (op, its one attribute, that one's value)
    steps = [("Cast", "to", TensorProto.FLOAT)] if dtype != TensorProto.FLOAT else []
    steps += [("Transpose", "perm", [1, 0])] if found.transposed else []
    tensor = TensorProto(name=f"{name}.stored" if steps else name, data_type=dtype)
    shape = list(info["shape"])
    begin, end = info["data_offsets"]
    if found.rows is not None:  # a block of consecutive rows: consecutive bytes
        row_bytes = (end - begin) // shape[0]
        begin, end = begin + found.row * row_bytes, begin + (found.row + found.rows) * row_bytes
        shape[0] = found.rows
    tensor.dims.extend(shape)
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", start + begin), ("length", end - begin)):
        tensor.external_data.add(key=key, value=str(value))
    nodes: list[onnx.NodeProto] = []
    source = tensor.name
    for i, (op, attribute, setting) in enumerate(steps):
        output = name if i == len(steps) - 1 else f"{name}.{op.lower()}"
        node = helper.make_node(op, [source], [output])
        node.attribute.append(helper.make_attribute(attribute, setting))
        nodes.append(node)
        source = output
    return tensor, nodes
