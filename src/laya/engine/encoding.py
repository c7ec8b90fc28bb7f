"""Questions and states -> token rows -> packed passes (the token layout: docs/agent.md).

A row is one (state, question) pair: ``[CLS] "<type> question: <ins>" [SEP] [MASK] opt0
[MASK] opt1 ... [SEP] state [SEP]``, the markers being the ``[MASK]`` positions. Each distinct
state text and each question head is tokenized once per call. A checkpoint with the parallel
option layout also gives each token a position and an option id (docs/agent.md#option-layouts),
decided here and nowhere else. Rows are packed into passes by length under a token budget, so
padding stays small and every pass fits in memory. Building the rows charges their tokens to the
caller's work budget first (``laya.engine.work``), if it set one. (How ``predict_long`` cuts a
long state into windows is ``scan.py``'s business.)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..checkpoint import Tokenizer
from ..errors import InvalidRequest, TooManyOptions
from .questions import Question, check_count
from .seams import RowBuilder
from .work import charge

__all__ = [
    "Budgets",
    "Head",
    "Pass",
    "Row",
    "built_rows",
    "encode_rows",
    "pack_rows",
    "packed_passes",
    "parallel_layout",
    "sequence_pass",
    "serialise_state",
]

OPTION_TOKEN_CAP = 48
MIN_OPTION_BUDGET = 16
MIN_INSTRUCTION_TOKENS = 8
MIN_TOKENS_PER_OPTION = 4


@dataclass(frozen=True)
class Head:
    """The question part of a row: ids, marker positions and option statistics."""

    ids: list[int]
    markers: list[int]
    options_distinct: int
    tokens_per_option: int | None
    dropped: int = 0  # tokens of the question's own text (instruction, options) cut to fit


@dataclass
class Row:
    """One (state, question) sequence ready for the encoder."""

    state: int
    question: int
    ids: list[int]
    markers: list[int]
    qtype: int
    state_tokens_used: int
    positions: list[int] | None = None  # the parallel layout's position ids (else None)
    option_ids: list[int] | None = None  # the parallel layout's option id per token (else None)


@dataclass
class StateTokens:
    """A state's tokens and whether it is a conversation (kept from the end when cut); ``state``
    is the state they were read from (what a rebound ``build_sequence`` is given)."""

    ids: list[int]
    keep_last: bool
    state: object = None


def serialise_state(state: object) -> str:
    """Text of a state: strings as is, anything else as JSON (key order kept)."""
    return state if isinstance(state, str) else json.dumps(state, ensure_ascii=False)


def _scrub(text: str, tok: Tokenizer) -> str:
    return text.replace(tok.mask_token, " ") if tok.mask_token else text


def tokenize_states(tok: Tokenizer, states: Sequence[object]) -> list[StateTokens]:
    """Tokenize every distinct state text once."""
    texts = [_scrub(serialise_state(state), tok) for state in states]
    distinct = list(dict.fromkeys(texts))
    ids = dict(zip(distinct, tok.encode(distinct)))
    return [StateTokens(ids[t], isinstance(s, list), s) for s, t in zip(states, texts)]


def build_heads(tok: Tokenizer, questions: Sequence[Question], head_max_len: int) -> list[Head]:
    """Token heads of all questions, tokenizing every instruction and option text in one batch."""
    texts: list[str] = []
    for q in questions:
        texts.append(_scrub(f"{q.type} question: {q.instructions}", tok))
        texts.extend(_scrub(" " + q.read_options[slot], tok) for slot in q.read_order)
    encoded = tok.encode(texts)
    heads, at = [], 0
    for q in questions:
        n = len(q.read_options)
        heads.append(_head(tok, encoded[at], encoded[at + 1 : at + 1 + n], head_max_len))
        at += 1 + n
    return heads


def _head(
    tok: Tokenizer, instruction: list[int], options: list[list[int]], head_max_len: int
) -> Head:
    option_ids = [[tok.mask_id, *ids[:OPTION_TOKEN_CAP]] for ids in options]
    budget = head_max_len - sum(map(len, option_ids))
    per = None
    if budget < MIN_OPTION_BUDGET:
        per = max(MIN_TOKENS_PER_OPTION, (head_max_len - MIN_OPTION_BUDGET) // max(1, len(options)))
        option_ids = [ids[:per] for ids in option_ids]
        budget = head_max_len - sum(map(len, option_ids))
    kept = instruction[: max(MIN_INSTRUCTION_TOKENS, budget)]
    ids = [tok.cls_id, *kept, tok.sep_id]
    markers = []
    for opt in option_ids:
        markers.append(len(ids))
        ids.extend(opt)
    ids.append(tok.sep_id)
    dropped = len(instruction) - len(kept) + sum(map(len, options)) + len(options)
    dropped -= sum(map(len, option_ids))
    return Head(ids, markers, len({tuple(o) for o in option_ids}), per, dropped)


class Budgets(NamedTuple):
    """A call's token budgets (already checked against the encoder) and its cap on states per pass."""

    max_len: int
    head_max_len: int
    batch_size: int | None = None


def check_budgets(max_len: int, head_max_len: int, positions: int | None) -> None:
    """A call's token budgets within what the encoder can embed (``positions``; None: unknown)."""
    check_count("max_len", max_len)
    check_count("head_max_len", head_max_len)
    if positions is None:
        return
    for name, value in (("max_len", max_len), ("head_max_len", head_max_len)):
        if value > positions:
            raise InvalidRequest(
                f"{name}={value} is more than this checkpoint's encoder can embed ({positions} "
                f"positions); use {name} <= {positions}"
            )


def state_room(head: Head, max_len: int) -> int:
    """State tokens that fit beside this head: ``max_len - len(head) - 1``, at least 0."""
    return max(0, max_len - len(head.ids) - 1)


def row_length(head: Head, state: StateTokens, max_len: int) -> int:
    """Tokens in the row of ``head`` and ``state`` as :func:`encode_rows` builds it: the head, the
    state cut to the room left, a separator, all within ``max_len``."""
    return min(max_len, len(head.ids) + min(state_room(head, max_len), len(state.ids)) + 1)


def parallel_layout(
    markers: Sequence[int], head_length: int, length: int
) -> tuple[list[int], list[int]]:
    """Position ids and option ids of a full row of ``length`` tokens in the parallel layout.

    Before the first marker: positions from 0, option 0. Option slot s (its marker up to the
    next marker, the last one up to the head's closing separator) restarts at the first marker's
    position and has option id s + 1. The closing separator, the state and the final separator
    go on after the longest slot, option 0 (docs/agent.md#option-layouts).
    """
    start = markers[0]
    ends = [*markers[1:], head_length - 1]
    positions, options = list(range(start)), [0] * start
    for slot, (first, end) in enumerate(zip(markers, ends), 1):
        positions.extend(range(start, start + end - first))
        options.extend([slot] * (end - first))
    resume = start + max(end - first for first, end in zip(markers, ends))
    rest = length - len(positions)
    return positions + list(range(resume, resume + rest)), options + [0] * rest


def encode_rows(
    tok: Tokenizer,
    questions: Sequence[Question],
    heads: Sequence[Head],
    states: Sequence[StateTokens],
    max_len: int,
    head_max_len: int,
    layout: str = "sequential",
) -> list[Row]:
    """All rows of a call, state-major; raises if a question's markers do not fit ``max_len``.

    ``layout`` is the checkpoint's ``option_layout``: a parallel row also carries its position
    and option ids, computed on the whole row and then cut to ``max_len`` as its tokens are.
    Their tokens are charged to the caller's work budget (:mod:`laya.engine.work`) before any is built.
    """
    tokens = sum(row_length(head, state, max_len) for state in states for head in heads)
    charge(tokens, len(states) * len(heads))
    rows = []
    for si, state in enumerate(states):
        for qi, (q, head) in enumerate(zip(questions, heads)):
            room = state_room(head, max_len)
            kept = [] if room == 0 else state.ids[-room:] if state.keep_last else state.ids[:room]
            full = head.ids + kept + [tok.sep_id]
            markers = [m for m in head.markers if m < max_len]
            if len(markers) < len(head.markers):
                raise TooManyOptions(
                    f"question {q.qid!r}: only {len(markers)} of its {len(head.markers)} option "
                    f"markers fit in max_len={max_len} with head_max_len={head_max_len} spent on "
                    f"the question; lower head_max_len, raise max_len, or use fewer options"
                )
            positions = options = None
            if layout == "parallel":
                positions, options = parallel_layout(head.markers, len(head.ids), len(full))
                positions, options = positions[:max_len], options[:max_len]
            rows.append(
                Row(si, qi, full[:max_len], markers, q.qtype, len(kept), positions, options)
            )
    return rows


def built_rows(
    build: RowBuilder,
    tok: Tokenizer,
    questions: Sequence[Question],
    heads: Sequence[Head],
    states: Sequence[StateTokens],
    budgets: Budgets,
    layout: str = "sequential",
) -> list[Row]:
    """:func:`encode_rows` with each row's ids and markers from ``build`` (a rebound
    ``build_sequence``, laya.engine.seams); the state tokens a row uses are counted as the
    engine's own layout would use them, so usage reads the same."""
    max_len, head_max_len = budgets.max_len, budgets.head_max_len
    rows = []
    for si, state in enumerate(states):
        for qi, (q, head) in enumerate(zip(questions, heads)):
            ids, markers = build(tok, state.state, list(state.ids), q, max_len, head_max_len)
            ids, markers = [int(i) for i in ids], [int(m) for m in markers]
            if len(markers) < len(q.read_order) or any(not 0 <= m < len(ids) for m in markers):
                raise TooManyOptions(
                    f"question {q.qid!r}: the rebound build_sequence gave {len(markers)} option "
                    f"markers within its {len(ids)} tokens for {len(q.read_order)} options"
                )
            positions = options = None
            if layout == "parallel":
                positions, options = parallel_layout(markers, len(head.ids), len(ids))
            used = min(state_room(head, max_len), len(state.ids))
            rows.append(Row(si, qi, ids, markers, q.qtype, used, positions, options))
    charge(sum(len(row.ids) for row in rows), len(rows))
    return rows


@dataclass(frozen=True)
class Pass:
    """One forward pass: its rows' real tokens back to back (no padding), and their markers.

    ``ids`` holds every row's tokens, row after row, ``lengths`` how many each row has. A backend
    that runs packed sequences reads them as they are; one that needs a padded grid (an ONNX
    graph, training) asks for :meth:`padded`. Rows in the parallel option layout also hold
    their ``positions`` and ``option_ids``, back to back like ``ids`` (:meth:`padded_layout`).
    """

    rows: list[int]
    ids: np.ndarray  # [T] int64
    lengths: np.ndarray  # [R] int64
    marker_pos: np.ndarray  # [R, K] int64, positions inside each row (0 in padding)
    marker_mask: np.ndarray  # [R, K] bool
    qtype: np.ndarray  # [R] int64
    pad_id: int
    positions: np.ndarray | None = None  # [T] int64, parallel layout only
    option_ids: np.ndarray | None = None  # [T] int64, parallel layout only

    @property
    def width(self) -> int:
        """Tokens of the longest row."""
        return int(self.lengths.max()) if len(self.lengths) else 0

    @property
    def parallel(self) -> bool:
        """Whether the rows are in the parallel option layout (they carry option ids)."""
        return self.option_ids is not None

    def padded(self) -> tuple[np.ndarray, np.ndarray]:
        """``input_ids`` and ``attention_mask`` ``[R, width]``, rows right-padded with pad_id."""
        real = self._real()
        return self._grid(self.ids, self.pad_id, real), real.astype(np.int64)

    def padded_layout(self) -> tuple[np.ndarray, np.ndarray]:
        """``position_ids`` and ``option_ids`` ``[R, width]``, padding 0; rows not in the
        parallel layout read as their plain positions 0, 1, ... and option 0 throughout."""
        real = self._real()
        if self.positions is None or self.option_ids is None:
            columns = np.broadcast_to(np.arange(self.width), real.shape)
            return np.where(real, columns, 0), np.zeros(real.shape, dtype=np.int64)
        return self._grid(self.positions, 0, real), self._grid(self.option_ids, 0, real)

    def _real(self) -> np.ndarray:
        return np.arange(self.width)[None, :] < self.lengths[:, None]

    @staticmethod
    def _grid(values: np.ndarray, fill: int, real: np.ndarray) -> np.ndarray:
        grid = np.full(real.shape, fill, dtype=np.int64)
        grid[real] = values
        return grid


def pack_rows(
    rows: Sequence[Row], pad_id: int, max_tokens: int, max_rows: int | None
) -> list[Pass]:
    """Group rows of similar length into passes of at most ``max_tokens`` padded tokens.

    Rows are sorted by length (stable), so a backend that pads pads each pass to a near-uniform
    width; answers do not depend on the grouping (padding is masked), only speed and memory do.
    """
    return list(packed_passes(rows, pad_id, lambda: max_tokens, max_rows))


def packed_passes(
    rows: Sequence[Row], pad_id: int, max_tokens: Callable[[], int], max_rows: int | None
) -> Iterator[Pass]:
    """:func:`pack_rows`, one pass at a time, each under the token budget ``max_tokens()`` gives
    when it starts (so a caller whose budget changes between passes is heard at once)."""
    order = sorted(range(len(rows)), key=lambda i: len(rows[i].ids))
    group: list[int] = []
    limit = max_tokens()
    for i in order:
        width = len(rows[i].ids)
        full = max_rows is not None and len(group) >= max_rows
        if group and (full or width * (len(group) + 1) > limit):
            yield _pass(rows, group, pad_id)
            group, limit = [], max_tokens()
        group.append(i)
    if group:
        yield _pass(rows, group, pad_id)


def _pass(rows: Sequence[Row], indices: list[int], pad_id: int) -> Pass:
    members = [rows[i] for i in indices]
    k = max(len(row.markers) for row in members)
    marker_pos = np.zeros((len(members), k), dtype=np.int64)
    marker_mask = np.zeros((len(members), k), dtype=bool)
    for j, row in enumerate(members):
        marker_pos[j, : len(row.markers)] = row.markers
        marker_mask[j, : len(row.markers)] = True
    return Pass(
        rows=indices,
        ids=_flat(row.ids for row in members),
        lengths=np.array([len(row.ids) for row in members], dtype=np.int64),
        marker_pos=marker_pos,
        marker_mask=marker_mask,
        qtype=np.array([row.qtype for row in members], dtype=np.int64),
        pad_id=pad_id,
        positions=_flat_layout(row.positions for row in members),
        option_ids=_flat_layout(row.option_ids for row in members),
    )


def _flat(lists: Iterable[list[int]]) -> np.ndarray:
    """Lists of ints back to back, as one int64 array."""
    return np.fromiter((t for values in lists for t in values), dtype=np.int64)


def _flat_layout(lists: Iterable[list[int] | None]) -> np.ndarray | None:
    """A layout field of every row back to back; None for rows without one (sequential)."""
    rows = list(lists)
    if any(values is None for values in rows):
        return None
    return _flat(values for values in rows if values is not None)


def sequence_pass(sequences: Sequence[list[int]], pad_id: int) -> Pass:
    """A pass of plain token sequences (no question, no markers): what an embedder reads."""
    return Pass(
        rows=list(range(len(sequences))),
        ids=_flat(sequences),
        lengths=np.array([len(ids) for ids in sequences], dtype=np.int64),
        marker_pos=np.zeros((len(sequences), 0), dtype=np.int64),
        marker_mask=np.zeros((len(sequences), 0), dtype=bool),
        qtype=np.zeros(len(sequences), dtype=np.int64),
        pad_id=pad_id,
    )
