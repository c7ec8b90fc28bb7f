"""The published fine-tuning loop over in-memory items (``laya.train.train_model``), and the
device and base helpers around it (docs/training.md, "The published loop").

``train_model`` trains a :class:`~laya.engine.backends.torch.DecisionModel` on items
(``laya.training.items``) with the published objective (``rlcd`` or ``soft-ce``,
``laya.training.losses``), on laya's optimiser and epoch runner (``laya.training.train``):
AdamW with the encoder and the head at their own rates, a linear warm-up and decay, a step per
``micro_batch * grad_accum`` questions, gradients clipped at ``grad_clip``.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence

import torch

from ..checkpoint import Tokenizer
from ..engine.backends.torch import DecisionModel
from ..engine.backends.torch import resolve_device as find_device
from ..errors import InvalidRequest
from .finetune import FROZEN_ENCODER, TrainConfig, optimizer_updates
from .items import EncodedItem, TrainingItem, collate, draw_option_order, encode_item
from .losses import rlcd_loss, sigma_at, soft_ce_loss
from .train import base_directory, freeze_encoder_layers, optimizer_for, run_epoch

__all__ = ["resolve_checkpoint_dir", "resolve_device", "train_model"]


class _Quiet:
    """The progress bar ``run_epoch`` updates, silent."""

    def update(self, n: int) -> None:
        """Nothing to show."""

    def set_postfix(self, **values: str) -> None:
        """Nothing to show."""


def _batch_loss(
    model: DecisionModel,
    encoded: list[EncodedItem],
    config: TrainConfig,
    sigma: float,
    pad_id: int,
    batch: list[int],
) -> torch.Tensor:
    """The published objective on one batch of encoded items (indices into ``encoded``)."""
    device = model.get_buffer("temperature").device
    inputs, target = collate([encoded[i] for i in batch], pad_id, device)
    logits, _ = model(*inputs)
    mask, qtype = inputs[3], inputs[4]
    if config.loss == "soft-ce":
        return soft_ce_loss(logits, target, mask)
    return rlcd_loss(logits, target, mask, qtype, sigma, config.rl_samples)


def train_model(
    model: DecisionModel,
    tok: Tokenizer,
    items: Sequence[TrainingItem],
    config: TrainConfig,
    device: torch.device,
    max_len: int,
    head_max_len: int,
    on_epoch_end: Callable[[int, float], None] | None = None,
    parallel: bool = False,
) -> list[float]:
    """Train ``model`` in place on ``items`` for ``config.epochs`` epochs; returns each epoch's
    mean loss (``on_epoch_end(epoch, loss)`` hears each as it ends). Options of the types in
    ``config.shuffle_options`` are listed in a fresh random order every epoch; RLCD's noise
    anneals from ``sigma_start`` to ``sigma_end``; ``freeze_encoder`` trains the head alone."""
    config.validate()
    if not items:
        raise InvalidRequest(
            "items: nothing to train on; items_from_rows says why rows were skipped"
        )
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    model.to(device)
    if config.freeze_encoder:
        freeze_encoder_layers(model, FROZEN_ENCODER)
    per_step = config.micro_batch * config.grad_accum
    steps = optimizer_updates(len(items), config.micro_batch, config.grad_accum, config.epochs)
    optimizer, scheduler = optimizer_for(
        model, config.encoder_lr, config.head_lr, steps, config.weight_decay, config.min_lr
    )
    losses: list[float] = []
    for epoch in range(config.epochs):
        encoded = [
            encode_item(
                tok,
                item,
                max_len,
                head_max_len,
                draw_option_order(item, rng, config.shuffle_options),
                parallel,
            )
            for item in items
        ]
        order = list(range(len(encoded)))
        rng.shuffle(order)
        batches = [order[i : i + per_step] for i in range(0, len(order), per_step)]
        sigma = sigma_at(epoch, config.epochs, config.sigma_start, config.sigma_end)
        loss_of = functools.partial(_batch_loss, model, encoded, config, sigma, tok.pad_id)
        losses.append(
            run_epoch(model, optimizer, scheduler, batches, loss_of, _Quiet(), config.grad_clip)
        )
        if on_epoch_end is not None:
            on_epoch_end(epoch, losses[-1])
    model.eval()
    return losses


def resolve_checkpoint_dir(model_id_or_path: str, token: str | None = None) -> str:
    """The local directory of a base to train from: a directory as given, or a checkpoint name
    or Hub id fetched into the Hugging Face cache (``token``: the Hub token; else ``HF_TOKEN``)."""
    return str(base_directory(model_id_or_path, token))


def resolve_device(device: str | None = "auto") -> torch.device:
    """The torch device to train on: ``auto`` picks CUDA, then MPS, then the CPU; a device this
    machine lacks is refused (training does not fall back silently)."""
    return find_device(device, strict=True)
