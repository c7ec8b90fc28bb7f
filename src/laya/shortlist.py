"""Shortlists: an embedder ranks a choice's options against the state; the model reads the top k.

Any callable ``texts -> vectors`` (an array of shape ``[len(texts), dim]``) ranks options by
cosine similarity to the state. The default is the bundled ``mini``'s own encoder (a
sentence-embedding model, all-MiniLM-L6-v2 fine-tuned) with mean pooling over the tokens,
which keeps the vectors of option texts it has seen in an LRU cache: a taxonomy's options are
embedded once, not once per call.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .encoding import serialise_state
from .errors import InvalidRequest

__all__ = ["MiniEmbedder", "default_embedder", "rank_options", "recall_at_k"]

Embed = Callable[[list[str]], Any]
EMBED_MAX_TOKENS = 256
EMBED_BATCH = 64


class MiniEmbedder:
    """Mean-pooled, L2-normalised vectors from a checkpoint's encoder (the bundled mini's).

    ``embed(texts)`` embeds; ``embed_options(texts)`` goes through an LRU cache of
    ``cache_size`` texts, for option texts that recur from call to call.
    """

    def __init__(self, encoder: Any, tok: Any, device: Any, cache_size: int = 8192) -> None:
        self.encoder, self.tok, self.device = encoder, tok, device
        self.cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, texts: list[str]) -> np.ndarray:
        """One unit vector per text, ``[len(texts), hidden]`` float32."""
        import torch

        ids = [
            [self.tok.cls_id, *row[: EMBED_MAX_TOKENS - 2], self.tok.sep_id]
            for row in self.tok.encode(list(texts))
        ]
        out = []
        for at in range(0, len(ids), EMBED_BATCH):
            chunk = ids[at : at + EMBED_BATCH]
            width = max(map(len, chunk))
            input_ids = torch.full((len(chunk), width), self.tok.pad_id, dtype=torch.long)
            mask = torch.zeros((len(chunk), width), dtype=torch.long)
            for j, row in enumerate(chunk):
                input_ids[j, : len(row)] = torch.tensor(row)
                mask[j, : len(row)] = 1
            with torch.inference_mode():
                h = self.encoder(
                    input_ids=input_ids.to(self.device), attention_mask=mask.to(self.device)
                ).last_hidden_state.float()
                weights = mask.to(h.device)[..., None].float()
                pooled = (h * weights).sum(1) / weights.sum(1).clamp(min=1.0)
                pooled = torch.nn.functional.normalize(pooled, dim=-1)
            out.append(pooled.cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, 1), np.float32)

    def embed_options(self, texts: list[str]) -> np.ndarray:
        """Like calling the embedder, through the LRU cache of option vectors."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        fresh = dict(zip(missing, self(missing))) if missing else {}
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
        return np.stack(vectors)


_shared: MiniEmbedder | None = None
_shared_lock = threading.Lock()


def default_embedder(runtime: Any) -> MiniEmbedder:
    """The bundled mini's encoder: the runtime's own when it is a PyTorch mini, else one shared."""
    from .checkpoint import BUNDLED

    model = getattr(runtime.backend, "model", None)
    if model is not None and runtime.directory.resolve() == BUNDLED["mini"].resolve():
        if getattr(runtime, "_embedder", None) is None:
            runtime._embedder = MiniEmbedder(model.encoder, runtime.tok, runtime.backend.device)
        return runtime._embedder
    global _shared
    with _shared_lock:
        if _shared is None:
            from .backends.torch import TorchBackend
            from .checkpoint import load_tokenizer, read_config

            directory = BUNDLED["mini"]
            cfg = read_config(directory, "mini")
            backend = TorchBackend(directory, cfg, "mini", device="cpu")
            tok = load_tokenizer(directory, cfg.raw.get("encoder"))
            _shared = MiniEmbedder(backend.model.encoder, tok, backend.device)
    return _shared


def _vectors(embed: Any, texts: list[str], what: str) -> np.ndarray:
    """The embedder's vectors for ``texts``, refused unless they are one finite row per text."""
    raw = embed(texts)
    try:
        vectors = np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError):
        vectors = None
    shape = getattr(vectors, "shape", None)
    if vectors is None or vectors.ndim != 2 or shape[0] != len(texts) or shape[1] < 1:
        raise InvalidRequest(
            f"embed returned {_described(raw, shape)} for {len(texts)} {what} texts; it must "
            f"return one vector per text, an array of shape [{len(texts)}, dim]"
        )
    if not np.isfinite(vectors).all():
        raise InvalidRequest(
            f"embed returned NaN or infinite values for {what} texts; return finite vectors"
        )
    return vectors


def _described(raw: Any, shape: Any) -> str:
    return f"shape {tuple(shape)}" if shape is not None else f"a {type(raw).__name__}"


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(norms, np.float32(1e-12))


def rank_options(embed: Any, states: Sequence[Any], options: Sequence[Sequence[str]]) -> list:
    """Per state, its question's option indices, closest first (cosine; ties by caller order)."""
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
    ranked = []
    for text, texts in zip(state_texts, options):
        scores = opt[[at[t] for t in texts]] @ by_state[text]
        ranked.append([int(i) for i in np.argsort(-scores, kind="stable")])
    return ranked


def shortlist_brackets(runtime: Any, states: list[Any], brackets: list[Any], embed: Any) -> None:
    """Keep each shortlisted bracket's ``k`` options closest to its state (before any pass)."""
    chosen = [b for b in brackets if b.plan.shortlist is not None]
    embed = embed if embed is not None else default_embedder(runtime)
    ranked = rank_options(
        embed, [states[b.state] for b in chosen], [b.question.options for b in chosen]
    )
    for bracket, order in zip(chosen, ranked):
        bracket.ranked = order[: bracket.plan.shortlist]
        bracket.alive = list(bracket.ranked)


def _check_option_lists(states: Sequence[Any], options: Sequence[Sequence[str]]) -> None:
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
