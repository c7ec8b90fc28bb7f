"""Scores of answers: confidence from probabilities, calibration error, proper scoring rewards.

:func:`proper_reward` reads torch tensors through their own methods, so importing this module
never imports torch. (The published ``laya.common`` module, which gathers these with the
question texts and state serialisation, is :mod:`laya.compat.laya_common`.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidRequest
from .questions import QTYPES

if TYPE_CHECKING:
    import torch
    from numpy.typing import ArrayLike

__all__ = [
    "ECE_BINS",
    "Record",
    "ece_score",
    "is_correct",
    "proper_reward",
    "td_lambda_targets",
]

ECE_BINS = 15


@dataclass(frozen=True)
class Record:
    """One scored answer: its type, domain, option probabilities (criteria order) and gold index."""

    type: str
    domain: str
    probs: np.ndarray
    gold: int
    pair: str | None = None


def is_correct(record: Record) -> bool:
    """Argmax equals gold (noul: P(true) >= 0.5 equals gold)."""
    if record.type == "noul":
        return bool(record.probs[1] >= 0.5) == bool(record.gold)
    return int(np.argmax(record.probs)) == record.gold


def ece_score(conf: ArrayLike, correct: ArrayLike, bins: int = ECE_BINS) -> float:
    """Expected calibration error over ``bins`` equal-width bins of confidence: the
    count-weighted mean of |accuracy - mean confidence| (NaN for no answers)."""
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
        raise InvalidRequest(f"bins must be a whole number of at least 1, got {bins!r}")
    c = np.asarray(conf, dtype=np.float64).ravel()
    right = np.asarray(correct, dtype=np.float64).ravel()
    if c.shape != right.shape:
        raise InvalidRequest(
            f"ece_score: {c.size} confidences and {right.size} correctness flags; pass one per answer"
        )
    if not c.size:
        return float("nan")
    index = np.minimum(bins - 1, np.maximum(0, (c * bins).astype(np.int64)))
    total = 0.0
    for b in range(bins):
        members = index == b
        if members.any():
            total += members.sum() / c.size * abs(right[members].mean() - c[members].mean())
    return float(total)


def proper_reward(
    q: torch.Tensor,
    target: torch.Tensor,
    qtype: torch.Tensor,
    mask: torch.Tensor,
    w_sph: float = 0.5,
    w_rps: float = 1.0,
    log_floor: float = -9.21,
) -> torch.Tensor:
    """A strictly proper reward per row for predicted distributions ``q`` [B, K] against
    ``target`` [B, K] (torch tensors; ``mask`` [B, K] marks real options, ``qtype`` [B]):
    the log score (each log floored at ``log_floor``) plus ``w_sph`` times the spherical score,
    minus ``w_rps`` times the ranked probability score on score questions (qtype 1), the RPS
    divided by the question's options minus one. Returns a [B] tensor (docs/migrating.md)."""
    m = mask.to(q.dtype)
    p, t = q * m, target.to(q.dtype) * m
    log_score = (t * p.clamp(min=1e-30).log().clamp(min=log_floor) * m).sum(-1)
    spherical = (t * p).sum(-1) / (p * p).sum(-1).sqrt().clamp(min=1e-12)
    n = m.sum(-1)
    slots = m.new_ones(m.shape[-1]).cumsum(0) - 1  # 0..K-1, without importing torch
    inside = (slots[None, :] < (n - 1)[:, None]).to(q.dtype)
    gap = (p.cumsum(-1) - t.cumsum(-1)) * inside
    rps = (gap * gap).sum(-1) / (n - 1).clamp(min=1.0)
    is_score = (qtype == QTYPES["score"]).to(q.dtype)
    return log_score + w_sph * spherical - w_rps * rps * is_score


def td_lambda_targets(
    p_true: torch.Tensor, batch: dict[str, Any], lam: float = 1.0
) -> torch.Tensor:
    """TD(lambda) targets for P(true) along episodes (a conversation's turns, say): per row, the
    last turn of its episode targets the outcome ``batch["target"]``; an earlier turn targets
    ``(1 - lam) * p_next + lam * G_next`` (the next turn's prediction and its target), so
    ``lam=1`` is the outcome for every turn and ``lam=0`` the next turn's prediction.
    ``p_true`` [N] (a torch tensor, read detached); ``batch``: ``target`` [N], and optionally
    ``episode`` [N] (rows sharing it form one episode; default: each row its own) and ``turn``
    [N] (the order within an episode; default: row order). Returns [N] like ``p_true``
    (docs/migrating.md)."""
    if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not 0.0 <= lam <= 1.0:
        raise InvalidRequest(f"lam must be a number from 0 to 1, got {lam!r}")
    predicted = [float(p) for p in p_true.detach().reshape(-1).tolist()]
    columns = _episode_columns(batch, len(predicted))
    targets = list(columns["target"])
    episodes: dict[object, list[int]] = {}
    for row, episode in enumerate(columns["episode"]):
        episodes.setdefault(episode, []).append(row)
    for rows in episodes.values():
        rows.sort(key=lambda row: (columns["turn"][row], row))
        later = targets[rows[-1]]
        for row, after in zip(reversed(rows[:-1]), reversed(rows[1:]), strict=True):
            later = (1.0 - lam) * predicted[after] + lam * later
            targets[row] = later
    return p_true.new_tensor(targets).reshape(p_true.shape)


def _episode_columns(batch: object, n: int) -> dict[str, list[Any]]:
    """``batch``'s target, episode and turn columns as lists of ``n`` (episode and turn filled in
    when absent), each checked against ``n``."""
    if not isinstance(batch, dict) or "target" not in batch:
        raise InvalidRequest(
            "td_lambda_targets needs batch['target'] (the outcome of each row's episode); "
            "pass {'target': ..., 'episode': ..., 'turn': ...}"
        )
    columns = {
        "target": batch["target"],
        "episode": batch.get("episode", range(n)),
        "turn": batch.get("turn", range(n)),
    }
    out: dict[str, list[Any]] = {}
    for name, column in columns.items():
        values = column.reshape(-1).tolist() if hasattr(column, "reshape") else list(column)
        if len(values) != n:
            raise InvalidRequest(
                f"batch[{name!r}] has {len(values)} entries for {n} predictions; give one per row"
            )
        out[name] = values
    out["target"] = [float(t) for t in out["target"]]
    return out
