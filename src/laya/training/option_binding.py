"""Option binding, an auxiliary loss of ``laya train``: each option marker's encoder state is
pulled towards the base encoder's embedding of its own option text, so markers tell their
options apart from the first step (a noul question's "true" marker stands for its statement)."""

from __future__ import annotations

import copy
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from ..checkpoint import Tokenizer
from ..engine.encoding import Pass, Row
from ..engine.questions import QTYPES

__all__ = ["OptionBinding"]


class OptionBinding:
    """Auxiliary loss: each marker's encoder state should match the base encoder's mean-pooled
    embedding of its own option text, so markers tell their options apart from the first step.
    """

    def __init__(self, encoder: torch.nn.Module, tok: Tokenizer) -> None:
        self.encoder = copy.deepcopy(encoder).eval().requires_grad_(False)
        self.tok = tok
        # build_heads writes "[CLS] noul question: <statement> [SEP]"
        self.statement_start = 1 + len(tok.encode(["noul question:"])[0])
        self.targets: dict[tuple[int, ...], torch.Tensor] = {}

    def spans(self, row: Row) -> list[tuple[int, ...]]:
        """Token ids each marker should stand for: its option's text (up to the next marker or
        the [SEP]); for a noul question's "true" marker, the statement itself."""
        ends = [*row.markers[1:], row.ids.index(self.tok.sep_id, row.markers[-1])]
        spans = [tuple(row.ids[m + 1 : end]) for m, end in zip(row.markers, ends)]
        if row.qtype == QTYPES["noul"] and len(spans) == 2:
            spans[1] = tuple(row.ids[self.statement_start : row.ids.index(self.tok.sep_id)])
        return spans

    @torch.no_grad()
    def embed(self, rows: Sequence[Row], chunk: int = 64) -> None:
        """Mean-pooled base-encoder embeddings of every option text not embedded yet."""
        missing = list(
            dict.fromkeys(s for r in rows for s in self.spans(r) if s not in self.targets)
        )
        device = next(self.encoder.parameters()).device
        for i in range(0, len(missing), chunk):
            part = missing[i : i + chunk]
            width = max(len(s) for s in part) + 2
            ids = torch.full((len(part), width), self.tok.pad_id, dtype=torch.long)
            mask = torch.zeros((len(part), width), dtype=torch.long)
            for j, span in enumerate(part):
                seq = [self.tok.cls_id, *span, self.tok.sep_id]
                ids[j, : len(seq)], mask[j, : len(seq)] = torch.tensor(seq), 1
            ids, mask = ids.to(device), mask.to(device)
            h = self.encoder(input_ids=ids, attention_mask=mask).last_hidden_state
            pooled = (h * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
            self.targets.update(zip(part, pooled))

    def loss(self, h: torch.Tensor, batch: Pass, rows: Sequence[Row]) -> torch.Tensor:
        """Mean cosine distance between marker states and their option embeddings."""
        states, wanted = [], []
        for j, r in enumerate(batch.rows):
            for marker, span in zip(rows[r].markers, self.spans(rows[r])):
                states.append(h[j, marker])
                wanted.append(self.targets[span])
        cosine = F.cosine_similarity(torch.stack(states), torch.stack(wanted), dim=-1)
        return (1 - cosine).mean()
