"""The HTTP server: a Router behind the Jev ``POST /v1/systemone`` wire format (``laya serve``).

Its modules, each usable without the ones above it:

* :mod:`~laya.server.settings` — every setting, a ``LAYA_*`` variable and a flag, in one table;
* :mod:`~laya.server.wire` — the request bodies as pydantic models, and their validation;
  :mod:`~laya.server.replies` — the replies; :mod:`~laya.server.schema` — the replies' models;
* :mod:`~laya.server.limits` — body size and time, JSON cost (:mod:`~laya.server.shape` reads it
  from the bytes);
* :mod:`~laya.server.statuses` — the one map from an exception to a status and a detail;
* :mod:`~laya.server.inference` — the Router the settings describe, a request answered on it
  under its work budget (:mod:`laya.engine.work`), or several together;
* :mod:`~laya.server.batcher` — single requests grouped to share forward passes, and the turns
  long requests take with them, pass by pass;
* :mod:`~laya.server.metrics` — ``GET /metrics``; :mod:`~laya.server.tracing` — OpenTelemetry;
* :mod:`~laya.server.app` — the FastAPI app; :mod:`~laya.server.serve` — ``laya serve`` (uvicorn).

Ray Serve (:mod:`laya.ray`) serves the app itself, batcher included, in each replica. Importing this
package imports neither torch nor FastAPI/uvicorn, nor the app and command modules: ``create_app``,
``authorised``, ``serve_main`` and ``uvicorn_config`` load them on first use.
"""

from typing import TYPE_CHECKING

from .inference import (
    MINI_DIR,
    build_router,
    checkpoint_listing,
    predict_batch,
    predict_each,
    predict_single,
    resolve_model,
    routed_controls,
)
from .limits import MAX_BODY_BYTES, MAX_BODY_DEPTH, MAX_JSON_VALUES, decode_body, read_body
from .replies import render_batch, render_result
from .settings import Settings, SettingsError, settings_from
from .statuses import (
    BodyTimeout,
    CrossSite,
    MalformedBody,
    Refusal,
    TooLarge,
    Unauthorized,
    refusal,
)
from .wire import (
    MAX_BATCH_STATES,
    MAX_CHOICE_OPTIONS,
    MAX_INSTRUCTION_CHARS,
    MAX_MANY_OPTIONS,
    MAX_MANY_TOTAL,
    MAX_OPTION_CHARS,
    MAX_QUESTIONS,
    MAX_SCORE_LEVELS,
    MAX_STATE_CHARS,
    MAX_TOTAL_OPTIONS,
    BatchRequest,
    SingleRequest,
    parse_batch,
    parse_single,
)

__all__ = [
    "MAX_BATCH_STATES",
    "MAX_BODY_BYTES",
    "MAX_BODY_DEPTH",
    "MAX_CHOICE_OPTIONS",
    "MAX_INSTRUCTION_CHARS",
    "MAX_JSON_VALUES",
    "MAX_MANY_OPTIONS",
    "MAX_MANY_TOTAL",
    "MAX_OPTION_CHARS",
    "MAX_QUESTIONS",
    "MAX_SCORE_LEVELS",
    "MAX_STATE_CHARS",
    "MAX_TOTAL_OPTIONS",
    "MINI_DIR",
    "BatchRequest",
    "BodyTimeout",
    "CrossSite",
    "MalformedBody",
    "Refusal",
    "Settings",
    "SettingsError",
    "SingleRequest",
    "TooLarge",
    "Unauthorized",
    "authorised",
    "build_router",
    "checkpoint_listing",
    "create_app",
    "decode_body",
    "parse_batch",
    "parse_single",
    "predict_batch",
    "predict_each",
    "predict_single",
    "read_body",
    "refusal",
    "render_batch",
    "render_result",
    "resolve_model",
    "routed_controls",
    "serve_main",
    "settings_from",
    "uvicorn_config",
]

if TYPE_CHECKING:  # what __getattr__ loads, as the type checker sees it
    from .app import authorised, create_app
    from .serve import serve_main, uvicorn_config

_LATER = {"authorised": "app", "create_app": "app", "serve_main": "main", "uvicorn_config": "main"}


def __getattr__(name: str) -> object:
    """The app and the command modules, imported when first asked for."""
    if name in _LATER:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_LATER[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
