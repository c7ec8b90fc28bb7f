"""The decision model's forward pass in PyTorch (docs/architecture.md).

``DecisionModel`` is the published architecture: a transformers encoder, ``type_emb`` added to
every token, pre-norm transformer head layers (ReLU), a GELU scorer on the ``[MASK]`` markers
(−1e4 on padded markers) and an act head on ``[CLS]`` plus four distribution features.
``TorchBackend`` loads a checkpoint into it with strict checks and runs padded passes.
``mean_pool`` is the text embedding a backend gives: the encoder's states averaged over real tokens.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ...checkpoint import (
    ENCODER_FILES,
    CheckpointConfig,
    encoder_files,
    read_json_object,
    verify_sha256,
)
from ...checkpoint.fidelity import keeps_decisions
from ...errors import CheckpointError, InvalidRequest, MissingCheckpointFile, one_line
from ..encoding import Pass
from ..precision import choose_precision, cpu_flags, native_bf16, native_int8
from . import int8, kernels, packed
from .masks import encoder_inputs

if TYPE_CHECKING:
    from transformers import PretrainedConfig, PreTrainedModel
    from typing_extensions import Unpack

__all__ = [
    "COMPILE_MODES",
    "DecisionModel",
    "TorchBackend",
    "build_model",
    "mean_pool",
    "resolve_device",
]

REQUIRED_PREFIXES = ("encoder.", "type_emb.", "scorer.", "act_head.")


class _Head(nn.Module):
    def __init__(self, d: int, n_layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(
                d_model=d,
                nhead=max(1, d // 64),
                dim_feedforward=4 * d,
                dropout=0.1,
                batch_first=True,
                norm_first=True,
            )
            for _ in range(n_layers)
        )

    @property
    def transformer_layers(self) -> list[nn.TransformerEncoderLayer]:
        """``layers`` as what they are (a ModuleList yields plain Modules)."""
        return cast("list[nn.TransformerEncoderLayer]", list(self.layers))  # built above, only


def act_features(logits: torch.Tensor, marker_mask: torch.Tensor) -> torch.Tensor:
    """``[top1, top1 - top2, normalised entropy, k / 255]`` of the option distribution."""
    p = logits.float().softmax(-1)
    kk = marker_mask.sum(-1).clamp(min=2).float()
    entropy = -(p * p.clamp(min=1e-9).log()).sum(-1) / kk.log()
    if p.shape[-1] >= 2:
        top = p.topk(2, dim=-1).values
        top1, top2 = top[:, 0], top[:, 1]
    else:
        top1, top2 = p[:, 0], torch.zeros_like(p[:, 0])
    return torch.stack([top1, top1 - top2, entropy, kk / 255.0], dim=-1)


class DecisionModel(nn.Module):
    """Encoder + decision head; ``forward`` returns ``(logits [B,K], act_logits [B,n_act])``."""

    def __init__(
        self, encoder: PreTrainedModel, hidden_size: int, head_layers: int, n_act: int
    ) -> None:
        super().__init__()
        d = hidden_size
        self.encoder = encoder
        self.head = _Head(d, head_layers) if head_layers > 0 else None
        self.type_emb = nn.Embedding(3, d)
        self.scorer = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d), nn.GELU(), nn.Linear(d, 1))
        self.act_head = nn.Sequential(nn.Linear(d + 4, 256), nn.GELU(), nn.Linear(256, n_act))
        self.register_buffer("temperature", torch.ones(3))

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        marker_pos: torch.Tensor,
        marker_mask: torch.Tensor,
        qtype: torch.Tensor,
        position_ids: torch.Tensor | None = None,
        option_ids: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The padded forward; rows in the parallel option layout also give their
        ``position_ids`` and ``option_ids`` ``[B, L]`` (docs/agent.md#option-layouts)."""
        h = self.encode(input_ids, attention_mask, position_ids, option_ids)
        return self.decide(h, attention_mask, marker_pos, marker_mask, qtype)

    def encode(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        position_ids: torch.Tensor | None = None,
        option_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The encoder's states ``[B, L, d]`` of right-padded rows (in the parallel option
        layout, under their own positions and option slots)."""
        masks = encoder_inputs(self.encoder.config, attention_mask, position_ids, option_ids)
        hidden: torch.Tensor = self.encoder(input_ids=input_ids, **masks).last_hidden_state
        return hidden

    def decide(
        self,
        h: torch.Tensor,
        attention_mask: torch.Tensor,
        marker_pos: torch.Tensor,
        marker_mask: torch.Tensor,
        qtype: torch.Tensor,
        layers: Iterable[nn.Module] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The decision head on encoder states ``h`` (training also reads ``h`` itself).

        ``layers`` stand in for the head's own layers (the ONNX export traces explicit ones,
        ``laya.onnx.graph``): called as ``layer(x, padding)``, the last one with the positions
        read afterwards (``[CLS]`` and the markers), at which alone it computes its output."""
        h = h + self.type_emb(qtype)[:, None, :]
        padding = attention_mask == 0
        if layers is not None:
            *early, last = layers
            for layer in early:
                h = layer(h, padding)
            read = F.pad(marker_pos.clamp(min=0), (1, 0))  # [R, 1 + K]: [CLS] and the markers
            h = last(h, padding, read)
            return self.readout(h[:, 0], h[:, 1:], marker_mask)
        for layer in [] if self.head is None else self.head.layers:
            h = layer(h, src_key_padding_mask=padding)
        index = marker_pos.clamp(min=0)[..., None].expand(-1, -1, h.shape[-1])
        return self.readout(h[:, 0], h.gather(1, index), marker_mask)

    def readout(
        self, cls: torch.Tensor, markers: torch.Tensor, marker_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Option logits from the marker states ``[B, K, d]``, act logits from ``[CLS]``."""
        logits = self.scorer(markers).squeeze(-1).float()
        logits = logits.masked_fill(~marker_mask.bool(), -1e4)
        features = act_features(logits.detach(), marker_mask)
        act_in = torch.cat([cls.float(), features], dim=-1)
        act_logits = self.act_head(act_in.to(next(self.act_head.parameters()).dtype))
        return logits, act_logits


def mean_pool(h: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """``[R, H]`` float32: each row's encoder states ``h`` averaged over its real tokens."""
    weights = attention_mask[..., None].float()
    return (h.float() * weights).sum(1) / weights.sum(1).clamp(min=1.0)


# --------------------------------------------------------------------------- building


def _config_dtype(ecfg: PretrainedConfig) -> torch.dtype:
    name = "dtype" if hasattr(ecfg, "dtype") else "torch_dtype"
    value = getattr(ecfg, name, None)
    if isinstance(value, str):
        value = getattr(torch, value, None)
    return value if isinstance(value, torch.dtype) else torch.float32


def _encoder_config(directory: Path, cfg: CheckpointConfig) -> PretrainedConfig:
    """The encoder's transformers config: ``encoder/``, else the encoder's own from the Hub."""
    from transformers import AutoConfig

    source = directory / "encoder"
    if not (source / "config.json").is_file():
        source = encoder_files(directory, "encoder", cfg.raw.get("encoder"), ENCODER_FILES)
    read_json_object(source / "config.json")
    try:
        ecfg: PretrainedConfig = AutoConfig.from_pretrained(str(source))
    except (OSError, ValueError, KeyError) as exc:
        raise CheckpointError(
            f"{source / 'config.json'} is not an encoder config transformers can read: "
            f"{one_line(exc)}"
        ) from None
    _copy_rope_thetas(ecfg)
    return ecfg


def _copy_rope_thetas(ecfg: PretrainedConfig) -> None:
    """transformers 4 reads flat RoPE thetas; configs written by 5 nest them per attention type."""
    rope = getattr(ecfg, "rope_parameters", None)
    if not isinstance(rope, dict):
        return
    for attr, kind in (
        ("global_rope_theta", "full_attention"),
        ("local_rope_theta", "sliding_attention"),
    ):
        theta = (rope.get(kind) or {}).get("rope_theta", rope.get("rope_theta"))
        if hasattr(ecfg, attr) and theta is not None:
            setattr(ecfg, attr, theta)


def build_model(directory: Path, cfg: CheckpointConfig) -> DecisionModel:
    """An untrained DecisionModel shaped by the checkpoint's configs (weights not loaded)."""
    from transformers import AutoModel

    ecfg = _encoder_config(directory, cfg)
    if hasattr(ecfg, "reference_compile"):
        ecfg.reference_compile = False
    with _no_init_weights():
        encoder = AutoModel.from_config(ecfg, attn_implementation="sdpa")
    encoder.to(_config_dtype(ecfg))
    return DecisionModel(encoder, ecfg.hidden_size, cfg.head_layers, cfg.n_act)


def check_parallel_encoder(encoder: nn.Module, model_id: str) -> None:
    """Refuse to run the parallel option layout where the encoder cannot be given it: before
    transformers 5 (no prepared 4-D masks), or an encoder that takes no ``position_ids``."""
    import transformers

    fix = "run it with transformers >= 5 and an encoder that takes position_ids (BERT, ModernBERT)"
    if int(transformers.__version__.split(".")[0]) < 5:
        raise CheckpointError(
            f"{model_id!r} uses option_layout='parallel', which needs transformers >= 5 "
            f"(found {transformers.__version__}); {fix}"
        )
    if "position_ids" not in inspect.signature(encoder.forward).parameters:
        raise CheckpointError(
            f"{model_id!r} uses option_layout='parallel', but its encoder "
            f"({type(encoder).__name__}) takes no position_ids; {fix}"
        )


def _no_init_weights() -> contextlib.AbstractContextManager[None]:
    """transformers' switch that skips random initialisation: in ``transformers.initialization``
    from version 5, in ``transformers.modeling_utils`` before (the one found is imported)."""
    try:
        home = importlib.import_module("transformers.initialization")
    except ImportError:
        home = importlib.import_module("transformers.modeling_utils")
    switch: contextlib.AbstractContextManager[None] = home.no_init_weights()
    return switch


def load_weights(model: DecisionModel, path: Path, model_id: str) -> None:
    """Strictly load ``model.safetensors``, naming every missing, extra or misshapen tensor."""
    from safetensors.torch import load_file

    try:
        tensors = load_file(str(path))
    except Exception as exc:  # noqa: BLE001 - safetensors raises its own SafetensorError
        raise CheckpointError(f"{path} is not a safetensors file: {one_line(exc)}") from None
    expected = model.state_dict()
    for prefix in REQUIRED_PREFIXES:
        if not any(name.startswith(prefix) for name in tensors):
            raise CheckpointError(
                f"{path}: checkpoint {model_id!r} is missing {prefix!r} parameters"
            )
    mismatched = [
        f"- {name}: expected {tuple(expected[name].shape)}, found {tuple(t.shape)}"
        for name, t in tensors.items()
        if name in expected and tuple(t.shape) != tuple(expected[name].shape)
    ]
    if mismatched:
        more = (
            f"\n... and {len(mismatched) - 5} more mismatched layers."
            if len(mismatched) > 5
            else ""
        )
        raise CheckpointError(
            f"Model architecture mismatch for {model_id!r} ({path}); the config describes a "
            f"different model than the weights:\n" + "\n".join(mismatched[:5]) + more
        )
    missing = [name for name in expected if name not in tensors]
    if missing:
        raise CheckpointError(
            f"Model weights incomplete for {model_id!r} ({path}): missing {len(missing)} "
            f"tensors (e.g. {missing[:3]})"
        )
    unexpected = [name for name in tensors if name not in expected]
    if unexpected:
        raise CheckpointError(
            f"{path}: checkpoint {model_id!r} has {len(unexpected)} tensors this architecture does "
            f"not use (e.g. {unexpected[:3]}); check head_layers and encoder/config.json"
        )
    model.load_state_dict(tensors, strict=True)


# --------------------------------------------------------------------------- device


def resolve_device(device: torch.device | str | None = None, strict: bool = False) -> torch.device:
    """CUDA, then MPS, then CPU unless asked; an absent requested device falls back to CPU.

    A requested device this machine or this torch build lacks (``cuda`` without a GPU, ``xpu``
    on a CPU-only build) warns once and runs on the CPU; with ``strict`` (training) it raises
    :class:`InvalidRequest` instead. A string torch does not know is always an InvalidRequest.
    """
    text = "auto" if device is None else str(device).strip().lower()
    if text == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _backend_available("mps"):
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(text)
    except RuntimeError:
        raise InvalidRequest(
            f"device: {device!r} is not a torch device; use cpu, cuda, cuda:N, mps or xpu"
        ) from None
    if dev.type == "cpu":
        return dev
    if not _backend_available(dev.type):
        return _unavailable(f"{dev.type.upper()} requested but not available", strict, 5)
    count = torch.cuda.device_count() if dev.type == "cuda" else 0
    if dev.type == "cuda" and dev.index is not None and not 0 <= dev.index < count:
        return _unavailable(f"CUDA device {text} not found ({count} visible)", strict, 5)
    return dev


def _backend_available(kind: str) -> bool:
    """Whether this torch build and machine can run on device type ``kind`` (mps, xpu...)."""
    module = getattr(torch.backends, kind, None) if kind == "mps" else getattr(torch, kind, None)
    check = getattr(module, "is_available", None)
    try:
        return bool(check()) if callable(check) else False
    except Exception:  # noqa: BLE001 - a backend that cannot even answer is not available
        return False


def _unavailable(what: str, strict: bool, stacklevel: int) -> torch.device:
    """Refuse an absent device (``strict``) or warn and fall back to the CPU."""
    if strict:
        raise InvalidRequest(f"device: {what} on this machine; use 'cpu'")
    warnings.warn(f"laya: {what}; falling back to CPU.", RuntimeWarning, stacklevel=stacklevel)
    return torch.device("cpu")


AUTOCAST = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16, "int8": None}


def _precision(
    device: torch.device, amp_dtype: str, fast: bool, precision: str | None, weights: Path
) -> str:
    """What this device runs (``laya.engine.precision``); on CUDA ``LAYA_CUDA_AMP`` overrides
    amp_dtype. ``fast`` on a CPU with VNNI or AMX reads the checkpoint's fidelity record."""
    capability = 8
    if device.type == "cuda":
        amp_dtype = os.environ.get("LAYA_CUDA_AMP", "").strip().lower() or amp_dtype
        capability = torch.cuda.get_device_capability(device)[0]
    int8_ok = (
        fast
        and device.type == "cpu"
        and int8.AVAILABLE
        and native_int8(cpu_flags())
        and keeps_decisions(weights.parent, weights, "int8", int8.RECIPE)
    )
    return choose_precision(
        device.type, fast, precision, amp_dtype, capability, int8_keeps_decisions=int8_ok
    )


COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_INT8_EAGER = (
    "precision: int8 runs the eager backend (packed passes on oneDNN's int8 linears), not "
    "torch.compile; drop compile=True / backend='compile', or use another precision"
)


class TorchOptions(TypedDict, total=False):
    """How a :class:`TorchBackend` loads: its ``device`` (the best one when absent), ``fast``
    (bf16 where native) or an explicit ``precision``, ``compile`` (``torch.compile`` in
    ``compile_mode``) and the weights' ``expected_sha256``."""

    device: torch.device | str | None
    fast: bool
    compile: bool
    expected_sha256: str | None
    precision: str | None
    compile_mode: str


class TorchBackend:
    """Runs passes through a DecisionModel on one device, packed without padding when it can.

    ``mode`` is how the forward runs: ``eager`` (packed where the encoder allows it) or
    ``compile`` (``torch.compile`` on padded passes); :meth:`use_mode` switches it.
    """

    name = "torch"
    can_embed = True  # the encoder is right there: embed() runs it alone

    def __init__(
        self,
        directory: Path,
        cfg: CheckpointConfig,
        model_id: str,
        **options: Unpack[TorchOptions],
    ) -> None:
        weights = directory / "model.safetensors"
        if not weights.is_file():
            raise MissingCheckpointFile(
                f"Incompatible model: 'model.safetensors' not found in {model_id!r} ({directory})."
            )
        verify_sha256(weights, options.get("expected_sha256"))
        self.weights, self.model_id = weights, model_id
        self.device = resolve_device(options.get("device"))
        self.amp_dtype = cfg.amp_dtype
        fast, precision = options.get("fast", False), options.get("precision")
        self.precision = _precision(self.device, cfg.amp_dtype, fast, precision, weights)
        compile = options.get("compile", False)
        if self.precision == "int8" and compile:
            raise InvalidRequest(_INT8_EAGER)
        model = build_model(directory, cfg)
        self.parallel = cfg.option_layout == "parallel"
        if self.parallel:
            check_parallel_encoder(model.encoder, model_id)
        load_weights(model, weights, model_id)
        self._model: DecisionModel | None = model.to(self.device).eval()
        kernels.use_onednn(self.model)
        self.autocast = AUTOCAST[self.precision]
        self.mode, self.packed = "eager", False
        self._compiled: Any = None
        self.use_mode("compile" if compile else "eager", options.get("compile_mode", "default"))
        self._store_weights()

    def use_mode(self, mode: str, compile_mode: str = "default") -> None:
        """Run ``eager`` (packed where it can) or ``compile`` (``torch.compile`` with
        ``compile_mode``, compiled on the first pass of each shape)."""
        if mode == "eager":
            self._compiled = None
            self.packed = self.packed or packed.enable(self.model, self.parallel)
        elif mode == "compile":
            if self.precision == "int8":
                raise InvalidRequest(_INT8_EAGER)
            if compile_mode not in COMPILE_MODES:
                raise InvalidRequest(
                    f"compile_mode: {compile_mode!r} is not one of {', '.join(COMPILE_MODES)}"
                )
            if self.packed:
                packed.disable(self.model)
            self.packed = False
            self._compiled = torch.compile(
                self.model, dynamic=True, mode=None if compile_mode == "default" else compile_mode
            )
        else:
            raise InvalidRequest(f"mode: {mode!r} is not 'eager' or 'compile'")
        self.mode = mode

    def use_precision(self, precision: str) -> None:
        """Compute in ``precision`` (``fp32``, ``bf16``, ``fp16`` or ``int8``) from the next pass
        on, as a backend loaded with it would (a CPU keeps its matmul weights in that type, int8
        ones quantized; back to fp32, they are read from the checkpoint again, so fp32 answers
        are the exact ones). int8 where it cannot run fast is an :class:`InvalidRequest`."""
        if precision == self.precision:
            return
        if precision == "int8":
            choose_precision(self.device.type, precision="int8")  # refused where it is slow
            if self.mode == "compile":
                raise InvalidRequest(_INT8_EAGER)
        if self._lowered():
            if self.precision == "int8":
                int8.dequantize(self.model)
                kernels.use_onednn(self.model)
            for module in self._layers():
                kernels.store_weights_in(module, torch.float32)
            load_weights(self.model, self.weights, self.model_id)
        self.precision, self.autocast = precision, AUTOCAST[precision]
        self._store_weights()

    def _layers(self) -> list[nn.Module]:
        return [self.model.encoder] + ([self.model.head] if self.model.head is not None else [])

    def _lowered(self) -> bool:
        """Whether the weights in memory are not the checkpoint's fp32 ones (bf16 or int8)."""
        return self.precision == "int8" or (self.device.type == "cpu" and self.autocast is not None)

    def _store_weights(self) -> None:
        """On a CPU that autocasts, keep the matmul weights in the autocast type; under int8,
        quantize them by the recipe (``int8.quantize``; the kept ones in bf16 where native; the
        head layers only where passes run packed: the padded forward runs
        ``nn.TransformerEncoderLayer`` itself, which reads its fp32 weights)."""
        if self.precision == "int8":
            lowered = torch.bfloat16 if native_bf16(cpu_flags()) else None
            int8.quantize(self.model, head=self.packed, lowered=lowered)
        elif self.device.type == "cpu" and self.autocast is not None:
            for module in self._layers():
                kernels.store_weights_in(module, self.autocast)

    def fast_precision(self) -> str:
        """What ``fast=True`` runs on this device (fp32 where nothing faster is native)."""
        return _precision(self.device, self.amp_dtype, True, None, self.weights)

    def default_precision(self) -> str:
        """What this device runs without ``fast`` (fp32 on a CPU; CUDA autocasts)."""
        return _precision(self.device, self.amp_dtype, False, None, self.weights)

    def dtype_for(self, rows: int) -> torch.dtype:
        """The dtype a pass of ``rows`` rows computes in (float32 unless it autocasts)."""
        return self.autocast or torch.float32

    @property
    def model(self) -> DecisionModel:
        """The loaded model; refused once the backend is closed."""
        if self._model is None:
            raise RuntimeError("this torch backend was closed; load the checkpoint again")
        return self._model

    @property
    def batch_tokens(self) -> int:
        """Padded tokens per pass this device handles best (accelerators take far bigger passes)."""
        return 4096 if self.device.type == "cpu" else 65536

    def forward(self, batch: Pass) -> tuple[np.ndarray, np.ndarray]:
        """Logits and act logits of one pass, as float32 NumPy arrays."""
        with torch.inference_mode(), self._autocast():
            if self.packed and packed.active(self.model):
                logits, act = packed.packed_forward(self.model, batch)
            else:
                run = self.model if self._compiled is None else self._compiled
                logits, act = run(*packed.padded_inputs(batch, self.device))
        return logits.float().cpu().numpy(), act.float().cpu().numpy()

    def embed(self, batch: Pass) -> np.ndarray:
        """``[R, H]`` float32: each row's encoder output averaged over its tokens (no decision head).

        Runs the padded encoder in the backend's precision (fp32 unless the Agent runs ``fast``).
        """
        input_ids, attention_mask = (torch.from_numpy(a).to(self.device) for a in batch.padded())
        with torch.inference_mode(), self._autocast():
            h = self.model.encoder(input_ids=input_ids, attention_mask=attention_mask)
            return mean_pool(h.last_hidden_state, attention_mask).cpu().numpy()

    def _autocast(self) -> contextlib.AbstractContextManager[object]:
        if self.autocast is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=self.autocast)

    def close(self) -> None:
        """Drop the model and free device memory."""
        self._model = self._compiled = None
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
