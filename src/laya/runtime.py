"""Agent and ONNXAgent: an engine inside the hook lifecycle, behind the seed's public calls.

A :class:`Runtime` holds one :class:`~laya.engine.engine.Engine` (the checkpoint's tokenizer, budgets,
backend and decoding); :class:`Agent` and :class:`ONNXAgent` only choose the backend it is built
with. Every public call goes through one funnel, :meth:`Runtime._call`: context -> policy ->
``run_lifecycle`` -> strategy -> post-steps (docs/architecture.md). What a Router (or any caller
composing runtimes) may rely on is :class:`RuntimeProtocol`: ``answer``, ``answer_long``, ``close``.
"""

from __future__ import annotations

import functools
import os
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, TypeVar, cast, runtime_checkable

import numpy as np

from .checkpoint import (
    ARTIFACTS,
    BUNDLED,
    CheckpointConfig,
    Tokenizer,
    encoder_positions,
    load_tokenizer,
    locate,
    read_config,
    resolve_source,
    snapshot_revision,
    warn_replaced_temperatures,
)
from .checkpoint.config import TEMPERATURE_RANGE
from .checkpoint.revisions import split_digests, verify_digests
from .engine.automation import Certification
from .engine.calibration import (
    Calibration,
    attach_calibration,
    calibration_payload,
    read_calibration,
    write_json,
)
from .engine.contract import Backend
from .engine.decoding import MODEL_NAME, Temperatures, language_temperatures
from .engine.engine import Engine, Strategy
from .engine.fitting import MIN_BINNING_BUCKET_N
from .engine.gate import check_min_confidence
from .engine.questions import QTYPES, check_count, parse_questions
from .engine.result import Result, as_plain, finish_results, results_of, single_result
from .engine.seams import PublishedTokenizer, published
from .engine.states import check_state
from .engine.strategies.choices import whole_at_least
from .engine.strategies.long_documents import Scan, check_long_call
from .engine.strategies.shortlist import CachedEmbedder, Embedder
from .engine.strategies.tournament import ChoiceMode, answer_with_mode
from .errors import BackendUnavailable, CheckpointUnavailable, InvalidRequest
from .hooks import HookRegistry, PredictContext
from .hooks.lifecycle import policy_for, run_lifecycle
from .hooks.registry import HookArguments
from .request import Lang, Request
from .run_modes.compile import configure_inductor_cache, warmup_enabled
from .run_modes.selection import install, mode_for, normalise
from .typed import decisions as typed_decisions
from .typed import values as typed_values

if TYPE_CHECKING:
    import torch
    from typing_extensions import Unpack

    from .engine.backends.onnx import Provider
    from .engine.backends.torch import DecisionModel, TorchBackend

__all__ = [
    "MIN_BINNING_BUCKET_N",
    "QTYPES",
    "TEMP_MAX",
    "TEMP_MIN",
    "Agent",
    "AnswerOptions",
    "CheckpointFiles",
    "LongOptions",
    "ONNXAgent",
    "RLAgent",
    "Runtime",
    "RuntimeProtocol",
    "embed_fn_from_agent",
    "load",
]

DEFAULT_MODEL = "convaiinnovations/laya"
TEMP_MIN, TEMP_MAX = TEMPERATURE_RANGE


class AnswerOptions(TypedDict, total=False):
    """The keyword options of ``answer``: ``lang`` is one language code for every state, or one
    per state; ``None`` budgets are the checkpoint's; ``defaults=False`` leaves the process-wide
    default hooks out (a Router fires those once, at its own level)."""

    lang: Lang
    max_len: int | None
    head_max_len: int | None
    batch_size: int | None
    min_confidence: object
    defaults: bool
    mode: ChoiceMode | None


class LongOptions(TypedDict, total=False):
    """The keyword options of ``answer_long``: ``predict_long``'s scan arguments,
    ``min_confidence``, and ``defaults=False`` to leave the process-wide default hooks out."""

    window: int | None
    stride: int | None
    aggregate: str
    batch_size: int | None
    lang: str | None
    min_confidence: object
    defaults: bool


@runtime_checkable
class RuntimeProtocol(Protocol):
    """What a Router needs of a runtime, and all it may use: both calls run the runtime's own
    lifecycle with its installed hooks and policy."""

    def answer(
        self, states: Sequence[object], questions: dict[Any, Any], **options: Unpack[AnswerOptions]
    ) -> list[Result]: ...

    def answer_long(
        self, state: object, questions: dict[Any, Any], **options: Unpack[LongOptions]
    ) -> Result: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class CheckpointFiles:
    """Where a runtime's checkpoint lies, as a backend factory reads it."""

    directory: Path
    config: CheckpointConfig
    model_id: str
    source: str


BackendFactory = Callable[[CheckpointFiles], Backend]


@dataclass(frozen=True)
class Lookup:
    """Where a runtime finds its checkpoint's files and what it checks them against: the
    Hub ``subfolder``, ``token`` and ``revision``, the ``artifacts`` to fetch, the expected
    ``digests`` per file and the exported ``graph`` (an ONNXAgent's)."""

    subfolder: str | None = None
    token: str | None = None
    revision: str | None = None
    artifacts: tuple[str, ...] = ARTIFACTS
    digests: Mapping[str, str] | None = None
    graph: str | os.PathLike[str] | None = None


class Runtime(HookRegistry):
    """A loaded checkpoint answering through the hook lifecycle; the backend is injected."""

    decision = typed_decisions.decision  # the decision functions, the runner their first parameter
    decision_batch = typed_decisions.decision_batch
    decide = typed_values.decide
    decide_batch = typed_values.decide_batch

    default_model_name = MODEL_NAME  # what results name this class's model (``model``)

    def __init__(
        self,
        model_id_or_path: object,
        make_backend: BackendFactory,
        hooks: HookArguments,
        lookup: Lookup,
        *,
        lang_temperatures: dict[str, object] | None = None,
        max_batch_tokens: int | None = None,
        calibration: object = None,
    ) -> None:
        HookRegistry.__init__(self, *hooks)  # bad hook arguments raise first
        check_count("max_batch_tokens", max_batch_tokens)  # a bad value costs no loading
        self.model_id_or_path = model_id_or_path
        self.model_id, self.subfolder = resolve_source(model_id_or_path, lookup.subfolder)
        self.directory = locate(
            self.model_id,
            self.subfolder,
            lookup.token,
            lookup.revision,
            lookup.artifacts,
            str(model_id_or_path),
        )
        self.revision = snapshot_revision(self.directory)
        verify_digests(self.directory, lookup.digests, lookup.graph)  # before any file is read
        config = read_config(self.directory, self.model_id)
        self.calibration: Calibration | None = attach_calibration(
            calibration, config.file, str(model_id_or_path)
        )  # a file for another checkpoint is refused before the weights are read
        files = CheckpointFiles(self.directory, config, self.model_id, str(model_id_or_path))
        backend = make_backend(files)
        tokenizer = load_tokenizer(self.directory, config.raw.get("encoder"))
        temperatures = Temperatures(
            config.temperature,
            config.temperature_by_options,
            language_temperatures(lang_temperatures, config.raw.get("temperature", [1.0] * 3)),
        )
        warn_replaced_temperatures(config.replaced)
        if self.calibration is not None:
            temperatures = self.calibration.temperatures(temperatures)
        self.engine = Engine(
            model_name=self.default_model_name,
            config=config,
            tokenizer=tokenizer,
            backend=backend,
            temperatures=temperatures,
            positions=encoder_positions(self.directory),
            max_batch_tokens=max_batch_tokens,
        )
        self._embedder: CachedEmbedder | None = None
        self._embedder_lock = threading.Lock()

    # ----------------------------------------------------------------------- what it holds

    @property
    def model_name(self) -> str:
        """The name results carry under ``model`` (the class's ``default_model_name`` unless set:
        mini's ONNX start-up answers under PyTorch's name, laya.cli.onnx_mini)."""
        return self.engine.model_name

    @model_name.setter
    def model_name(self, name: str) -> None:
        self.engine.model_name = name

    @property
    def checkpoint_config(self) -> CheckpointConfig:
        """The checkpoint's ``rl_agent_config.json``, parsed and checked."""
        return self.engine.config

    @property
    def checkpoint_tokenizer(self) -> Tokenizer:
        """The checkpoint's tokenizer, as the engine uses it."""
        return self.engine.tokenizer

    @property
    def cfg(self) -> dict[str, Any]:
        """The checkpoint's config as the published dict: read it, unpack it, write it (a new
        ``max_len`` or ``head_max_len`` budgets the calls after it, docs/migrating.md)."""
        return self.engine.config.raw

    @property
    def tok(self) -> PublishedTokenizer:
        """The checkpoint's tokenizer as the published one: a Hugging Face fast tokenizer
        (``tok(text)``, ``encode``, ``decode``, ``pad_token_id``...) over the same vocabulary."""
        return published().tokenizer(self.engine.tokenizer)

    def _to_internal(self, question: Mapping[str, Any]) -> dict[str, Any]:
        """A question in the published runtime's internal form (``t``, ``ins``, ``crit``...)."""
        return published().internal_question(question)

    @property
    def backend(self) -> str:
        """The backend's name: ``eager`` or ``compile`` (PyTorch), ``onnx`` (ONNX Runtime)."""
        backend = self.engine.backend
        return str(getattr(backend, "mode", backend.name))

    @property
    def backend_object(self) -> Backend:
        """The backend object that runs the forward passes."""
        return self.engine.backend

    @property
    def temperatures(self) -> Temperatures:
        """The temperatures answers are decoded with (a calibration file's, if one was given)."""
        return self.engine.temperatures

    @property
    def positions(self) -> int | None:
        """Positions the encoder embeds (None: unknown)."""
        return self.engine.positions

    @property
    def max_batch_tokens(self) -> int:
        """Padded tokens per packed pass."""
        return self.engine.max_batch_tokens

    @property
    def precision(self) -> str:
        """What the forward computes in: ``fp32``, ``bf16``, ``fp16`` or ``int8`` (ONNX graphs)."""
        return self.engine.backend.precision

    @property
    def lang_temperatures(self) -> dict[str, Temperatures]:
        """Per-language temperature tables (keyed ``pt``, ``de``...); a call's ``lang`` picks one."""
        return self.engine.temperatures.by_language

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` ran (the runtime cannot answer afterwards)."""
        return self.engine.closed

    @property
    def embedder(self) -> Embedder:
        """What shortlists rank with by default: the bundled mini's encoder, mean pooled, on this
        runtime's own kind of backend (this runtime's own encoder when it is mini)."""
        with self._embedder_lock:
            if self._embedder is None:
                self._embedder = CachedEmbedder(self._mini_engine().embed)
            return self._embedder

    def _mini_engine(self) -> Engine:
        if self.directory.resolve() == BUNDLED["mini"].resolve():
            return self.engine
        return shared_mini(self.engine.backend.name).engine

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self.model_id!r}, backend={self.backend!r})"

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Free the model; the runtime cannot answer afterwards."""
        self.engine.close()

    # ----------------------------------------------------------------------- the protocol

    def answer(
        self, states: Sequence[object], questions: dict[Any, Any], **options: Unpack[AnswerOptions]
    ) -> list[Result]:
        """One result per state, in input order, through this runtime's own lifecycle."""
        check_options("answer", options, AnswerOptions.__optional_keys__)
        request = Request.read(options, tournament=options.get("mode"))
        return results_of(self._run(states, questions, request))

    def answer_long(
        self, state: object, questions: dict[Any, Any], **options: Unpack[LongOptions]
    ) -> Result:
        """The long-document scan (see :meth:`predict_long`) through this runtime's lifecycle."""
        check_options("answer_long", options, LongOptions.__optional_keys__)
        request = Request.read(options, scan=True)
        return self._run_long(state, questions, request)

    # ----------------------------------------------------------------------- public calls

    def predict_batch(
        self,
        states: Sequence[object],
        questions: dict[Any, Any],
        batch_size: int | None = None,
        hooks: object = None,
        on_predict_start: object = None,
        on_predict_end: object = None,
        hooks_raise: bool | None = None,
        hooks_timeout: float | None = None,
        max_len: int | None = None,
        head_max_len: int | None = None,
        sort_by_length: bool = False,
        *,
        lang: Lang = None,
        min_confidence: object = None,
        tournament: object = None,
        shortlist: int | None = None,
    ) -> list[Result]:
        """Answer ``questions`` for every state; one result per state, in input order.

        All (state, question) rows share as few forward passes as the token budget allows, packed
        by length whatever ``sort_by_length`` says (it cannot change answers); ``batch_size``
        caps the states per pass. ``tournament`` / ``shortlist``: see :meth:`predict_tournament`
        and :meth:`predict_shortlist`.
        """
        request = Request.read(locals())
        return results_of(self._run(states, questions, request))

    def system_one(
        self,
        state: object,
        questions: dict[Any, Any],
        hooks: object = None,
        on_predict_start: object = None,
        on_predict_end: object = None,
        hooks_raise: bool | None = None,
        hooks_timeout: float | None = None,
        max_len: int | None = None,
        head_max_len: int | None = None,
        *,
        lang: str | None = None,
        min_confidence: object = None,
        tournament: object = None,
        shortlist: int | None = None,
    ) -> Result:
        """Answer ``questions`` about one state: ``predict_batch([state], ...)[0]``."""
        request = Request.read(locals())
        return single_result(self._run([state], questions, request).results)

    predict = system_one

    def predict_long(
        self,
        state: object,
        questions: dict[Any, Any],
        window: int | None = None,
        stride: int | None = None,
        aggregate: str = "auto",
        batch_size: int | None = None,
        lang: str | None = None,
        hooks: object = None,
        on_predict_start: object = None,
        on_predict_end: object = None,
        hooks_raise: bool | None = None,
        hooks_timeout: float | None = None,
    ) -> Result:
        """Answer about a state longer than one sequence by scanning overlapping windows.

        Each answer comes from the window that decided it most confidently (``noul``: the highest
        P(true)); ``answer["window"]`` names that span and ``usage["windows"]`` counts windows.
        """
        request = Request.read(locals(), scan=True)
        return self._run_long(state, questions, request)

    def predict_tournament(
        self,
        state: object,
        questions: dict[Any, Any],
        group: int | None = None,
        *,
        seed: int = 0,
        shortlist: int | None = None,
        lang: str | None = None,
        max_len: int | None = None,
        head_max_len: int | None = None,
        min_confidence: object = None,
        hooks: object = None,
        on_predict_start: object = None,
        on_predict_end: object = None,
        hooks_raise: bool | None = None,
        hooks_timeout: float | None = None,
    ) -> Result:
        """:meth:`system_one` with every choice of more than ``group`` options a tournament
        (docs/many-options.md; None: the largest group that fits), optionally after a shortlist."""
        request = Request.read(locals(), tournament=True if group is None else group)
        return single_result(self._run([state], questions, request).results)

    def predict_shortlist(
        self,
        state: object,
        questions: dict[Any, Any],
        k: int = 20,
        embed: Embedder | None = None,
        *,
        tournament: object = None,
        seed: int = 0,
        lang: str | None = None,
        max_len: int | None = None,
        head_max_len: int | None = None,
        min_confidence: object = None,
        hooks: object = None,
        on_predict_start: object = None,
        on_predict_end: object = None,
        hooks_raise: bool | None = None,
        hooks_timeout: float | None = None,
    ) -> Result:
        """:meth:`system_one` reading each choice as the ``k`` options ``embed`` (texts -> vectors;
        None: :attr:`embedder`) ranks nearest the state, optionally as a tournament."""
        request = Request.read(locals(), shortlist=k)
        return single_result(self._run([state], questions, request).results)

    def predict_states(
        self, states: Sequence[Any], questions: dict[str, Any], **options: Any
    ) -> list[Result]:
        """One result per state for one question set (``predict_batch``): what typed decisions
        and the framework adapters (``laya.integrations``) call."""
        return self.predict_batch(states, questions, **options)

    # ----------------------------------------------------------------------- warm-up, calibration

    def warmup(self, shapes: Sequence[Sequence[int]] | None = None) -> float:
        """Run a pass of each shape ``(rows, tokens, markers)`` so the first calls are not the
        slow ones (a compiled backend compiles here); returns the seconds it took."""
        return self.engine.warmup(shapes)

    @property
    def temperature(self) -> list[float]:
        """Per-type temperatures ``[choice, score, noul]`` answers are decoded with."""
        return list(self.engine.temperatures.by_type)

    @property
    def temperature_by_options(self) -> dict[str, float]:
        """Per-bucket temperatures (``choice:3-5``...) that replace the type's."""
        return dict(self.engine.temperatures.by_bucket)

    @property
    def temperature_raw(self) -> object:
        """The checkpoint config's ``temperature`` as written (before clamping)."""
        return self.engine.config.file.get("temperature", [1.0, 1.0, 1.0])

    @property
    def temperature_by_options_raw(self) -> object:
        """The checkpoint config's ``temperature_by_options`` as written."""
        return self.engine.config.file.get("temperature_by_options") or {}

    @property
    def binning_map(self) -> dict[str, dict[str, Any]] | None:
        """The confidence map in use, ``{bucket: {"bins", "values"}}`` (None: none)."""
        bins = self.engine.temperatures.bins
        return {b: {"bins": len(v), "values": list(v)} for b, v in bins.items()} or None

    def apply_calibration(self, calibration: Calibration) -> None:
        """Answer with ``calibration``'s temperatures, confidence map and thresholds from now on
        (one fitted for another checkpoint is refused)."""
        calibration.check_for(self.engine.config.file, str(self.model_id_or_path))
        self.calibration = calibration
        self.engine.temperatures = calibration.temperatures(self.engine.temperatures)

    def load_calibration(self, path: str | os.PathLike[str]) -> None:
        """Apply a calibration file (versions 1 to 4; docs/calibration.md)."""
        self.apply_calibration(read_calibration(path))

    def save_calibration(self, path: str | os.PathLike[str]) -> None:
        """Write the temperatures and confidence map in use as a version 2 calibration file, the
        published runtime's format (with this runtime's thresholds, if any, under
        ``thresholds``), replacing ``path`` atomically."""
        t = self.engine.temperatures
        payload = calibration_payload(
            t.by_type,
            t.by_bucket,
            str(self.model_id_or_path),
            self.subfolder,
            self.engine.config.file,
            self.binning_map,
        )
        if self.calibration is not None and self.calibration.thresholds:
            payload["thresholds"] = dict(self.calibration.thresholds)
        write_json(path, payload)

    def fit_temperatures(
        self, records: Iterable[object], compute_ece: bool = False, seed: int = 0
    ) -> dict[str, Any]:
        """Fit per-type and per-bucket temperatures on ``records`` (``(qtype, logits, target[,
        k])``), answer with them from now on (a confidence map fitted before is dropped), and
        return the fit (:func:`laya.engine.fitting.fit_temperature_map`)."""
        from .engine.fitting import fit_temperature_map

        fitted = fit_temperature_map(records, compute_ece=compute_ece, seed=seed)
        self.engine.temperatures = Temperatures(
            tuple(fitted["temperature"]),
            dict(fitted["temperature_by_options"]),
            self.engine.temperatures.by_language,
        )
        self.calibration = None
        return fitted

    def fit_binning(
        self, records: Iterable[object], min_bucket_n: int = MIN_BINNING_BUCKET_N
    ) -> dict[str, Any]:
        """Fit a confidence map on ``records`` under the temperatures in use, answer with it from
        now on, and return it (:func:`laya.engine.fitting.fit_binning_map`)."""
        from .engine.fitting import fit_binning_map

        t = self.engine.temperatures
        binning = fit_binning_map(records, t.by_type, t.by_bucket, min_bucket_n=min_bucket_n)
        bins = {bucket: tuple(entry["values"]) for bucket, entry in binning.items()}
        self.engine.temperatures = Temperatures(t.by_type, t.by_bucket, t.by_language, bins)
        return binning

    def raw_logits(self, states: Sequence[object], questions: object) -> list[np.ndarray]:
        """Marker logits of every (state, question) row, state-major, before any temperature and
        without hooks: what ``laya calibrate`` fits on."""
        return self.engine.raw_logits(states, questions)

    # ----------------------------------------------------------------------- the funnel

    def _run(self, states: Any, questions: Any, request: Request) -> PredictContext:
        """Every short-document call: its strategy (the plain answer, or rounds and shortlists
        for many-option choices) through :meth:`_lifecycle`."""
        return self._lifecycle(states, questions, request, self._strategy(request.choice_mode()))

    def _run_long(self, state: object, questions: Any, request: Request) -> Result:
        """One context for a document: start (states = its windows) -> one pass -> end."""
        check_long_call(request.window, request.stride, request.batch_size, request.lang)
        scan = Scan.prepare(
            self.engine, state, questions, request.window, request.stride, request.aggregate
        )
        return scan.finish(self._lifecycle(list(scan.texts), questions, request, scan.answer))

    def _lifecycle(
        self, states: Any, questions: Any, request: Request, strategy: Strategy
    ) -> PredictContext:
        """Every call: context -> policy -> lifecycle -> strategy -> post-steps (gate included)."""
        min_confidence = check_min_confidence(request.min_confidence)
        if self.calibration is not None:
            min_confidence = self.calibration.gate(min_confidence)
        if isinstance(min_confidence, str) and self._certification() is None:
            raise InvalidRequest(
                f"min_confidence='certified' needs a calibration file with certified thresholds "
                f"for {self.model_id_or_path}; fit one with laya calibrate DATA.jsonl --model "
                "CHECKPOINT --risk 0.1 --delta 0.1 --out FILE and load it with calibration=FILE"
            )
        policy = policy_for(self, defaults=request.defaults, **request.hooks)
        ctx = PredictContext(
            states=states,
            questions=questions,
            model=self.model_id,
            agent=self,
            max_len=request.max_len,
            head_max_len=request.head_max_len,
        )
        per_state(request.lang, states)  # call arguments no hook can change raise before any event
        check_count("batch_size", request.batch_size, "states")
        run_lifecycle(
            policy,
            [ctx],
            lambda contexts: self._infer(contexts[0], request, strategy),
            finalize=lambda c: self._finish(c, min_confidence),
        )
        return ctx

    def _infer(self, ctx: PredictContext, request: Request, strategy: Strategy) -> None:
        """Check what the start hooks left in ``ctx`` and answer it with the call's strategy."""
        states = checked_states(ctx.states)
        questions = parse_questions(ctx.questions)
        budgets = self.engine.budgets(ctx.max_len, ctx.head_max_len, request.batch_size)
        langs = per_state(request.lang, states) if questions else [None] * len(states)
        ctx.results = as_plain(strategy(self.engine, states, questions, budgets, langs))

    def _finish(self, ctx: PredictContext, min_confidence: object) -> None:
        """The post-steps, just before ``on_predict_end``."""
        finish_results(
            ctx.results,
            ctx.states,
            calibration=None if self.calibration is None else self.calibration.stamp,
            languages=self.engine.config.raw.get("languages"),
            min_confidence=min_confidence,
            unsure_below=self.engine.config.unsure_below,
            automation=self._certification(),
        )

    def _certification(self) -> Certification | None:
        """The certified automation of the calibration file in use, if it has one."""
        return None if self.calibration is None else self.calibration.certified

    def _strategy(self, mode: ChoiceMode | None) -> Strategy:
        """The plain answer, or rounds and shortlists for many-option choices."""
        if mode is None:
            return Engine.answer
        default = None if mode.embed is not None else (lambda: self.embedder)
        return partial(answer_with_mode, mode=mode, embedder=default)


def check_options(call: str, options: Mapping[str, object], known: frozenset[str]) -> None:
    """A protocol call's keyword options, each one it takes (a misspelt one is not ignored)."""
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(
            f"{call}() takes no option {', '.join(unknown)}; it takes {', '.join(sorted(known))}"
        )


def checked_states(states: Iterable[object]) -> list[object]:
    """The states a call answers, as a list; a single state or an empty one is refused."""
    if isinstance(states, (str, bytes, dict)):
        raise TypeError(
            "predict_batch expects a list of states; pass a single state to predict()/system_one()."
        )
    checked = list(states)
    if any(state is None for state in checked):
        raise TypeError("state must not be None; pass a string, dict, or list")
    for i, state in enumerate(checked):
        check_state(state, "state" if len(checked) == 1 else f"states[{i}]")
    return checked


def per_state(lang: object, states: object) -> list[str | None]:
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


# --------------------------------------------------------------------------- entry points

F = TypeVar("F", bound=Callable[..., Any])


def short_traceback(fn: F) -> F:
    """Mark a public entry point: an expected failure surfaces with the caller's frame and this
    one, not twenty of laya's.

    An unavailable checkpoint or a name that resolves nowhere is not a bug: its message says
    everything (which checkpoint, where laya looked, the fixes), so the library frames between
    the caller and the place it was found are dropped. Every other error keeps its traceback.
    """

    @functools.wraps(fn)
    def entry(*args: object, **kwargs: object) -> object:
        try:
            return fn(*args, **kwargs)
        except (CheckpointUnavailable, InvalidRequest) as exc:
            raise exc.with_traceback(None) from exc.__cause__

    return cast(F, entry)


# --------------------------------------------------------------------------- the two runtimes


def _torch_backend(files: CheckpointFiles, **options: Any) -> Backend:
    from .engine.backends.torch import TorchBackend

    return TorchBackend(files.directory, files.config, files.model_id, **options)


def _onnx_backend(files: CheckpointFiles, **options: Any) -> Backend:
    from .engine.backends.onnx import ONNXBackend

    return ONNXBackend(files.directory, files.config, source=files.source, **options)


class Agent(Runtime):
    """A Laya checkpoint answering on PyTorch (CUDA, then MPS, then CPU unless ``device=``).

    ``backend``: ``eager`` (packed passes, the default), ``compile`` (``torch.compile`` with
    ``compile_mode``, warmed up at load unless ``compile_warmup=False``; ``compile_cache`` keeps
    the compiled kernels on disk); :meth:`set_backend` switches later. ``fast`` / ``precision``
    choose what the forward computes in (docs/agent.md, docs/performance.md).
    """

    @short_traceback
    def __init__(
        self,
        model_id_or_path: object = DEFAULT_MODEL,
        device: object = None,
        token: str | None = None,
        subfolder: str | None = None,
        fast: bool = False,
        compile: bool = False,
        hooks: object = None,
        on_predict_start: object = None,
        on_predict_end: object = None,
        hooks_raise: bool = True,
        hooks_concurrent: bool = True,
        hooks_timeout: object = None,
        revision: str | None = None,
        expected_sha256: str | Mapping[str, str] | None = None,
        lang_temperatures: dict[str, object] | None = None,
        calibration: object = None,
        backend: str | None = None,
        compile_warmup: bool = True,
        compile_cache: bool = False,
        compile_mode: str = "default",
        max_batch_tokens: int | None = None,
        *,
        precision: str | None = None,
    ) -> None:
        mode = mode_for(backend, compile)
        if compile_cache and mode == "compile":
            configure_inductor_cache()
        weights_digest, digests = split_digests(expected_sha256)
        self.compile_mode = compile_mode
        make_backend = partial(
            _torch_backend,
            device=device,
            fast=fast,
            compile=mode == "compile",
            compile_mode=compile_mode,
            expected_sha256=weights_digest,
            precision=precision,
        )
        hook_arguments = HookArguments(
            hooks, on_predict_start, on_predict_end, hooks_raise, hooks_concurrent, hooks_timeout
        )
        super().__init__(
            model_id_or_path,
            make_backend,
            hook_arguments,
            Lookup(subfolder, token, revision, digests=digests),
            lang_temperatures=lang_temperatures,
            max_batch_tokens=max_batch_tokens,
            calibration=calibration,
        )
        if mode == "compile" and compile_warmup and warmup_enabled():
            self.warmup()

    @property
    def torch_backend(self) -> TorchBackend:
        """The PyTorch backend (an Agent's engine runs the one its __init__ chose)."""
        return cast("TorchBackend", self.engine.backend)

    @property
    def device(self) -> torch.device:
        """The torch device the model runs on."""
        return self.torch_backend.device

    @property
    def model(self) -> DecisionModel:
        """The underlying ``DecisionModel`` (a torch module)."""
        return self.torch_backend.model

    @property
    def dtype(self) -> torch.dtype:
        """The dtype the forward autocasts to (``torch.float32``: it does not)."""
        return self.torch_backend.dtype_for(1)

    @property
    def amp_enabled(self) -> bool:
        """Whether the forward runs under autocast."""
        return self.torch_backend.autocast is not None

    def dtype_for(self, rows: int) -> torch.dtype:
        """The torch dtype a pass of ``rows`` rows computes in."""
        return self.torch_backend.dtype_for(rows)

    def set_backend(self, name: str = "auto", strict: bool = False, **options: Any) -> str:
        """Switch how the forward runs (``laya.backends.install``): ``eager``/``auto``, or
        ``compile`` (options ``mode``, by default this Agent's ``compile_mode``, and
        ``warmup``); returns the backend's name. ``tilelang`` cannot run here: with ``strict`` a
        :class:`~laya.errors.BackendUnavailable`, else eager with a warning. Switch while no
        call is in flight."""
        if normalise(name) == "compile":
            options.setdefault("mode", self.compile_mode)
        install(self, name, strict, **options)
        return self.backend

    def accelerate(self, use_graphs: bool = True, strict: bool = False) -> str:
        """Compute in this device's fast precision (``fast=True``'s: bf16 on a CPU with native
        bf16, the checkpoint's autocast on CUDA, fp16 on MPS); with nothing faster here,
        ``strict`` raises :class:`~laya.errors.BackendUnavailable`, else a warning. Returns the
        precision (``use_graphs`` is the published runtime's CUDA-graph switch; laya has none)."""
        backend = self.torch_backend
        fast = backend.fast_precision()
        if fast == "fp32" and backend.precision == "fp32":
            if strict:
                raise BackendUnavailable(
                    f"no faster precision than fp32 on this {backend.device.type}"
                )
            warnings.warn(
                f"laya: accelerate(): nothing runs faster than fp32 on this "
                f"{backend.device.type}; answers stay exact",
                RuntimeWarning,
                stacklevel=2,
            )
        backend.use_precision(fast)
        return backend.precision

    def deaccelerate(self) -> str:
        """Back to the precision the checkpoint runs in by default (fp32 on a CPU, the exact
        answers); returns it."""
        backend = self.torch_backend
        backend.use_precision(backend.default_precision())
        return backend.precision


RLAgent = Agent  # the published runtime's other name for the Agent


class ONNXAgent(Runtime):
    """A Laya checkpoint answering from its exported ONNX graph on ONNX Runtime (no torch)."""

    default_model_name = "laya-rl-agent-onnx"

    @short_traceback
    def __init__(
        self,
        model_id_or_path: object,
        onnx_path: str | os.PathLike[str] = "laya.onnx",
        subfolder: str | None = None,
        hooks: object = None,
        on_predict_start: object = None,
        on_predict_end: object = None,
        hooks_raise: bool = True,
        hooks_concurrent: bool = True,
        hooks_timeout: object = None,
        token: str | None = None,
        revision: str | None = None,
        expected_sha256: str | Mapping[str, str] | None = None,
        lang_temperatures: dict[str, object] | None = None,
        calibration: object = None,
        max_batch_tokens: int | None = None,
        providers: Sequence[Provider] | None = None,
    ) -> None:
        from .engine.backends.onnx import hub_files

        graph_digest, digests = split_digests(expected_sha256)
        backend = partial(
            _onnx_backend,
            onnx_path=onnx_path,
            providers=providers,
            expected_sha256=graph_digest,
        )
        hook_arguments = HookArguments(
            hooks, on_predict_start, on_predict_end, hooks_raise, hooks_concurrent, hooks_timeout
        )
        super().__init__(
            model_id_or_path,
            backend,
            hook_arguments,
            Lookup(subfolder, token, revision, hub_files(onnx_path), digests, onnx_path),
            lang_temperatures=lang_temperatures,
            max_batch_tokens=max_batch_tokens,
            calibration=calibration,
        )


@short_traceback
def load(
    model_id_or_path: object = DEFAULT_MODEL,
    device: object = None,
    token: str | None = None,
    subfolder: str | None = None,
    fast: bool = False,
    compile: bool = False,
    revision: str | None = None,
    expected_sha256: str | Mapping[str, str] | None = None,
    lang_temperatures: dict[str, object] | None = None,
    hooks: object = None,
    on_predict_start: object = None,
    on_predict_end: object = None,
    hooks_raise: bool = True,
    hooks_concurrent: bool = True,
    hooks_timeout: object = None,
    calibration: Any = None,
    backend: str | None = None,
    onnx_path: str | os.PathLike[str] | None = None,
    compile_warmup: bool = True,
    compile_cache: bool = False,
    compile_mode: str = "default",
    **options: Any,
) -> Runtime:
    """Load a checkpoint by name, Hub id or local path: an :class:`Agent`, or with
    ``backend="onnx"`` an :class:`ONNXAgent` (``onnx_path``, default ``laya.onnx``). The
    positional order is the published runtime's (``load(path, "cpu")``); ``options`` are laya's
    own (``max_batch_tokens``, ``precision``; ``providers`` for ONNX)."""
    common = dict(
        token=token,
        subfolder=subfolder,
        revision=revision,
        expected_sha256=expected_sha256,
        lang_temperatures=lang_temperatures,
        hooks=hooks,
        on_predict_start=on_predict_start,
        on_predict_end=on_predict_end,
        hooks_raise=hooks_raise,
        hooks_concurrent=hooks_concurrent,
        hooks_timeout=hooks_timeout,
        calibration=calibration,
    )
    if backend is not None and str(backend).strip().lower() == "onnx":
        return ONNXAgent(model_id_or_path, onnx_path=onnx_path or "laya.onnx", **common, **options)
    if onnx_path is not None:
        raise InvalidRequest("onnx_path goes with backend='onnx'; pass both, or neither")
    return Agent(
        model_id_or_path,
        device=device,
        fast=fast,
        compile=compile,
        backend=backend,
        compile_warmup=compile_warmup,
        compile_cache=compile_cache,
        compile_mode=compile_mode,
        **common,
        **options,
    )


_shared: dict[str, Runtime] = {}
_shared_lock = threading.Lock()


def embed_fn_from_agent(
    agent: object, max_length: int = 512, batch_size: int = 32
) -> Callable[[Sequence[str]], np.ndarray]:
    """An embedder from a runtime's own encoder: each text read as ``[CLS] text [SEP]`` (cut to
    ``max_length`` tokens), its encoder states averaged, ``batch_size`` texts a pass."""
    if not isinstance(agent, Runtime):
        raise TypeError(
            f"embed_fn_from_agent takes a laya runtime (an Agent or an ONNXAgent), got "
            f"{type(agent).__name__}"
        )
    engine = agent.engine
    max_length = whole_at_least("max_length", max_length, 3)
    batch_size = whole_at_least("batch_size", batch_size, 1)

    def embed(texts: Sequence[str]) -> np.ndarray:
        return engine.embed(list(texts), max_length, batch_size)

    return embed


def shared_mini(kind: str) -> Runtime:
    """One process-wide ``mini`` runtime on the backend ``kind`` (``torch`` or ``onnx``): the
    default embedder of runtimes of other checkpoints."""
    with _shared_lock:
        if kind not in _shared:
            on_cpu = kind == "torch"  # the shared torch runtime embeds on the CPU
            _shared[kind] = load("mini", "cpu" if on_cpu else None, backend=kind)
        return _shared[kind]
