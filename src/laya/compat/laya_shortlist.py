"""The published ``laya.shortlist`` module: the many-option calls on a runtime
(``engine/strategies/choices.py``) and :func:`~laya.runtime.embed_fn_from_agent`, which reads a
runtime's encoder and so lives with the runtime (docs/migrating.md)."""

from __future__ import annotations

from ..engine.strategies.choices import (
    DEFAULT_SHORTLIST_K,
    DEFAULT_TOURNAMENT_GROUP,
    CachedEmbedder,
    Embedder,
    cached_embed_fn,
    predict_shortlist,
    predict_tournament,
    rank_options,
    recall_at_k,
    shortlist_block,
    shortlist_choice,
    tournament_block,
)
from ..runtime import embed_fn_from_agent

__all__ = [
    "DEFAULT_SHORTLIST_K",
    "DEFAULT_TOURNAMENT_GROUP",
    "CachedEmbedder",
    "Embedder",
    "cached_embed_fn",
    "embed_fn_from_agent",
    "predict_shortlist",
    "predict_tournament",
    "rank_options",
    "recall_at_k",
    "shortlist_block",
    "shortlist_choice",
    "tournament_block",
]
