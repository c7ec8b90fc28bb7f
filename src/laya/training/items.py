"""Training items: a question, its target distribution and its state's tokens, and the rows
they encode to (the published ``laya.train`` item functions; docs/training.md, "The published
loop").

An item is a dict: ``q`` (the question, public form), ``qid``, ``target`` (one weight per option,
in option order; noul ``[false, true]``), ``state_ids`` (the state's tokens), ``keep_last`` (a
conversation keeps its last tokens when cut), ``qtype`` and ``k`` (options). It encodes with the
rows inference builds (``build_heads`` / ``encode_rows``), so training sees what answering sees.
A question that cannot be trained on is counted by reason (:data:`SKIP_REASONS`).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import torch
from typing_extensions import NotRequired, TypedDict

from ..checkpoint import Tokenizer
from ..engine.encoding import StateTokens, build_heads, encode_rows, tokenize_states
from ..engine.questions import (
    QTYPE_NAMES,
    Question,
    internal_form,
    parse_question,
    public_form,
)
from ..errors import InvalidRequest

__all__ = [
    "EncodedItem",
    "TrainingItem",
    "SKIP_REASONS",
    "Skipped",
    "collate",
    "draw_option_order",
    "encode_item",
    "encode_state",
    "items_from_rows",
    "make_item",
    "question_of",
    "target_from_expected",
    "target_from_gold",
    "to_internal",
]


class TrainingItem(TypedDict):
    """One trainable question of a row (:func:`make_item`, :func:`items_from_rows`): the
    question in public form, its target over the options (criteria order), the state's tokens,
    and, from :func:`items_from_rows`, the row's index and state."""

    q: dict[str, Any]
    qid: object
    target: list[float]
    state_ids: list[int]
    keep_last: bool
    qtype: int
    k: int
    row: NotRequired[int]
    state: NotRequired[object]


class EncodedItem(TypedDict):
    """The row an item encodes to (:func:`encode_item`), as :func:`collate` batches it."""

    input_ids: list[int]
    marker_pos: list[int]
    qtype: int
    target: list[float]
    option_order: list[int]
    position_ids: NotRequired[list[int] | None]
    option_ids: NotRequired[list[int] | None]


SKIP_REASONS = (
    "empty_text",
    "empty_label",
    "invalid_question",
    "invalid_target",
    "target_mismatch",
    "options_collapsed",
    "options_beyond_max_len",
)
_TRUTH = {"true": 1, "yes": 1, "1": 1, "false": 0, "no": 0, "0": 0}


class Skipped(InvalidRequest):
    """A question left out of training, for ``reason`` (one of :data:`SKIP_REASONS`); a
    ValueError to a caller of the target functions."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"question cannot be trained on: {reason}")
        self.reason = reason


# --------------------------------------------------------------------------- questions


def to_internal(qid: object, question: Mapping[str, object]) -> dict[str, object]:
    """The published runtime's internal form of a question, after checking it
    (:func:`laya.engine.questions.internal_form`)."""
    return internal_form(qid, question)


# --------------------------------------------------------------------------- targets


def target_from_expected(
    q: dict[str, Any], expected_val: object, label_smoothing: float = 0.0
) -> list[float]:
    """The target distribution over a question's options (criteria order; noul: [false, true])
    for an expected value: a choice label, a noul truth, a score level (index, level text, or a
    fraction between two levels)."""
    question = question_of(q)
    n = len(question.keys)
    if question.type == "choice":
        matches = [i for i, key in enumerate(question.keys) if key == expected_val]
        if not matches:
            raise Skipped("target_mismatch")
        target = _one_hot(n, matches[0])
    elif question.type == "noul":
        truth = _TRUTH.get(str(expected_val).strip().lower()) if expected_val is not None else None
        if isinstance(expected_val, bool):
            truth = int(expected_val)
        if truth is None:
            raise Skipped("invalid_target")
        target = _one_hot(2, truth)
    else:
        target = _score_target(question, expected_val)
    if label_smoothing:
        target = [(1 - label_smoothing) * t + label_smoothing / n for t in target]
    return target


def _score_target(question: Question, value: object) -> list[float]:
    n = len(question.keys)
    if isinstance(value, str):
        texts = [text.strip().lower() for text in question.options]
        if value.strip().lower() in texts:
            return _one_hot(n, texts.index(value.strip().lower()))
        try:
            value = float(value)
        except ValueError:
            raise Skipped("target_mismatch") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise Skipped("invalid_target")
    if not 0 <= value <= n - 1:
        raise Skipped("target_mismatch")
    low = int(math.floor(value))
    target = [0.0] * n
    target[low] = 1.0 - (value - low)
    if value > low:
        target[low + 1] = value - low
    return target


def target_from_gold(q: dict[str, Any], gold_q: dict[str, Any]) -> list[float]:
    """The target distribution of a soft label ``{"probabilities": {key: p}}`` (keys: the labels,
    ``"false"``/``"true"``, or level indices as strings); all zero reads as uniform."""
    question = question_of(q)
    probabilities = gold_q.get("probabilities") if isinstance(gold_q, dict) else None
    if not isinstance(probabilities, dict) or not probabilities:
        raise Skipped("invalid_target")
    keys = (
        [str(k) for k in question.keys]
        if question.type == "choice"
        else ["false", "true"]
        if question.type == "noul"
        else [str(i) for i in range(len(question.keys))]
    )
    if set(map(str, probabilities)) - set(keys):
        raise Skipped("target_mismatch")
    given = {str(k): v for k, v in probabilities.items()}
    values = [given.get(k, 0.0) for k in keys]
    if any(not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0 for v in values):
        raise Skipped("invalid_target")
    total = float(sum(float(v) for v in values))
    return [float(v) / total for v in values] if total > 0 else [1.0 / len(keys)] * len(keys)


def question_of(q: dict[str, Any], qid: object = "q") -> Question:
    """A question given in the public form or :func:`to_internal`'s; Skipped if invalid."""
    try:
        return parse_question(qid, public_form(q))
    except (TypeError, ValueError):
        raise Skipped("invalid_question") from None


def _one_hot(n: int, index: int) -> list[float]:
    return [1.0 if i == index else 0.0 for i in range(n)]


# --------------------------------------------------------------------------- items


def encode_state(tok: Tokenizer, state: object, max_len: int) -> list[int]:
    """A state's tokens (text as is, anything else as JSON), at most ``max_len``: the first ones,
    or for a conversation (a list) the last ones."""
    (tokens,) = tokenize_states(tok, [state])
    return tokens.ids[-max_len:] if tokens.keep_last else tokens.ids[:max_len]


def make_item(
    tok: Tokenizer,
    q: dict[str, Any],
    target: Sequence[float],
    state_ids: list[int],
    head_max_len: int,
    max_len: int | None = None,
) -> tuple[TrainingItem | None, str | None]:
    """``(item, None)``, or ``(None, reason)`` when the question cannot be trained on: invalid,
    a target of the wrong length or with a negative weight, options whose texts collapse to the
    same tokens, or option markers beyond ``max_len``."""
    try:
        question = question_of(q)
    except Skipped as skipped:
        return None, skipped.reason
    k = len(question.options)
    if len(target) != k:
        return None, "target_mismatch"
    if any(not math.isfinite(float(w)) or w < 0 for w in target):
        return None, "invalid_target"
    (head,) = build_heads(tok, [question], head_max_len)
    if head.options_distinct < k:
        return None, "options_collapsed"
    if max_len is not None and max(head.markers) >= max_len:
        return None, "options_beyond_max_len"
    item: TrainingItem = {
        "q": public_form(q),
        "qid": "q",
        "target": [float(w) for w in target],
        "state_ids": list(state_ids),
        "keep_last": False,
        "qtype": question.qtype,
        "k": k,
    }
    return item, None


def _target(
    row: dict[str, Any], qid: object, definition: Any, label_smoothing: float
) -> list[float]:
    """A row's target for one question, from ``gold`` or ``expected`` (laya's ``answers``)."""
    expected, gold = row.get("expected") or row.get("answers") or {}, row.get("gold") or {}
    if qid in gold:
        return target_from_gold(definition, gold[qid])
    value = expected.get(qid)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise Skipped("empty_label")
    return target_from_expected(definition, value, label_smoothing)


def items_from_rows(
    tok: Tokenizer,
    rows: Iterable[dict[str, Any]],
    max_len: int,
    head_max_len: int,
    label_smoothing: float = 0.0,
    on_skip: Callable[[int, object, str], None] | None = None,
) -> tuple[list[TrainingItem], dict[str, int]]:
    """The items of data rows ``{state, questions, expected | gold}`` (each also carries its
    ``row`` index and ``state``), and how many questions were skipped for each reason
    (``on_skip(row index, question id, reason)`` is told of each, when given)."""
    items: list[TrainingItem] = []
    skipped = Counter(dict.fromkeys(SKIP_REASONS, 0))

    def skip(index: int, qid: object, reason: str) -> None:
        skipped[reason] += 1
        if on_skip is not None:
            on_skip(index, qid, reason)

    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            raise InvalidRequest(
                f"rows[{index}]: a row is a dict {{state, questions, expected | gold}}, got "
                f"{type(row).__name__}"
            )
        state, questions = row.get("state"), row.get("questions") or {}
        if state is None or (isinstance(state, str) and not state.strip()):
            for qid in questions or [None]:
                skip(index, qid, "empty_text")
            continue
        state_ids = encode_state(tok, state, max_len)
        for qid, definition in questions.items():
            try:
                target = _target(row, qid, definition, label_smoothing)
            except Skipped as skipped_question:
                skip(index, qid, skipped_question.reason)
                continue
            item, reason = make_item(tok, definition, target, state_ids, head_max_len, max_len)
            if item is None:
                skip(index, qid, str(reason))
                continue
            item.update(
                {"qid": qid, "row": index, "state": state, "keep_last": isinstance(state, list)}
            )
            items.append(item)
    return items, dict(skipped)


def encode_item(
    tok: Tokenizer,
    item: TrainingItem,
    max_len: int,
    head_max_len: int,
    option_order: list[int] | None = None,
    parallel: bool = False,
) -> EncodedItem:
    """The row an item encodes to, its options listed in ``option_order`` (None: the
    question's own): ``input_ids``, ``marker_pos``, ``qtype``, ``target`` (in slot order),
    ``option_order``, and for the parallel option layout ``position_ids`` and ``option_ids``."""
    q = dict(public_form(item["q"]))
    if option_order is not None:
        q["option_order"] = list(option_order)
    question = parse_question(item.get("qid", "q"), q)
    heads = build_heads(tok, [question], head_max_len)
    state = StateTokens(list(item["state_ids"]), bool(item.get("keep_last")))
    layout = "parallel" if parallel else "sequential"
    (row,) = encode_rows(tok, [question], heads, [state], max_len, head_max_len, layout)
    encoded: EncodedItem = {
        "input_ids": row.ids,
        "marker_pos": row.markers,
        "qtype": row.qtype,
        "target": [item["target"][i] for i in question.order],
        "option_order": list(question.order),
    }
    if parallel:
        encoded.update({"position_ids": row.positions, "option_ids": row.option_ids})
    return encoded


def draw_option_order(
    item: TrainingItem, rng: random.Random, shuffle_types: Sequence[str]
) -> list[int] | None:
    """A random listing order of the item's options when its type is in ``shuffle_types``
    (and it has two or more), else None (the question's own order)."""
    if QTYPE_NAMES[item["qtype"]] not in shuffle_types or item["k"] < 2:
        return None
    order = list(range(item["k"]))
    rng.shuffle(order)
    return order


def collate(
    encoded: Sequence[EncodedItem], pad_id: int, device: str | torch.device
) -> tuple[list[torch.Tensor], torch.Tensor]:
    """Encoded items as one padded batch on ``device``: the model's inputs (``input_ids``,
    ``attention_mask``, ``marker_pos``, ``marker_mask``, ``qtype``, and ``position_ids``,
    ``option_ids`` for the parallel layout) and the targets ``[B, K]`` in slot order."""
    width = max(len(e["input_ids"]) for e in encoded)
    k = max(len(e["marker_pos"]) for e in encoded)
    rows = len(encoded)
    ids = torch.full((rows, width), pad_id, dtype=torch.long)
    attention = torch.zeros((rows, width), dtype=torch.long)
    markers = torch.zeros((rows, k), dtype=torch.long)
    real = torch.zeros((rows, k), dtype=torch.bool)
    target = torch.zeros((rows, k), dtype=torch.float32)
    layout = "position_ids" in encoded[0]
    positions = torch.zeros((rows, width), dtype=torch.long)
    options = torch.zeros((rows, width), dtype=torch.long)
    for i, e in enumerate(encoded):
        n, m = len(e["input_ids"]), len(e["marker_pos"])
        ids[i, :n] = torch.tensor(e["input_ids"])
        attention[i, :n] = 1
        markers[i, :m] = torch.tensor(e["marker_pos"])
        real[i, :m] = True
        target[i, :m] = torch.tensor(e["target"][:m])
        if layout:
            positions[i, :n] = torch.tensor(e["position_ids"])
            options[i, :n] = torch.tensor(e["option_ids"])
    qtype = torch.tensor([e["qtype"] for e in encoded])
    inputs = [ids, attention, markers, real, qtype] + ([positions, options] if layout else [])
    return [t.to(device) for t in inputs], target.to(device)
