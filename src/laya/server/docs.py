"""The OpenAPI document of ``laya serve`` and its ``/docs`` and ``/redoc`` pages, offline.

The decision routes read their bodies themselves (to bound size, time and JSON before parsing:
a declared body model would have FastAPI parse an unbounded body first), so FastAPI cannot see
their models; :func:`add_docs` writes the request bodies, every status and
the bearer scheme into the document from the wire models. The pages' scripts and styles come from
the ``fastapi-offline`` package (Swagger UI and ReDoc, served from ``/docs/static``), so they
render without a network. With an API key set, none of this is served.
"""

from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, TypedDict

from pydantic import BaseModel

from .schema import ErrorReply, HealthReply, JevModelsReply, ModelsReply, reply_types
from .statuses import INTERNAL
from .wire import SystemOneBatchBody, SystemOneBody

if TYPE_CHECKING:
    from fastapi import FastAPI
    from starlette.requests import Request
    from starlette.responses import HTMLResponse

__all__ = ["RouteOptions", "add_docs", "decision_routes"]

_REFUSALS = {
    400: "not JSON, not an object, a required field missing or null; or not parseable HTTP",
    401: "the API key is set and the bearer token is missing or wrong",
    403: "a browser page on another site sent it (Sec-Fetch-Site / Origin)",
    408: "the body did not arrive within the body read timeout",
    413: "too large: body, states, questions, options, state size or the work budget",
    422: "a field the model cannot take (the detail names it and the fix), or a checkpoint "
    "this server does not have and may not download (not worth a retry)",
    431: "the request line and headers exceed LAYA_MAX_HEADER_BYTES (the connection closes)",
    500: f"a bug: the detail is always {INTERNAL!r} (the traceback is in the server's log)",
    503: "server busy: every admission slot or connection taken (Retry-After: 1), or the "
    "checkpoint is downloading (Retry-After)",
    504: "the request ran past its deadline (LAYA_REQUEST_TIMEOUT)",
}
_ERROR = {"model": ErrorReply}
_SECURITY: list[dict[str, list[str]]] = [
    {},
    {"bearer": []},
]  # the bearer only when the server has a key


class RouteOptions(TypedDict):
    """The keyword options of a decision route's ``app.post``."""

    summary: str
    response_model: None
    responses: dict[int | str, dict[str, object]]
    openapi_extra: dict[str, object]


def _route(summary: str, body: type, reply: type) -> RouteOptions:
    responses: dict[int | str, dict[str, object]] = {
        200: {"model": reply, "description": "the answers"}
    }
    responses |= {code: {**_ERROR, "description": text} for code, text in _REFUSALS.items()}
    request_body = {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": f"#/components/schemas/{body.__name__}"}}
        },
    }
    return {
        "summary": summary,
        "response_model": None,
        "responses": responses,
        "openapi_extra": {"requestBody": request_body, "security": _SECURITY},
    }


def decision_routes(strict: bool) -> tuple[RouteOptions, RouteOptions]:
    """The route options of ``/v1/systemone`` and its batch, with the replies of this strictness."""
    single, batch = reply_types(strict)
    return (
        _route("Answer typed questions about one state (Jev-compatible)", SystemOneBody, single),
        _route("Answer one question set for up to 64 states", SystemOneBatchBody, batch),
    )


_OTHER_RESPONSES: dict[str, dict[str, type[BaseModel]]] = {
    "/health": {"200": HealthReply},
    "/models": {"200": ModelsReply, "401": ErrorReply},
    "/v1/models": {"200": JevModelsReply, "401": ErrorReply},
}


def _component(document: dict[str, Any], model: type[BaseModel]) -> dict[str, str]:
    """Add ``model`` (and the models it uses) to the document's schemas; its ``$ref``."""
    from pydantic import TypeAdapter

    schema = TypeAdapter(model).json_schema(ref_template="#/components/schemas/{model}")
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    schemas.update(schema.pop("$defs", {}))
    schemas[model.__name__] = schema
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _document(app: "FastAPI") -> dict[str, Any]:
    from fastapi.openapi.utils import get_openapi

    document = get_openapi(
        title=app.title,
        version="1",
        description="laya's decision API: typed answers with calibrated probabilities.",
        routes=app.routes,
    )
    for body in (SystemOneBody, SystemOneBatchBody):
        _component(document, body)
    for path, replies in _OTHER_RESPONSES.items():
        operation = document["paths"][path]["get"]
        for status, model in replies.items():
            operation["responses"][status] = {
                "description": model.__doc__.strip().splitlines()[0] if model.__doc__ else status,
                "content": {"application/json": {"schema": _component(document, model)}},
            }
        operation["security"] = _SECURITY
    document["components"]["securitySchemes"] = {
        "bearer": {"type": "http", "scheme": "bearer", "description": "LAYA_API_KEY"}
    }
    return document


# ReDoc's footer shows Redocly's logo from their CDN; served here with no image instead (its
# onError handler then hides it), so the page makes no request off this server.
_OFFLINE = {
    "redoc.standalone.js": (b'src:"https://cdn.redoc.ly/redoc/logo-mini.svg"', b'src:"data:,"')
}


def _page(
    request: "Request",
    render: Callable[..., "HTMLResponse"],
    title: str,
    assets: dict[str, str],
    options: Mapping[str, object],
) -> "HTMLResponse":
    """A docs page from ``render``, its ``assets`` served under the app's root path."""
    root = request.scope.get("root_path", "")
    urls = {argument: f"{root}/docs/static/{name}" for argument, name in assets.items()}
    title = f"laya serve - {title}"
    page = render(openapi_url=f"{root}/openapi.json", title=title, **urls, **options)
    page.headers.update(_PAGE_POLICY)
    return page


@cache
def _asset(name: str) -> bytes:
    data = resources.files("fastapi_offline").joinpath("static").joinpath(name).read_bytes()
    if name in _OFFLINE:
        data = data.replace(*_OFFLINE[name])
    return data


# The pages may run their own inline start-up script and a blob worker (ReDoc), and load from
# this server only.
_PAGE_POLICY = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self' 'unsafe-inline'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; worker-src 'self' blob:; "
    "connect-src 'self'; base-uri 'none'; frame-ancestors 'none'"
}

_ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "redoc.standalone.js": "text/javascript; charset=utf-8",
    "favicon.png": "image/png",
}


def add_docs(app: "FastAPI", hidden: bool) -> None:
    """The OpenAPI document (with the wire models) and offline ``/docs`` and ``/redoc``."""
    if hidden:
        return
    from fastapi import HTTPException, Request
    from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
    from fastapi.responses import HTMLResponse, Response

    generated: dict[str, Any] = {}

    def openapi() -> dict[str, Any]:
        if not generated:
            generated.update(_document(app))
        return generated

    # FastAPI's documented extension point (a method replaced on the instance), made lazily
    setattr(app, "openapi", openapi)  # noqa: B010 - mypy refuses assigning to a method

    @app.get("/docs", include_in_schema=False)
    async def swagger(request: Request) -> HTMLResponse:
        assets = {
            "swagger_js_url": "swagger-ui-bundle.js",
            "swagger_css_url": "swagger-ui.css",
            "swagger_favicon_url": "favicon.png",
        }
        options = {"swagger_ui_parameters": {"validatorUrl": None}}
        return _page(request, get_swagger_ui_html, "Swagger UI", assets, options)

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        assets = {"redoc_js_url": "redoc.standalone.js", "redoc_favicon_url": "favicon.png"}
        options = {"with_google_fonts": False}
        return _page(request, get_redoc_html, "ReDoc", assets, options)

    @app.get("/docs/static/{name}", include_in_schema=False)
    async def asset(name: str) -> Response:
        if name not in _ASSETS:
            raise HTTPException(404, f"no static file {name!r}")
        return Response(_asset(name), media_type=_ASSETS[name])
