"""The FastAPI app of ``laya serve``: routes, auth, admission, the batcher, one error mapping.

Every request first passes the outermost middleware: a request id (``X-Request-ID``, echoed or
made), the framing (``Content-Length`` with ``Transfer-Encoding``: 400) and the host allow-list
(403, against DNS rebinding), a span when OpenTelemetry is installed, and, once answered, an
access-log line and its metrics (:mod:`laya.server.metrics`). A decision request then goes: auth
(401, a dependency) → a browser's cross-site request refused (403, by ``Sec-Fetch-Site`` /
``Origin``) → the whole body, within its size cap and read timeout (413 / 408), read as JSON
whatever its ``Content-Type`` → an admission slot (503, taken only now, so a slow sender holds no
slot) → JSON and the wire models (400 / 413 / 422; a large body on a worker thread, so it delays
only itself) → inference under the request's deadline (504): a small single request joins a group
of the batcher (:mod:`laya.server.batcher`, shared passes); a long one (a tournament, a
shortlist, a batch, one over its work budget) runs on a thread of its own and takes turns with
the small ones, pass by pass → the reply. A client that hangs up meanwhile gives its slot back at
once and its work stops before its next pass. Every exception on the way becomes a reply through
:func:`laya.server.statuses.refusal`: the package's errors in the one exception handler, anything
else (a bug) in the outermost middleware; nothing escapes to the ASGI server. No reply is a
redirect (a trailing slash is a 404), and ``HEAD`` is answered wherever ``GET`` is.
"""

import asyncio
import contextvars
import hmac
import json
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from ..checkpoint import ALIASES
from ..engine.deadline import deadline
from ..engine.pacing import Steps, paced
from ..engine.result import reporting_question_cuts
from ..errors import DeadlineExceeded, LayaError, Overloaded
from ..router import Router
from .batcher import Batcher, Job, Pace
from .docs import add_docs, decision_routes
from .inference import (
    SERVABLE,
    STANDINGS,
    answering,
    build_router,
    intra_op_threads,
    predict_batch,
    predict_each,
    predict_single,
    standing,
    use_threads,
    work_bound,
)
from .limits import (
    MAX_BODY_BYTES,
    Hosts,
    check_framing,
    check_host,
    check_same_origin,
    decode_body,
    over_network,
    read_body,
)
from .metrics import CONTENT_TYPE, Metrics
from .playground import add_playground
from .replies import render_batch, render_result
from .settings import Settings, settings_from
from .statuses import (
    CLOSE,
    BodyTimeout,
    ClientGone,
    MalformedBody,
    Unauthorized,
    reason,
    refusal,
)
from .tracing import span
from .wire import MAX_CHOICE_OPTIONS, BatchRequest, SingleRequest, parse_batch, parse_single

if TYPE_CHECKING:
    from fastapi import FastAPI
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from ..engine.result import Result
    from .tracing import Span

__all__ = ["authorised", "create_app"]

log = logging.getLogger("laya.server")
_GRACE_S = 1.0  # past the deadline, how long to wait for the worker to stop at its next pass
_INLINE_PARSE_BYTES = 16_384  # a body this small is parsed on the event loop (well under 1 ms)
_REQUEST_ID = re.compile(r"[A-Za-z0-9._~:/+=@-]{1,128}")  # an X-Request-ID kept as sent
Parsed = TypeVar("Parsed", SingleRequest, BatchRequest)
Answered = TypeVar("Answered")
Parse = Callable[[dict[str, Any], Settings], Parsed]  # a route's parser of the decoded body


class _Admission:
    """At most ``limit`` requests in flight; the next one is refused at once (503), not queued.

    Used only from the event loop's thread, so a plain counter needs no lock.
    """

    def __init__(self, limit: int) -> None:
        self.limit, self.active = limit, 0

    @contextmanager
    def slot(self) -> Iterator[None]:
        if self.active >= self.limit:
            raise Overloaded("server busy; retry shortly", retry_after=1)
        self.active += 1
        try:
            yield
        finally:
            self.active -= 1


def authorised(header: str | None, api_key: str | None) -> bool:
    """Whether an Authorization header carries the bearer key (always True without a key).

    The scheme is case-insensitive (RFC 9110); the key is compared in constant time on the raw
    header bytes, so a non-ASCII header is a 401, never a 500.
    """
    if api_key is None:
        return True
    if header is None:
        return False
    sent = header.encode("latin-1")  # Starlette decoded the raw header as latin-1: undo it
    scheme, _, token = sent.strip().partition(b" ")
    expected = api_key.encode("utf-8", "surrogateescape")
    return scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), expected)


class _Hangup:
    """Watches a request's connection once its body is read: ``gone`` is set when the client
    hangs up (the ASGI server's ``http.disconnect``), for the threads its work runs on."""

    def __init__(self, receive: "Receive") -> None:
        self.gone = threading.Event()
        self.task = asyncio.ensure_future(self._watch(receive))

    async def _watch(self, receive: "Receive") -> None:
        while (await receive())["type"] != "http.disconnect":
            continue
        self.gone.set()

    def stop(self) -> None:
        self.task.cancel()


class _Service:
    """What the routes share: the router, settings, admission, batcher, long requests' threads,
    host rule, metrics and idle clock."""

    def __init__(self, router: Router, settings: Settings) -> None:
        self.router, self.settings = router, settings
        self.admission = _Admission(settings.max_concurrent)
        self.long_pool: ThreadPoolExecutor | None = None  # one thread per long request
        self.threads = intra_op_threads(settings)
        self.batcher = Batcher(
            self._answer_group,
            settings.batch_window_ms / 1000,
            settings.batch_tokens,
            settings.inference_workers,
            run_pass=self._run_pass,
        )
        self.pace = Pace()
        self.hosts = Hosts.serving(settings.host, settings.allowed_hosts)
        self.metrics = Metrics(lambda: self.batcher.queued, lambda: self.admission.active)
        self.last_request = time.monotonic()

    def _answer_group(
        self, requests: Sequence[SingleRequest], sharing: int
    ) -> list["Result | Exception"]:
        """A batcher group, on its share of the torch threads (``sharing`` groups share them)."""
        use_threads(max(1, self.threads // sharing))
        self.metrics.group_size.observe(len(requests))
        started = time.perf_counter()
        with reporting_question_cuts():
            answers = predict_each(self.router, requests, self.settings)
        self.pace.grouped(time.perf_counter() - started)
        return answers

    def _run_pass(self, steps: Steps, sharing: int) -> object:
        """The next pass of a long run, on a batcher worker's share of the torch threads, timed
        for the slices (:class:`laya.server.batcher.Pace`); StopIteration when there is none."""
        use_threads(max(1, self.threads // sharing))
        started = time.perf_counter()
        tokens, output = next(steps)
        self.pace.passed(tokens, time.perf_counter() - started)
        self.metrics.passes.inc()
        return output

    def _slice(self, budget: int) -> int:
        """The padded tokens of a long request's next pass: ``--slice-tokens``; else, while small
        requests are about (one waits, or one ended lately), as many as run in the time a small
        request's own group takes (:class:`laya.server.batcher.Pace`), so a small request
        arriving meanwhile waits for little; else the whole budget (as few passes as fit)."""
        if self.settings.slice_tokens:
            return min(budget, self.settings.slice_tokens)
        if self.batcher.small_waiting() or self.pace.small_lately():
            return min(budget, self.pace.tokens(budget))
        return budget

    def check_auth(self, request: "Request") -> None:
        """401 without the bearer key (when one is set)."""
        if not authorised(request.headers.get("authorization"), self.settings.api_key):
            raise Unauthorized("invalid or missing bearer token")

    async def decide(
        self,
        request: "Request",
        parse: Parse[Parsed],
        answer: Callable[
            [Parse[Parsed], bytes, float, threading.Event],
            Awaitable[tuple[Parsed, Awaitable[Answered]]],
        ],
        render: Callable[[Answered, bool], dict[str, Any]],
    ) -> "JSONResponse":
        """One decision route, from the body to the reply (auth ran as a dependency)."""
        from fastapi.responses import JSONResponse

        check_same_origin(request.headers)
        raw = await self._body(request)
        with self.admission.slot():
            admitted = self.last_request = time.monotonic()
            started = time.perf_counter()
            hangup = _Hangup(request.receive)
            try:
                with span("laya.parse"):
                    parsed, work = await answer(parse, raw, admitted, hangup.gone)
                request.state.model = str(parsed.controls.get("model", ""))[:64] or None
                with span("laya.inference", {"laya.model": request.state.model}):
                    result = await self._waited(work, admitted, hangup)
            finally:
                hangup.stop()
            ms = f"{(time.perf_counter() - started) * 1000:.2f}"
            self.last_request = time.monotonic()
        request.state.model = _routed_model(result) or request.state.model
        self._count_answered(result)
        headers = {"Server-Timing": f"inference;dur={ms}", "X-Inference-Time-Ms": ms}
        return JSONResponse(render(result, self.settings.jev_strict), headers=headers)

    def _count_answered(self, result: object) -> None:
        """Per-model counts of answered requests (a batch: each of its states) and tokens."""
        for one in result if isinstance(result, list) else [result]:
            model = _routed_model(one)
            usage = one.get("usage") if isinstance(one, dict) else None
            tokens = usage.get("input_tokens", 0) if isinstance(usage, dict) else 0
            self.metrics.answered_by(model or "unknown", int(tokens or 0))

    async def _parsed(self, parse: Parse[Parsed], raw: bytes) -> Parsed:
        """The body decoded and validated: here if small, else on a worker thread (CPU work)."""
        if len(raw) <= _INLINE_PARSE_BYTES:
            return parse(decode_body(raw), self.settings)
        return await asyncio.to_thread(lambda: parse(decode_body(raw), self.settings))

    async def answer_single(
        self, parse: Parse[SingleRequest], raw: bytes, admitted: float, gone: threading.Event
    ) -> tuple[SingleRequest, Awaitable["Result"]]:
        """A single request, parsed: a small one queued in the batcher (shared passes), a long
        one (a tournament, a shortlist, one that could pass its work budget; every one with the
        batcher's window at 0) on a thread of its own, taking turns pass by pass."""
        due = admitted + self.settings.request_timeout
        with self.batcher.arriving() as submit:
            request = await self._parsed(parse, raw)
            cost = work_bound(request)
            if self._small(request, cost):
                model = request.controls.get("model")
                future = submit(Job(request, cost, due, key=model, gone=gone))
                return request, asyncio.wrap_future(future)
        return request, self._long(predict_single, request, admitted, gone)

    def _small(self, request: SingleRequest, cost: int) -> bool:
        """Whether a single request shares the batcher's groups: not with a tournament or a
        shortlist, asked or implied (a choice over ``MAX_CHOICE_OPTIONS`` options, which only
        rounds answer), nor over its work budget, nor with the window at 0."""
        settings = self.settings
        window = settings.batch_window_ms > 0
        rounds = request.choice_mode or request.most_options > MAX_CHOICE_OPTIONS
        return window and not rounds and cost <= settings.max_work_tokens

    async def answer_batch(
        self, parse: Parse[BatchRequest], raw: bytes, admitted: float, gone: threading.Event
    ) -> tuple[BatchRequest, Awaitable[list["Result"]]]:
        """A batch, parsed, and answered on a thread of its own, taking turns pass by pass."""
        request = await self._parsed(parse, raw)
        self.metrics.batch_size.observe(len(request.states))
        return request, self._long(predict_batch, request, admitted, gone)

    def _long(
        self,
        predict: Callable[[Router, Parsed, Settings], Answered],
        request: Parsed,
        admitted: float,
        gone: threading.Event,
    ) -> Awaitable[Answered]:
        """``predict`` on a thread of its own under the request's deadline; the passes of each of
        its runs take turns in the batcher's queue (:meth:`Batcher.take_turns`), each a slice of
        tokens while small requests are about."""
        timeout = self.settings.request_timeout

        def turns(steps: Steps) -> list[object]:
            with span("laya.passes"):
                return self.batcher.take_turns(steps, admitted + timeout, gone)

        def answer() -> Answered:
            with deadline(timeout, admitted), paced(turns, self._slice), reporting_question_cuts():
                return predict(self.router, request, self.settings)

        context = contextvars.copy_context()  # the request's span, for the passes' spans
        loop = asyncio.get_running_loop()
        return loop.run_in_executor(self.long_pool, context.run, answer)

    async def _waited(
        self, work: Awaitable[Answered], admitted: float, hangup: _Hangup
    ) -> Answered:
        """``work``'s result; ClientGone (its work dropped) once the client hangs up, 504 once
        the request's deadline (and a grace) has passed."""
        timeout = self.settings.request_timeout
        left = timeout - (time.monotonic() - admitted) + _GRACE_S
        answer = asyncio.ensure_future(work)
        done, _ = await asyncio.wait(
            {answer, hangup.task}, timeout=max(left, 0.0), return_when=asyncio.FIRST_COMPLETED
        )
        if answer in done:
            return answer.result()
        answer.cancel()  # a job still queued is dropped; a running one stops at its next pass
        if hangup.task in done:
            raise ClientGone("the client hung up before its answer; its work was dropped")
        raise DeadlineExceeded(
            f"the request ran past its {timeout:g} s deadline; send fewer states or "
            "questions per request"
        )

    async def _body(self, request: "Request") -> bytes:
        from starlette.requests import ClientDisconnect

        headers = request.headers
        expect = (headers.get("expect") or "").strip().lower() == "100-continue"
        reading = read_body(request.stream(), headers.get("content-length"), MAX_BODY_BYTES, expect)
        try:
            return await asyncio.wait_for(reading, self.settings.body_read_timeout)
        except asyncio.TimeoutError:
            seconds = self.settings.body_read_timeout
            raise BodyTimeout(f"request body not received within {seconds:g} s") from None
        except ClientDisconnect:
            raise MalformedBody("client disconnected before the body was received") from None

    async def unload_when_idle(self) -> None:
        """``LAYA_IDLE_UNLOAD_SECONDS``: unload every checkpoint once no request came for that
        long (checked every quarter of it, between 0.05 and 5 s; never while one is in flight)."""
        idle = self.settings.idle_unload_seconds
        assert idle is not None
        while True:
            await asyncio.sleep(min(max(idle / 4, 0.05), 5.0))
            quiet = time.monotonic() - self.last_request
            if self.admission.active == 0 and quiet >= idle and self.router.loaded:
                await asyncio.to_thread(self.router.unload)
                log.info(json.dumps({"unloaded": "every checkpoint", "idle_s": round(quiet, 1)}))

    def health(self, request: "Request") -> dict[str, object]:
        """Liveness; with the key (or none set), the reference's detail fields too."""
        if not authorised(request.headers.get("authorization"), self.settings.api_key):
            return {"status": "ok"}
        router = self.router
        resident = router.resident
        devices = {name: _device_of(runtime) for name, runtime in resident.items()}
        preference = self.settings.device or "auto"
        first = next(iter(devices.values()), None)
        reply: dict[str, object] = {
            "status": "ok",
            "loaded": list(resident),
            "revisions": {name: getattr(rt, "revision", None) for name, rt in resident.items()},
            "precision": {name: getattr(rt, "precision", None) for name, rt in resident.items()},
            "device": first or preference,
            "device_is_preference": first is None,
            "checkpoint_devices": devices,
            "cpu_fallbacks": _fallbacks(self.settings.device, devices),
            "default_model": router.default,
            "route": self.settings.route,
            "in_flight": self.admission.active,
            "max_concurrent": self.settings.max_concurrent,
        }
        reply["batches"] = {"groups": self.batcher.groups, "requests": self.batcher.answered}
        if self.settings.idle_unload_seconds is not None:
            reply["idle_unload_seconds"] = self.settings.idle_unload_seconds
            reply["idle_seconds"] = round(time.monotonic() - self.last_request, 3)
        return reply

    def models(self) -> dict[str, object]:
        """``GET /models``: every checkpoint the server knows, whether it is resident and
        whether it can answer (``available``: loaded, on disk, cached, or downloadable)."""
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
                    "available": standing(router, name) in SERVABLE,
                }
                for name, src in sources.items()
            },
            "aliases": {a: n for a, n in sorted(ALIASES.items()) if n in sources},
        }

    def jev_models(self) -> dict[str, list[dict[str, str]]]:
        """``GET /v1/models`` in Jev's shape, ``{"models": [{"name", "description", ...}]}``:
        only the checkpoints that can answer a request (not one that is neither on disk nor
        cached while downloads are off), the default first, each saying which requests naming
        no model it answers."""
        router = self.router
        answers = answering(self.settings)
        models = []
        for name, source in router.models.items():
            where = standing(router, name)
            if where not in SERVABLE:
                continue
            notes = [
                _default_note(name, router.default, self.settings.route, answers),
                STANDINGS[where],
            ]
            said = "; ".join(note for note in notes if note)
            origin = source[0] if source else "attached"
            description = f"laya checkpoint {name} ({origin}): {said}"
            models.append({"name": name, "description": description, "release_date": ""})
        models.sort(key=lambda model: model["name"] != router.default)
        return {"models": models}


def _default_note(name: str, default: str, route: str, answers: list[str]) -> str:
    """What a checkpoint answers of the requests that name no model (docs/server.md)."""
    if route == "default":
        return "default: answers requests that name no model" if name == default else ""
    if name == default:
        return "default: answers states whose language cannot be told"
    return "answers requests routed to it by language" if name in answers else ""


def _device_of(runtime: object) -> str:
    device = getattr(runtime, "device", None)
    if device is not None:
        return str(device)
    backend = getattr(runtime, "backend", None)
    return str(getattr(backend, "name", "unknown"))


def _fallbacks(preference: str | None, devices: dict[str, str]) -> dict[str, dict[str, object]]:
    """Checkpoints asked to run on an accelerator that run on the CPU instead."""
    wanted = (preference or "").split(":")[0].lower()
    if wanted in ("", "cpu", "auto"):
        return {}
    return {
        name: {"count": 1, "last_reason": f"{preference} requested but not available; on cpu"}
        for name, device in devices.items()
        if device == "cpu"
    }


def refused(exc: BaseException, close: bool = False) -> "JSONResponse":
    """The JSON reply for ``exc`` (:func:`laya.server.statuses.refusal` decides what it says)."""
    from fastapi.responses import JSONResponse

    answer = refusal(exc)
    headers = {**answer.headers, **CLOSE} if close else answer.headers
    return JSONResponse({"detail": answer.detail}, answer.status, headers=headers)


def _routed_model(result: object) -> str | None:
    first = result[0] if isinstance(result, list) and result else result
    routing = first.get("routing") if isinstance(first, dict) else None
    return routing.get("model") if isinstance(routing, dict) else None


class _Guard:
    """Outermost ASGI middleware: the request id, the framing and host checks, a span, and once
    answered one JSON access-log line and the request's metrics; no exception escapes.

    ``X-Request-ID`` is kept as sent when it is 1-128 URL-safe characters, else made (a UUID),
    and sent back on every reply. A request framed by both ``Content-Length`` and
    ``Transfer-Encoding`` gets 400 and ``Connection: close``; a ``Host`` or ``Origin`` naming a
    host the server does not answer to, 403 (:class:`laya.server.limits.Hosts`). An exception
    that reaches here (a bug) becomes :func:`refused`'s 500 with ``Connection: close`` when no
    response has started, so the ASGI server never drops a keep-alive connection silently. A
    ``HEAD`` request is routed as its ``GET`` (the ASGI server sends the headers, not the body),
    so every route that answers ``GET`` answers ``HEAD``.
    """

    def __init__(self, app: "ASGIApp", service: _Service) -> None:
        self.app, self.service = app, service

    async def __call__(self, scope: "Scope", receive: "Receive", send: "Send") -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from starlette.datastructures import Headers

        headers = Headers(scope=scope)
        state = scope.setdefault("state", {})
        state["request_id"] = request_id = _request_id(headers.get("x-request-id"))
        started, status = time.perf_counter(), [0]

        async def record(message: "Message") -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                echoed = (b"x-request-id", request_id.encode())
                message = {**message, "headers": [*message.get("headers", []), echoed]}
            await send(message)

        routed = {**scope, "method": "GET"} if scope["method"] == "HEAD" else scope
        name = f"{scope['method']} {scope['path']}"[:200]
        attributes = {"http.request.method": scope["method"], "laya.request_id": request_id}
        with span(name, attributes, server=True) as current:
            try:
                check_framing(headers)
                if over_network(scope):
                    check_host(headers, self.service.hosts)
                await self.app(routed, receive, record)
            except Exception as exc:  # noqa: BLE001 - the last line of defence
                await self._refuse(exc, status[0], scope, receive, record)
            finally:
                self._answered(routed, state, status[0] or 500, started, current)

    async def _refuse(
        self, exc: Exception, status: int, scope: "Scope", receive: "Receive", send: "Send"
    ) -> None:
        if status:
            log.error("unhandled error after the response started", exc_info=exc)
            return
        self.service.metrics.refused(reason(exc))
        await refused(exc, close=True)(scope, receive, send)

    def _answered(
        self,
        scope: "Scope",
        state: dict[str, object],
        status: int,
        started: float,
        current: "Span | None",
    ) -> None:
        """The access-log line, the latency series and the span's status of one request."""
        seconds = time.perf_counter() - started
        route = getattr(scope.get("route"), "path", None) or "other"
        self.service.metrics.request(route, scope["method"], status, seconds)
        if current is not None:
            current.set_attribute("http.response.status_code", status)
            if route != "other":
                current.set_attribute("http.route", route)
        if log.isEnabledFor(logging.INFO):  # --log-level warning: no line to build
            entry = {
                "method": scope["method"],
                "path": scope["path"],
                "status": status,
                "ms": round(seconds * 1000, 2),
                "model": state.get("model"),
                "request_id": state.get("request_id"),
            }
            log.info(json.dumps(entry))


def _request_id(sent: str | None) -> str:
    """The request's id: the client's ``X-Request-ID`` when it is short and URL-safe, else new."""
    if sent is not None and _REQUEST_ID.fullmatch(sent):
        return sent
    return uuid.uuid4().hex


def create_app(router: Router | None = None, settings: Settings | None = None) -> "FastAPI":
    """The FastAPI app serving ``router`` (built from ``settings`` when not given)."""
    from fastapi import Depends, FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse, PlainTextResponse

    settings = settings or settings_from((), os.environ)
    service = _Service(router or build_router(settings), settings)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        service.long_pool = ThreadPoolExecutor(settings.max_concurrent, "laya-long")
        idle = None
        if settings.idle_unload_seconds is not None:
            idle = asyncio.create_task(service.unload_when_idle())
        try:
            yield
        finally:
            if idle is not None:
                idle.cancel()
            await asyncio.to_thread(service.batcher.close)
            service.long_pool.shutdown(wait=True)

    hidden = settings.api_key is not None
    app = FastAPI(
        title="laya serve",
        lifespan=lifespan,
        root_path=settings.root_path,
        docs_url=None,
        redoc_url=None,
        openapi_url=None if hidden else "/openapi.json",
        redirect_slashes=False,  # its redirect's Location would be built from the Host header
    )
    app.state.service = service
    app.add_middleware(_Guard, service=service)

    async def refusal_reply(_request: Request, exc: Exception) -> JSONResponse:
        """The one exception handler: the package's errors, and FastAPI's own parameter errors."""
        if isinstance(exc, RequestValidationError):
            first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
            where = ".".join(str(p) for p in first.get("loc", ()))
            exc = MalformedBody(f"{where}: {first.get('msg', '')}".strip(": "))
        service.metrics.refused(reason(exc))
        return refused(exc)

    app.add_exception_handler(LayaError, refusal_reply)
    app.add_exception_handler(RequestValidationError, refusal_reply)

    async def require_key(request: Request) -> None:
        """The auth dependency of every route that needs the key (async: no thread hop)."""
        service.check_auth(request)

    keyed = [Depends(require_key)]
    single, batch = decision_routes(settings.jev_strict)

    @app.post("/v1/systemone", dependencies=keyed, **single)
    async def systemone(request: Request) -> JSONResponse:
        return await service.decide(request, parse_single, service.answer_single, render_result)

    @app.post("/v1/systemone/batch", dependencies=keyed, **batch)
    async def systemone_batch(request: Request) -> JSONResponse:
        return await service.decide(request, parse_batch, service.answer_batch, render_batch)

    @app.get("/health", summary="Liveness; resident checkpoints and devices when authorised")
    async def health(request: Request) -> dict[str, Any]:
        return service.health(request)

    @app.get("/models", dependencies=keyed, summary="Checkpoints, aliases, which are resident")
    async def models() -> Any:
        return await asyncio.to_thread(service.models)  # reads the disk: off the event loop

    @app.get("/v1/models", dependencies=keyed, summary="The checkpoints that can answer, for Jev")
    async def jev_models() -> Any:
        return await asyncio.to_thread(service.jev_models)

    @app.get(
        "/metrics",
        dependencies=keyed,
        summary="The server's metrics, in Prometheus' text format",
        response_class=PlainTextResponse,
    )
    async def metrics() -> PlainTextResponse:
        return PlainTextResponse(service.metrics.text(), media_type=CONTENT_TYPE)

    add_playground(app)
    add_docs(app, hidden)
    return app
