"""Agent and ONNXAgent: encode -> backend forward -> decode, inside the hook lifecycle.

Both are a :class:`Runtime` holding a different backend object (``backends/base.py``); encoding,
batching, decoding, validation and the hook lifecycle live here once. What a Router (or any
caller that composes runtimes) may rely on is the small :class:`RuntimeProtocol`: ``answer``,
``answer_long`` and ``close``. The seed's ``predict_*`` methods are thin entry points over it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, runtime_checkable

import numpy as np

from .calibration import Calibration, attach_calibration
from .checkpoint import (
    ARTIFACTS,
    CheckpointConfig,
    encoder_positions,
    load_tokenizer,
    locate,
    read_config,
    resolve_source,
    snapshot_revision,
    warn_replaced_temperatures,
)
from .deadline import check_deadline
from .decoding import (
    MODEL_NAME,
    Temperatures,
    add_language_warnings,
    empty_result,
    language_temperatures,
    state_usage,
)
from .encoding import (
    Budgets,
    Row,
    build_heads,
    check_budgets,
    encode_rows,
    pack_rows,
    tokenize_states,
)
from .errors import InvalidRequest, short_traceback
from .gate import apply_confidence_gate, check_min_confidence
from .hooks import HookRegistry, PredictContext
from .lifecycle import HookOptions, hook_options, policy_for, run_lifecycle, single_result
from .many_options import ManyOptionCalls
from .questions import Question, check_count, parse_questions
from .scan import LongDocumentCalls, LongOptions
from .states import check_state
from .tournament import ChoiceMode, answer_with_mode, choice_mode
from .typed import Decider

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Agent", "AnswerOptions", "ONNXAgent", "Runtime", "RuntimeProtocol", "load"]

DEFAULT_MODEL = "convaiinnovations/laya"
Lang = str | Sequence[str | None] | None


class AnswerOptions(TypedDict, total=False):
    """The keyword options of ``answer``: ``lang`` is one language code for every state, or one
    per state; ``None`` budgets are the checkpoint's; ``defaults=False`` leaves the process-wide
    default hooks out (a Router fires those once, at its own level)."""

    lang: Lang
    max_len: int | None
    head_max_len: int | None
    batch_size: int | None
    defaults: bool
    mode: ChoiceMode | None


@runtime_checkable
class RuntimeProtocol(Protocol):
    """What a Router needs of a runtime, and all it may use: both calls run the runtime's own
    lifecycle with its installed hooks and policy."""

    def answer(
        self, states: Sequence[Any], questions: dict[Any, Any], **options: Unpack[AnswerOptions]
    ) -> list[dict[str, Any]]: ...

    def answer_long(
        self, state: Any, questions: dict[Any, Any], **options: Unpack[LongOptions]
    ) -> dict[str, Any]: ...

    def close(self) -> None: ...


class Runtime(HookRegistry, ManyOptionCalls, LongDocumentCalls, Decider):
    """What every runtime shares: checkpoint files, tokenizer, validation, calls and hooks.

    Subclasses only choose the backend (``_make_backend``) that runs a padded pass.
    """

    model_name = MODEL_NAME

    def __init__(
        self,
        model_id_or_path: Any,
        *,
        subfolder: str | None = None,
        token: str | None = None,
        revision: str | None = None,
        lang_temperatures: dict[str, Any] | None = None,
        max_batch_tokens: int | None = None,
        artifacts: tuple[str, ...] = ARTIFACTS,
        calibration: Any = None,
        **backend_options: Any,
    ) -> None:
        check_count("max_batch_tokens", max_batch_tokens)  # a bad value costs no loading
        self.model_id_or_path = model_id_or_path
        self.model_id, self.subfolder = resolve_source(model_id_or_path, subfolder)
        self.directory = locate(
            self.model_id, self.subfolder, token, revision, artifacts, str(model_id_or_path)
        )
        self.revision = snapshot_revision(self.directory)
        self.cfg: CheckpointConfig = read_config(self.directory, self.model_id)
        self.positions = encoder_positions(self.directory)
        self.calibration: Calibration | None = attach_calibration(
            calibration, self.cfg.raw, str(model_id_or_path)
        )  # a file for another checkpoint is refused before the weights are read
        self.backend = self._make_backend(**backend_options)
        self.max_batch_tokens = int(max_batch_tokens or self.backend.batch_tokens)
        self.tok = load_tokenizer(self.directory, self.cfg.raw.get("encoder"))
        self.temperatures = Temperatures(
            self.cfg.temperature,
            self.cfg.temperature_by_options,
            language_temperatures(lang_temperatures, self.cfg.raw.get("temperature", [1.0] * 3)),
        )
        warn_replaced_temperatures(self.cfg.replaced)
        if self.calibration is not None:
            self.temperatures = self.calibration.temperatures(self.temperatures)
        self.closed = False

    @property
    def precision(self) -> str:
        """What the forward computes in: ``fp32``, ``bf16``, ``fp16`` or ``int8`` (ONNX graphs)."""
        return self.backend.precision

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
        if not self.closed:
            self.closed = True
            self.backend.close()

    # ----------------------------------------------------------------------- the protocol

    def answer(
        self, states: Sequence[Any], questions: dict[Any, Any], **options: Unpack[AnswerOptions]
    ) -> list[dict[str, Any]]:
        """One result per state, in input order, through this runtime's own lifecycle."""
        return self._batch(states, questions, HookOptions(), **options)

    # ----------------------------------------------------------------------- public calls

    def predict_batch(
        self,
        states: Sequence[Any],
        questions: dict[Any, Any],
        batch_size: int | None = None,
        hooks: Any = None,
        on_predict_start: Any = None,
        on_predict_end: Any = None,
        hooks_raise: bool | None = None,
        hooks_timeout: float | None = None,
        max_len: int | None = None,
        head_max_len: int | None = None,
        sort_by_length: bool = False,
        *,
        lang: Lang = None,
        min_confidence: Any = None,
        tournament: Any = None,
        shortlist: int | None = None,
    ) -> list[dict[str, Any]]:
        """Answer ``questions`` for every state; one result per state, in input order.

        All (state, question) rows share as few forward passes as the token budget allows, packed
        by length whatever ``sort_by_length`` says (it cannot change answers); ``batch_size``
        caps the states per pass. ``tournament`` / ``shortlist``: see :meth:`predict_tournament`
        and :meth:`predict_shortlist`.
        """
        options = hook_options(hooks, on_predict_start, on_predict_end, hooks_raise, hooks_timeout)
        return self._batch(
            states,
            questions,
            options,
            lang=lang,
            max_len=max_len,
            head_max_len=head_max_len,
            batch_size=batch_size,
            min_confidence=min_confidence,
            mode=choice_mode(tournament, shortlist),
        )

    def system_one(
        self,
        state: Any,
        questions: dict[Any, Any],
        hooks: Any = None,
        on_predict_start: Any = None,
        on_predict_end: Any = None,
        hooks_raise: bool | None = None,
        hooks_timeout: float | None = None,
        max_len: int | None = None,
        head_max_len: int | None = None,
        *,
        lang: str | None = None,
        min_confidence: Any = None,
        tournament: Any = None,
        shortlist: int | None = None,
    ) -> dict[str, Any]:
        """Answer ``questions`` about one state: ``predict_batch([state], ...)[0]``."""
        options = hook_options(hooks, on_predict_start, on_predict_end, hooks_raise, hooks_timeout)
        mode = choice_mode(tournament, shortlist)
        call = dict(lang=lang, max_len=max_len, head_max_len=head_max_len, mode=mode)
        return single_result(
            self._batch([state], questions, options, min_confidence=min_confidence, **call)
        )

    predict = system_one

    # ----------------------------------------------------------------------- one lifecycle

    def _batch(
        self,
        states: Sequence[Any],
        questions: dict[Any, Any],
        options: HookOptions,
        *,
        defaults: bool = True,
        lang: Lang = None,
        max_len: int | None = None,
        head_max_len: int | None = None,
        batch_size: int | None = None,
        min_confidence: Any = None,
        mode: ChoiceMode | None = None,
    ) -> list[dict[str, Any]]:
        """One context for all ``states``: start -> inference -> end, the gate just before end."""
        min_confidence = check_min_confidence(min_confidence)
        if self.calibration is not None:
            min_confidence = self.calibration.gate(min_confidence)
        policy = policy_for(self, defaults=defaults, **options)
        ctx = PredictContext(
            states=states,
            questions=questions,
            model=self.model_id,
            agent=self,
            max_len=max_len,
            head_max_len=head_max_len,
        )
        _per_state(lang, states)  # call arguments no hook can change raise before any event
        check_count("batch_size", batch_size, "states")
        run_lifecycle(
            policy,
            [ctx],
            lambda contexts: self._infer(contexts[0], batch_size, lang, mode),
            finalize=lambda c: apply_confidence_gate(c.results, min_confidence),
        )
        return ctx.results

    # ----------------------------------------------------------------------- inference

    def _infer(
        self, ctx: PredictContext, batch_size: int | None, lang: Lang, mode: Any = None
    ) -> None:
        """Validate what the start hooks left in ``ctx`` and answer it (every round inside)."""
        states = ctx.states
        if isinstance(states, (str, bytes, dict)):
            raise TypeError(
                "predict_batch expects a list of states; pass a single state to "
                "predict()/system_one()."
            )
        states = list(states)
        if any(state is None for state in states):
            raise TypeError("state must not be None; pass a string, dict, or list")
        for i, state in enumerate(states):
            check_state(state, "state" if len(states) == 1 else f"states[{i}]")
        parsed = parse_questions(ctx.questions)
        budgets = self._budgets(ctx.max_len, ctx.head_max_len, batch_size)
        if not parsed:
            ctx.results = [empty_result(self.model_name) for _ in states]
            return
        langs = _per_state(lang, states)
        answer = self._answer if mode is None else partial(answer_with_mode, self, mode=mode)
        ctx.results = answer(states, parsed, budgets, langs)
        if self.calibration is not None:  # whichever path answered: the file's stamp
            for result in ctx.results:
                result["calibration"] = self.calibration.stamp
        add_language_warnings(ctx.results, states, self.cfg.raw.get("languages"))

    def _answer(
        self,
        states: list[Any],
        questions: list[Question],
        budgets: Budgets,
        langs: list[str | None],
    ) -> list[dict[str, Any]]:
        """Encode every row, run the passes, decode answers and usage per state."""
        if not states:
            return []
        heads, tokens, rows, logits, act = self._forward(states, questions, budgets)
        nq = len(questions)
        results = []
        for si, (state_tokens, lang) in enumerate(zip(tokens, langs)):
            span = range(si * nq, (si + 1) * nq)
            answers = {
                q.qid: self.temperatures.decode(q, logits[r], act[r], lang)
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
        return results

    def _forward(
        self, states: list[Any], questions: list[Question], budgets: Budgets
    ) -> tuple[list[Any], list[Any], list[Row], list[np.ndarray], list[np.ndarray]]:
        """Heads, state tokens, rows and the raw logits of every (state, question) row."""
        heads = build_heads(self.tok, questions, budgets.head_max_len)
        tokens = tokenize_states(self.tok, states)
        rows = encode_rows(self.tok, questions, heads, tokens, *budgets[:2])
        logits, act = self._run(rows, budgets.batch_size, len(questions))
        return heads, tokens, rows, logits, act

    def _budgets(
        self, max_len: int | None, head_max_len: int | None, batch_size: int | None = None
    ) -> Budgets:
        """A call's budgets (None: the checkpoint's), within what the encoder embeds."""
        max_len = self.cfg.max_len if max_len is None else max_len
        head_max_len = self.cfg.head_max_len if head_max_len is None else head_max_len
        check_budgets(max_len, head_max_len, self.positions)
        return Budgets(max_len, head_max_len, batch_size)

    def raw_logits(self, states: Sequence[Any], questions: dict[Any, Any]) -> list[np.ndarray]:
        """Marker logits of every (state, question) row, state-major, in slot order, before any
        temperature and without hooks: what ``laya.calibrate`` fits on."""
        budgets = self._budgets(None, None)
        return self._forward(list(states), parse_questions(questions), budgets)[3]

    def _run(
        self, rows: list[Row], batch_size: int | None, n_questions: int
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Forward every row in length-packed passes; outputs come back in row order."""
        if self.closed:
            raise RuntimeError(f"{self!r} was closed (evicted from its Router?); load it again")
        max_rows = batch_size * n_questions if batch_size else None
        logits: list[Any] = [None] * len(rows)
        act: list[Any] = [None] * len(rows)
        for batch in pack_rows(rows, self.tok.pad_id, self.max_batch_tokens, max_rows):
            check_deadline()
            pass_logits, pass_act = self.backend.forward(batch)
            for j, r in enumerate(batch.rows):
                logits[r], act[r] = pass_logits[j], pass_act[j]
        return logits, act


def _per_state(lang: Lang, states: Any) -> list[str | None]:
    """One language (or None) per state: a single code applies to all of them."""
    n = len(states) if isinstance(states, (list, tuple)) else 1
    if lang is None or isinstance(lang, str):
        return [lang] * n
    if not isinstance(lang, Sequence) or not all(c is None or isinstance(c, str) for c in lang):
        raise TypeError(
            f"lang must be a language code, or a list of one code (or None) per state; got {lang!r}"
        )
    langs = list(lang)
    if len(langs) != n:
        raise InvalidRequest(
            f"lang holds {len(langs)} languages for {n} states; give one per state or a single "
            "code (a start hook that changes the number of states cannot keep per-state languages)"
        )
    return langs


class Agent(Runtime):
    """A Laya checkpoint answering on PyTorch (CUDA, then MPS, then CPU unless ``device=``)."""

    @short_traceback
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
        expected_sha256: str | None = None,
        calibration: Any = None,
        *,
        precision: str | None = None,
    ) -> None:
        self._init_hooks(
            hooks, on_predict_start, on_predict_end, hooks_raise, hooks_concurrent, hooks_timeout
        )
        super().__init__(
            model_id_or_path,
            subfolder=subfolder,
            token=token,
            revision=revision,
            lang_temperatures=lang_temperatures,
            max_batch_tokens=max_batch_tokens,
            calibration=calibration,
            device=device,
            fast=fast,
            compile=compile,
            expected_sha256=expected_sha256,
            precision=precision,
        )

    def _make_backend(self, **options: Any) -> Any:
        from .backends.torch import TorchBackend

        return TorchBackend(self.directory, self.cfg, self.model_id, **options)

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

    @short_traceback
    def __init__(
        self,
        model_id_or_path: Any,
        onnx_path: str | os.PathLike = "laya.onnx",
        subfolder: str | None = None,
        hooks: Any = None,
        on_predict_start: Any = None,
        on_predict_end: Any = None,
        hooks_raise: bool = True,
        hooks_concurrent: bool = True,
        hooks_timeout: Any = None,
        token: str | None = None,
        revision: str | None = None,
        lang_temperatures: dict[str, Any] | None = None,
        max_batch_tokens: int | None = None,
        providers: Sequence[Any] | None = None,
        expected_sha256: str | None = None,
        calibration: Any = None,
    ) -> None:
        from .backends.onnx import hub_files

        self._init_hooks(
            hooks, on_predict_start, on_predict_end, hooks_raise, hooks_concurrent, hooks_timeout
        )
        super().__init__(
            model_id_or_path,
            subfolder=subfolder,
            token=token,
            revision=revision,
            lang_temperatures=lang_temperatures,
            max_batch_tokens=max_batch_tokens,
            calibration=calibration,
            artifacts=hub_files(onnx_path),
            onnx_path=onnx_path,
            providers=providers,
            expected_sha256=expected_sha256,
        )

    def _make_backend(self, **options: Any) -> Any:
        from .backends.onnx import ONNXBackend

        return ONNXBackend(self.directory, self.cfg, source=str(self.model_id_or_path), **options)


@short_traceback
def load(
    model_id_or_path: Any = DEFAULT_MODEL, backend: str | None = None, **kwargs: Any
) -> Runtime:
    """Load a checkpoint by name, Hub id or local path; ``backend="onnx"`` gives an ONNXAgent."""
    if backend in (None, "torch", "pytorch"):
        return Agent(model_id_or_path, **kwargs)
    if backend == "onnx":
        return ONNXAgent(model_id_or_path, **kwargs)
    raise InvalidRequest(f"unknown backend {backend!r}; use None (PyTorch) or 'onnx'")
