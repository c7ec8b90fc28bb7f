"""``predict_long``: a state longer than one sequence, read in overlapping windows.

A :class:`Scan` is one such call. ``prepare`` checks the call and cuts the state into window
texts (before any hook fires); the runtime's lifecycle then scores what the start hooks left;
``finish`` checks what the hooks changed and keeps, per question, the answer of the window that
decided it most confidently (``noul``: the highest P(true)), with that window's span.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from .decoding import empty_result
from .encoding import build_heads, state_room, tokenize_states
from .errors import InvalidRequest
from .hooks import PredictContext
from .lifecycle import HookOptions, hook_options, policy_for, run_lifecycle, single_result
from .questions import check_count, parse_questions
from .states import check_state

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["LongDocumentCalls", "LongOptions", "Scan"]


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
    requested = window if explicit else budget
    room = min(rooms) if rooms else requested
    if room <= 0:
        raise InvalidRequest(
            "predict_long: the questions' options fill the whole sequence (max_len="
            f"{config_max_len}, head_max_len={config_head_max_len}), so no window can carry any "
            "of the state; shorten the options or use fewer of them"
        )
    notes, size = [], requested
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
        if size < requested and stride <= requested:
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


class Scan:
    """One predict_long call: its windows, and how to turn per-window answers into one."""

    def __init__(
        self,
        runtime: Any,
        questions: dict,
        texts: list[str],
        starts: list[int],
        size: int,
        n_tokens: int,
        sized: int,
        single: bool,
    ) -> None:
        self.runtime = runtime
        self.questions = copy.deepcopy(questions)
        self.texts = texts
        self.starts = starts
        self.size = size
        self.n_tokens = n_tokens
        self.sized = sized
        self.single = single
        self.inferred = False
        self.scored: list[Any] = []

    @classmethod
    def prepare(
        cls, runtime: Any, state: Any, questions: Any, window: Any, stride: Any, aggregate: str
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
        cfg, tok = runtime.cfg, runtime.tok
        heads = build_heads(tok, parsed, cfg.head_max_len)
        plan, notes = plan_windows(
            [state_room(h, cfg.max_len) for h in heads],
            cfg.max_len,
            cfg.head_max_len,
            window,
            stride,
        )
        for note in notes:
            warnings.warn(note, RuntimeWarning, stacklevel=3)
        ids = tokenize_states(tok, [state])[0].ids
        limit = plan.size if plan.explicit else plan.room
        if len(ids) <= limit:
            return cls(
                runtime,
                questions,
                [state],
                [0],
                plan.size,
                len(ids),
                max(plan.size, len(ids)),
                True,
            )
        starts = window_starts(len(ids), plan)
        texts = [tok.decode(ids[s : s + plan.size]) for s in starts]
        return cls(runtime, questions, texts, starts, plan.size, len(ids), plan.size, False)

    def infer(self, ctx: PredictContext, answer: Callable[[PredictContext], None]) -> None:
        """Score what the start hooks left (normally the windows) with the runtime's ``answer``."""
        self.inferred = True
        self.scored = list(ctx.states) if isinstance(ctx.states, (list, tuple)) else ctx.states
        answer(ctx)

    def finish(self, ctx: PredictContext) -> dict[str, Any]:
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
            return _with_windows(empty_result(self.runtime.model_name), 0)
        if not rewritten and len(results) != len(self.texts):
            raise ValueError(
                f"predict_long: the state was split into {len(self.texts)} windows and the call "
                f"returned {len(results)} results; an end hook must keep one result per window"
            )
        return self._aggregate(ctx, results, rewritten)

    def _skipped(self, results: Any) -> dict[str, Any]:
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
        cfg = self.runtime.cfg
        unchanged = (
            ctx.max_len is None and ctx.head_max_len is None and ctx.questions == self.questions
        )
        if unchanged or not ctx.questions:
            return
        max_len = cfg.max_len if ctx.max_len is None else ctx.max_len
        head_max_len = cfg.head_max_len if ctx.head_max_len is None else ctx.head_max_len
        heads = build_heads(self.runtime.tok, parse_questions(ctx.questions), head_max_len)
        room = min(state_room(h, max_len) for h in heads)
        if room < self.sized:
            raise ValueError(
                f"predict_long: after the start hooks ran, the questions and token budget "
                f"(max_len={max_len} head_max_len={head_max_len}) leave {room} state tokens per "
                f"window, but the scan was sized for {self.sized}; change budgets or questions "
                f"before the scan (outside the hooks) instead"
            )

    def _aggregate(
        self, ctx: PredictContext, results: list[dict], rewritten: bool
    ) -> dict[str, Any]:
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
                answer = {
                    **answer,
                    "window": {
                        "index": best,
                        "token_start": start,
                        "token_end": min(start + self.size, self.n_tokens),
                        "count": len(results),
                    },
                }
            answers[qid] = answer
        usage = _merge_usage([r.get("usage") or {} for r in results])
        usage["output_tokens"] = 0
        usage["windows"] = len(results)
        result = {"model": self.runtime.model_name, "answers": answers, "usage": usage}
        if "calibration" in results[0]:
            result["calibration"] = results[0]["calibration"]
        return result


def _best_window(results: list[dict], qid: Any, qtype: Any) -> int:
    key = "noul" if qtype == "noul" else "answer_confidence"
    values = [results[i]["answers"][qid].get(key) or 0.0 for i in range(len(results))]
    return int(np.argmax(values))


def _merge_usage(blocks: list[dict]) -> dict[str, Any]:
    """Sum numbers (so ``truncated`` counts cut windows), merge dicts, keep the last of others."""
    merged: dict[str, Any] = {}
    for block in blocks:
        for key, value in block.items():
            if isinstance(value, (int, float)) and isinstance(merged.get(key, 0), (int, float)):
                merged[key] = merged.get(key, 0) + value
            elif isinstance(value, dict):
                merged[key] = {**merged.get(key, {}), **value}
            else:
                merged[key] = value
    return merged


def _with_windows(result: Any, windows: int) -> dict[str, Any]:
    out = dict(result)
    out["usage"] = {**(out.get("usage") or {}), "windows": windows}
    return out


class LongOptions(TypedDict, total=False):
    """The keyword options of ``answer_long``: ``predict_long``'s scan arguments, and
    ``defaults=False`` to leave the process-wide default hooks out."""

    window: int | None
    stride: int | None
    aggregate: str
    batch_size: int | None
    lang: str | None
    defaults: bool


class LongDocumentCalls:
    """``predict_long`` and ``answer_long``, a mixin of :class:`laya.runtime.Runtime`: one
    lifecycle around a :class:`Scan`, its windows scored by the runtime's own inference step."""

    model_id: str
    _infer: Callable[..., None]

    def answer_long(
        self, state: Any, questions: dict[Any, Any], **options: Unpack[LongOptions]
    ) -> dict[str, Any]:
        """The long-document scan (see :meth:`predict_long`) through this runtime's lifecycle."""
        unknown = sorted(set(options) - LongOptions.__optional_keys__)
        if unknown:
            known = ", ".join(sorted(LongOptions.__optional_keys__))
            raise TypeError(f"answer_long() takes no option {', '.join(unknown)}; it takes {known}")
        return self._scan(state, questions, HookOptions(), options)

    def predict_long(
        self,
        state: Any,
        questions: dict[Any, Any],
        window: int | None = None,
        stride: int | None = None,
        aggregate: str = "auto",
        batch_size: int | None = None,
        lang: str | None = None,
        hooks: Any = None,
        on_predict_start: Any = None,
        on_predict_end: Any = None,
        hooks_raise: bool | None = None,
        hooks_timeout: float | None = None,
    ) -> dict[str, Any]:
        """Answer about a state longer than one sequence by scanning overlapping windows.

        Each answer comes from the window that decided it most confidently (``noul``: the highest
        P(true)); ``answer["window"]`` names that span and ``usage["windows"]`` counts windows.
        """
        options = hook_options(hooks, on_predict_start, on_predict_end, hooks_raise, hooks_timeout)
        call = LongOptions(
            window=window, stride=stride, aggregate=aggregate, batch_size=batch_size, lang=lang
        )
        return self._scan(state, questions, options, call)

    def _scan(
        self, state: Any, questions: dict[Any, Any], options: HookOptions, call: LongOptions
    ) -> dict[str, Any]:
        """One context for a document: start (states = its windows) -> one pass -> end."""
        window, stride = call.get("window"), call.get("stride")
        _check_long_call(call)
        scan = Scan.prepare(self, state, questions, window, stride, call.get("aggregate", "auto"))
        policy = policy_for(self, defaults=call.get("defaults", True), **options)
        ctx = PredictContext(
            states=list(scan.texts), questions=questions, model=self.model_id, agent=self
        )
        batch_size, lang = call.get("batch_size"), call.get("lang")
        run_lifecycle(
            policy,
            [ctx],
            lambda contexts: scan.infer(contexts[0], lambda c: self._infer(c, batch_size, lang)),
        )
        return scan.finish(ctx)


def _check_long_call(call: LongOptions) -> None:
    """The counts and language of a ``predict_long`` call, before any hook fires."""
    check_count("window", call.get("window"))
    check_count("stride", call.get("stride"))
    check_count("batch_size", call.get("batch_size"), "windows")
    lang = call.get("lang")
    if lang is not None and not isinstance(lang, str):
        raise TypeError(f"lang must be a language code (one document), or None; got {lang!r}")
