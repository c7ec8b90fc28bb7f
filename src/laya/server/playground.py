"""The browser playground on ``laya serve``: ``GET /`` (the page), its assets and ``GET /presets``.

The page is plain HTML, CSS and JavaScript shipped in ``laya/static``; it talks to the server's own
``/models`` and ``/v1/systemone`` routes and makes no other request (a strict content security
policy says so to the browser). Nothing here needs a key: the page asks for one when the API
answers 401.
"""

from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from ..typed.presets import PRESETS, state_field

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["ASSETS", "add_playground", "preset_catalogue"]

# file name -> media type; the only files ``GET /static/{name}`` serves
ASSETS = {
    "playground.html": "text/html; charset=utf-8",
    "playground.css": "text/css; charset=utf-8",
    "playground.js": "text/javascript; charset=utf-8",
}
_HEADERS = {
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
}


@cache
def _asset(name: str) -> bytes:
    """The bytes of one packaged asset (read once)."""
    return resources.files("laya.server").joinpath("static").joinpath(name).read_bytes()


def preset_catalogue() -> dict[str, dict[str, dict[str, object]]]:
    """Every preset's questions and the state field it reads, for ``GET /presets``."""
    presets: dict[str, dict[str, object]] = {}
    for name, build in sorted(PRESETS.items()):
        questions = build()
        doc = (build.__doc__ or "").strip().splitlines()
        presets[name] = {
            "description": doc[0].replace("`", "") if doc else "",  # plain text, no markup
            "state_field": state_field(questions),
            "questions": questions,
        }
    return {"presets": presets}


def add_playground(app: "FastAPI") -> "FastAPI":
    """Register ``GET /``, ``GET /static/{name}`` and ``GET /presets`` on a FastAPI ``app``."""
    from fastapi import HTTPException
    from fastapi.responses import JSONResponse, Response

    if getattr(app.state, "playground", False):
        return app
    app.state.playground = True

    def asset(name: str) -> Response:
        if name not in ASSETS:
            raise HTTPException(404, f"no static file {name!r}")
        return Response(_asset(name), media_type=ASSETS[name], headers=_HEADERS)

    @app.get("/", include_in_schema=False)
    async def playground() -> Response:
        return asset("playground.html")

    @app.get("/static/{name}", include_in_schema=False)
    async def static(name: str) -> Response:
        return asset(name)

    @app.get("/presets")
    async def presets() -> JSONResponse:
        return JSONResponse(preset_catalogue(), headers={"Cache-Control": "no-cache"})

    return app
