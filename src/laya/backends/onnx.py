"""The decision model on ONNX Runtime: ``export`` writes the graph, ``ONNXBackend`` runs it.

Graph contract (router-and-hooks.md D.3): inputs ``input_ids`` and ``attention_mask`` [R, L]
int64, ``marker_pos`` [R, K] int64, ``marker_mask`` [R, K] bool, ``qtype`` [R] int64; outputs
``logits`` [R, K] and ``act_logits`` [R, A] float32; R, L and K are dynamic, K >= 2 (the traced
head takes a top-2, so the backend pads one-option passes with a masked second column).

Only ``export`` imports torch; running a graph needs onnxruntime and NumPy alone.
"""

from __future__ import annotations

import argparse
import copy
import os
import re
import shutil
import sys
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..checkpoint import CheckpointConfig, locate, read_config, resolve_source
from ..encoding import Pass
from ..errors import CheckpointUnavailable, InvalidRequest

__all__ = [
    "DEFAULT_FILE",
    "INPUTS",
    "OUTPUTS",
    "ONNXBackend",
    "export",
    "export_main",
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
EXTERNAL_DATA_BYTES = 1_500_000_000
TOLERANCE = 1e-4
ROUNDING_FACTOR = 10
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


def default_providers() -> list[str]:
    """CUDA then CPU when this onnxruntime build has the CUDA provider, else CPU."""
    import onnxruntime as ort

    return [CUDA, CPU] if CUDA in ort.get_available_providers() else [CPU]


def open_session(path: Path, providers: Sequence[Any] | None = None) -> Any:
    """An InferenceSession on ``path``; a CUDA provider that fails to start falls back to CPU."""
    import onnxruntime as ort

    wanted = list(providers) if providers else default_providers()
    try:
        session = ort.InferenceSession(str(path), session_options(), providers=wanted)
    except Exception:
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
        session = ort.InferenceSession(str(path), session_options(), providers=[CPU])
    return session


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
    min_markers = 2

    def __init__(
        self,
        directory: Path,
        cfg: CheckpointConfig,
        onnx_path: str | os.PathLike = DEFAULT_FILE,
        providers: Sequence[Any] | None = None,
        source: str | None = None,
    ) -> None:
        if cfg.option_layout != "sequential":
            raise ValueError(
                f"option_layout={cfg.option_layout!r} is not supported by the ONNX runtime; "
                f"load this checkpoint with laya.Agent"
            )
        path = Path(onnx_path).expanduser()
        self.path = path if path.is_absolute() else directory / path
        if not self.path.is_file():
            name = source or str(directory)
            raise CheckpointUnavailable(
                f"ONNX model not found at {str(self.path)!r}. Create it with "
                f"`laya export-onnx {name} --out {self.path}` (or laya.onnx.export({name!r}, path)), "
                "or pass onnx_path= to a graph exported before"
            )
        self.session = open_session(self.path, providers)
        check_contract(self.session, self.path, cfg.n_act)

    @property
    def providers(self) -> list[str]:
        """The execution providers the session runs on, in priority order."""
        return self.session.get_providers()

    def forward(self, batch: Pass) -> tuple[np.ndarray, np.ndarray]:
        """Logits and act logits of one padded pass, as float32 NumPy arrays."""
        feeds = {name: getattr(batch, name) for name in INPUTS}
        logits, act = self.session.run(list(OUTPUTS), feeds)
        return logits.astype(np.float32, copy=False), act.astype(np.float32, copy=False)

    def close(self) -> None:
        """Drop the session and its memory."""
        self.session = None


# --------------------------------------------------------------------------- export


def export(
    checkpoint_or_agent: Any,
    path: str | os.PathLike | None = None,
    opset: int = 18,
    quantize: str | None = None,
) -> Path:
    """Export a checkpoint (directory, Hub id or Agent) to ONNX, verified against PyTorch."""
    if quantize not in (None, "int8"):
        raise ValueError(f"quantize must be None or 'int8', got {quantize!r}")
    model, directory, max_len = _torch_model(checkpoint_or_agent)
    target = (
        Path(path).expanduser() if path else directory / (INT8_FILE if quantize else DEFAULT_FILE)
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".laya-export-", dir=target.parent) as tmp:
        traced = Path(tmp) / "traced" / "model.onnx"
        traced.parent.mkdir()
        _trace(model, traced, opset)
        _verify(model, traced, _sample(model, 3, max(max_len, 24), 3, seed=1))
        staged = Path(tmp) / target.name
        if quantize:
            _quantize(traced, staged)
            _run(staged, _sample(model, 2, 20, 3, seed=2))
        else:
            _save(traced, staged)
        for file in Path(tmp).glob(target.name + "*"):
            os.replace(file, target.parent / file.name)
    return target


def _torch_model(source: Any) -> tuple[Any, Path, int]:
    """A CPU float32 DecisionModel for ``source``, its checkpoint directory and ``max_len``."""
    import torch

    if hasattr(source, "backend") and hasattr(source.backend, "model"):
        model, directory, cfg = source.backend.model, source.directory, source.cfg
    else:
        from .torch import TorchBackend

        name = os.fspath(source)
        repo, subfolder = resolve_source(name)
        directory = locate(repo, subfolder, name=name)
        cfg = read_config(directory, name)
        model = TorchBackend(directory, cfg, name, device="cpu").model
    if any(p.device.type != "cpu" or p.dtype != torch.float32 for p in model.parameters()):
        model = copy.deepcopy(model).to("cpu", torch.float32)
    return model.eval(), directory, cfg.max_len


def _sample(model: Any, rows: int, length: int, markers: int, seed: int) -> dict[str, np.ndarray]:
    """A padded batch as the runtime builds it: the last row half padding, one marker masked."""
    rng = np.random.default_rng(seed)
    vocab = int(model.encoder.config.vocab_size)
    attention = np.ones((rows, length), dtype=np.int64)
    attention[-1, length // 2 :] = 0
    marker_mask = np.ones((rows, markers), dtype=bool)
    marker_mask[-1, -1] = False
    return {
        "input_ids": rng.integers(min(5, vocab - 1), vocab, (rows, length), dtype=np.int64),
        "attention_mask": attention,
        "marker_pos": rng.integers(1, length // 2, (rows, markers), dtype=np.int64),
        "marker_mask": marker_mask,
        "qtype": np.arange(rows, dtype=np.int64) % 3,
    }


def _trace(model: Any, path: Path, opset: int) -> None:
    """Trace ``model`` (head layers made shape-dynamic) to ``path`` with dynamic R, L and K."""
    import torch

    dims = {"input_ids": "L", "attention_mask": "L", "marker_pos": "K", "marker_mask": "K"}
    axes: dict[str, dict[int, str]] = {name: {0: "R", 1: dim} for name, dim in dims.items()}
    axes.update(qtype={0: "R"}, logits={0: "R", 1: "K"}, act_logits={0: "R"})
    args = tuple(torch.from_numpy(a) for a in _sample(model, 2, 16, 2, seed=0).values())
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        # Raised for every gather by index tensor; marker positions are never negative.
        warnings.filterwarnings("ignore", "Exporting aten::index operator", UserWarning)
        torch.onnx.export(
            _exportable(model),
            args,
            str(path),
            dynamo=False,
            opset_version=opset,
            input_names=list(INPUTS),
            output_names=list(OUTPUTS),
            dynamic_axes=axes,
            do_constant_folding=True,
        )


def _exportable(model: Any) -> Any:
    """A view of ``model`` sharing its weights, whose head layers trace with dynamic shapes.

    ``nn.TransformerEncoderLayer`` may take PyTorch's fused fast path, and its attention reshapes
    with the traced sequence length baked in; the view runs the same pre-norm maths explicitly.
    """
    from torch import nn

    view = copy.copy(model)
    view._modules = dict(model._modules)
    if model.head is not None:
        head = nn.Module()
        head.layers = nn.ModuleList(_dynamic_layer(layer) for layer in model.head.layers)
        view._modules["head"] = head
    return view.eval()


def _dynamic_layer(layer: Any) -> Any:
    """``layer`` (a pre-norm ``TransformerEncoderLayer`` in eval mode) as explicit tensor ops."""
    import torch.nn.functional as F
    from torch import nn

    class DynamicLayer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = layer

        def forward(self, x: Any, src_key_padding_mask: Any) -> Any:
            block = self.layer
            x = x + self._attend(block.norm1(x), src_key_padding_mask)
            return x + block.linear2(block.activation(block.linear1(block.norm2(x))))

        def _attend(self, x: Any, padding: Any) -> Any:
            attn = self.layer.self_attn
            qkv = F.linear(x, attn.in_proj_weight, attn.in_proj_bias).chunk(3, dim=-1)
            q, k, v = (
                t.unflatten(-1, (attn.num_heads, attn.head_dim)).transpose(1, 2) for t in qkv
            )
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=~padding[:, None, None, :])
            return attn.out_proj(out.transpose(1, 2).flatten(2))

    if not layer.norm_first:
        raise NotImplementedError("only pre-norm head layers (norm_first=True) can be exported")
    return DynamicLayer()


def _run(path: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    return ort.InferenceSession(str(path), providers=[CPU]).run(list(OUTPUTS), feeds)


def _verify(model: Any, path: Path, feeds: dict[str, np.ndarray]) -> None:
    """Compare the graph with PyTorch on a batch shaped unlike the traced one; raise on mismatch.

    Each output must agree within 1e-4 times its largest real magnitude (at least 1). A model
    whose own float32 rounding exceeds that (badly conditioned, e.g. random weights) passes if
    the graph's distance to a float64 run is within ROUNDING_FACTOR times PyTorch float32's,
    plus that tolerance: rounding differs by a few times between kernels, while an export bug
    (a baked shape, a lost mask) is off by the size of the logits themselves.
    """
    want, got = _torch_outputs(model, feeds), _run(path, feeds)
    for name, w, g in zip(OUTPUTS, want, got):
        if w.shape != g.shape:
            raise RuntimeError(f"ONNX export gives {name} of shape {g.shape}, PyTorch {w.shape}")
    errors = _errors(want, got, feeds["marker_mask"])
    if all(error <= TOLERANCE * scale for error, scale in errors):
        return
    exact = _torch_outputs(copy.deepcopy(model).double(), feeds)
    floors = _errors(exact, want, feeds["marker_mask"])
    graph = _errors(exact, got, feeds["marker_mask"])
    for name, (error, scale), (floor, _) in zip(OUTPUTS, graph, floors):
        allowed = ROUNDING_FACTOR * floor + TOLERANCE * scale
        if not error <= allowed:
            raise RuntimeError(
                f"ONNX export does not reproduce PyTorch: {name} is off by up to {error:.3g} "
                f"from a float64 run, where PyTorch float32 is off by {floor:.3g} (tolerance "
                f"{allowed:.3g}); nothing was written. Try another opset (--opset) or report "
                f"the encoder type."
            )


def _torch_outputs(model: Any, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import torch

    with torch.no_grad():
        return [t.numpy() for t in model(*(torch.from_numpy(a) for a in feeds.values()))]


def _errors(
    reference: list[np.ndarray], other: list[np.ndarray], marker_mask: np.ndarray
) -> list[tuple[float, float]]:
    """(max abs difference, max(1, max abs reference)) per output, over real markers only."""
    out = []
    for want, have, keep in zip(reference, other, (marker_mask, slice(None))):
        out.append(
            (float(np.abs(want - have)[keep].max()), max(1.0, float(np.abs(want[keep]).max())))
        )
    return out


def _save(traced: Path, target: Path) -> None:
    """Write the traced graph to ``target``, weights in a ``.data`` sidecar when very large."""
    size = sum(f.stat().st_size for f in traced.parent.iterdir())
    if size <= EXTERNAL_DATA_BYTES:
        os.replace(traced, target)
        return
    import onnx

    onnx.save_model(
        onnx.load(str(traced)),
        str(target),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=target.name + ".data",
    )
    shutil.rmtree(traced.parent)


def _quantize(traced: Path, target: Path) -> None:
    """Dynamic int8 quantization: QInt8 weights, activations quantized per pass at run time."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    size = sum(f.stat().st_size for f in traced.parent.iterdir())
    quantize_dynamic(
        traced,
        target,
        weight_type=QuantType.QInt8,
        use_external_data_format=size // 4 > EXTERNAL_DATA_BYTES,
    )


# --------------------------------------------------------------------------- command


def export_main(argv: Sequence[str] | None = None) -> int:
    """``laya export-onnx CHECKPOINT [--output PATH] [--quantize int8] [--opset N]``."""
    parser = argparse.ArgumentParser(
        prog="laya export-onnx",
        description="Export a Laya checkpoint to ONNX for laya.ONNXAgent, checked against PyTorch.",
    )
    parser.add_argument(
        "checkpoint",
        help="checkpoint name (as laya.load takes it: mini, english...), directory or Hub id",
    )
    parser.add_argument(
        "--out",
        "--output",
        "-o",
        dest="output",
        help=f"where to write the graph (default: <checkpoint>/{DEFAULT_FILE})",
    )
    parser.add_argument("--quantize", choices=["int8"], help="dynamic int8 weight quantization")
    parser.add_argument("--opset", type=int, default=18, help="ONNX opset (default: 18)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        path = export(args.checkpoint, args.output, opset=args.opset, quantize=args.quantize)
    except InvalidRequest as exc:
        print(f"laya export-onnx: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except (OSError, ValueError, RuntimeError, NotImplementedError) as exc:
        print(f"laya export-onnx: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    print(path)
    return 0
