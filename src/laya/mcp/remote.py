"""Answers from a running ``laya serve`` (``LAYA_BASE_URL``): the MCP tools' and the framework
classes' remote mode (docs/integrations.md).

:class:`RemoteRouter` answers through ``POST /v1/systemone`` and ``/v1/systemone/batch`` with the
standard library's HTTP client (no torch, no model here); routing decisions (``route``) stay
local, on a Router that loads nothing. It holds that Router rather than being one: only the calls
that make sense over HTTP are offered. A refusal of the server is an
:class:`~laya.errors.InvalidRequest` carrying its ``detail``; an unreachable server a
:class:`RemoteError`.
"""

from __future__ import annotations

import json
import math
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from http.client import HTTPMessage
from typing import IO, Any, cast

from ..engine.result import Result
from ..errors import CheckpointUnavailable, InvalidRequest, LayaError, Overloaded, UnknownName
from ..request import CONTROL_KEYS, HOOK_KEYS
from ..router import Router
from ..router.pins import default_model
from ..typed import decisions as typed_decisions
from ..typed import values as typed_values

__all__ = [
    "BODY_CONTROLS",
    "BODY_REFUSALS",
    "DEFAULT_TIMEOUT_S",
    "RemoteError",
    "RemoteRouter",
    "remote_from_env",
    "sendable",
]

DEFAULT_TIMEOUT_S = 300.0
BODY_CONTROLS = ("model", "max_len", "head_max_len", "task", "lang", "lang_guess", "min_confidence")
BODY_REFUSALS = HOOK_KEYS
MAX_BATCH = 64  # states per /v1/systemone/batch call (the server's cap)


class RemoteError(LayaError, ConnectionError, RuntimeError):
    """The server could not be reached, or answered with something that is not laya's JSON."""


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to the origin the client was pointed at (keeps the bearer there)."""

    def __init__(self, origin: str) -> None:
        self.origin = origin

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        if _origin(newurl) != self.origin:
            raise RemoteError(f"laya serve redirected to another origin ({newurl}); refused")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _origin(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def base_url(text: str) -> str:
    """``text`` as a server root URL: ``http://`` when it has no scheme, no trailing slash."""
    text = text.strip().rstrip("/")
    if not text:
        raise InvalidRequest("base_url is empty; give the laya serve address, e.g. 127.0.0.1:8000")
    return text if "://" in text else f"http://{text}"


class RemoteRouter:
    """A Router's answering calls, made by a running ``laya serve``."""

    decision = typed_decisions.decision  # the decision functions, the runner their first parameter
    decision_batch = typed_decisions.decision_batch
    decide = typed_values.decide
    decide_batch = typed_values.decide_batch

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        timeout: float | None = None,
        **router_kwargs: Any,
    ) -> None:
        self.base_url = _checked_url(base_url)
        self.api_key = api_key or None
        self.timeout = _checked_timeout(timeout)
        self._router_kwargs = router_kwargs
        self._router: Router | None = None
        self._opener = urllib.request.build_opener(_SameOrigin(_origin(self.base_url)))

    def __repr__(self) -> str:
        return f"RemoteRouter({self.base_url!r})"

    # ----------------------------------------------------------------------- HTTP

    def request(self, path: str, body: Mapping[str, object] | None = None) -> object:
        """``GET`` (no body) or ``POST`` JSON to ``path``; the decoded JSON reply."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.base_url + path, data=data, headers=headers)
        try:
            with self._opener.open(request, timeout=self.timeout) as reply:
                return json.loads(reply.read())
        except urllib.error.HTTPError as exc:
            raise _refusal(exc, path) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise RemoteError(
                f"laya serve at {self.base_url} did not answer {path}: {reason}"
            ) from None

    def health(self) -> dict[str, Any]:
        """The server's ``/health`` (its loaded checkpoints and devices when the key is right)."""
        reply = self.request("/health")
        return reply if isinstance(reply, dict) else {"status": reply}

    def systemone(self, body: Mapping[str, object]) -> dict[str, Any]:
        """``POST /v1/systemone`` with ``body`` as it is."""
        return _object(self.request("/v1/systemone", body), "/v1/systemone")

    def systemone_batch(self, body: Mapping[str, object]) -> list[dict[str, Any]]:
        """``POST /v1/systemone/batch`` with ``body`` as it is; one result per state."""
        path = "/v1/systemone/batch"
        return [
            _object(result, path) for result in _object(self.request(path, body), path)["results"]
        ]

    # ----------------------------------------------------------------------- Router calls

    @property
    def router(self) -> Router:
        """The local Router that routes (loads nothing); its default is the server's, read from
        ``/health`` on first use unless ``default=`` was given."""
        if self._router is None:
            kwargs = dict(self._router_kwargs)
            if "default" not in kwargs:
                kwargs["default"] = self.health().get("default_model") or default_model({})
            self._router = Router(**kwargs)
        return self._router

    def route(self, state: object, questions: object = None, **hints: Any) -> Any:
        """The routing decision, made here (loads nothing, asks the server nothing)."""
        return self.router.route(state, questions, **hints)

    def route_batch(self, requests: Sequence[dict[str, Any]], **options: Any) -> list[Any]:
        return self.router.route_batch(requests, **options)

    def predict(
        self,
        state: object,
        questions: Mapping[str, object],
        model: str | None = None,
        task: str | None = None,
        lang: str | None = None,
        lang_guess: object = None,
        hooks: object = None,
        on_predict_start: object = None,
        on_predict_end: object = None,
        hooks_raise: bool | None = None,
        hooks_timeout: float | None = None,
        max_len: int | None = None,
        head_max_len: int | None = None,
        min_confidence: float | None = None,
    ) -> dict[str, Any]:
        """One state answered by the server (``min_confidence`` and the budgets included); the
        parameters are Router.predict's, and the hook ones are refused (they cannot travel)."""
        controls = {k: v for k, v in locals().items() if k not in ("self", "state", "questions")}
        return self.systemone({"state": state, "questions": questions, **sendable(controls)})

    system_one = predict

    def predict_batch(
        self,
        requests: Sequence[Mapping[str, object]],
        batch_size: int | None = None,
        hooks_timeout: float | None = None,
        min_confidence: object = None,
        sort_by_length: bool = False,
        *,
        hooks: object = None,
        on_predict_start: object = None,
        on_predict_end: object = None,
        hooks_raise: bool | None = None,
        diagnostics: dict[str, object] | None = None,
    ) -> list[dict[str, Any]]:
        """Requests answered in input order: those sharing questions and controls go together,
        in calls of at most 64 states. The parameters are Router.predict_batch's; the hook ones
        are refused (they cannot travel), and ``diagnostics`` stays empty (the server sorts)."""
        sendable({key: value for key, value in locals().items() if key in HOOK_KEYS})
        shared = {"batch_size": batch_size, "min_confidence": min_confidence}
        shared = {k: v for k, v in shared.items() if v is not None}
        if sort_by_length:
            shared["sort_by_length"] = True
        groups: dict[str, list[int]] = {}
        for i, request in enumerate(requests):
            rest = {k: v for k, v in request.items() if k != "state"}
            groups.setdefault(json.dumps(rest, sort_keys=True, default=str), []).append(i)
        results: dict[int, dict[str, Any]] = {}
        for indices in groups.values():
            rest = {k: v for k, v in requests[indices[0]].items() if k != "state"}
            for start in range(0, len(indices), MAX_BATCH):
                chunk = indices[start : start + MAX_BATCH]
                body = {**rest, **shared, "states": [requests[i]["state"] for i in chunk]}
                for i, result in zip(chunk, self.systemone_batch(body), strict=True):
                    results[i] = result
        return [results[i] for i in range(len(requests))]

    predict_many = predict_batch

    def predict_states(
        self, states: Sequence[Any], questions: dict[str, Any], **options: Any
    ) -> list[Result]:
        """One result per state for one question set (what typed decisions call)."""
        per_request = {k: options[k] for k in CONTROL_KEYS if options.get(k) is not None}
        rest = {k: v for k, v in options.items() if k not in CONTROL_KEYS}
        requests = [{"state": s, "questions": questions, **per_request} for s in states]
        return cast("list[Result]", self.predict_batch(requests, **rest))

    # ----------------------------------------------------------------------- residency

    @property
    def loaded(self) -> list[str]:
        """The checkpoints resident on the server (from ``/health``)."""
        return list(self.health().get("loaded", []))

    @property
    def loaded_revisions(self) -> dict[str, str | None]:
        """The revision of each checkpoint resident on the server (``/health``'s ``revisions``)."""
        return dict(self.health().get("revisions") or {})

    def attach(self, name: str, agent: object) -> None:
        """Refused: an agent built here cannot answer for the server."""
        raise InvalidRequest(
            f"attach({name!r}): a RemoteRouter answers through laya serve; serve the checkpoint "
            "there (laya serve --models NAME=PATH) or attach it to a local laya.Router"
        )

    def load(self, name: str) -> None:
        """Nothing to load here: the server loads on first use."""

    def preload(self, names: str | Sequence[str] | None = None) -> RemoteRouter:
        return self

    def unload(self, name: str | None = None) -> None:
        """Nothing is resident here."""


def remote_from_env(environ: Mapping[str, str] | None = None) -> RemoteRouter | None:
    """The RemoteRouter ``LAYA_BASE_URL`` / ``LAYA_API_KEY`` / ``LAYA_REMOTE_TIMEOUT`` ask for."""
    environ = os.environ if environ is None else environ
    url = (environ.get("LAYA_BASE_URL") or "").strip()
    if not url:
        return None
    timeout = (environ.get("LAYA_REMOTE_TIMEOUT") or "").strip()
    try:
        seconds = float(timeout) if timeout else None
    except ValueError:
        raise InvalidRequest(
            f"LAYA_REMOTE_TIMEOUT={timeout!r}: must be a number of seconds"
        ) from None
    default = default_model(environ)
    return RemoteRouter(url, environ.get("LAYA_API_KEY") or None, seconds, default=default)


def _checked_url(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidRequest(f"base_url must be a string, got {type(text).__name__}")
    url = base_url(text)
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise InvalidRequest(f"base_url {text!r}: use an http:// or https:// address")
    return url


def _checked_timeout(value: object) -> float:
    if value is None:
        return DEFAULT_TIMEOUT_S
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise InvalidRequest(f"timeout must be a positive number of seconds, got {value!r}")
    if not math.isfinite(value):
        raise InvalidRequest("timeout must be finite")
    return float(value)


def sendable(
    controls: Mapping[str, object], instead: str = "answer in-process"
) -> dict[str, object]:
    """The controls (those set) a request body to laya serve carries: hooks run in the server's
    process and a ``lang_guess`` function cannot travel, so either is refused, saying to
    install the hooks there or ``instead``."""
    sent = [key for key in BODY_REFUSALS if controls.get(key) is not None]
    if sent:
        raise InvalidRequest(
            f"{sent[0]} cannot be sent to laya serve (hooks run in its process); install them "
            f"on the server (laya serve --hook) or {instead}"
        )
    if callable(controls.get("lang_guess")):
        raise InvalidRequest(
            f"lang_guess must be a language code string when answering remotely, or {instead}"
        )
    return {k: v for k, v in controls.items() if v is not None and k not in BODY_REFUSALS}


def _object(reply: object, path: str) -> dict[str, Any]:
    """A reply that must be a JSON object (laya's result), or a RemoteError saying so."""
    if not isinstance(reply, dict):
        raise RemoteError(f"laya serve answered {path} with a JSON {type(reply).__name__}")
    return reply


def _refusal(exc: urllib.error.HTTPError, path: str) -> LayaError:
    """A laya serve error reply as the package's error carrying its ``detail``."""
    try:
        detail = json.loads(exc.read()).get("detail")
    except (ValueError, AttributeError, OSError):
        detail = None
    text = detail if isinstance(detail, str) else f"HTTP {exc.code} from {path}"
    if exc.code == 422 and text.startswith("checkpoint '"):  # not here; only the operator can help
        return CheckpointUnavailable(text)
    if exc.code == 422 and text.startswith("unknown model "):
        return UnknownName(text)
    if exc.code in (400, 403, 408, 413, 415, 422):
        return InvalidRequest(text)
    if exc.code == 401:
        return InvalidRequest(f"{text} (set LAYA_API_KEY / api_key to the server's key)")
    if exc.code == 503:
        retry = exc.headers.get("Retry-After") if exc.headers else None
        seconds = float(retry) if retry and retry.replace(".", "", 1).isdigit() else 1.0
        if "checkpoint" in text:
            return CheckpointUnavailable(text, retry_after=seconds)
        return Overloaded(text, seconds)
    return RemoteError(f"laya serve answered {path} with HTTP {exc.code}: {text}")
