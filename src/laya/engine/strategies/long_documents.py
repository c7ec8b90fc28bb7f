"""``predict_long``: a state longer than one sequence, read in overlapping windows.

A :class:`Scan` is one such call, and the strategy the runtime's lifecycle answers it with.
``prepare`` checks the call and cuts the state into window texts over the engine (before any hook
fires); the lifecycle then scores what the start hooks left (:meth:`Scan.answer`, the engine's
plain answer); ``finish`` checks what the hooks changed and keeps, per question, the answer of
the window that decided it most confidently (``noul``: the highest P(true)), with its span.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from ...errors import InvalidRequest
from ...hooks import PredictContext
from ..encoding import Budgets, state_room
from ..engine import Engine
from ..questions import Question, check_count, parse_questions
from ..result import Result, empty_result, make_result, merge_window_usage, single_result
from ..states import check_state

__all__ = ["Scan", "check_long_call"]


@dataclass(frozen=True)
class WindowPlan:
    """How predict_long scans a state: window size, step, and the budget it was sized for."""

    size: int
    step: int
    room: int
    explicit: bool


def plan_windows(
    rooms: Sequence[int],
    config_max_len: int,
    config_head_max_len: int,
    window: int | None,
    stride: int | None,
) -> tuple[WindowPlan, list[str]]:
    """Window size and stride for a scan, with the warnings the caller should see."""
    budget = max(64, config_max_len - config_head_max_len - 8)
    explicit = window is not None
    requested = window if window is not None else budget
    room = min(rooms) if rooms else requested
    if room <= 0:
        raise InvalidRequest(
            "predict_long: the questions' options fill the whole sequence (max_len="
            f"{config_max_len}, head_max_len={config_head_max_len}), so no window can carry any "
            "of the state; shorten the options or use fewer of them"
        )
    notes: list[str] = []
    size = requested
    if requested > room:
        size = room
        if explicit:
            notes.append(
                f"laya: predict_long: window={window} is wider than the {room} state tokens the "
                f"questions leave per sequence; scanning with window={room} instead"
            )
        elif requested >= 2 * room:
            notes.append(
                f"laya: predict_long: the questions leave only {room} state tokens per sequence "
                f"(of {requested}); the scan uses {room}-token windows"
            )
    step = stride or max(1, size // 2)
    if step > size:
        if size < requested and step <= requested:
            notes.append(
                f"laya: predict_long: stride={stride} is wider than the {size}-token window the "
                f"questions allow; using stride={max(1, size // 2)}"
            )
            step = max(1, size // 2)
        else:
            raise InvalidRequest(
                f"predict_long: stride={stride} steps past the {size}-token window, so "
                f"{step - size} tokens between every pair of windows would be read by no window "
                f"at all; pass stride <= {size}"
            )
    return WindowPlan(size, step, room, explicit), notes


def window_starts(n_tokens: int, plan: WindowPlan) -> list[int]:
    """Start offsets of the windows, stopping at the first one that reaches the end."""
    return list(range(0, max(1, n_tokens - plan.size + plan.step), plan.step))


@dataclass
class Scan:
    """One predict_long call: its windows, and how to turn per-window answers into one."""

    engine: Engine
    questions: dict[Any, Any]
    texts: list[str]
    starts: list[int]
    size: int
    n_tokens: int
    sized: int
    single: bool
    inferred: bool = False
    scored: list[object] = field(default_factory=list)

    @classmethod
    def prepare(
        cls,
        engine: Engine,
        state: Any,
        questions: Any,
        window: int | None,
        stride: int | None,
        aggregate: str,
    ) -> Scan:
        """Validate the call and cut the state into windows (before any hook fires)."""
        if state is None:
            raise TypeError("state must not be None; pass a string, dict, or list")
        check_state(state)
        parsed = parse_questions(questions)
        if aggregate != "auto":
            raise InvalidRequest(
                f"predict_long: only aggregate='auto' is supported, got {aggregate!r}"
            )
        cfg = engine.config
        heads = engine.heads(parsed, cfg.head_max_len)
        plan, notes = plan_windows(
            [state_room(h, cfg.max_len) for h in heads],
            cfg.max_len,
            cfg.head_max_len,
            window,
            stride,
        )
        for note in notes:
            warnings.warn(note, RuntimeWarning, stacklevel=3)
        questions = copy.deepcopy(questions)  # the call's own: its hooks may change them
        ids = engine.tokenize([state])[0].ids
        limit = plan.size if plan.explicit else plan.room
        if len(ids) <= limit:
            sized = max(plan.size, len(ids))
            return cls(engine, questions, [state], [0], plan.size, len(ids), sized, True)
        starts = window_starts(len(ids), plan)
        texts = [engine.tokenizer.decode(ids[s : s + plan.size]) for s in starts]
        return cls(engine, questions, texts, starts, plan.size, len(ids), plan.size, False)

    def answer(
        self,
        engine: Engine,
        states: Sequence[Any],
        questions: Sequence[Question],
        budgets: Budgets,
        langs: Sequence[str | None],
    ) -> list[Result]:
        """The strategy: score what the start hooks left (normally the windows) as usual."""
        self.inferred = True
        self.scored = list(states)
        return engine.answer(states, questions, budgets, langs)

    def finish(self, ctx: PredictContext) -> Result:
        """Check what hooks changed, then build the document's result."""
        if self.inferred:
            self._check_budget(ctx)
        results = ctx.results
        if not self.inferred:
            return self._skipped(results)
        rewritten = self.scored != self.texts
        if self.single and not rewritten:
            return _with_windows(single_result(results), 1)
        if not results:
            warnings.warn(
                "laya: predict_long: a start hook left no states to score, so the call "
                "aggregated nothing and returns no answers",
                RuntimeWarning,
                stacklevel=3,
            )
            return _with_windows(empty_result(self.engine.model_name), 0)
        if not rewritten and len(results) != len(self.texts):
            raise ValueError(
                f"predict_long: the state was split into {len(self.texts)} windows and the call "
                f"returned {len(results)} results; an end hook must keep one result per window"
            )
        return self._aggregate(ctx, results, rewritten)

    def _skipped(self, results: object) -> Result:
        if not self.single and (not isinstance(results, (list, tuple)) or len(results) != 1):
            count = len(results) if isinstance(results, (list, tuple)) else results
            raise ValueError(
                f"predict_long: a start hook answered this state with {count} results; "
                f"ctx.skip() takes one result for the document, not one per window"
            )
        if not self.single:
            warnings.warn(
                "laya: predict_long: a hook answered the state before it was scanned, so no "
                "window decided the result and none is reported",
                RuntimeWarning,
                stacklevel=4,
            )
        return _with_windows(single_result(results), 0)

    def _check_budget(self, ctx: PredictContext) -> None:
        cfg = self.engine.config
        unchanged = (
            ctx.max_len is None and ctx.head_max_len is None and ctx.questions == self.questions
        )
        if unchanged or not ctx.questions:
            return
        max_len = cfg.max_len if ctx.max_len is None else ctx.max_len
        head_max_len = cfg.head_max_len if ctx.head_max_len is None else ctx.head_max_len
        heads = self.engine.heads(parse_questions(ctx.questions), head_max_len)
        room = min(state_room(h, max_len) for h in heads)
        if room < self.sized:
            raise ValueError(
                f"predict_long: after the start hooks ran, the questions and token budget "
                f"(max_len={max_len} head_max_len={head_max_len}) leave {room} state tokens per "
                f"window, but the scan was sized for {self.sized}; change budgets or questions "
                f"before the scan (outside the hooks) instead"
            )

    def _aggregate(self, ctx: PredictContext, results: list[Any], rewritten: bool) -> Result:
        answers = {}
        for qid, definition in (ctx.questions or {}).items():
            found = [i for i, r in enumerate(results) if qid in (r.get("answers") or {})]
            if not found and qid not in self.questions:
                continue
            if len(found) != len(results):
                raise ValueError(
                    f"predict_long: answer {qid!r} is missing from {len(results) - len(found)} of "
                    f"{len(results)} windows after prediction hooks"
                )
            best = _best_window(results, qid, (definition or {}).get("type"))
            answer = results[best]["answers"][qid]
            if not rewritten:
                start = self.starts[best]
                window = {
                    "index": best,
                    "token_start": start,
                    "token_end": min(start + self.size, self.n_tokens),
                    "count": len(results),
                }
                answer = {**answer, "window": window}
            answers[qid] = answer
        usage = merge_window_usage([r.get("usage") or {} for r in results])
        result = make_result(self.engine.model_name, answers, usage)
        if "calibration" in results[0]:
            result["calibration"] = results[0]["calibration"]
        return result


def _best_window(results: list[Any], qid: Any, qtype: Any) -> int:
    key = "noul" if qtype == "noul" else "answer_confidence"
    values = [results[i]["answers"][qid].get(key) or 0.0 for i in range(len(results))]
    return int(np.argmax(values))


def _with_windows(result: Any, windows: int) -> Result:
    out = dict(result)
    out["usage"] = {**(out.get("usage") or {}), "windows": windows}
    return cast(Result, out)  # what the engine or a hook answered, passed on as it is


def check_long_call(
    window: int | None, stride: int | None, batch_size: int | None, lang: object
) -> None:
    """The counts and language of a ``predict_long`` call, before any hook fires."""
    check_count("window", window)
    check_count("stride", stride)
    check_count("batch_size", batch_size, "windows")
    if lang is not None and not isinstance(lang, str):
        raise TypeError(f"lang must be a language code (one document), or None; got {lang!r}")
