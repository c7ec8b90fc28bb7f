"""The published ``laya.common`` module: its constants, the question texts, state serialisation,
confidence and scores, and the sequence helpers its users build rows with (``build_sequence``,
``collate_items``), each over the engine module that does that job (docs/migrating.md).

``build_sequence`` builds a row as the engine does (the same head, state cut and separators:
laya.engine.encoding), so a row built here reads as the engine's; ``collate_items`` pads rows
into the model's padded inputs (``agent.model(**batch)``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..checkpoint.config import OPTION_LAYOUTS, TEMPERATURE_RANGE, clamp_temperature
from ..engine.decoding import answer_confidence, confidence_from_probs, unpermute_probs
from ..engine.encoding import build_heads, parallel_layout, state_room, tokenize_states
from ..engine.encoding import serialise_state as serialize_state
from ..engine.questions import QTYPE_NAMES, QTYPES, public_form, render_criterion, temp_bucket
from ..engine.questions import render_options as render_public_options
from ..engine.scores import ece_score, proper_reward, td_lambda_targets
from .adapters import core_tokenizer, question_of

if TYPE_CHECKING:
    import torch

__all__ = [
    "OPTION_LAYOUTS",
    "QTYPES",
    "QTYPE_NAMES",
    "TEMP_MAX",
    "TEMP_MIN",
    "answer_confidence",
    "build_sequence",
    "clamp_temperature",
    "collate_items",
    "confidence_from_probs",
    "ece_score",
    "proper_reward",
    "render_criterion",
    "render_options",
    "serialize_state",
    "td_lambda_targets",
    "temp_bucket",
    "unpermute_probs",
]

TEMP_MIN, TEMP_MAX = TEMPERATURE_RANGE


def render_options(q: Mapping[str, object]) -> list[str]:
    """The option texts the model reads for a question, in criteria order, given in the public
    or the internal form (``{"t", "ins", "crit"}``)."""
    return render_public_options(dict(public_form(dict(q))))


def build_sequence(
    tok: object,
    state: object,
    q: Mapping[str, object],
    max_len: int = 512,
    head_max_len: int = 192,
    option_order: Sequence[int] | None = None,
    truncate_left: bool = False,
    state_ids: Sequence[int] | None = None,
    return_stats: bool = False,
    return_truncation_stats: bool = False,
    return_layout: bool = False,
) -> tuple[Any, ...]:
    """One row ``(ids, markers)`` for ``state`` and the question ``q`` (internal or public form):
    ``[CLS] head [SEP] options [SEP] state [SEP]`` within ``max_len``, the markers that fit.

    ``tok`` is ``agent.tok`` (or any Hugging Face fast tokenizer); ``state_ids`` are the state's
    tokens when already known; a conversation (a list) or ``truncate_left`` keeps the state's
    last tokens. Each ``return_*`` appends a dict, in this order: ``stats`` (``options``,
    ``options_distinct``, ``tokens_per_option``), truncation (``state_tokens``,
    ``state_tokens_used``, ``state_tokens_dropped``, ``truncated``), and the parallel layout
    (``position_ids``, ``option_ids``).
    """
    core = core_tokenizer(tok)
    question = question_of(q, option_order)
    (head,) = build_heads(core, [question], head_max_len)
    ids = list(state_ids) if state_ids is not None else tokenize_states(core, [state])[0].ids
    room = state_room(head, max_len)
    keep_last = truncate_left or isinstance(state, list)
    kept = [] if room == 0 else ids[-room:] if keep_last else ids[:room]
    full = head.ids + kept + [core.sep_id]
    out: list[object] = [full[:max_len], [m for m in head.markers if m < max_len]]
    if return_stats:
        out.append(
            {
                "options": len(head.markers),
                "options_distinct": head.options_distinct,
                "tokens_per_option": head.tokens_per_option,
            }
        )
    if return_truncation_stats:
        out.append(
            {
                "state_tokens": len(ids),
                "state_tokens_used": len(kept),
                "state_tokens_dropped": len(ids) - len(kept),
                "truncated": len(kept) < len(ids),
            }
        )
    if return_layout:
        positions, options = parallel_layout(head.markers, len(head.ids), len(full))
        out.append({"position_ids": positions[:max_len], "option_ids": options[:max_len]})
    return tuple(out)


def collate_items(batch: Sequence[Any], pad_id: int) -> dict[str, torch.Tensor] | None:
    """Rows ``{"ids", "markers", "qtype"[, "target"][, "position_ids", "option_ids"]}`` as one
    padded batch: ``input_ids`` (right-padded with ``pad_id``), ``attention_mask``,
    ``marker_pos``, ``marker_mask`` (bool), ``qtype``, and ``target`` ``[B, K]`` (0 in padding)
    when the rows carry one. ``batch`` is a list of samples, each a row or a list of rows (one
    per question); None when it holds no row."""
    import torch

    rows = [
        row for sample in batch for row in ([sample] if isinstance(sample, Mapping) else sample)
    ]
    if not rows:
        return None
    width = max(len(row["ids"]) for row in rows)
    k = max(len(row["markers"]) for row in rows)
    ids = torch.full((len(rows), width), int(pad_id), dtype=torch.long)
    attention = torch.zeros((len(rows), width), dtype=torch.long)
    marker_pos = torch.zeros((len(rows), k), dtype=torch.long)
    marker_mask = torch.zeros((len(rows), k), dtype=torch.bool)
    for i, row in enumerate(rows):
        n, m = len(row["ids"]), len(row["markers"])
        ids[i, :n] = torch.as_tensor(list(row["ids"]), dtype=torch.long)
        attention[i, :n] = 1
        marker_pos[i, :m] = torch.as_tensor(list(row["markers"]), dtype=torch.long)
        marker_mask[i, :m] = True
    out = {
        "input_ids": ids,
        "attention_mask": attention,
        "marker_pos": marker_pos,
        "marker_mask": marker_mask,
        "qtype": torch.as_tensor([int(row["qtype"]) for row in rows], dtype=torch.long),
    }
    if all("target" in row for row in rows):
        target = torch.zeros((len(rows), k), dtype=torch.float32)
        for i, row in enumerate(rows):
            values = list(row["target"])[:k]
            target[i, : len(values)] = torch.as_tensor(values, dtype=torch.float32)
        out["target"] = target
    for key in ("position_ids", "option_ids"):
        if all(key in row for row in rows):
            grid = torch.zeros((len(rows), width), dtype=torch.long)
            for i, row in enumerate(rows):
                grid[i, : len(row[key])] = torch.as_tensor(list(row[key]), dtype=torch.long)
            out[key] = grid
    return out
