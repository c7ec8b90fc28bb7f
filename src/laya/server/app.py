"""The FastAPI app of ``laya serve``: routes, auth, admission, and one error mapping.

A decision request goes: auth (401) → ``Content-Type`` (415) → the whole body, within its size cap
and read timeout (413 / 408) → an admission slot (503, taken only now, so a slow sender holds no
slot) → JSON and the wire models (400 / 413 / 422), on a worker thread so one body delays only
itself → inference on a small thread pool under the request's deadline (504) → the reply. Every
exception on the way is turned into a reply by :func:`laya.server.statuses.refusal`, here and
nowhere else; nothing escapes to the ASGI server. No reply is a redirect (a trailing slash is a
404), and ``HEAD`` is answered wherever ``GET`` is.
"""

import asyncio
import hmac
import inspect
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from ..checkpoint import ALIASES
from ..engine.deadline import deadline
from ..errors import DeadlineExceeded, Overloaded
from ..router import Router
from .docs import add_docs, decision_routes
from .inference import build_router, predict_batch, predict_single
from .limits import MAX_BODY_BYTES, check_content_type, decode_body, read_body
from .playground import add_playground
from .replies import render_batch, render_result
from .settings import Settings, settings_from
from .statuses import CLOSE, BodyTimeout, MalformedBody, Unauthorized, refusal
from .wire import parse_batch, parse_single

__all__ = ["authorised", "create_app"]

log = logging.getLogger("laya.server")
_GRACE_S = 1.0  # past the deadline, how long to wait for the worker to stop at its next pass


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


class _Service:
    """What the routes share: the router, settings, admission counter and inference pool."""

    def __init__(self, router: Router, settings: Settings) -> None:
        self.router, self.settings = router, settings
        self.admission = _Admission(settings.max_concurrent)
        self.pool: ThreadPoolExecutor | None = None

    def check_auth(self, request: Any) -> None:
        if not authorised(request.headers.get("authorization"), self.settings.api_key):
            raise Unauthorized("invalid or missing bearer token")

    async def decide(
        self, request: Any, parse: Callable, predict: Callable, render: Callable
    ) -> Any:
        """One decision route, from the headers to the reply; every refusal is mapped once."""
        from fastapi.responses import JSONResponse

        try:
            self.check_auth(request)
            check_content_type(request.headers.get("content-type"))
            raw = await self._body(request)
            with self.admission.slot():
                admitted = time.monotonic()
                parsed = await asyncio.to_thread(_parsed, parse, raw, self.settings)
                request.state.model = str(parsed.controls.get("model", ""))[:64] or None
                started = time.perf_counter()
                result = await self._infer(predict, parsed, admitted)
                ms = f"{(time.perf_counter() - started) * 1000:.2f}"
        except Exception as exc:  # noqa: BLE001 - the one place a request's failure becomes a reply
            return refused(exc)
        request.state.model = _routed_model(result) or request.state.model
        headers = {"Server-Timing": f"inference;dur={ms}", "X-Inference-Time-Ms": ms}
        return JSONResponse(render(result, self.settings.jev_strict), headers=headers)

    async def _infer(self, predict: Callable, parsed: Any, admitted: float) -> Any:
        """``predict`` under the request's deadline: awaited if async, else on the pool."""
        timeout = self.settings.request_timeout
        if inspect.iscoroutinefunction(predict):
            work = predict(self.router, parsed, self.settings)
        else:

            def bounded() -> Any:
                with deadline(timeout, admitted):
                    return predict(self.router, parsed, self.settings)

            work = asyncio.get_running_loop().run_in_executor(self.pool, bounded)
        left = timeout - (time.monotonic() - admitted) + _GRACE_S
        try:
            return await asyncio.wait_for(work, max(left, 0.0))
        except asyncio.TimeoutError:
            raise DeadlineExceeded(
                f"the request ran past its {timeout:g} s deadline; send fewer states or "
                "questions per request"
            ) from None

    async def _body(self, request: Any) -> bytes:
        from starlette.requests import ClientDisconnect

        reading = read_body(request.stream(), request.headers.get("content-length"), MAX_BODY_BYTES)
        try:
            return await asyncio.wait_for(reading, self.settings.body_read_timeout)
        except asyncio.TimeoutError:
            seconds = self.settings.body_read_timeout
            raise BodyTimeout(f"request body not received within {seconds:g} s") from None
        except ClientDisconnect:
            raise MalformedBody("client disconnected before the body was received") from None

    def health(self, request: Any) -> dict[str, Any]:
        """Liveness; with the key (or none set), the reference's detail fields too."""
        if not authorised(request.headers.get("authorization"), self.settings.api_key):
            return {"status": "ok"}
        router = self.router
        resident = router.resident
        devices = {name: _device_of(runtime) for name, runtime in resident.items()}
        preference = self.settings.device or "auto"
        first = next(iter(devices.values()), None)
        return {
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


def _parsed(parse: Callable, raw: bytes, settings: Settings) -> Any:
    """The body decoded and validated: CPU work, so the routes run it on a worker thread."""
    return parse(decode_body(raw), settings)


def _device_of(runtime: Any) -> str:
    device = getattr(runtime, "device", None)
    if device is not None:
        return str(device)
    backend = getattr(runtime, "backend", None)
    return str(getattr(backend, "name", "unknown"))


def _fallbacks(preference: str | None, devices: dict[str, str]) -> dict[str, Any]:
    """Checkpoints asked to run on an accelerator that run on the CPU instead."""
    wanted = (preference or "").split(":")[0].lower()
    if wanted in ("", "cpu", "auto"):
        return {}
    return {
        name: {"count": 1, "last_reason": f"{preference} requested but not available; on cpu"}
        for name, device in devices.items()
        if device == "cpu"
    }


def refused(exc: BaseException) -> Any:
    """The JSON reply for ``exc`` (:func:`laya.server.statuses.refusal` decides what it says)."""
    from fastapi.responses import JSONResponse

    answer = refusal(exc)
    return JSONResponse({"detail": answer.detail}, answer.status, headers=answer.headers)


def _routed_model(result: Any) -> str | None:
    first = result[0] if isinstance(result, list) and result else result
    routing = first.get("routing") if isinstance(first, dict) else None
    return routing.get("model") if isinstance(routing, dict) else None


class _Guard:
    """Outermost ASGI middleware: one JSON access-log line per request, and no exception escapes.

    An exception that reaches it (a bug) becomes a fixed-text 500 with ``Connection: close`` when
    no response has started, so the ASGI server never drops a keep-alive connection silently.
    A ``HEAD`` request is routed as its ``GET`` (the ASGI server sends the headers, not the body),
    so every route that answers ``GET`` answers ``HEAD``.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        started, status = time.perf_counter(), [0]

        async def record(message: dict) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        routed = {**scope, "method": "GET"} if scope["method"] == "HEAD" else scope
        try:
            await self.app(routed, receive, record)
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            log.error("unhandled error", exc_info=exc)
            if status[0] == 0:
                await _send_500(record)
        finally:
            entry = {
                "method": scope["method"],
                "path": scope["path"],
                "status": status[0] or 500,
                "ms": round((time.perf_counter() - started) * 1000, 2),
                "model": state.get("model"),
            }
            log.info(json.dumps(entry))


async def _send_500(send: Any) -> None:
    body = json.dumps({"detail": "internal server error"}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    headers += [(k.lower().encode(), v.encode()) for k, v in CLOSE.items()]
    await send({"type": "http.response.start", "status": 500, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def create_app(
    router: Router | None = None,
    settings: Settings | None = None,
    predict_one: Callable[..., Any] = predict_single,
) -> Any:
    """The FastAPI app serving ``router``; ``predict_one`` answers ``/v1/systemone`` (awaited if async)."""
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError

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
        docs_url=None,
        redoc_url=None,
        openapi_url=None if hidden else "/openapi.json",
        redirect_slashes=False,  # its redirect's Location would be built from the Host header
    )
    app.state.service = service
    app.add_middleware(_Guard)

    @app.exception_handler(RequestValidationError)
    async def bad_parameters(_request: Request, exc: RequestValidationError) -> Any:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return refused(MalformedBody(f"{where}: {first.get('msg', '')}".strip(": ")))

    single, batch = decision_routes(settings.jev_strict)

    @app.post("/v1/systemone", **single)
    async def systemone(request: Request) -> Any:
        return await service.decide(request, parse_single, predict_one, render_result)

    @app.post("/v1/systemone/batch", **batch)
    async def systemone_batch(request: Request) -> Any:
        return await service.decide(request, parse_batch, predict_batch, render_batch)

    @app.get("/health", summary="Liveness; resident checkpoints and devices when authorised")
    async def health(request: Request) -> dict[str, Any]:
        return service.health(request)

    @app.get("/models", summary="Checkpoints, aliases, and which are resident")
    async def models(request: Request) -> Any:
        try:
            return service.models(request)
        except Exception as exc:  # noqa: BLE001 - mapped like every route's
            return refused(exc)

    add_playground(app)
    add_docs(app, hidden)
    return app
