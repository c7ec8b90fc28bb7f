"""The engine: one loaded checkpoint turning questions and states into answers.

It owns the tokenizer, the token budgets, encoding, packing, the backend call and decoding,
behind a typed public surface (docs/architecture.md). Runtimes wrap it in the hook lifecycle;
strategies (``predict_long``'s scan, tournaments, shortlists) are functions over it and use
nothing else. The backend is injected: PyTorch or ONNX Runtime, the engine does not care.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from ..checkpoint import CheckpointConfig, Tokenizer
from ..errors import InvalidRequest
from .contract import Backend
from .decoding import Temperatures
from .encoding import (
    Budgets,
    Head,
    Pass,
    Row,
    StateTokens,
    build_heads,
    built_rows,
    check_budgets,
    encode_rows,
    packed_passes,
    sequence_pass,
    tokenize_states,
)
from .pacing import pass_budget, run_passes
from .questions import Question, parse_questions
from .result import Answer, Result, empty_result, make_result, state_usage
from .seams import row_builder

__all__ = ["EMBED_BATCH", "EMBED_MAX_TOKENS", "WARMUP_SHAPES", "Engine", "Outputs", "Strategy"]

EMBED_MAX_TOKENS = 256
EMBED_BATCH = 64
# Passes (rows, tokens, markers) a warm-up runs when none are given: one short row, a few
# medium ones, a batch of long ones.
WARMUP_SHAPES = ((1, 64, 3), (4, 128, 5), (8, 256, 6))


class Outputs(NamedTuple):
    """What the backend computed for each row, in row order: marker logits and act logits."""

    logits: list[np.ndarray]
    act: list[np.ndarray]


class Engine:
    """A checkpoint's tokenizer, budgets and temperatures around one backend.

    ``answer`` is the plain strategy (every row in shared packed passes); the building blocks it
    uses (``tokenize``, ``heads``, ``encode``, ``run``, ``decode``) are public for the others.
    """

    def __init__(
        self,
        *,
        model_name: str,
        config: CheckpointConfig,
        tokenizer: Tokenizer,
        backend: Backend,
        temperatures: Temperatures,
        positions: int | None,
        max_batch_tokens: int | None = None,
    ) -> None:
        self.model_name = model_name
        self.config = config
        self.tokenizer = tokenizer
        self.backend = backend
        self.temperatures = temperatures
        self.positions = positions
        self.max_batch_tokens = int(max_batch_tokens or backend.batch_tokens)
        self.closed = False

    def close(self) -> None:
        """Free the backend; the engine cannot run afterwards."""
        if not self.closed:
            self.closed = True
            self.backend.close()

    # ----------------------------------------------------------------------- building blocks

    def budgets(
        self, max_len: int | None, head_max_len: int | None, batch_size: int | None = None
    ) -> Budgets:
        """A call's budgets (None: the checkpoint's), within what the encoder embeds."""
        max_len = self.config.max_len if max_len is None else max_len
        head_max_len = self.config.head_max_len if head_max_len is None else head_max_len
        check_budgets(max_len, head_max_len, self.positions)
        return Budgets(max_len, head_max_len, batch_size)

    def tokenize(self, states: Sequence[object]) -> list[StateTokens]:
        """Every distinct state text tokenized once."""
        return tokenize_states(self.tokenizer, states)

    def heads(self, questions: Sequence[Question], head_max_len: int) -> list[Head]:
        """The token head of each question."""
        return build_heads(self.tokenizer, questions, head_max_len)

    def encode(
        self,
        questions: Sequence[Question],
        heads: Sequence[Head],
        tokens: Sequence[StateTokens],
        budgets: Budgets,
    ) -> list[Row]:
        """Every (state, question) row, state-major, in the checkpoint's option layout (built by
        a rebound ``build_sequence`` where one is in place for this backend: laya.engine.seams)."""
        build = row_builder(self.backend.name)
        if build is not None:
            return built_rows(
                build, self.tokenizer, questions, heads, tokens, budgets, self.config.option_layout
            )
        return encode_rows(
            self.tokenizer,
            questions,
            heads,
            tokens,
            budgets.max_len,
            budgets.head_max_len,
            self.config.option_layout,
        )

    def run(self, rows: Sequence[Row], max_rows: int | None = None) -> Outputs:
        """Forward every row in length-packed passes (at most ``max_rows`` rows a pass), through
        :func:`laya.engine.pacing.run_passes` (the deadline, a server's turns)."""
        if self.closed:
            raise RuntimeError(
                f"the {self.model_name} engine was closed (evicted from its Router?); load it again"
            )
        logits: dict[int, np.ndarray] = {}
        act: dict[int, np.ndarray] = {}
        budget = pass_budget(self.max_batch_tokens)
        passes = packed_passes(rows, self.tokenizer.pad_id, budget, max_rows)
        for batch, (pass_logits, pass_act) in run_passes(passes, self.backend.forward, _size):
            for j, r in enumerate(batch.rows):
                logits[r], act[r] = pass_logits[j], pass_act[j]
        order = range(len(rows))
        return Outputs([logits[r] for r in order], [act[r] for r in order])

    def decode(
        self, question: Question, logits: np.ndarray, act: np.ndarray, lang: str | None
    ) -> Answer:
        """One row's answer under the temperatures of ``lang`` (None: the checkpoint's)."""
        return self.temperatures.decode(question, logits, act, lang)

    # ----------------------------------------------------------------------- the plain strategy

    def answer(
        self,
        states: Sequence[object],
        questions: Sequence[Question],
        budgets: Budgets,
        langs: Sequence[str | None],
    ) -> list[Result]:
        """One result per state: encode every row, run the passes, decode answers and usage."""
        if not questions:
            return [empty_result(self.model_name) for _ in states]
        if not states:
            return []
        heads = self.heads(questions, budgets.head_max_len)
        tokens = self.tokenize(states)
        rows = self.encode(questions, heads, tokens, budgets)
        max_rows = budgets.batch_size * len(questions) if budgets.batch_size else None
        out = self.run(rows, max_rows)
        nq = len(questions)
        results = []
        for si, (state_tokens, lang) in enumerate(zip(tokens, langs)):
            span = range(si * nq, (si + 1) * nq)
            answers = {
                q.qid: self.decode(q, out.logits[r], out.act[r], lang)
                for q, r in zip(questions, span)
            }
            usage = state_usage(
                questions,
                [len(rows[r].ids) for r in span],
                len(state_tokens.ids),
                [rows[r].state_tokens_used for r in span],
                heads,
            )
            results.append(make_result(self.model_name, answers, usage))
        return results

    def embed(
        self,
        texts: Sequence[str],
        max_tokens: int = EMBED_MAX_TOKENS,
        batch: int = EMBED_BATCH,
    ) -> np.ndarray:
        """Mean-pooled encoder vectors of ``texts``, ``[len(texts), hidden]`` float32: each text
        read as ``[CLS] text [SEP]``, cut to ``max_tokens``, in passes of ``batch`` texts (what
        a shortlist ranks options with)."""
        for name, value, least in (("max_tokens", max_tokens, 3), ("batch", batch, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise InvalidRequest(f"{name} must be a whole number >= {least}, got {value!r}")
        tok = self.tokenizer
        max_tokens = min(max_tokens, self.positions or max_tokens)  # what the encoder embeds
        sequences = [
            [tok.cls_id, *ids[: max_tokens - 2], tok.sep_id] for ids in tok.encode(list(texts))
        ]
        parts = (
            sequence_pass(sequences[at : at + batch], tok.pad_id)
            for at in range(0, len(sequences), batch)
        )
        chunks = [vectors for _, vectors in run_passes(parts, self.backend.embed, _size)]
        return np.concatenate(chunks) if chunks else np.zeros((0, 1), np.float32)

    def warmup(self, shapes: Sequence[Sequence[int]] | None = None) -> float:
        """Run one pass of each shape ``(rows, tokens, markers)`` (tokens capped at the
        checkpoint's ``max_len``) so later calls find the backend warm; seconds it took."""
        started = time.perf_counter()
        for shape in WARMUP_SHAPES if shapes is None else shapes:
            self.backend.forward(self._warmup_pass(shape))
        return time.perf_counter() - started

    def _warmup_pass(self, shape: Sequence[int]) -> Pass:
        if (
            isinstance(shape, (str, bytes))
            or len(shape) != 3
            or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in shape)
        ):
            raise InvalidRequest(
                f"warmup shapes are (rows, tokens, markers) of positive integers, got {shape!r}"
            )
        rows, tokens, markers = shape
        tokens = max(3, min(tokens, self.config.max_len))
        markers = min(markers, tokens - 2)
        tok = self.tokenizer
        row = [tok.cls_id, *[tok.mask_id] * markers, *[tok.sep_id] * (tokens - markers - 1)]
        return Pass(
            rows=list(range(rows)),
            ids=np.tile(np.asarray(row, dtype=np.int64), rows),
            lengths=np.full(rows, tokens, dtype=np.int64),
            marker_pos=np.tile(np.arange(1, markers + 1, dtype=np.int64), (rows, 1)),
            marker_mask=np.ones((rows, markers), dtype=bool),
            qtype=np.zeros(rows, dtype=np.int64),
            pad_id=tok.pad_id,
        )

    def raw_logits(self, states: Sequence[object], questions: object) -> list[np.ndarray]:
        """Marker logits of every (state, question) row, state-major, in slot order, before any
        temperature and without hooks: what ``laya calibrate`` fits on."""
        parsed = parse_questions(questions)
        budgets = self.budgets(None, None)
        heads = self.heads(parsed, budgets.head_max_len)
        rows = self.encode(parsed, heads, self.tokenize(list(states)), budgets)
        return self.run(rows).logits


def _size(batch: Pass) -> int:
    """The padded tokens of a pass (its real tokens back to back: all of them)."""
    return int(batch.ids.size)


Strategy = Callable[
    [Engine, Sequence[object], Sequence[Question], Budgets, Sequence[str | None]], list[Result]
]
"""How a call turns states and parsed questions into one result per state: ``Engine.answer``
(every row in shared passes), a tournament, or a long document's scan (docs/architecture.md)."""
