"""What a training run keeps on disk: its output directory checked before anything is written, each finished epoch's state (so a run resumes), the best epoch's
weights, and the finished checkpoint in the published format (``laya.load`` reads it; the
published ``load_checkpoint`` / ``save_checkpoint`` read and write one from Python)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import torch

from ..checkpoint import Tokenizer, encoder_positions, load_tokenizer, read_config
from ..engine.backends.torch import DecisionModel, build_model, load_weights
from ..errors import InvalidRequest
from ..files.atomic import replacing

__all__ = [
    "best_path",
    "load_checkpoint",
    "save_checkpoint",
    "check_out",
    "check_positions",
    "load_state",
    "removed_on_failure",
    "save_atomically",
    "save_state",
    "sha256",
    "state_dir",
    "write_checkpoint",
]


def check_out(out: Path, base: Path) -> None:
    """Refuse an ``out`` that is a file, the base itself, or a directory holding something other
    than a checkpoint or an earlier run of ``laya train`` (it would be merged into)."""
    if out.exists() and not out.is_dir():
        raise InvalidRequest(f"out {str(out)!r} is a file; name a directory for the checkpoint")
    if out.is_dir() and out.resolve() == base.resolve():
        raise InvalidRequest(
            f"out {str(out)!r} is the base checkpoint itself; write the fine-tuned one elsewhere"
        )
    ours = {"encoder", "tokenizer", ".train", "model.safetensors", "rl_agent_config.json"}
    ours |= {"questions.json", "train_report.json", "calibration.json"}  # laya.train.finetune's
    foreign = sorted(p.name for p in out.iterdir() if p.name not in ours) if out.is_dir() else []
    if foreign:
        raise InvalidRequest(
            f"out {str(out)!r} holds other files ({', '.join(foreign[:3])}); name a new or empty "
            "directory, or an earlier laya train output to resume or overwrite"
        )


def check_positions(out: Path, max_len: int) -> None:
    """A training row of ``max_len`` tokens must fit the encoder's position embeddings."""
    positions = encoder_positions(out)
    if positions is not None and max_len > positions:
        raise InvalidRequest(
            f"max_len {max_len} is more than the encoder's {positions} token positions; "
            f"train with --max-len {positions} or less"
        )


@contextlib.contextmanager
def removed_on_failure(out: Path) -> Iterator[None]:
    """Leave ``out`` as it was found (absent or empty) if the block fails: a refused run writes
    nothing. A directory that already held a checkpoint or a run is left alone."""
    existed = out.exists()
    empty = existed and not any(out.iterdir())
    try:
        yield
    except BaseException:
        if not existed:
            shutil.rmtree(out, ignore_errors=True)
        elif empty:
            for item in out.iterdir():
                shutil.rmtree(item) if item.is_dir() else item.unlink()
        raise


def state_dir(out: Path, epoch: int) -> Path:
    """Where the state after ``epoch`` is kept."""
    return out / ".train" / f"checkpoint-epoch-{epoch}"


def save_state(
    out: Path,
    epoch: int,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    extra: Mapping[str, object],
) -> None:
    """Save everything needed to continue after ``epoch``; drop the older epoch states."""
    target = state_dir(out, epoch)
    target.mkdir(parents=True, exist_ok=True)
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "rng": torch.get_rng_state(),
        **extra,
    }
    save_atomically(state, target / "state.pt")
    for old in (out / ".train").glob("checkpoint-epoch-*"):
        if old != target:
            shutil.rmtree(old, ignore_errors=True)


def best_path(out: Path) -> Path:
    """Where the weights of the best epoch so far wait (early stopping on dev accuracy)."""
    return out / ".train" / "best.pt"


def save_atomically(obj: object, path: Path) -> None:
    """``torch.save`` through a temporary file (laya.files.atomic), so an interrupted run never
    leaves half a file, nor writes through a link planted at a predictable name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with replacing(path) as (fd, _), os.fdopen(fd, "wb", closefd=False) as out:
        torch.save(obj, out)


def load_state(out: Path, fingerprint: Mapping[str, object]) -> dict[str, Any] | None:
    """The last finished epoch's state of a run with the same settings, else None."""
    found = sorted(
        (int(p.name.rsplit("-", 1)[1]), p) for p in (out / ".train").glob("checkpoint-epoch-*")
    )
    if not found or not (found[-1][1] / "state.pt").is_file():
        return None
    state: dict[str, Any] = torch.load(
        found[-1][1] / "state.pt", map_location="cpu", weights_only=False
    )
    if state.get("fingerprint") != fingerprint:
        warnings.warn(
            f"laya train: {found[-1][1]} was saved with other data or settings; starting over",
            RuntimeWarning,
            stacklevel=3,
        )
        return None
    return state


def sha256(path: Path) -> str:
    """The file's SHA-256, as the checkpoint's training record names its data."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_checkpoint(model: torch.nn.Module, out: Path, config: dict[str, Any]) -> None:
    """fp16 ``model.safetensors`` with the published names, and ``rl_agent_config.json``."""
    from safetensors.torch import save_file

    model.get_buffer("temperature").copy_(torch.tensor(config["temperature"], dtype=torch.float32))
    tensors = {
        k: (v.half() if v.is_floating_point() else v).cpu().contiguous().clone()
        for k, v in model.state_dict().items()
    }
    save_file(tensors, str(out / "model.safetensors"))
    text = json.dumps(config, indent=2, ensure_ascii=False, allow_nan=False)
    (out / "rl_agent_config.json").write_text(text + "\n", encoding="utf-8")


def load_checkpoint(model_dir: str) -> tuple[DecisionModel, Tokenizer, dict[str, Any]]:
    """``(model, tokenizer, config)`` of a Laya checkpoint directory, the model in fp32 on the
    CPU with its weights loaded strictly."""
    directory = Path(model_dir)
    cfg = read_config(directory, str(directory))
    model = build_model(directory, cfg)
    load_weights(model, directory / "model.safetensors", str(directory))
    return model.float(), load_tokenizer(directory, cfg.raw.get("encoder")), dict(cfg.raw)


def save_checkpoint(model: DecisionModel, tok: Tokenizer, cfg: dict[str, Any], path: str) -> None:
    """Write a checkpoint ``laya.load`` reads: fp16 ``model.safetensors``, ``encoder/`` config,
    ``tokenizer/`` and ``rl_agent_config.json`` (``cfg``; temperatures default to 1.0)."""
    out = Path(path)
    (out / "tokenizer").mkdir(parents=True, exist_ok=True)
    tok.backend.save(str(out / "tokenizer" / "tokenizer.json"))
    specials = {
        f"{name}_token": tok.backend.id_to_token(token_id)
        for name, token_id in (
            ("cls", tok.cls_id),
            ("sep", tok.sep_id),
            ("mask", tok.mask_id),
            ("pad", tok.pad_id),
        )
    }
    config_text = {"tokenizer_class": "PreTrainedTokenizerFast", **specials}
    (out / "tokenizer" / "tokenizer_config.json").write_text(
        json.dumps(config_text, indent=2) + "\n", encoding="utf-8"
    )
    model.encoder.config.save_pretrained(str(out / "encoder"))
    write_checkpoint(model, out, {"temperature": [1.0, 1.0, 1.0], **cfg})
