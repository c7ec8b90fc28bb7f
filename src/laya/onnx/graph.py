"""ONNX export: ``laya.onnx.export(checkpoint)`` writes the graph an ``ONNXAgent`` runs.

Export is a build step, like training: it needs torch and onnx, traces the decision model with
dynamic rows, lengths and markers (plus the text embedding as an extra output, so an ONNXAgent
can embed; and the rows' position and option ids as extra inputs for a checkpoint with the
parallel option layout), checks the graph against PyTorch on a batch shaped unlike the traced
one, and only then writes the file. Running the graph is :mod:`laya.engine.backends.onnx`'s job.
"""

from __future__ import annotations

import argparse
import copy
import os
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from ..checkpoint import CheckpointConfig, check_path, locate, read_config, resolve_source
from ..commands import CommandParser, command_parser, run_command
from ..engine.backends.onnx import (
    CPU,
    DEFAULT_FILE,
    EMBEDDING,
    GRAPH_INPUTS,
    INT8_FILE,
    OUTPUTS,
)
from ..engine.encoding import parallel_layout
from ..errors import InvalidRequest
from .int8_graph import quantize_graph
from .linked_weights import link_weights, weights_location

if TYPE_CHECKING:
    import torch
    from torch import nn

    from ..engine.backends.torch import DecisionModel
    from ..runtime import Runtime

__all__ = ["export", "export_main"]

EXTERNAL_DATA_BYTES = 1_500_000_000
TOLERANCE = 1e-4
MIN_OPSET = 14  # scaled_dot_product_attention is exported from opset 14 on
ROUNDING_FACTOR = 10
GRAPH_OUTPUTS = (*OUTPUTS, EMBEDDING)
WEIGHTS = ("graph", "checkpoint")  # where a graph's weights live (docs/agent.md)


def export(
    checkpoint_or_agent: str | os.PathLike[str] | Runtime,
    path: str | os.PathLike[str] | None = None,
    opset: int = 18,
    quantize: str | None = None,
    weights: str = "graph",
) -> Path:
    """Export a checkpoint (directory, Hub id or Agent) to ONNX, verified against PyTorch.

    ``weights="graph"`` writes the weights into the graph (a ``.data`` file beside it when very
    large); ``weights="checkpoint"`` writes the graph alone, reading the checkpoint's own
    ``model.safetensors`` (the graph then lives in the checkpoint's folder or above it).
    """
    if quantize not in (None, "int8"):
        raise InvalidRequest(f"quantize must be None or 'int8', got {quantize!r}")
    if weights not in WEIGHTS:
        raise InvalidRequest(f"weights must be 'graph' or 'checkpoint', got {weights!r}")
    if weights == "checkpoint" and quantize:
        raise InvalidRequest(
            "weights='checkpoint' reads the checkpoint's own weights, quantize='int8' writes int8 "
            "weights of its own: use one of them"
        )
    if isinstance(opset, bool) or not isinstance(opset, int) or opset < MIN_OPSET:
        raise InvalidRequest(
            f"opset must be a whole number of at least {MIN_OPSET} (the first with the attention "
            f"operator the encoders use), got {opset!r}; the default is 18"
        )
    if path:
        _check_target(Path(path).expanduser())
    model, directory, cfg = _torch_model(checkpoint_or_agent)
    layout = cfg.option_layout
    target = (
        Path(path).expanduser() if path else directory / (INT8_FILE if quantize else DEFAULT_FILE)
    )
    checkpoint_weights = directory / "model.safetensors"
    if weights == "checkpoint":
        weights_location(checkpoint_weights, target.parent)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".laya-export-", dir=target.parent) as tmp:
        traced = Path(tmp) / "traced" / "model.onnx"
        traced.parent.mkdir()
        _trace(model, traced, opset, layout)
        _verify(model, traced, _sample(model, 3, max(cfg.max_len, 24), 3, seed=1, layout=layout))
        check = _sample(model, 2, 20, 3, seed=2, layout=layout)
        if weights == "checkpoint":
            beside = target.parent / f"{Path(tmp).name}.onnx"  # external data is found from here
            _link(traced, beside, target, checkpoint_weights, check)
            return target
        staged = Path(tmp) / target.name
        if quantize:
            size = sum(f.stat().st_size for f in traced.parent.iterdir())
            quantize_graph(model, traced, staged, size // 4 > EXTERNAL_DATA_BYTES)
            _run(staged, check)
        else:
            _save(traced, staged)
        for file in Path(tmp).glob(target.name + "*"):
            os.replace(file, target.parent / file.name)
    return target


def _torch_model(
    source: str | os.PathLike[str] | Runtime,
) -> tuple[DecisionModel, Path, CheckpointConfig]:
    """A CPU float32 DecisionModel for ``source``, its checkpoint directory and config.

    An Agent running another precision (a fast Agent keeps bf16 matmul weights) is exported
    from its checkpoint file instead, so the graph has the checkpoint's own fp32 weights.
    """
    import torch

    from ..engine.backends.torch import DecisionModel, TorchBackend

    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        repo, subfolder = resolve_source(name)
        directory = locate(repo, subfolder, name=name)
        cfg = read_config(directory, name)
        model = TorchBackend(directory, cfg, name, device="cpu").model
    else:
        loaded = getattr(source.backend_object, "model", None)
        if not isinstance(loaded, DecisionModel):
            raise InvalidRequest(
                "checkpoint_or_agent: this agent runs no PyTorch model to export; pass its "
                f"checkpoint instead ({str(source.directory)!r})"
            )
        directory, cfg = source.directory, source.checkpoint_config
        model = loaded
        if source.precision != "fp32":  # its weights may be kept rounded
            model = TorchBackend(directory, cfg, source.model_id, device="cpu").model
    if any(p.device.type != "cpu" or p.dtype != torch.float32 for p in model.parameters()):
        model = copy.deepcopy(model).to("cpu", torch.float32)
    return model.eval(), directory, cfg


def _sample(
    model: DecisionModel,
    rows: int,
    length: int,
    markers: int,
    seed: int,
    layout: str = "sequential",
) -> dict[str, np.ndarray]:
    """A padded batch as the runtime builds it: the last row half padding, one marker masked;
    in the parallel ``layout`` also the rows' position and option ids (slots at the markers)."""
    rng = np.random.default_rng(seed)
    vocab = int(model.encoder.config.vocab_size)
    attention = np.ones((rows, length), dtype=np.int64)
    attention[-1, length // 2 :] = 0
    marker_mask = np.ones((rows, markers), dtype=bool)
    marker_mask[-1, -1] = False
    sample = {
        "input_ids": rng.integers(min(5, vocab - 1), vocab, (rows, length), dtype=np.int64),
        "attention_mask": attention,
        "marker_pos": rng.integers(1, length // 2, (rows, markers), dtype=np.int64),
        "marker_mask": marker_mask,
        "qtype": np.arange(rows, dtype=np.int64) % 3,
    }
    if layout == "parallel":
        sample["position_ids"], sample["option_ids"] = _sample_layout(sample)
    return sample


def _sample_layout(sample: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Position and option ids of a sample's rows, their heads ending after half their width."""
    real = sample["attention_mask"] == 1
    grids = np.zeros((2, *real.shape), dtype=np.int64)
    width = real.shape[1]
    for r, markers in enumerate(sample["marker_pos"]):
        n = int(real[r].sum())
        row = parallel_layout(sorted(set(markers.tolist())), width // 2 + 1, n)
        grids[:, r, :n] = [values[:n] for values in row]
    return grids[0], grids[1]


def _check_target(target: Path) -> None:
    """The graph's path must name a file whose nearest existing folder is a folder."""
    if target.is_dir():
        raise InvalidRequest(
            f"out {str(target)!r} is a directory; name the file to write, e.g. "
            f"{str(target / DEFAULT_FILE)!r}"
        )
    nearest = next(parent for parent in target.parents if parent.exists())
    if not nearest.is_dir():
        raise InvalidRequest(f"out {str(target)!r}: {str(nearest)!r} is a file, not a folder")


def _trace(model: DecisionModel, path: Path, opset: int, layout: str) -> None:
    """Trace ``model`` (its head as explicit tensor ops, the last layer at the read positions
    only) to ``path`` with dynamic R, L and K, taking the inputs of the option ``layout``'s
    graph, then let ONNX Script's optimizer fold what it can (constants, identities, dead
    nodes): ``mini``'s graph has 580 nodes of its own instead of 1,049 (docs/performance.md,
    "The exported graph")."""
    import onnx
    import onnxscript.optimizer
    import torch
    from torch.jit._trace import TracerWarning  # torch.jit's, not in its __all__

    dims = {"input_ids": "L", "attention_mask": "L", "marker_pos": "K", "marker_mask": "K"}
    if layout == "parallel":
        dims.update(position_ids="L", option_ids="L")
    axes: dict[str, dict[int, str]] = {name: {0: "R", 1: dim} for name, dim in dims.items()}
    axes.update(qtype={0: "R"}, logits={0: "R", 1: "K"}, act_logits={0: "R"}, embedding={0: "R"})
    sample = _sample(model, 2, 16, 2, seed=0, layout=layout)
    args = tuple(torch.from_numpy(sample[name]) for name in GRAPH_INPUTS[layout])
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore", TracerWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        # Raised for every gather by index tensor; marker positions are never negative.
        warnings.filterwarnings("ignore", "Exporting aten::index operator", UserWarning)
        # the tracer's note on strided slices it leaves unfolded; ONNX Script folds them below
        warnings.filterwarnings("ignore", "Constant folding", UserWarning)
        torch.onnx.export(
            _exportable(model),
            args,
            str(path),
            dynamo=False,
            opset_version=opset,
            input_names=list(GRAPH_INPUTS[layout]),
            output_names=list(GRAPH_OUTPUTS),
            dynamic_axes=axes,
            do_constant_folding=True,
        )
    large = sum(f.stat().st_size for f in path.parent.iterdir()) > EXTERNAL_DATA_BYTES
    folded = onnxscript.optimizer.optimize(onnx.load(str(path)))
    for stale in path.parent.iterdir():  # the trace, and its weight files for a large model
        stale.unlink()
    # protobuf holds 2 GB at most: a large model's weights go to a file beside the graph
    onnx.save_model(folded, str(path), save_as_external_data=large, location=path.name + ".data")


def _exportable(model: DecisionModel, dynamic: bool = True) -> nn.Module:
    """``model``'s forward with a third output, the rows' mean-pooled encoder states, sharing
    its weights; ``dynamic``: the head layers as explicit tensor ops, the last one computing
    its queries, attention output and MLP at the positions read afterwards only (``[CLS]`` and
    the markers, as the PyTorch backend's packed passes do); else the model's own head (the
    reference the graph is checked against).

    ``nn.TransformerEncoderLayer`` may take PyTorch's fused fast path, and its attention reshapes
    with the traced sequence length baked in; the explicit layers run the same pre-norm maths.
    """
    from torch import nn

    from ..engine.backends.torch import mean_pool

    head = model.head if dynamic else None
    layers = (
        None
        if head is None
        else nn.ModuleList(
            _dynamic_layer(cast(nn.TransformerEncoderLayer, layer)) for layer in head.layers
        )
    )

    class Exported(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model
            self.layers = layers

        def forward(self, *inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            """The graph's outputs of its inputs, in ``GRAPH_INPUTS`` order: the model's own
            (``DecisionModel.forward``'s five, then the parallel layout's two)."""
            input_ids, attention_mask, marker_pos, marker_mask, qtype, *layout = inputs
            h = self.model.encode(input_ids, attention_mask, *layout)
            decided = self.model.decide(
                h, attention_mask, marker_pos, marker_mask, qtype, layers=self.layers
            )
            return (*decided, mean_pool(h, attention_mask))

    return Exported().eval()


def _dynamic_layer(layer: nn.TransformerEncoderLayer) -> nn.Module:
    """``layer`` (a pre-norm ``TransformerEncoderLayer`` in eval mode) as explicit tensor ops;
    given ``read`` positions ``[R, P]``, it returns the layer's output there only ``[R, P, d]``."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    class DynamicLayer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = layer

        def forward(
            self,
            x: torch.Tensor,
            src_key_padding_mask: torch.Tensor,
            read: torch.Tensor | None = None,
        ) -> torch.Tensor:
            y: torch.Tensor = layer.norm1(x)
            if read is None:
                x = x + self._attend(y, y, src_key_padding_mask)
            else:
                x = _gather(x, read) + self._attend(_gather(y, read), y, src_key_padding_mask)
            out: torch.Tensor = x + layer.linear2(layer.activation(layer.linear1(layer.norm2(x))))
            return out

        def _attend(
            self, queries: torch.Tensor, keys: torch.Tensor, padding: torch.Tensor
        ) -> torch.Tensor:
            attn = layer.self_attn
            d, w, b = attn.embed_dim, attn.in_proj_weight, attn.in_proj_bias
            if queries is keys:
                q, k, v = F.linear(keys, w, b).chunk(3, dim=-1)
            else:
                q = F.linear(queries, w[:d], None if b is None else b[:d])
                k, v = F.linear(keys, w[d:], None if b is None else b[d:]).chunk(2, dim=-1)
            q, k, v = (
                t.unflatten(-1, (attn.num_heads, attn.head_dim)).transpose(1, 2) for t in (q, k, v)
            )
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=~padding[:, None, None, :])
            projected: torch.Tensor = attn.out_proj(out.transpose(1, 2).flatten(2))
            return projected

    def _gather(x: torch.Tensor, read: torch.Tensor) -> torch.Tensor:
        return torch.gather(x, 1, read[..., None].expand(-1, -1, x.shape[-1]))

    if not layer.norm_first:
        raise NotImplementedError("only pre-norm head layers (norm_first=True) can be exported")
    return DynamicLayer()


def _run(path: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=[CPU])
    outputs: list[np.ndarray] = session.run(list(GRAPH_OUTPUTS), feeds)
    return outputs


def _verify(model: DecisionModel, path: Path, feeds: dict[str, np.ndarray]) -> None:
    """Compare the graph with PyTorch on a batch shaped unlike the traced one; raise on mismatch.

    Each output must agree within 1e-4 times its largest real magnitude (at least 1). A model
    whose own float32 rounding exceeds that (badly conditioned, e.g. random weights) passes if
    the graph's distance to a float64 run is within ROUNDING_FACTOR times PyTorch float32's,
    plus that tolerance: rounding differs by a few times between kernels, while an export bug
    (a baked shape, a lost mask) is off by the size of the logits themselves.
    """
    want, got = _torch_outputs(model, feeds), _run(path, feeds)
    for name, w, g in zip(GRAPH_OUTPUTS, want, got):
        if w.shape != g.shape:
            raise RuntimeError(f"ONNX export gives {name} of shape {g.shape}, PyTorch {w.shape}")
    errors = _errors(want, got, feeds["marker_mask"])
    if all(error <= TOLERANCE * scale for error, scale in errors):
        return
    exact = _torch_outputs(copy.deepcopy(model).double(), feeds)
    floors = _errors(exact, want, feeds["marker_mask"])
    graph = _errors(exact, got, feeds["marker_mask"])
    for name, (error, scale), (floor, _) in zip(GRAPH_OUTPUTS, graph, floors):
        allowed = ROUNDING_FACTOR * floor + TOLERANCE * scale
        if not error <= allowed:
            raise RuntimeError(
                f"ONNX export does not reproduce PyTorch: {name} is off by up to {error:.3g} "
                f"from a float64 run, where PyTorch float32 is off by {floor:.3g} (tolerance "
                f"{allowed:.3g}); nothing was written. Try another opset (--opset) or report "
                f"the encoder type."
            )


def _torch_outputs(model: DecisionModel, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import torch

    with torch.no_grad():
        outputs = _exportable(model, dynamic=False)(*(torch.from_numpy(a) for a in feeds.values()))
        return [t.numpy() for t in outputs]


def _errors(
    reference: list[np.ndarray], other: list[np.ndarray], marker_mask: np.ndarray
) -> list[tuple[float, float]]:
    """(max abs difference, max(1, max abs reference)) per output, over real markers only."""
    out = []
    kept: tuple[np.ndarray | slice, ...] = (marker_mask, slice(None), slice(None))
    for want, have, keep in zip(reference, other, kept):
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


def _link(
    traced: Path, staged: Path, target: Path, weights: Path, feeds: dict[str, np.ndarray]
) -> None:
    """Write the graph reading ``weights`` to ``staged``, then to ``target`` if it answers as
    ``traced`` does (``staged`` is in ``target``'s folder, where its external data is found)."""
    try:
        link_weights(traced, staged, weights)
        want, got = _run(traced, feeds), _run(staged, feeds)
        for output, w, g in zip(GRAPH_OUTPUTS, want, got):
            if not np.allclose(w, g, rtol=0, atol=TOLERANCE * max(1.0, float(np.abs(w).max()))):
                raise RuntimeError(
                    f"ONNX export: the graph reading {weights} gives another {output} than the "
                    f"graph holding its weights; nothing was written. Use --weights graph."
                )
        os.replace(staged, target)
    finally:
        staged.unlink(missing_ok=True)


def export_main(argv: Sequence[str] | None = None) -> int:
    """``laya export-onnx CHECKPOINT [--out PATH] [--quantize int8] [--weights W] [--opset N]``."""
    return run_command("laya export-onnx", argv, _arg_parser().parse_args, _export_command)


def _arg_parser() -> CommandParser:
    parser = command_parser(
        "laya export-onnx",
        "Export a Laya checkpoint to ONNX for laya.ONNXAgent, checked against PyTorch.",
    )
    parser.add_argument(
        "checkpoint", help="a name as laya.load takes it (mini, english...), a directory or Hub id"
    )
    parser.add_argument(
        "--out",
        "--output",
        "-o",
        dest="output",
        help="where to write the graph (default: laya.onnx in the checkpoint directory)",
    )
    parser.add_argument(
        "--quantize",
        choices=["int8"],
        help="int8 matmuls as precision='int8' runs them: per-channel int8 weights, activations "
        "quantized at run time",
    )
    parser.add_argument(
        "--weights",
        choices=WEIGHTS,
        default="graph",
        help="graph: the weights go into the graph file; checkpoint: the graph reads the "
        "checkpoint's own model.safetensors, no copy (the graph must be in its folder or above)",
    )
    parser.add_argument("--opset", type=int, default=18, help="ONNX opset")
    return parser


def _export_command(args: argparse.Namespace) -> None:
    check_path(args.checkpoint, "checkpoint")
    path = export(
        args.checkpoint, args.output, opset=args.opset, quantize=args.quantize, weights=args.weights
    )
    print(path)
