"""The decision model on ONNX Runtime: ``ONNXBackend`` runs an exported graph (``laya.onnx`` writes it).

Graph contract (docs/agent.md, "ONNX Runtime"): inputs ``input_ids`` and ``attention_mask`` [R, L]
int64, ``marker_pos`` [R, K] int64, ``marker_mask`` [R, K] bool, ``qtype`` [R] int64; outputs
``logits`` [R, K] and ``act_logits`` [R, A] float32; R, L and K are dynamic, K >= 2 (the traced
head takes a top-2, so the backend pads one-option passes with a masked second column). Graphs
written by ``laya export-onnx`` add an optional output ``embedding`` [R, H] float32, each row's
encoder states averaged over its real tokens: ``ONNXBackend.embed`` reads it (docs/agent.md).
The graph of a checkpoint with the parallel option layout takes two more inputs,
``position_ids`` and ``option_ids`` [R, L] int64, and builds the encoder's masks from them
(docs/agent.md#option-layouts); each layout's graph is refused for the other's checkpoint.

A graph exported with ``--weights checkpoint`` reads its weights from the checkpoint's own
``model.safetensors`` (ONNX external data) and records that file's size and SHA-256 under the
metadata key ``laya.weights``; the backend refuses it when the file is gone or has changed.

Running a graph needs onnxruntime and NumPy alone, never torch.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from ...checkpoint import CheckpointConfig, file_sha256, verify_sha256
from ...errors import CheckpointError, CheckpointUnavailable, one_line
from ..encoding import Pass

if TYPE_CHECKING:  # onnxruntime ships no type information: mypy reads these as Any
    from onnxruntime import InferenceSession, SessionOptions

__all__ = [
    "DEFAULT_FILE",
    "EMBEDDING",
    "GRAPH_INPUTS",
    "INPUTS",
    "OUTPUTS",
    "ONNXBackend",
    "PRECISION_KEY",
    "WEIGHTS_KEY",
    "hub_files",
    "physical_cores",
    "session_options",
]

INPUTS = {
    "input_ids": "tensor(int64)",
    "attention_mask": "tensor(int64)",
    "marker_pos": "tensor(int64)",
    "marker_mask": "tensor(bool)",
    "qtype": "tensor(int64)",
}
PARALLEL_INPUTS = {**INPUTS, "position_ids": "tensor(int64)", "option_ids": "tensor(int64)"}
GRAPH_INPUTS = {"sequential": INPUTS, "parallel": PARALLEL_INPUTS}  # by option_layout
OUTPUTS = {"logits": "tensor(float)", "act_logits": "tensor(float)"}
EMBEDDING = "embedding"
OPTIONAL_OUTPUTS = {EMBEDDING: "tensor(float)"}
WEIGHTS_KEY = "laya.weights"  # {"file", "bytes", "sha256"} of the weights file a graph reads
PRECISION_KEY = "laya.precision"  # "int8" in graphs laya export-onnx --quantize int8 writes
DEFAULT_FILE = "laya.onnx"
INT8_FILE = "laya.int8.onnx"
CUDA, CPU = "CUDAExecutionProvider", "CPUExecutionProvider"
# An execution provider as ONNX Runtime takes it: a name, or a name and its options.
Provider = str | tuple[str, Mapping[str, object]]


# --------------------------------------------------------------------------- running


def hub_files(onnx_path: str | os.PathLike[str]) -> tuple[str, ...]:
    """Hub files an ONNXAgent needs: config, tokenizer, encoder config and the graph (+ sidecar)."""
    files = ("rl_agent_config.json", "tokenizer/*", "encoder/*")
    path = Path(onnx_path)
    return files if path.is_absolute() else (*files, f"{path.as_posix()}*")


def physical_cores() -> int:
    """Physical cores among the CPUs this process may run on (hyper-threads counted once)."""
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    try:
        blocks = Path("/proc/cpuinfo").read_text().split("\n\n")
    except OSError:
        return len(allowed) if allowed else os.cpu_count() or 1
    cores = set()
    for block in blocks:
        fields = dict(re.findall(r"^(processor|physical id|core id)\s*:\s*(\d+)", block, re.M))
        if "processor" in fields and (allowed is None or int(fields["processor"]) in allowed):
            cores.add((fields.get("physical id"), fields.get("core id", fields["processor"])))
    return max(1, len(cores))


def session_options() -> SessionOptions:
    """SessionOptions for low-latency inference of padded passes (docs/performance.md)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    # Constant folding, fusions (LayerNorm, GELU, attention, MatMul+Add) and the CPU layout pass.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Matmuls are bound by the vector units: a hyper-thread sibling shares them and only adds
    # synchronisation, and CPUs outside this process's affinity mask would be oversubscribed.
    options.intra_op_num_threads = physical_cores()
    # The graph is one chain of layers: nothing runs side by side, so no inter-op pool.
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.inter_op_num_threads = 1
    # The arena keeps freed blocks for the next pass; its peak is bounded because the runtime
    # packs passes under max_batch_tokens. A memory pattern is planned per input shape, and
    # every pass has a new (R, L, K), so it would be re-planned (and cached) almost every run.
    options.enable_cpu_mem_arena = True
    options.enable_mem_pattern = False
    return options


def open_session(path: Path, providers: Sequence[Provider] | None = None) -> InferenceSession:
    """An InferenceSession on ``path``; a CUDA provider that fails to start falls back to CPU."""
    import onnxruntime as ort

    if providers:
        wanted = list(providers)
    else:  # CUDA first where this onnxruntime build has it
        wanted = [CUDA, CPU] if CUDA in ort.get_available_providers() else [CPU]
    try:
        session = _session(ort, path, wanted)
    except CheckpointError:
        if CUDA not in wanted:
            raise
        session = None
    if session is None or (CUDA in wanted and CUDA not in session.get_providers()):
        warnings.warn(
            "laya ONNX: CUDAExecutionProvider initialization failed; falling back to "
            "CPUExecutionProvider.",
            RuntimeWarning,
            stacklevel=3,
        )
        session = _session(ort, path, [CPU])
    return session


def _session(ort: ModuleType, path: Path, providers: list[Provider]) -> InferenceSession:
    """One InferenceSession; a file ONNX Runtime cannot open is a CheckpointError naming it."""
    try:
        return ort.InferenceSession(str(path), session_options(), providers=providers)
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own classes
        raise CheckpointError(f"{path} cannot be opened by ONNX Runtime: {one_line(exc)}") from None


def check_contract(
    session: InferenceSession,
    path: Path,
    n_act: int,
    layout: str = "sequential",
    source: str | None = None,
) -> None:
    """Refuse a graph whose inputs, outputs or act width differ from the contract (D.3) of the
    checkpoint's option ``layout``."""
    found_in = {i.name: i.type for i in session.get_inputs()}
    found_out = {o.name: o.type for o in session.get_outputs()}
    optional = {name: kind for name, kind in found_out.items() if name in OPTIONAL_OUTPUTS}
    required = {name: kind for name, kind in found_out.items() if name not in OPTIONAL_OUTPUTS}
    expected = GRAPH_INPUTS[layout]
    fix = f"`laya export-onnx {source or '<checkpoint dir>'} --out {path}`"
    other = next((name for name, inputs in GRAPH_INPUTS.items() if inputs == found_in), layout)
    if other != layout:
        raise ValueError(
            f"{path} is a graph for the {other} option layout, but rl_agent_config.json says "
            f"option_layout={layout!r}; export the graph from this checkpoint again: {fix}"
        )
    if found_in != expected or required != OUTPUTS or optional.items() - OPTIONAL_OUTPUTS.items():
        raise ValueError(
            f"{path} does not follow the laya ONNX graph contract.\n"
            f"  expected inputs  {_signature(expected)}; outputs {_signature(OUTPUTS)} "
            f"(optional {_signature(OPTIONAL_OUTPUTS)})\n"
            f"  found    inputs  {_signature(found_in)}; outputs {_signature(found_out)}\n"
            f"Export the checkpoint again with `laya export-onnx <checkpoint dir>`."
        )
    width = next(o.shape[1] for o in session.get_outputs() if o.name == "act_logits")
    if isinstance(width, int) and width != n_act:
        raise ValueError(
            f"{path} has {width} act outputs but rl_agent_config.json describes {n_act}; the "
            f"graph was exported from another checkpoint"
        )


def _check_weights(record: str | None, graph: Path, source: str) -> None:
    """Refuse a graph whose weights file (its ``laya.weights`` record) is gone or has changed."""
    if record is None:  # the graph holds its own weights
        return
    fix = f"export the graph again: `laya export-onnx {source} --weights checkpoint --out {graph}`"
    try:
        expected = json.loads(record)
        weights = graph.parent / expected["file"]
        size, digest = int(expected["bytes"]), str(expected["sha256"])
    except (ValueError, TypeError, KeyError):
        raise CheckpointError(f"{graph}: its {WEIGHTS_KEY} record is unreadable; {fix}") from None
    if not weights.is_file():
        raise CheckpointError(f"{graph} reads its weights from {weights}, which is missing; {fix}")
    if weights.stat().st_size != size or file_sha256(weights) != digest:
        raise CheckpointError(
            f"{graph} reads its weights from {weights}, which has changed since the graph was "
            f"exported (SHA-256 {digest} expected); {fix}"
        )


def _stored_metadata(path: Path) -> dict[str, str]:
    """A graph file's ``metadata_props``, read with protobuf alone (for a graph ORT cannot open)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from google.protobuf.message import DecodeError

    field = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="laya_onnx_metadata.proto", package="laya")
    entry = proto.message_type.add(name="Entry")  # onnx.StringStringEntryProto
    for name, number in (("key", 1), ("value", 2)):
        entry.field.add(
            name=name, number=number, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL
        )
    model = proto.message_type.add(name="Model")  # onnx.ModelProto, its field 14 alone
    model.field.add(
        name="metadata_props",
        number=14,
        type=field.TYPE_MESSAGE,
        type_name=".laya.Entry",
        label=field.LABEL_REPEATED,
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    message = message_factory.GetMessageClass(pool.FindMessageTypeByName("laya.Model"))()
    try:
        message.ParseFromString(path.read_bytes())
    except DecodeError:
        return {}
    return {entry.key: entry.value for entry in message.metadata_props}


def _signature(names: dict[str, str]) -> str:
    return ", ".join(
        f"{name}:{kind.removeprefix('tensor(').rstrip(')')}" for name, kind in names.items()
    )


class ONNXBackend:
    """Runs padded passes through an exported graph on ONNX Runtime."""

    name = "onnx"

    def __init__(
        self,
        directory: Path,
        cfg: CheckpointConfig,
        onnx_path: str | os.PathLike[str] = DEFAULT_FILE,
        providers: Sequence[Provider] | None = None,
        source: str | None = None,
        expected_sha256: str | None = None,
    ) -> None:
        path = Path(onnx_path).expanduser()
        self.path = path if path.is_absolute() else directory / path
        self.source = source or str(directory)  # how the user named the checkpoint, for fixes
        if not self.path.is_file():
            raise CheckpointUnavailable(
                f"ONNX model not found at {str(self.path)!r}. Create it with "
                f"`laya export-onnx {self.source} --out {self.path}` "
                f"(or laya.onnx.export({self.source!r}, path)), "
                "or pass onnx_path= to a graph exported before"
            )
        verify_sha256(self.path, expected_sha256)
        try:
            self.session = open_session(self.path, providers)
        except CheckpointError:  # a weights file that changed size is out of the graph's bounds
            _check_weights(_stored_metadata(self.path).get(WEIGHTS_KEY), self.path, self.source)
            raise
        metadata = self.session.get_modelmeta().custom_metadata_map
        # older int8 graphs carry no record: their file name says it
        self.precision = metadata.get(PRECISION_KEY) or (
            "int8" if "int8" in self.path.name else "fp32"
        )
        _check_weights(metadata.get(WEIGHTS_KEY), self.path, self.source)
        check_contract(self.session, self.path, cfg.n_act, cfg.option_layout, self.source)
        # Every graph laya export-onnx writes has it; the published runtime's do not.
        self.can_embed = EMBEDDING in {o.name for o in self.session.get_outputs()}
        self.inputs = GRAPH_INPUTS[cfg.option_layout]

    @property
    def providers(self) -> list[str]:
        """The execution providers the session runs on, in priority order."""
        return list(self.session.get_providers())

    @property
    def batch_tokens(self) -> int:
        """Padded tokens per pass: a few thousand keep a CPU's caches warm, a GPU takes far more."""
        return 65536 if self.providers[0] == CUDA else 4096

    def forward(self, batch: Pass) -> tuple[np.ndarray, np.ndarray]:
        """Logits and act logits of one pass (padded here), as float32 NumPy arrays."""
        k = batch.marker_pos.shape[1]
        logits, act = self.session.run(list(OUTPUTS), _feeds(batch, self.inputs))
        return logits[:, :k].astype(np.float32, copy=False), act.astype(np.float32, copy=False)

    def embed(self, batch: Pass) -> np.ndarray:
        """``[R, H]`` float32: each row's encoder output averaged over its tokens.

        Read from the graph's ``embedding`` output; ONNX Runtime runs the whole graph for it, the
        decision head included (docs/performance.md).
        """
        if not self.can_embed:
            raise CheckpointError(
                f"{self.path} has no {EMBEDDING!r} output (graphs of the published runtime and of "
                f"older laya lack it); export it again: `laya export-onnx {self.source} --out "
                f"{self.path}`"
            )
        (embedding,) = self.session.run([EMBEDDING], _feeds(batch, self.inputs))
        return np.asarray(embedding, dtype=np.float32)

    def close(self) -> None:
        """Drop the session and its memory."""
        self.session = None


def _feeds(batch: Pass, inputs: Collection[str]) -> dict[str, np.ndarray]:
    """The graph's ``inputs`` for one pass: a padded grid, at least two marker columns, and
    the rows' position and option ids where the graph takes them (parallel option layout)."""
    input_ids, attention_mask = batch.padded()
    marker_pos, marker_mask = batch.marker_pos, batch.marker_mask
    k = marker_pos.shape[1]
    if k < 2:  # the traced head takes a top-2: give it a second, masked marker column
        marker_pos = np.pad(marker_pos, ((0, 0), (0, 2 - k)))
        marker_mask = np.pad(marker_mask, ((0, 0), (0, 2 - k)))
    feeds = {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "marker_pos": marker_pos,
        "marker_mask": marker_mask,
        "qtype": batch.qtype,
    }
    if "option_ids" in inputs:
        feeds["position_ids"], feeds["option_ids"] = batch.padded_layout()
    return feeds
