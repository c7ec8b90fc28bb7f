"""Shortlists: an embedder ranks a choice's options against the state; the model reads the top k.

An embedder is anything that maps a list of texts to one vector per text (an array of shape
``[len(texts), dim]``); options are ranked by cosine similarity to the state. A runtime's default
is the bundled ``mini``'s own encoder (a sentence-embedding model, all-MiniLM-L6-v2 fine-tuned),
mean pooled, on the runtime's own kind of backend (``Runtime.embedder``), wrapped in a
:class:`CachedEmbedder` so a taxonomy's options are embedded once, not once per call.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

import numpy as np

from ...errors import InvalidRequest
from ..encoding import serialise_state

__all__ = [
    "CacheInfo",
    "CachedEmbedder",
    "Embedder",
    "option_scores",
    "rank_options",
    "recall_at_k",
]


class Embedder(Protocol):
    """Texts -> one vector per text, an array of shape ``[len(texts), dim]``."""

    def __call__(self, texts: list[str]) -> Any: ...


class CacheInfo(NamedTuple):
    """What a :class:`CachedEmbedder`'s cache holds, as ``functools.lru_cache`` reports it."""

    hits: int
    misses: int
    maxsize: int
    currsize: int


class CachedEmbedder:
    """An embedder that keeps the vectors of texts it has seen in an LRU cache.

    ``embed_options(texts)`` goes through a cache of ``cache_size`` texts, for option texts that
    recur from call to call; calling it embeds fresh (states rarely recur) unless ``cache_all``,
    which puts every text through the cache (``laya.shortlist.cached_embed_fn``).
    """

    def __init__(
        self,
        embed: Callable[[list[str]], object],
        cache_size: int = 8192,
        cache_all: bool = False,
    ) -> None:
        if isinstance(cache_size, bool) or not isinstance(cache_size, int) or cache_size < 0:
            raise InvalidRequest(f"the cache size must be a whole number >= 0, got {cache_size!r}")
        self.embed = embed
        self.cache_size = cache_size
        self.cache_all = cache_all
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = self._misses = 0

    def __call__(self, texts: Sequence[str]) -> Any:
        """One vector per text."""
        if self.cache_all:
            return self.embed_options(list(texts))
        return self.embed(list(texts))

    def embed_options(self, texts: list[str]) -> np.ndarray:
        """Like calling the embedder, through the LRU cache of vectors."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
            self._misses += len(missing)
            self._hits += len(texts) - len(missing)
        fresh = dict(zip(missing, _vectors(self.embed, missing, "cached"))) if missing else {}
        with self._lock:
            for text, vector in fresh.items():
                self._cache[text] = vector
            vectors = []
            for text in texts:
                vector = self._cache.get(text)
                if vector is None:
                    vector = fresh[text]
                else:
                    self._cache.move_to_end(text)
                vectors.append(vector)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return np.stack(vectors) if vectors else np.zeros((0, 1), np.float32)

    def cache_info(self) -> CacheInfo:
        """Hits, misses, the cache's size limit and how many texts it holds now."""
        with self._lock:
            return CacheInfo(self._hits, self._misses, self.cache_size, len(self._cache))

    def cache_clear(self) -> None:
        """Empty the cache and its counters."""
        with self._lock:
            self._cache.clear()
            self._hits = self._misses = 0


def _vectors(embed: Callable[[list[str]], object], texts: list[str], what: str) -> np.ndarray:
    """The embedder's vectors for ``texts``, refused unless they are one finite row per text."""
    raw = embed(texts)
    try:
        vectors: np.ndarray = np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError):
        vectors = np.zeros(0, np.float32)  # no array at all: refused below as one
        shape = None
    else:
        shape = vectors.shape
    if shape is None or len(shape) != 2 or shape[0] != len(texts) or shape[1] < 1:
        raise InvalidRequest(
            f"embed returned {_described(raw, shape)} for {len(texts)} {what} texts; it must "
            f"return one vector per text, an array of shape [{len(texts)}, dim]"
        )
    if not np.isfinite(vectors).all():
        raise InvalidRequest(
            f"embed returned NaN or infinite values for {what} texts; return finite vectors"
        )
    return vectors


def _described(raw: object, shape: tuple[int, ...] | None) -> str:
    return f"shape {tuple(shape)}" if shape is not None else f"a {type(raw).__name__}"


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    unit: np.ndarray = vectors / np.maximum(norms, np.float32(1e-12))
    return unit


def rank_options(
    embed: Embedder, states: Sequence[object], options: Sequence[Sequence[str]]
) -> list[list[int]]:
    """Per state, its question's option indices, closest first (cosine; ties by caller order)."""
    return [
        [int(i) for i in np.argsort(-scores, kind="stable")]
        for scores in option_scores(embed, states, options)
    ]


def option_scores(
    embed: Embedder, states: Sequence[object], options: Sequence[Sequence[str]]
) -> list[np.ndarray]:
    """Per state, the cosine similarity of each of its question's options to it (caller order)."""
    _check_option_lists(states, options)
    state_texts = [serialise_state(s) for s in states]
    distinct = list(dict.fromkeys(t for texts in options for t in texts))
    option_embed = getattr(embed, "embed_options", embed)
    opt = _unit(_vectors(option_embed, distinct, "option"))
    state_vecs = _unit(_vectors(embed, list(dict.fromkeys(state_texts)), "state"))
    if state_vecs.shape[1] != opt.shape[1]:
        raise InvalidRequest(
            f"embed returned {state_vecs.shape[1]}-dimensional vectors for states and "
            f"{opt.shape[1]}-dimensional ones for options; return one size for every text"
        )
    at = {t: i for i, t in enumerate(distinct)}
    by_state = dict(zip(dict.fromkeys(state_texts), state_vecs))
    return [
        opt[[at[t] for t in texts]] @ by_state[text] for text, texts in zip(state_texts, options)
    ]


def shortlist_brackets(embed: Embedder, states: Sequence[Any], brackets: Sequence[Any]) -> None:
    """Keep each shortlisted bracket's ``k`` options closest to its state (before any pass)."""
    chosen = [b for b in brackets if b.plan.shortlist is not None]
    scored = option_scores(
        embed, [states[b.state] for b in chosen], [b.question.options for b in chosen]
    )
    for bracket, scores in zip(chosen, scored):
        order = [int(i) for i in np.argsort(-scores, kind="stable")]
        bracket.ranked = order[: bracket.plan.shortlist]
        bracket.scores = [round(float(scores[i]), 4) for i in bracket.ranked]
        bracket.alive = list(bracket.ranked)


def _check_option_lists(states: Sequence[object], options: Sequence[Sequence[str]]) -> None:
    """One non-empty list of option texts per state, or an InvalidRequest saying which is not."""
    if len(states) != len(options):
        raise InvalidRequest(
            f"rank_options: {len(states)} states and {len(options)} option lists; pass one list "
            "of option texts per state"
        )
    for i, texts in enumerate(options):
        if isinstance(texts, str) or not texts or not all(isinstance(t, str) for t in texts):
            raise InvalidRequest(
                f"rank_options: options[{i}] must be a non-empty list of option texts (strings), "
                f"got {texts!r}"
            )


def recall_at_k(ranked: Sequence[Sequence[int]], gold: Sequence[int], k: int) -> float:
    """Share of cases whose gold option is among the first ``k`` of its ranking (one gold
    index per ranking; NaN for no cases, as an accuracy of nothing)."""
    if len(ranked) != len(gold):
        raise InvalidRequest(
            f"recall_at_k: {len(ranked)} rankings and {len(gold)} gold indices; pass one gold "
            "index per ranking"
        )
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InvalidRequest(f"recall_at_k: k must be a whole number of at least 1, got {k!r}")
    if not gold:
        return math.nan
    return sum(g in list(r)[:k] for r, g in zip(ranked, gold)) / len(gold)
