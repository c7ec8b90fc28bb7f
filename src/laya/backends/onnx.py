"""The decision model on ONNX Runtime: ``ONNXBackend`` runs an exported graph (``laya.onnx`` writes it).

Graph contract (router-and-hooks.md D.3): inputs ``input_ids`` and ``attention_mask`` [R, L]
int64, ``marker_pos`` [R, K] int64, ``marker_mask`` [R, K] bool, ``qtype`` [R] int64; outputs
``logits`` [R, K] and ``act_logits`` [R, A] float32; R, L and K are dynamic, K >= 2 (the traced
head takes a top-2, so the backend pads one-option passes with a masked second column).

Running a graph needs onnxruntime and NumPy alone, never torch.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..checkpoint import CheckpointConfig, verify_sha256
from ..encoding import Pass
from ..errors import CheckpointError, CheckpointUnavailable, InvalidRequest, one_line

__all__ = [
    "DEFAULT_FILE",
    "INPUTS",
    "OUTPUTS",
    "ONNXBackend",
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
OUTPUTS = {"logits": "tensor(float)", "act_logits": "tensor(float)"}
DEFAULT_FILE = "laya.onnx"
INT8_FILE = "laya.int8.onnx"
CUDA, CPU = "CUDAExecutionProvider", "CPUExecutionProvider"


# --------------------------------------------------------------------------- running


def hub_files(onnx_path: str | os.PathLike) -> tuple[str, ...]:
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


def session_options() -> Any:
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


def open_session(path: Path, providers: Sequence[Any] | None = None) -> Any:
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


def _session(ort: Any, path: Path, providers: list[Any]) -> Any:
    """One InferenceSession; a file ONNX Runtime cannot open is a CheckpointError naming it."""
    try:
        return ort.InferenceSession(str(path), session_options(), providers=providers)
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own classes
        raise CheckpointError(f"{path} cannot be opened by ONNX Runtime: {one_line(exc)}") from None


def check_contract(session: Any, path: Path, n_act: int) -> None:
    """Refuse a graph whose inputs, outputs or act width differ from the contract (D.3)."""
    found_in = {i.name: i.type for i in session.get_inputs()}
    found_out = {o.name: o.type for o in session.get_outputs()}
    if found_in != INPUTS or found_out != OUTPUTS:
        raise ValueError(
            f"{path} does not follow the laya ONNX graph contract.\n"
            f"  expected inputs  {_signature(INPUTS)}; outputs {_signature(OUTPUTS)}\n"
            f"  found    inputs  {_signature(found_in)}; outputs {_signature(found_out)}\n"
            f"Export the checkpoint again with `laya export-onnx <checkpoint dir>`."
        )
    width = next(o.shape[1] for o in session.get_outputs() if o.name == "act_logits")
    if isinstance(width, int) and width != n_act:
        raise ValueError(
            f"{path} has {width} act outputs but rl_agent_config.json describes {n_act}; the "
            f"graph was exported from another checkpoint"
        )


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
        onnx_path: str | os.PathLike = DEFAULT_FILE,
        providers: Sequence[Any] | None = None,
        source: str | None = None,
        expected_sha256: str | None = None,
    ) -> None:
        path = Path(onnx_path).expanduser()
        self.path = path if path.is_absolute() else directory / path
        if not self.path.is_file():
            name = source or str(directory)
            raise CheckpointUnavailable(
                f"ONNX model not found at {str(self.path)!r}. Create it with "
                f"`laya export-onnx {name} --out {self.path}` (or laya.onnx.export({name!r}, path)), "
                "or pass onnx_path= to a graph exported before"
            )
        verify_sha256(self.path, expected_sha256)
        self.precision = "int8" if "int8" in self.path.name else "fp32"
        self.session = open_session(self.path, providers)
        check_contract(self.session, self.path, cfg.n_act)

    @property
    def providers(self) -> list[str]:
        """The execution providers the session runs on, in priority order."""
        return self.session.get_providers()

    @property
    def batch_tokens(self) -> int:
        """Padded tokens per pass: a few thousand keep a CPU's caches warm, a GPU takes far more."""
        return 65536 if self.providers[0] == CUDA else 4096

    def forward(self, batch: Pass) -> tuple[np.ndarray, np.ndarray]:
        """Logits and act logits of one pass (padded here), as float32 NumPy arrays."""
        input_ids, attention_mask = batch.padded()  # the graph reads a padded grid
        feeds = {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "marker_pos": batch.marker_pos,
            "marker_mask": batch.marker_mask,
            "qtype": batch.qtype,
        }
        k = feeds["marker_pos"].shape[1]
        if k < 2:  # the traced head takes a top-2: give it a second, masked marker column
            feeds["marker_pos"] = np.pad(feeds["marker_pos"], ((0, 0), (0, 2 - k)))
            feeds["marker_mask"] = np.pad(feeds["marker_mask"], ((0, 0), (0, 2 - k)))
        logits, act = self.session.run(list(OUTPUTS), feeds)
        return logits[:, :k].astype(np.float32, copy=False), act.astype(np.float32, copy=False)

    def embed(self, batch: Pass) -> np.ndarray:
        """Encoder vectors: not in the decision graph's contract."""
        raise InvalidRequest(
            f"{self.path} has no embedding output; pass an embedder (embed=) to shortlist"
        )

    def close(self) -> None:
        """Drop the session and its memory."""
        self.session = None
