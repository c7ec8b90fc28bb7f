"""What a training run keeps on disk: each finished epoch's state (so a run resumes), the best
epoch's weights, and the finished checkpoint in the published format (``laya.load`` reads it)."""

from __future__ import annotations

import hashlib
import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import torch

__all__ = [
    "best_path",
    "load_state",
    "save_atomically",
    "save_state",
    "sha256",
    "state_dir",
    "write_checkpoint",
]


def state_dir(out: Path, epoch: int) -> Path:
    """Where the state after ``epoch`` is kept."""
    return out / ".train" / f"checkpoint-epoch-{epoch}"


def save_state(out: Path, epoch: int, model, optimizer, scheduler, extra: dict) -> None:
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


def save_atomically(obj: Any, path: Path) -> None:
    """``torch.save`` through a temporary file, so an interrupted run never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(obj, path.with_name(path.name + ".tmp"))
    path.with_name(path.name + ".tmp").replace(path)


def load_state(out: Path, fingerprint: dict) -> dict | None:
    """The last finished epoch's state of a run with the same settings, else None."""
    found = sorted(
        (int(p.name.rsplit("-", 1)[1]), p) for p in (out / ".train").glob("checkpoint-epoch-*")
    )
    if not found or not (found[-1][1] / "state.pt").is_file():
        return None
    state = torch.load(found[-1][1] / "state.pt", map_location="cpu", weights_only=False)
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


def write_checkpoint(model: torch.nn.Module, out: Path, config: dict) -> None:
    """fp16 ``model.safetensors`` with the published names, and ``rl_agent_config.json``."""
    from safetensors.torch import save_file

    model.temperature.copy_(torch.tensor(config["temperature"], dtype=torch.float32))
    tensors = {
        k: (v.half() if v.is_floating_point() else v).cpu().contiguous().clone()
        for k, v in model.state_dict().items()
    }
    save_file(tensors, str(out / "model.safetensors"))
    text = json.dumps(config, indent=2, ensure_ascii=False, allow_nan=False)
    (out / "rl_agent_config.json").write_text(text + "\n", encoding="utf-8")
