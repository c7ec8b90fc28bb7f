"""The HTTP server: a Router behind the Jev ``POST /v1/systemone`` wire format (``laya serve``).

Three layers, each usable without the one above it:

* plain functions that validate a decoded body (:func:`parse_single`, :func:`parse_batch`), run it
  on a Router (:func:`predict_single`, :func:`predict_batch`) and shape the reply
  (:func:`render_result`, :func:`render_batch`); they raise :class:`HTTPError` and need no web
  framework, so another front end (a Ray Serve deployment) reuses them as they are;
* :func:`create_app`, a thin FastAPI app: auth, admission, streamed body reading, inference on a
  small thread pool, timing headers, one JSON access-log line per request;
* :func:`serve_main`, the ``laya serve`` command: flags and ``LAYA_*`` variables -> uvicorn.

Importing this module imports neither torch nor FastAPI/uvicorn; they load when an app is built.
"""

import argparse
import asyncio
import hmac
import inspect
import json
import logging
import math
import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from .checkpoint import ALIASES, BUNDLE_REPO, BUNDLED, canonical_name
from .errors import CheckpointUnavailable
from .playground import add_playground
from .router import STANDALONE_REPOS, Router

__all__ = [
    "BatchRequest",
    "HTTPError",
    "MAX_BODY_BYTES",
    "Settings",
    "SettingsError",
    "SingleRequest",
    "authorised",
    "build_router",
    "create_app",
    "decode_body",
    "parse_batch",
    "parse_single",
    "predict_batch",
    "predict_single",
    "read_body",
    "render_batch",
    "render_result",
    "resolve_model",
    "routed_controls",
    "serve_main",
    "settings_from",
]

log = logging.getLogger("laya.server")

MAX_BODY_BYTES = 2 * 1024 * 1024
MAX_QUESTIONS = 64
MAX_STATE_CHARS = 50_000
MAX_BATCH_STATES = 64
MAX_CHOICE_OPTIONS = 100
MAX_SCORE_LEVELS = 32
MAX_TOTAL_OPTIONS = 512
HOOK_FIELDS = ("hooks", "on_predict_start", "on_predict_end", "hooks_raise", "hooks_timeout")
MINI_DIR = BUNDLED["mini"]
_HUB_IDS = {repo.lower(): name for name, (repo, _) in STANDALONE_REPOS.items()}
_CLOSE = {"Connection": "close"}  # a body left half-read: the connection cannot be reused
_STRICT_FIELDS = {
    "choice": ("type", "choice", "confidence", "probabilities"),
    "score": ("type", "score", "confidence", "probabilities", "legend"),
    "noul": ("type", "noul"),
}


class HTTPError(Exception):
    """A request the server refuses: an HTTP status, a one-line detail, optional headers."""

    def __init__(self, status: int, detail: str, headers: Mapping[str, str] | None = None):
        super().__init__(detail)
        self.status, self.detail, self.headers = status, detail, dict(headers or {})


class SettingsError(ValueError):
    """A bad flag or ``LAYA_*`` value; ``laya serve`` prints it on one line and exits 2."""


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class Settings:
    """Everything ``laya serve`` can be told, with the defaults it runs on."""

    host: str = "127.0.0.1"
    port: int = 8000
    models: dict[str, str] = field(default_factory=dict)
    default_model: str = "mini"
    route: str = "default"
    preload: bool = True
    device: str | None = None
    max_loaded: int | None = None
    threads: int | None = None
    api_key: str | None = None
    root_path: str = ""
    log_level: str = "info"
    max_concurrent: int = 64
    inference_workers: int = 2
    body_read_timeout: float = 10.0
    max_token_budget: int = 8192
    max_batch_tokens: int | None = None
    jev_strict: bool = False
    fast: bool = False


def _number(kind: type, text: str, accept: Callable[[Any], bool], expected: str) -> Any:
    """``text`` read as ``kind``, kept only if ``accept`` holds; ValueError naming ``expected``."""
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not accept(value):
        raise ValueError(f"must be {expected}")
    return value


def _positive_int(text: str) -> int:
    return _number(int, text, lambda v: v >= 1, "a positive integer")


def _port(text: str) -> int:
    return _number(int, text, lambda v: 1 <= v <= 65535, "a port number in 1-65535")


def _positive_seconds(text: str) -> float:
    return _number(
        float, text, lambda v: math.isfinite(v) and v > 0, "a positive number of seconds"
    )


def _boolean(text: str) -> bool:
    word = text.strip().lower()
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("0", "false", "no", "off"):
        return False
    raise ValueError("must be one of 1/true/yes/on or 0/false/no/off")


def _one_of(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        word = text.strip().lower()
        if word not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}")
        return word

    return parse


def _model_pairs(items: str | Sequence[str]) -> dict[str, str]:
    """``NAME=PATH`` pairs, from a list of flags or a comma-separated variable."""
    if isinstance(items, str):
        items = [item for item in items.split(",") if item.strip()]
    pairs = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not (sep and name.strip() and path.strip()):
            raise ValueError(f"expects NAME=PATH entries, got {item!r}")
        pairs[name.strip()] = path.strip()
    return pairs


def _text(text: str) -> str:
    return text.strip()


# field -> (environment variable, parser of its text)
_SOURCES: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "host": ("LAYA_HOST", _text),
    "port": ("LAYA_PORT", _port),
    "models": ("LAYA_MODELS", _model_pairs),
    "default_model": ("LAYA_DEFAULT_MODEL", _text),
    "route": ("LAYA_ROUTE", _one_of("default", "auto")),
    "preload": ("LAYA_PRELOAD", _boolean),
    "device": ("LAYA_DEVICE", _text),
    "max_loaded": ("LAYA_MAX_LOADED", _positive_int),
    "threads": ("LAYA_THREADS", _positive_int),
    "api_key": ("LAYA_API_KEY", str),
    "root_path": ("LAYA_ROOT_PATH", _text),
    "log_level": ("LAYA_LOG_LEVEL", _one_of("critical", "error", "warning", "info", "debug")),
    "max_concurrent": ("LAYA_MAX_CONCURRENT", _positive_int),
    "inference_workers": ("LAYA_INFERENCE_WORKERS", _positive_int),
    "body_read_timeout": ("LAYA_BODY_READ_TIMEOUT", _positive_seconds),
    "max_token_budget": ("LAYA_MAX_TOKEN_BUDGET", _positive_int),
    "max_batch_tokens": ("LAYA_MAX_BATCH_TOKENS", _positive_int),
    "jev_strict": ("LAYA_JEV_STRICT", _boolean),
    "fast": ("LAYA_FAST", _boolean),
}


def _arg_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="laya serve",
        description="Serve laya decisions over HTTP (Jev-compatible POST /v1/systemone).",
        epilog="Every flag has a LAYA_* variable (see docs/server.md); flags win.",
    )
    add = parser.add_argument
    add("--host", help="bind address (default 127.0.0.1)")
    add("--port", help="TCP port (default 8000)")
    add("--models", nargs="+", action="extend", metavar="NAME=PATH", help="extra checkpoints")
    add("--default-model", help="checkpoint for requests that name none (default mini)")
    add("--route", help="'default': unpinned requests use the default model; 'auto': by language")
    add("--preload", action=argparse.BooleanOptionalAction, default=None, help="load at start-up")
    add("--device", help="torch device, e.g. cpu, cuda, cuda:1 (default: best available)")
    add("--max-loaded", help="resident checkpoint cap (default 2, raised to fit the preloaded)")
    add("--threads", help="torch intra-op threads")
    add(
        "--fast",
        action="store_true",
        default=None,
        help="the CPU's fastest precision (bf16 where native)",
    )
    add("--max-concurrent", help="requests admitted at once; more get 503 (default 64)")
    add("--inference-workers", help="inferences running at once (default 2)")
    add("--log-level", help="critical, error, warning, info or debug (default info)")
    add("--root-path", help="path prefix a reverse proxy strips")
    add("--ray", action="store_true", default=None, help="serve on Ray Serve (docs/scaling.md)")
    add("--replicas", help="Ray Serve replicas, with --ray (default 1)")
    return parser


def _parsed(name: str, where: str, raw: Any) -> Any:
    parser = _SOURCES[name][1]
    try:
        return raw if isinstance(raw, bool) else parser(raw)
    except ValueError as exc:
        raise SettingsError(f"{where}={raw!r}: {exc}") from None


def settings_from(argv: Sequence[str] = (), environ: Mapping[str, str] | None = None) -> Settings:
    """Settings from ``LAYA_*`` variables, overridden by ``laya serve`` flags; SettingsError if bad."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for name, (var, _) in _SOURCES.items():
        text = environ.get(var)
        if text is not None and text.strip():
            values[name] = _parsed(name, var, text)
    flags = vars(_arg_parser().parse_args(list(argv)))
    ray, replicas = flags.pop("ray"), flags.pop("replicas")
    if replicas is not None and not ray:
        raise SettingsError(f"--replicas={replicas!r}: needs --ray")
    for name, raw in flags.items():
        if raw is not None:
            values[name] = _parsed(name, "--" + name.replace("_", "-"), raw)
    return Settings(**values)


# --------------------------------------------------------------------------- request bodies


@dataclass(frozen=True)
class SingleRequest:
    """A validated ``/v1/systemone`` body: what to pass to ``Router.predict``."""

    state: Any
    questions: dict[str, Any]
    controls: dict[str, Any]
    min_confidence: Any = None


@dataclass(frozen=True)
class BatchRequest:
    """A validated ``/v1/systemone/batch`` body: what to pass to ``Router.predict_batch``."""

    states: list[Any]
    questions: dict[str, Any]
    controls: dict[str, Any]
    min_confidence: Any = None
    batch_size: int | None = None
    sort_by_length: bool = False


def decode_body(raw: bytes) -> dict[str, Any]:
    """Strict JSON object from the raw body (400 on bad JSON, a non-object, lone surrogates)."""
    try:
        body = json.loads(raw, parse_constant=_no_constant)
    except RecursionError:
        raise HTTPError(400, "request body must be valid JSON: nested too deeply") from None
    except ValueError as exc:
        raise HTTPError(400, f"request body must be valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise HTTPError(400, f"request body must be a JSON object, got {_json_type(body)}")
    _check_encodable(body)
    return body


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def _check_encodable(body: dict[str, Any]) -> None:
    """400 naming the field when a string holds an unpaired UTF-16 surrogate."""
    try:
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        where = _surrogate_path(body, "") or "request body"
        raise HTTPError(
            400, f"{where} holds an unpaired UTF-16 surrogate and cannot be UTF-8 encoded"
        ) from None


def _surrogate_path(value: Any, path: str) -> str | None:
    if isinstance(value, str):
        return None if _encodes(value) else path or "request body"
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        here = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}".lstrip(".")
        if isinstance(key, str) and not _encodes(key):
            return f"a key in {path or 'the body'}"
        found = _surrogate_path(item, here)
        if found:
            return found
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_single(body: dict[str, Any], settings: Settings | None = None) -> SingleRequest:
    """Validate a ``/v1/systemone`` body; HTTPError (400/413/422) names the first bad field."""
    settings = settings or Settings()
    _require(body, ("state", "questions"))
    questions = _questions(body["questions"])
    _check_state(body["state"], "state")
    controls, min_confidence = _controls(body, settings)
    return SingleRequest(body["state"], questions, controls, min_confidence)


def parse_batch(body: dict[str, Any], settings: Settings | None = None) -> BatchRequest:
    """Validate a ``/v1/systemone/batch`` body; HTTPError names the first bad field."""
    settings = settings or Settings()
    _require(body, ("states", "questions"))
    states = body["states"]
    if not isinstance(states, list) or not states:
        raise HTTPError(400, "states must be a non-empty array of states")
    if len(states) > MAX_BATCH_STATES:
        raise HTTPError(413, f"states holds {len(states)} states; at most {MAX_BATCH_STATES}")
    questions = _questions(body["questions"])
    for i, state in enumerate(states):
        _check_state(state, f"states[{i}]")
    if body.get("diagnostics") is not None:
        raise HTTPError(422, "diagnostics is an in-process option and is not accepted over HTTP")
    controls, min_confidence = _controls(body, settings)
    batch_size = _optional_positive_int(body, "batch_size", None)
    sort_by_length = body.get("sort_by_length")
    if sort_by_length is not None and not isinstance(sort_by_length, bool):
        raise HTTPError(422, f"sort_by_length must be true or false, got {sort_by_length!r}")
    return BatchRequest(
        states, questions, controls, min_confidence, batch_size, bool(sort_by_length)
    )


def _require(body: dict[str, Any], keys: tuple[str, ...]) -> None:
    missing = [k for k in keys if k not in body]
    if missing:
        raise HTTPError(400, f"request body is missing required field(s): {', '.join(missing)}")


def _questions(questions: Any) -> dict[str, Any]:
    """The question set: an object of at most MAX_QUESTIONS within the option caps, each valid."""
    if not isinstance(questions, dict):
        raise HTTPError(400, f"questions must be a JSON object, got {_json_type(questions)}")
    if not questions:
        raise HTTPError(400, "questions must hold at least one question")
    if len(questions) > MAX_QUESTIONS:
        raise HTTPError(413, f"questions holds {len(questions)} questions; at most {MAX_QUESTIONS}")
    total = sum(_option_count(qid, q) for qid, q in questions.items())
    if total > MAX_TOTAL_OPTIONS:
        raise HTTPError(413, f"questions hold {total} options in all; at most {MAX_TOTAL_OPTIONS}")
    from .questions import parse_questions

    try:
        parse_questions(questions)
    except (TypeError, ValueError) as exc:
        raise HTTPError(422, str(exc)) from None
    return questions


def _option_count(qid: str, question: Any) -> int:
    """Options of a choice / levels of a score, 413 past their caps (others count 0)."""
    if not isinstance(question, dict):
        return 0
    criteria, qtype = question.get("criteria"), question.get("type")
    n = len(criteria) if isinstance(criteria, (list, dict)) else 0
    caps = {"choice": ("options", MAX_CHOICE_OPTIONS), "score": ("levels", MAX_SCORE_LEVELS)}
    if qtype not in caps:
        return 0
    noun, cap = caps[qtype]
    if n > cap:
        raise HTTPError(413, f"question {qid!r} has {n} {noun}; a {qtype} takes at most {cap}")
    return n


def _check_state(state: Any, where: str) -> None:
    if state is None:
        raise HTTPError(400, f"{where} must not be null; send a string, object or array")
    size = len(state) if isinstance(state, str) else len(json.dumps(state, ensure_ascii=False))
    if size > MAX_STATE_CHARS:
        raise HTTPError(413, f"{where} is {size} characters; at most {MAX_STATE_CHARS}")


def _controls(body: dict[str, Any], settings: Settings) -> tuple[dict[str, Any], Any]:
    """The per-request controls that are set (null = absent), and ``min_confidence``; 422 if bad."""
    hooks = [k for k in HOOK_FIELDS if body.get(k) is not None]
    if hooks:
        raise HTTPError(
            422, f"{', '.join(hooks)}: hooks run in the server process and cannot be sent"
        )
    controls = {}
    for key in ("model", "task", "lang", "lang_guess"):
        value = body.get(key)
        if value is not None and not isinstance(value, str):
            raise HTTPError(422, f"{key} must be a string, got {_json_type(value)}")
        if value is not None:
            controls[key] = value
    for key in ("max_len", "head_max_len"):
        value = _optional_positive_int(body, key, settings.max_token_budget)
        if value is not None:
            controls[key] = value
    return controls, _min_confidence(body.get("min_confidence"))


def _optional_positive_int(body: dict[str, Any], key: str, ceiling: int | None) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise HTTPError(422, f"{key} must be a positive integer, got {value!r}")
    if ceiling is not None and value > ceiling:
        raise HTTPError(422, f"{key} exceeds server limit ({value} > {ceiling})")
    return value


def _min_confidence(value: Any) -> Any:
    from .gate import check_min_confidence

    try:
        return check_min_confidence(value)
    except (TypeError, ValueError) as exc:
        raise HTTPError(422, str(exc)) from None


# --------------------------------------------------------------------------- inference


def resolve_model(router: Router, model: str | None) -> str | None:
    """The checkpoint a ``model`` field pins, or None for auto-routing (§1.3); 422 on unknown paths."""
    if model is None or not model.strip():
        return None
    text = model.strip()
    if text.lower() in _HUB_IDS:
        return _HUB_IDS[text.lower()]
    if text.lower() == BUNDLE_REPO:
        return None
    try:
        return router.resolve(text)
    except ValueError as exc:
        if "/" in text or "\\" in text or text.startswith((".", "~")):
            raise HTTPError(422, f"{exc}, or omit model to let the router choose") from None
    return None


def routed_controls(router: Router, controls: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """Controls with ``model`` resolved; route=default pins requests naming no model or task."""
    routed = dict(controls)
    model = resolve_model(router, routed.pop("model", None))
    if model is None and settings.route == "default" and "task" not in routed:
        model = router.default
    if model is not None:
        routed["model"] = model
    return routed


@contextmanager
def _inference_errors() -> Iterator[None]:
    """ValueError from the core -> 422 with its message; an unavailable checkpoint -> 503 (one log
    line); anything else -> 500, logged with its traceback."""
    try:
        yield
    except HTTPError:
        raise
    except CheckpointUnavailable as exc:
        log.warning("checkpoint unavailable: %s", " ".join(str(exc).split()))
        raise HTTPError(503, " ".join(str(exc).split()), {"Retry-After": "60"}) from None
    except ValueError as exc:
        raise HTTPError(422, str(exc)) from None
    except Exception:
        log.exception("inference failed")
        raise HTTPError(500, "inference failed") from None


def predict_single(
    router: Router, request: SingleRequest, settings: Settings | None = None
) -> dict[str, Any]:
    """Answer one validated request with ``Router.predict`` (blocking: call it off the event loop)."""
    controls = routed_controls(router, request.controls, settings or Settings())
    with _inference_errors():
        return router.predict(
            request.state, request.questions, min_confidence=request.min_confidence, **controls
        )


def predict_batch(
    router: Router, request: BatchRequest, settings: Settings | None = None
) -> list[dict[str, Any]]:
    """Answer a validated batch with ``Router.predict_batch`` (its Agents pack the passes)."""
    controls = routed_controls(router, request.controls, settings or Settings())
    requests = [
        {"state": state, "questions": request.questions, **controls} for state in request.states
    ]
    with _inference_errors():
        return router.predict_batch(
            requests,
            batch_size=request.batch_size,
            min_confidence=request.min_confidence,
            sort_by_length=request.sort_by_length,
        )


# --------------------------------------------------------------------------- responses


def render_result(result: dict[str, Any], strict: bool = False) -> dict[str, Any]:
    """The wire form of one Router result: ``x_jev_confidence`` added, or the strict Jev shape."""
    answers = result.get("answers") or {}
    if strict:
        usage = result.get("usage") or {}
        return {
            "model": result.get("model"),
            "answers": {qid: _strict_answer(a) for qid, a in answers.items()},
            "usage": {k: usage.get(k, 0) for k in ("input_tokens", "output_tokens")},
        }
    return {**result, "answers": {qid: _with_jev_confidence(a) for qid, a in answers.items()}}


def render_batch(results: Sequence[dict[str, Any]], strict: bool = False) -> dict[str, Any]:
    """The batch reply: every result rendered, plus the summed token usage."""
    total = {"input_tokens": 0, "output_tokens": 0}
    for result in results:
        usage = result.get("usage") or {}
        for key in total:
            total[key] += usage.get(key) or 0
    return {"results": [render_result(r, strict) for r in results], "total_usage": total}


def _strict_answer(answer: Any) -> Any:
    fields = _STRICT_FIELDS.get(answer.get("type")) if isinstance(answer, dict) else None
    if fields is None:
        return answer
    return {k: answer[k] for k in fields if k in answer}


def _with_jev_confidence(answer: Any) -> Any:
    if not isinstance(answer, dict) or answer.get("type") not in ("choice", "score"):
        return answer
    values = _probabilities(answer)
    if values is None:
        return answer
    jev = _jev_choice(values) if answer["type"] == "choice" else _jev_score(values)
    return {**answer, "x_jev_confidence": round(jev, 4)}


def _probabilities(answer: dict[str, Any]) -> list[float] | None:
    """The answer's probabilities in option order (score levels by index), or None if unusable."""
    probs = answer.get("probabilities")
    if not isinstance(probs, dict) or not probs:
        return None
    items = list(probs.items())
    if answer["type"] == "score":
        try:
            items.sort(key=lambda kv: int(kv[0]))
        except ValueError:
            return None
    values = [v for _, v in items]
    usable = all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values
    )
    return [float(v) for v in values] if usable else None


def _jev_choice(p: list[float]) -> float:
    """Jev's choice confidence: how far the top probability sits above uniform, in [0, 1]."""
    n = len(p)
    return 1.0 if n == 1 else (max(p) - 1 / n) / (1 - 1 / n)


def _jev_score(p: list[float]) -> float:
    """Jev's score confidence: 1 - spread around the mode / the uniform spread around it."""
    mode = max(range(len(p)), key=p.__getitem__)
    uniform = sum(abs(i - mode) for i in range(len(p))) / len(p)
    if uniform == 0:
        return 1.0
    spread = sum(pi * abs(i - mode) for i, pi in enumerate(p))
    return max(0.0, 1 - spread / uniform)


# --------------------------------------------------------------------------- the app


def build_router(settings: Settings, hooks: Any = None) -> Router:
    """The Router the settings describe (``mini`` plus ``models``, ``hooks`` installed), preloaded if asked."""
    if settings.threads or settings.device:
        import torch

        if settings.threads:
            torch.set_num_threads(settings.threads)
        if settings.device:
            torch.device(settings.device)  # a misspelt device fails here, not at first request
    models = dict(settings.models)  # ``mini`` is a built-in checkpoint of every Router
    mini_missing = not MINI_DIR.is_dir() and "mini" not in map(canonical_name, models)
    if canonical_name(settings.default_model) == "mini" and mini_missing:
        raise SettingsError(
            f"the bundled model 'mini' is not installed ({MINI_DIR} is missing); "
            "serve another checkpoint with --models NAME=PATH --default-model NAME"
        )
    packing = {"max_batch_tokens": settings.max_batch_tokens} if settings.max_batch_tokens else {}
    if settings.fast:
        packing["fast"] = True
    router = Router(
        models=models,
        default=settings.default_model,
        device=settings.device,
        max_loaded=settings.max_loaded or 2,
        hooks=hooks,
        agent_kwargs=packing,
    )
    if settings.preload:
        router.preload(list(dict.fromkeys([settings.default_model, *settings.models])))
    return router


class _Admission:
    """At most ``limit`` requests in flight; the next one is refused at once (503), not queued.

    Used only from the event loop's thread, so a plain counter needs no lock.
    """

    def __init__(self, limit: int) -> None:
        self.limit, self.active = limit, 0

    @contextmanager
    def slot(self) -> Iterator[None]:
        if self.active >= self.limit:
            raise HTTPError(503, "server busy; retry shortly", {"Retry-After": "1"})
        self.active += 1
        try:
            yield
        finally:
            self.active -= 1


def authorised(header: str | None, api_key: str | None) -> bool:
    """Whether an Authorization header carries the bearer key (always True without a key)."""
    if api_key is None:
        return True
    if header is None:
        return False
    sent = header.encode("latin-1")  # Starlette decoded the raw header as latin-1: undo it
    expected = ("Bearer " + api_key).encode("utf-8", "surrogateescape")
    return hmac.compare_digest(sent, expected)


async def read_body(chunks: AsyncIterator[bytes], length: str | None, limit: int) -> bytes:
    """The whole body, refused with 413 once it passes ``limit`` bytes (declared or streamed)."""
    if length is not None:
        if not length.isdigit():
            raise HTTPError(400, f"Content-Length must be a number of bytes, got {length!r}")
        if int(length) > limit:
            raise HTTPError(413, f"request body too large: {length} bytes; at most {limit}", _CLOSE)
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > limit:
            raise HTTPError(413, f"request body too large: more than {limit} bytes", _CLOSE)
    return bytes(body)


class _Service:
    """What the routes share: the router, settings, admission counter and inference pool."""

    def __init__(self, router: Router, settings: Settings) -> None:
        self.router, self.settings = router, settings
        self.admission = _Admission(settings.max_concurrent)
        self.pool: ThreadPoolExecutor | None = None

    def check_auth(self, request: Any) -> None:
        if not authorised(request.headers.get("authorization"), self.settings.api_key):
            raise HTTPError(401, "invalid or missing bearer token", {"WWW-Authenticate": "Bearer"})

    async def decide(
        self, request: Any, parse: Callable, predict: Callable, render: Callable
    ) -> Any:
        """One decision route: auth, admission, body, validation, inference, rendering."""
        from fastapi.responses import JSONResponse

        self.check_auth(request)
        with self.admission.slot():
            body = decode_body(await self._body(request))
            parsed = parse(body, self.settings)
            request.state.model = str(parsed.controls.get("model", ""))[:64] or None
            started = time.perf_counter()
            result = await self._infer(predict, parsed)
            ms = f"{(time.perf_counter() - started) * 1000:.2f}"
        request.state.model = _routed_model(result) or request.state.model
        headers = {"Server-Timing": f"inference;dur={ms}", "X-Inference-Time-Ms": ms}
        return JSONResponse(render(result, self.settings.jev_strict), headers=headers)

    async def _infer(self, predict: Callable, parsed: Any) -> Any:
        """Await ``predict`` if it is a coroutine function, else run it on the inference pool."""
        if inspect.iscoroutinefunction(predict):
            return await predict(self.router, parsed, self.settings)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, predict, self.router, parsed, self.settings)

    async def _body(self, request: Any) -> bytes:
        from starlette.requests import ClientDisconnect

        reading = read_body(request.stream(), request.headers.get("content-length"), MAX_BODY_BYTES)
        try:
            return await asyncio.wait_for(reading, self.settings.body_read_timeout)
        except asyncio.TimeoutError:
            seconds = self.settings.body_read_timeout
            raise HTTPError(
                408, f"request body not received within {seconds:g} s", _CLOSE
            ) from None
        except ClientDisconnect:
            raise HTTPError(400, "client disconnected before the body was received") from None

    def health(self, request: Any) -> dict[str, Any]:
        if not authorised(request.headers.get("authorization"), self.settings.api_key):
            return {"status": "ok"}
        return {
            "status": "ok",
            "loaded": self.router.loaded,
            "precision": self.router.precisions,
            "default_model": self.router.default,
            "route": self.settings.route,
            "in_flight": self.admission.active,
            "max_concurrent": self.settings.max_concurrent,
        }

    def models(self, request: Any) -> dict[str, Any]:
        self.check_auth(request)
        router = self.router
        loaded, sources = set(router.loaded), dict(router.models)
        return {
            "default": router.default,
            "route": self.settings.route,
            "checkpoints": {
                name: {
                    "repo": src[0] if src else None,
                    "subfolder": src[1] if src else None,
                    "resident": name in loaded,
                }
                for name, src in sources.items()
            },
            "aliases": {a: n for a, n in sorted(ALIASES.items()) if n in sources},
        }


def _routed_model(result: Any) -> str | None:
    first = result[0] if isinstance(result, list) and result else result
    routing = first.get("routing") if isinstance(first, dict) else None
    return routing.get("model") if isinstance(routing, dict) else None


class _AccessLog:
    """ASGI middleware: one JSON line per HTTP request on ``laya.server`` (status, ms, model)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        started, status = time.perf_counter(), [500]

        async def record(message: dict) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, record)
        finally:
            entry = {
                "method": scope["method"],
                "path": scope["path"],
                "status": status[0],
                "ms": round((time.perf_counter() - started) * 1000, 2),
                "model": state.get("model"),
            }
            log.info(json.dumps(entry))


def create_app(
    router: Router | None = None,
    settings: Settings | None = None,
    predict_one: Callable[..., Any] = predict_single,
) -> Any:
    """The FastAPI app serving ``router``; ``predict_one`` answers ``/v1/systemone`` (awaited if async)."""
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse

    settings = settings or settings_from((), os.environ)
    service = _Service(router or build_router(settings), settings)

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        service.pool = ThreadPoolExecutor(settings.inference_workers, "laya-inference")
        try:
            yield
        finally:
            service.pool.shutdown(wait=True)

    hidden = settings.api_key is not None
    app = FastAPI(
        title="laya serve",
        lifespan=lifespan,
        root_path=settings.root_path,
        docs_url=None if hidden else "/docs",
        redoc_url=None if hidden else "/redoc",
        openapi_url=None if hidden else "/openapi.json",
    )
    app.state.service = service
    app.add_middleware(_AccessLog)

    @app.exception_handler(HTTPError)
    async def refused(_request: Request, exc: HTTPError) -> JSONResponse:
        return JSONResponse({"detail": exc.detail}, exc.status, headers=exc.headers)

    @app.exception_handler(Exception)
    async def crashed(_request: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error", exc_info=exc)
        return JSONResponse({"detail": "internal server error"}, 500)

    @app.post("/v1/systemone")
    async def systemone(request: Request) -> Any:
        return await service.decide(request, parse_single, predict_one, render_result)

    @app.post("/v1/systemone/batch")
    async def systemone_batch(request: Request) -> Any:
        return await service.decide(request, parse_batch, predict_batch, render_batch)

    @app.get("/health")
    async def health(request: Request) -> dict[str, Any]:
        return service.health(request)

    @app.get("/models")
    async def models(request: Request) -> dict[str, Any]:
        return service.models(request)

    add_playground(app)
    return app


# --------------------------------------------------------------------------- command


def _configure_logging(level: str) -> None:
    if not log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
    log.setLevel(level.upper())


def serve_main(argv: Sequence[str] | None = None) -> int:
    """``laya serve``: read flags and ``LAYA_*`` variables, build the Router, run uvicorn."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        settings = settings_from(argv, os.environ)
    except SettingsError as exc:
        print(f"laya serve: error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # argparse: --help, or an unknown flag (already printed)
        return exc.code if isinstance(exc.code, int) else 2
    try:
        app = create_app(settings=settings)
    except Exception as exc:  # noqa: BLE001 - one line for the operator, not a traceback
        print(f"laya serve: error: cannot start: {_one_line(exc)}", file=sys.stderr)
        return 2
    import uvicorn

    _configure_logging(settings.log_level)

    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        access_log=False,
    )
    return 0


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."
