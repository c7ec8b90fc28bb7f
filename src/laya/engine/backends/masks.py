"""Which keys each query of the encoder may attend to, and how the encoder is told.

One rule for every path (padded, packed, the exported graph): a query attends to its row's real
tokens, not to the option tokens of another slot (the parallel option layout), and on a sliding
window layer only to keys whose positions are within the window (docs/agent.md#option-layouts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from transformers import PretrainedConfig

__all__ = ["allowed_keys", "encoder_inputs"]


def allowed_keys(
    real: torch.Tensor,
    positions: torch.Tensor | None = None,
    option_ids: torch.Tensor | None = None,
    reach: int | None = None,
) -> torch.Tensor:
    """Boolean ``[B, 1, L, L]`` (``[B, 1, 1, L]`` when it is padding alone): True where a query
    may attend a key.

    ``real`` ``[B, L]`` marks the real tokens; ``option_ids`` ``[B, L]`` (0: no option) keeps
    different slots apart; ``reach`` keeps ``|position_q - position_k| <= reach``, positions
    being ``positions`` ``[B, L]`` or, when None, the token indices.
    """
    mask = real.bool()[:, None, None, :]
    if option_ids is not None:
        query, key = option_ids[:, :, None], option_ids[:, None, :]
        mask = mask & ~((query > 0) & (key > 0) & (query != key))[:, None]
    if reach is not None:
        if positions is None:
            positions = torch.arange(real.shape[-1], device=real.device)[None]
        near = (positions[:, :, None] - positions[:, None, :]).abs() <= reach
        mask = mask & near[:, None]
    return mask


def encoder_inputs(
    config: PretrainedConfig,
    attention_mask: torch.Tensor,
    position_ids: torch.Tensor | None,
    option_ids: torch.Tensor | None,
) -> dict[str, object]:
    """The mask keyword arguments of a transformers encoder's forward.

    Sequential rows: the padding mask, as the encoder always had it. Parallel rows: their
    ``position_ids`` and prepared 4-D masks, one per attention type for an encoder whose layers
    have types (ModernBERT: ``full_attention``, ``sliding_attention`` within ``sliding_window``),
    else the one full mask (BERT).
    """
    if option_ids is None:
        return {"attention_mask": attention_mask}
    full = allowed_keys(attention_mask, position_ids, option_ids)
    if not getattr(config, "layer_types", None):
        return {"attention_mask": full, "position_ids": position_ids}
    masks = {"full_attention": full}
    window = getattr(config, "sliding_window", None)
    if window is not None:
        masks["sliding_attention"] = allowed_keys(
            attention_mask, position_ids, option_ids, int(window)
        )
    return {"attention_mask": masks, "position_ids": position_ids}
