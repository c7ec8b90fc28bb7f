"""Agent (and the shared Runtime core): encode -> backend forward -> decode, inside the lifecycle.

Every runtime differs only in the backend object that runs the forward pass; encoding,
batching, decoding, validation and the hook lifecycle live here once.
"""

from __future__ import annotations

import copy
import os
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .checkpoint import (
    CheckpointConfig,
    load_tokenizer,
    locate,
    read_config,
    resolve_name,
    warn_replaced_temperatures,
)
from .decoding import (
    MODEL_NAME,
    Temperatures,
    add_language_warnings,
    apply_confidence_gate,
    check_min_confidence,
    decode_answer,
    empty_result,
    language_temperatures,
    state_usage,
)
from .encoding import (
    Row,
    build_heads,
    encode_rows,
    pack_rows,
    plan_windows,
    state_room,
    tokenize_states,
    window_starts,
)
from .hooks import HookRegistry, PredictContext
from .lifecycle import policy_for, run_lifecycle
from .questions import Question, parse_questions

__all__ = ["Agent", "ONNXAgent", "Runtime", "load", "resolve_source"]

DEFAULT_MODEL = "convaiinnovations/laya"
# Padded tokens per forward pass. On CPUs, passes of a few thousand tokens stay cache-friendly
# and ran about twice as fast per token as 16k-token passes in benchmarks/agent.py; an
# accelerator wants bigger passes (its backend says so through ``batch_tokens``).
DEFAULT_MAX_BATCH_TOKENS = 4096


def resolve_source(model_id_or_path: Any, subfolder: str | None) -> tuple[str, str | None]:
    """Map a published name or alias (``english``, ``ml``, ``typed``...) to ``(repo, subfolder)``."""
    text = os.fspath(model_id_or_path)
    looks_local = (
        os.sep in text or "/" in text or text.startswith((".", "~")) or os.path.isdir(text)
    )
    if subfolder is None and not looks_local:
        spec = resolve_name(text)
        if spec is not None:
            return spec
    return text, subfolder


class Runtime(HookRegistry):
    """What every runtime shares: checkpoint files, tokenizer, validation, calls and hooks.

    Subclasses only choose the backend (``_make_backend``) that runs a padded pass.
    """

    model_name = MODEL_NAME
    backend: Any

    def __init__(
        self,
        model_id_or_path: Any,
        *,
        subfolder: str | None = None,
        token: str | None = None,
        revision: str | None = None,
        lang_temperatures: dict[str, Any] | None = None,
        max_batch_tokens: int | None = None,
        artifacts: tuple[str, ...] | None = None,
        hooks: Any = None,
        on_predict_start: Any = None,
        on_predict_end: Any = None,
        hooks_raise: bool = True,
        hooks_concurrent: bool = True,
        hooks_timeout: Any = None,
        **backend_options: Any,
    ) -> None:
        self._init_hooks(
            hooks, on_predict_start, on_predict_end, hooks_raise, hooks_concurrent, hooks_timeout
        )
        self.model_id_or_path = model_id_or_path
        repo, self.subfolder = resolve_source(model_id_or_path, subfolder)
        self.model_id = repo
        located = {"artifacts": artifacts} if artifacts else {}
        self.directory = locate(repo, self.subfolder, token=token, revision=revision, **located)
        self.cfg: CheckpointConfig = read_config(self.directory, repo)
        self.backend = self._make_backend(**backend_options)
        preferred = getattr(self.backend, "batch_tokens", DEFAULT_MAX_BATCH_TOKENS)
        self.max_batch_tokens = int(max_batch_tokens or preferred)
        self.tok = load_tokenizer(self.directory, self.cfg.raw.get("encoder"))
        self.temperatures = Temperatures(
            self.cfg.temperature,
            self.cfg.temperature_by_options,
            language_temperatures(lang_temperatures, self.cfg.raw.get("temperature", [1.0] * 3)),
        )
        warn_replaced_temperatures(self.cfg.replaced)

    @property
    def lang_temperatures(self) -> dict[str, Temperatures]:
        """Per-language temperature tables (keyed ``pt``, ``de``...); a call's ``lang`` picks one."""
        return self.temperatures.by_language

    def _make_backend(self, **options: Any) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self.model_id!r}, backend={self.backend.name!r})"

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Free the model; the runtime cannot answer afterwards."""
        self.backend.close()

    # ----------------------------------------------------------------------- public calls

    def predict_batch(
        self,
        states: Sequence[Any],
        questions: dict[Any, Any],
        batch_size: int | None = None,
        lang: str | None = None,
        hooks: Any = None,
        on_predict_start: Any = None,
        on_predict_end: Any = None,
        hooks_raise: bool | None = None,
        hooks_timeout: float | None = None,
        max_len: int | None = None,
        head_max_len: int | None = None,
        sort_by_length: bool = False,
        min_confidence: Any = None,
    ) -> list[dict[str, Any]]:
        """Answer ``questions`` for every state; one result per state, in input order.

        All (state, question) rows share as few forward passes as the token budget allows, packed
        by length whatever ``sort_by_length`` says (it cannot change answers); ``batch_size``
        caps the states per pass.
        """
        min_confidence = check_min_confidence(min_confidence)
        policy = policy_for(
            self,
            hooks=hooks,
            on_predict_start=on_predict_start,
            on_predict_end=on_predict_end,
            hooks_raise=hooks_raise,
            hooks_timeout=hooks_timeout,
        )
        ctx = PredictContext(
            states=states,
            questions=questions,
            model=self.model_id,
            agent=self,
            max_len=max_len,
            head_max_len=head_max_len,
        )
        run_lifecycle(
            policy,
            [ctx],
            lambda contexts: self._infer(contexts[0], batch_size, lang),
            finalize=lambda c: apply_confidence_gate(c.results, min_confidence),
        )
        return ctx.results

    def system_one(
        self,
        state: Any,
        questions: dict[Any, Any],
        lang: str | None = None,
        hooks: Any = None,
        on_predict_start: Any = None,
        on_predict_end: Any = None,
        hooks_raise: bool | None = None,
        hooks_timeout: float | None = None,
        max_len: int | None = None,
        head_max_len: int | None = None,
        min_confidence: Any = None,
    ) -> dict[str, Any]:
        """Answer ``questions`` about one state: ``predict_batch([state], ...)[0]``."""
        return self.predict_batch(
            [state],
            questions,
            lang=lang,
            hooks=hooks,
            on_predict_start=on_predict_start,
            on_predict_end=on_predict_end,
            hooks_raise=hooks_raise,
            hooks_timeout=hooks_timeout,
            max_len=max_len,
            head_max_len=head_max_len,
            min_confidence=min_confidence,
        )[0]

    predict = system_one

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
        scan = _Scan.prepare(self, state, questions, window, stride, aggregate)
        policy = policy_for(
            self,
            hooks=hooks,
            on_predict_start=on_predict_start,
            on_predict_end=on_predict_end,
            hooks_raise=hooks_raise,
            hooks_timeout=hooks_timeout,
        )
        ctx = PredictContext(
            states=list(scan.texts), questions=questions, model=self.model_id, agent=self
        )
        run_lifecycle(policy, [ctx], lambda contexts: scan.infer(contexts[0], batch_size, lang))
        return scan.finish(ctx)

    # ----------------------------------------------------------------------- inference

    def _infer(self, ctx: PredictContext, batch_size: int | None, lang: str | None) -> None:
        """Validate what the start hooks left in ``ctx`` and answer it."""
        states = ctx.states
        if isinstance(states, (str, bytes, dict)):
            raise TypeError(
                "predict_batch expects a list of states; pass a single state to "
                "predict()/system_one()."
            )
        states = list(states)
        if any(state is None for state in states):
            raise TypeError("state must not be None; pass a string, dict, or list")
        parsed = parse_questions(ctx.questions)
        if not parsed:
            ctx.results = [empty_result(self.model_name) for _ in states]
            return
        ctx.results = self._answer(states, parsed, ctx.max_len, ctx.head_max_len, batch_size, lang)

    def _answer(
        self,
        states: list[Any],
        questions: list[Question],
        max_len: int | None,
        head_max_len: int | None,
        batch_size: int | None,
        lang: str | None,
    ) -> list[dict[str, Any]]:
        """Encode every row, run the passes, decode answers and usage per state."""
        if not states:
            return []
        max_len = self.cfg.max_len if max_len is None else max_len
        head_max_len = self.cfg.head_max_len if head_max_len is None else head_max_len
        heads = build_heads(self.tok, questions, head_max_len)
        tokens = tokenize_states(self.tok, states)
        rows = encode_rows(self.tok, questions, heads, tokens, max_len, head_max_len)
        logits, act = self._run(rows, batch_size, len(questions))
        nq = len(questions)
        results = []
        for si, state_tokens in enumerate(tokens):
            span = range(si * nq, (si + 1) * nq)
            answers = {
                q.qid: decode_answer(q, logits[r], act[r], self.temperatures.for_question(q, lang))
                for q, r in zip(questions, span)
            }
            usage = state_usage(
                questions,
                [len(rows[r].ids) for r in span],
                len(state_tokens.ids),
                [rows[r].state_tokens_used for r in span],
                heads,
            )
            results.append({"model": self.model_name, "answers": answers, "usage": usage})
        add_language_warnings(results, states, self.cfg.raw.get("languages"))
        return results

    def _run(
        self, rows: list[Row], batch_size: int | None, n_questions: int
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Forward every row in length-packed passes; outputs come back in row order."""
        max_rows = batch_size * n_questions if batch_size and batch_size > 0 else None
        logits: list[Any] = [None] * len(rows)
        act: list[Any] = [None] * len(rows)
        passes = pack_rows(
            rows, self.tok.pad_id, self.max_batch_tokens, max_rows, self.backend.min_markers
        )
        for batch in passes:
            pass_logits, pass_act = self.backend.forward(batch)
            for j, r in enumerate(batch.rows):
                logits[r], act[r] = pass_logits[j], pass_act[j]
        return logits, act


class _Scan:
    """One predict_long call: its windows, and how to turn per-window answers into one."""

    def __init__(
        self,
        runtime: Runtime,
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
        cls, runtime: Runtime, state: Any, questions: Any, window: Any, stride: Any, aggregate: str
    ) -> _Scan:
        """Validate the call and cut the state into windows (before any hook fires)."""
        if state is None:
            raise TypeError("state must not be None; pass a string, dict, or list")
        parsed = parse_questions(questions)
        if aggregate != "auto":
            raise ValueError(f"predict_long: only aggregate='auto' is supported, got {aggregate!r}")
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

    def infer(self, ctx: PredictContext, batch_size: int | None, lang: str | None) -> None:
        """Score what the start hooks left (normally the windows)."""
        self.inferred = True
        self.scored = list(ctx.states) if isinstance(ctx.states, (list, tuple)) else ctx.states
        self.runtime._infer(ctx, batch_size, lang)

    def finish(self, ctx: PredictContext) -> dict[str, Any]:
        """Check what hooks changed, then build the document's result."""
        if self.inferred:
            self._check_budget(ctx)
        results = ctx.results
        if not self.inferred:
            return self._skipped(results)
        if self.single:
            return _with_windows(results[0], 1)
        rewritten = self.scored != self.texts
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
        return _with_windows(results[0], 0)

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
        return {"model": self.runtime.model_name, "answers": answers, "usage": usage}


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


class Agent(Runtime):
    """A Laya checkpoint answering on PyTorch (CUDA, then MPS, then CPU unless ``device=``)."""

    def __init__(
        self,
        model_id_or_path: Any = DEFAULT_MODEL,
        device: Any = None,
        token: str | None = None,
        subfolder: str | None = None,
        fast: bool = False,
        compile: bool = False,
        hooks: Any = None,
        on_predict_start: Any = None,
        on_predict_end: Any = None,
        hooks_raise: bool = True,
        hooks_concurrent: bool = True,
        hooks_timeout: Any = None,
        revision: str | None = None,
        lang_temperatures: dict[str, Any] | None = None,
        max_batch_tokens: int | None = None,
    ) -> None:
        super().__init__(
            model_id_or_path,
            subfolder=subfolder,
            token=token,
            revision=revision,
            lang_temperatures=lang_temperatures,
            max_batch_tokens=max_batch_tokens,
            hooks=hooks,
            on_predict_start=on_predict_start,
            on_predict_end=on_predict_end,
            hooks_raise=hooks_raise,
            hooks_concurrent=hooks_concurrent,
            hooks_timeout=hooks_timeout,
            device=device,
            fast=fast,
            compile=compile,
        )

    def _make_backend(self, device: Any = None, fast: bool = False, compile: bool = False) -> Any:
        from .backends.torch import TorchBackend

        return TorchBackend(self.directory, self.cfg, self.model_id, device, fast, compile)

    @property
    def device(self) -> Any:
        """The torch device the model runs on."""
        return self.backend.device

    @property
    def model(self) -> Any:
        """The underlying ``DecisionModel`` (a torch module)."""
        return self.backend.model


class ONNXAgent(Runtime):
    """A Laya checkpoint answering from its exported ONNX graph on ONNX Runtime (no torch)."""

    model_name = "laya-rl-agent-onnx"

    def __init__(
        self,
        model_id_or_path: Any,
        onnx_path: str | os.PathLike = "laya.onnx",
        subfolder: str | None = None,
        token: str | None = None,
        revision: str | None = None,
        hooks: Any = None,
        on_predict_start: Any = None,
        on_predict_end: Any = None,
        hooks_raise: bool = True,
        hooks_concurrent: bool = True,
        hooks_timeout: Any = None,
        lang_temperatures: dict[str, Any] | None = None,
        max_batch_tokens: int | None = None,
        providers: Sequence[Any] | None = None,
    ) -> None:
        from .backends.onnx import hub_files

        super().__init__(
            model_id_or_path,
            subfolder=subfolder,
            token=token,
            revision=revision,
            lang_temperatures=lang_temperatures,
            max_batch_tokens=max_batch_tokens,
            artifacts=hub_files(onnx_path),
            hooks=hooks,
            on_predict_start=on_predict_start,
            on_predict_end=on_predict_end,
            hooks_raise=hooks_raise,
            hooks_concurrent=hooks_concurrent,
            hooks_timeout=hooks_timeout,
            onnx_path=onnx_path,
            providers=providers,
        )

    def _make_backend(self, onnx_path: Any, providers: Sequence[Any] | None) -> Any:
        from .backends.onnx import ONNXBackend

        return ONNXBackend(self.directory, self.cfg, onnx_path, providers)


def load(
    model_id_or_path: Any = DEFAULT_MODEL, backend: str | None = None, **kwargs: Any
) -> Runtime:
    """Load a checkpoint by name, Hub id or local path; ``backend="onnx"`` gives an ONNXAgent."""
    if backend in (None, "torch", "pytorch"):
        return Agent(model_id_or_path, **kwargs)
    if backend == "onnx":
        return ONNXAgent(model_id_or_path, **kwargs)
    raise ValueError(f"unknown backend {backend!r}; use None (PyTorch) or 'onnx'")
