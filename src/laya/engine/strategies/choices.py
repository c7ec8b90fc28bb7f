"""Choices of many options as calls on a runtime: the published runtime's ``laya.shortlist``.

* :func:`predict_tournament` answers through the runtime's tournament (``tournament.py``) and
  reports it as ``result["tournament"][qid] = {labels, n, rounds}``, each answer's probabilities
  over its finalists; ``all_labels=True`` keeps laya's answer instead (every caller label, 0.0
  for the eliminated, and ``answer["tournament"]``).
* :func:`predict_shortlist` ranks each choice's options with the caller's ``embed_fn``
  (``shortlist.py``), asks the ``k`` nearest in one prediction and reports
  ``result["shortlist"][qid] = {labels, scores, k, n, passthrough}``; ``all_labels=True``
  widens the probabilities to every caller label (0.0 for the options not asked).
* :func:`shortlist_choice` is the ranking alone; :func:`cached_embed_fn` puts any embedder
  behind an LRU cache (``laya.runtime.embed_fn_from_agent`` embeds with a runtime's own
  encoder; ``laya.compat.laya_shortlist`` is the published module holding both).

The functions drive any runner with ``predict`` (an Agent, an ONNXAgent, a Router); they read
nothing else of it (docs/many-options.md, docs/migrating.md). This module also keeps the names of
``shortlist.py`` reachable under the old ``laya.shortlist`` path.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import InvalidRequest
from ..encoding import serialise_state
from ..questions import parse_question
from .shortlist import CachedEmbedder, Embedder, option_scores, rank_options, recall_at_k
from .tournament import ChoiceMode

__all__ = [
    "DEFAULT_SHORTLIST_K",
    "DEFAULT_TOURNAMENT_GROUP",
    "CachedEmbedder",
    "Embedder",
    "cached_embed_fn",
    "predict_shortlist",
    "shortlist_block",
    "predict_tournament",
    "rank_options",
    "recall_at_k",
    "shortlist_choice",
    "tournament_block",
]

DEFAULT_SHORTLIST_K = 20
DEFAULT_TOURNAMENT_GROUP = 16


def whole_at_least(name: str, value: object, least: int) -> int:
    """``value`` as an int of at least ``least``; otherwise :class:`InvalidRequest` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise InvalidRequest(f"{name} must be a whole number of at least {least}, got {value!r}")
    return int(value)


def _questions(questions: object) -> dict[Any, Any]:
    if not isinstance(questions, dict):
        raise TypeError(
            f"questions must be a dict of question id -> definition, got {type(questions).__name__}"
        )
    return questions


# --------------------------------------------------------------------------- tournament


def predict_tournament(
    agent: Any,
    state: object,
    questions: dict[str, dict[str, Any]],
    group_size: int = DEFAULT_TOURNAMENT_GROUP,
    *,
    all_labels: bool = False,
    **predict_kwargs: Any,
) -> dict[str, Any]:
    """Answer ``questions`` with every choice of more than ``group_size`` options decided by
    elimination rounds, in one call on ``agent``; the result gains ``tournament``: per choice
    question, ``labels`` (the finalists, in the caller's order), ``n`` (its options) and
    ``rounds`` (elimination rounds before the final; 0 when it was asked whole). Groups hold at
    most ``group_size`` options, fewer where longer ones would not fit the head uncut."""
    mode = ChoiceMode(tournament=True, cap=whole_at_least("group_size", group_size, 2))
    questions = _questions(questions)
    result: dict[str, Any] = agent.predict(state, questions, tournament=mode, **predict_kwargs)
    result["tournament"] = tournament_block(result, all_labels=all_labels)
    return result


def tournament_block(
    result: dict[str, Any], *, all_labels: bool = False
) -> dict[object, dict[str, object]]:
    """The published ``result["tournament"]`` of a result answered by tournament: per choice,
    ``labels`` (finalists), ``n``, ``rounds`` and, where the caller's ``option_order`` could not
    apply, ``option_order_dropped``. Unless ``all_labels``, each narrowed answer's
    probabilities are cut to its finalists and its own ``tournament`` block removed."""
    block: dict[object, dict[str, object]] = {}
    for qid, answer in (result.get("answers") or {}).items():
        if not isinstance(answer, dict) or answer.get("type") != "choice":
            continue
        played = answer.get("tournament")
        labels = list(answer.get("probabilities") or {})
        if played is None:
            block[qid] = {"labels": labels, "n": len(labels), "rounds": 0}
            continue
        finalists = list(played["finalists"])
        block[qid] = {"labels": finalists, "n": len(labels), "rounds": int(played["rounds"]) - 1}
        if played.get("option_order_dropped"):
            block[qid]["option_order_dropped"] = True
        if not all_labels:
            answer.pop("tournament")
            answer["probabilities"] = {k: answer["probabilities"][k] for k in finalists}
    return block


def shortlist_block(result: dict[str, Any], k: int) -> dict[object, dict[str, object]]:
    """The published ``result["shortlist"]`` of a result answered with ``shortlist=k``: per
    choice, ``labels`` asked (nearest first), ``scores`` (their cosines; None when asked whole),
    ``k``, ``n`` and ``passthrough``; each narrowed answer's probabilities cut to its labels
    and its own ``shortlist`` entry removed, as :func:`predict_shortlist` answers."""
    block: dict[object, dict[str, object]] = {}
    for qid, answer in (result.get("answers") or {}).items():
        if not isinstance(answer, dict) or answer.get("type") != "choice":
            continue
        labels = list(answer.get("probabilities") or {})
        narrowed = answer.pop("shortlist", None)
        if narrowed is None or len(narrowed["candidates"]) >= len(labels):
            block[qid] = {"labels": labels, "scores": None, "k": k, "n": len(labels)}
            block[qid]["passthrough"] = True
            continue
        asked = list(narrowed["candidates"])
        block[qid] = {"labels": asked, "scores": narrowed.get("scores"), "k": k, "n": len(labels)}
        block[qid]["passthrough"] = False
        answer["probabilities"] = {label: answer["probabilities"][label] for label in asked}
    return block


# --------------------------------------------------------------------------- shortlist


def shortlist_choice(
    state: object,
    criteria: object,
    embed_fn: Embedder,
    k: int = DEFAULT_SHORTLIST_K,
    *,
    instructions: str | None = None,
    return_scores: bool = False,
) -> Any:
    """The ``k`` labels of a choice whose option texts ``embed_fn`` places nearest the query
    (``instructions`` then the serialised state; a string state as it is), nearest first, ties in
    the caller's order; with ``return_scores``, ``(labels, cosines)``. With ``k`` at least the
    number of labels, every label in the caller's order, and the embedder is not called (scores
    None)."""
    k = whole_at_least("k", k, 1)
    question = parse_question(
        "criteria", {"type": "choice", "instructions": instructions or "-", "criteria": criteria}
    )
    labels = list(question.keys)
    if k >= len(labels):
        return (labels, None) if return_scores else labels
    text = state if isinstance(state, str) else serialise_state(state)
    query = f"{instructions}\n{text}" if instructions else text
    scores = option_scores(embed_fn, [query], [list(question.options)])[0]
    order = [int(i) for i in np.argsort(-scores, kind="stable")[:k]]
    chosen = [labels[i] for i in order]
    return (chosen, [float(scores[i]) for i in order]) if return_scores else chosen


def predict_shortlist(
    agent: Any,
    state: object,
    questions: dict[str, dict[str, Any]],
    embed_fn: Embedder,
    k: int = DEFAULT_SHORTLIST_K,
    *,
    all_labels: bool = False,
    **predict_kwargs: Any,
) -> dict[str, Any]:
    """Answer ``questions`` with every choice of more than ``k`` options narrowed to the ``k``
    its ``embed_fn`` ranks nearest the state, in one call on ``agent``; the result gains
    ``shortlist``: per choice question, ``labels`` asked (nearest first), ``scores`` (their
    cosines; None when not narrowed), ``k``, ``n`` (its options) and ``passthrough`` (asked
    whole). A narrowed question's ``option_order`` is dropped, with one warning."""
    k = whole_at_least("k", k, 1)
    questions = _questions(questions)
    asked, block, dropped = {}, {}, []
    for qid, definition in questions.items():
        narrowed = _narrowed(qid, definition, state, embed_fn, k)
        if narrowed is None:
            asked[qid] = definition
            continue
        asked[qid], block[qid] = narrowed
        if "option_order" in definition:
            dropped.append(qid)
    if dropped:
        warnings.warn(
            f"laya: predict_shortlist dropped option_order of {', '.join(map(repr, dropped))}: "
            "a shortlist asks its own options, so the caller's order no longer applies",
            RuntimeWarning,
            stacklevel=2,
        )
    result: dict[str, Any] = agent.predict(state, asked, **predict_kwargs)
    if all_labels:
        _widen(result, questions, block)
    result["shortlist"] = block
    return result


def _narrowed(
    qid: object, definition: object, state: object, embed_fn: Embedder, k: int
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A choice's narrowed question and its ``shortlist`` entry; None for anything else."""
    if not isinstance(definition, dict) or definition.get("type") != "choice":
        return None
    criteria = definition.get("criteria")
    question = parse_question(qid, definition)
    labels = list(question.keys)
    if k >= len(labels):
        entry = {"labels": labels, "scores": None, "k": k, "n": len(labels), "passthrough": True}
        return definition, entry
    chosen, scores = shortlist_choice(
        state,
        criteria,
        embed_fn,
        k,
        instructions=question.instructions,
        return_scores=True,
    )
    kept = {key: v for key, v in definition.items() if key not in ("criteria", "option_order")}
    if isinstance(criteria, Mapping):
        kept["criteria"] = {label: criteria[label] for label in chosen}
    else:
        kept["criteria"] = list(chosen)
    entry = {"labels": chosen, "scores": scores, "k": k, "n": len(labels), "passthrough": False}
    return kept, entry


def _widen(result: dict[str, Any], questions: dict[Any, Any], block: dict[Any, Any]) -> None:
    """Probabilities over every caller label of each narrowed choice (0.0 for the others)."""
    answers = result.get("answers") or {}
    for qid, entry in block.items():
        answer = answers.get(qid)
        if entry["passthrough"] or not isinstance(answer, dict):
            continue
        every = parse_question(qid, questions[qid]).keys
        shown = answer.get("probabilities") or {}
        answer["probabilities"] = {label: shown.get(label, 0.0) for label in every}


# --------------------------------------------------------------------------- embedders


def cached_embed_fn(embed_fn: Embedder, maxsize: int = 4096) -> CachedEmbedder:
    """``embed_fn`` behind an LRU cache of ``maxsize`` texts (exact strings): the same text is
    embedded once; ``cache_info()`` and ``cache_clear()`` as ``functools.lru_cache`` has them."""
    if not callable(embed_fn):
        raise TypeError(f"embed_fn must be callable, got {type(embed_fn).__name__}")
    return CachedEmbedder(embed_fn, maxsize, cache_all=True)
