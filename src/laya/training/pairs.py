"""Minimal pairs in training: two states that differ in one fact and disagree on a question.

Rows that share a ``pair`` id and a question go into the same training pass, and a contrastive
term asks the model to prefer each state's own gold option more than the partner state does:
``-log sigmoid(s_a - s_b)`` with ``s = z[gold_a] - z[gold_b]`` in each state. A model that answers
by topic gives both states the same margin and pays ``log 2`` per pair, however confident it is.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from ..engine.encoding import Pass, Row, pack_rows
from ..engine.questions import QuestionId

__all__ = ["pair_groups", "pair_loss", "partners", "split_passes"]


def pair_groups(
    keys: Sequence[tuple[str, QuestionId] | None], targets: Sequence[int]
) -> list[list[int]]:
    """Row indices of each (pair id, question id) whose rows do not all share one gold slot."""
    groups: dict[tuple[str, QuestionId], list[int]] = defaultdict(list)
    for index, key in enumerate(keys):
        if key is not None:
            groups[key].append(index)
    return [
        rows for rows in groups.values() if len(rows) >= 2 and len({targets[r] for r in rows}) >= 2
    ]


def _subset_passes(
    rows: Sequence[Row], indices: list[int], pad_id: int, max_tokens: int, max_rows: int | None
) -> list[Pass]:
    """``pack_rows`` over a subset of rows, with the passes' row indices mapped back."""
    passes = pack_rows([rows[i] for i in indices], pad_id, max_tokens, max_rows)
    return [dataclasses.replace(p, rows=[indices[j] for j in p.rows]) for p in passes]


def split_passes(
    rows: Sequence[Row], groups: list[list[int]], pad_id: int, batch_size: int, max_len: int
) -> list[Pass]:
    """Training passes: the rows of pairs kept together (whole groups, about ``batch_size`` rows
    a pass) and every other row packed by length as usual."""
    paired = {r for group in groups for r in group}
    rest = [i for i in range(len(rows)) if i not in paired]
    passes = _subset_passes(rows, rest, pad_id, batch_size * max_len, batch_size) if rest else []
    chunk: list[int] = []
    for group in groups:
        if chunk and len(chunk) + len(group) > batch_size:
            passes += _subset_passes(rows, chunk, pad_id, len(chunk) * max_len, None)
            chunk = []
        chunk += group
    if chunk:
        passes += _subset_passes(rows, chunk, pad_id, len(chunk) * max_len, None)
    return passes


def pair_loss(
    logits: torch.Tensor, batch: Pass, targets: Sequence[int], partner: dict[int, list[int]]
) -> torch.Tensor | None:
    """Mean contrastive loss over the pairs whose two rows are both in ``batch`` (None if none)."""
    slot = {r: j for j, r in enumerate(batch.rows)}
    terms = []
    for a in batch.rows:
        for b in partner.get(a, ()):
            if a < b and b in slot and targets[a] != targets[b]:
                ga, gb = targets[a], targets[b]
                za, zb = logits[slot[a]], logits[slot[b]]
                terms.append((za[ga] - za[gb]) - (zb[ga] - zb[gb]))
    if not terms:
        return None
    return F.softplus(-torch.stack(terms)).mean()


def partners(groups: list[list[int]]) -> dict[int, list[int]]:
    """Each paired row's partner rows (the other rows of its group)."""
    return {r: [o for o in group if o != r] for group in groups for r in group}
