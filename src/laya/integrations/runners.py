"""Which runner a framework class answers with, and the per-call controls it passes on.

Every class of docs/integrations.md takes ``agent=`` (an Agent, ONNXAgent or Router), or
``base_url=`` / ``api_key=`` (a running ``laya serve``), or neither (one Router shared by every
class, built on first use). The controls (``model``, ``max_len``, the hooks...) are checked here,
when the class is built, so a bad one fails at construction and not at the first call.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, cast

from ..errors import InvalidRequest
from ..mcp.remote import RemoteRouter, sendable
from ..router import Router
from ..router.shortcuts import shared_router

__all__ = ["CONTROLS", "REMOTE_TIMEOUT_S", "default_router", "published_controls", "runner_for"]

Init = TypeVar("Init", bound=Callable[..., None])

CONTROL_TYPES = {  # the per-call controls, in the published order, and their published types
    "model": "Optional[str]",
    "max_len": "Optional[int]",
    "head_max_len": "Optional[int]",
    "lang": "Optional[str]",
    "min_confidence": "Optional[float]",
    "task": "Optional[str]",
    "lang_guess": "Optional[Any]",
    "hooks": "Optional[Any]",
    "on_predict_start": "Optional[Any]",
    "on_predict_end": "Optional[Any]",
    "hooks_raise": "Optional[bool]",
    "hooks_timeout": "Optional[float]",
}
CONTROLS = tuple(CONTROL_TYPES)
ROUTING_CONTROLS = ("model", "task", "lang_guess")
REMOTE_TIMEOUT_S = 10.0


def default_router() -> Router:
    """The Router the classes share when given neither ``agent`` nor ``base_url``: the process's
    one shared Router, the one ``laya.decision`` answers on too."""
    return shared_router()


def published_controls(
    *, without: tuple[str, ...] = (), var_keyword: bool = False
) -> Callable[[Init], Init]:
    """Gives an ``__init__(..., agent=None, base_url=None, api_key=None, **controls)`` the
    published signature (docs/integrations.md): each control a parameter of its own, positional
    or keyword with default None, in CONTROLS order (less ``without``; ``**kwargs`` last with
    ``var_keyword``), so help(), editors and positional calls find them where users expect."""

    def wrap(init: Init) -> Init:
        own = inspect.signature(init)
        params = [p for p in own.parameters.values() if p.kind is not p.VAR_KEYWORD]
        params += [
            inspect.Parameter(
                name,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=None,
                annotation=CONTROL_TYPES[name],
            )
            for name in CONTROLS
            if name not in without
        ]
        if var_keyword:
            params.append(
                inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD, annotation="Any")
            )
        published = own.replace(parameters=params)

        @functools.wraps(init)
        def __init__(*args: Any, **kwargs: Any) -> None:
            try:
                named = dict(published.bind(*args, **kwargs).arguments)
            except TypeError as exc:
                names = [n for n in published.parameters if n != "kwargs"][1:]
                raise InvalidRequest(
                    f"{type(args[0]).__name__}: {exc}; its arguments are {names}"
                ) from None
            extra = named.pop("kwargs", {})
            init(**named, **extra)

        __init__.__signature__ = published  # type: ignore[attr-defined]
        return cast(Init, __init__)

    return wrap


def runner_for(
    agent: Any = None, base_url: str | None = None, api_key: str | None = None, **controls: Any
) -> tuple[Any, dict[str, Any]]:
    """The runner and the controls (those given, not None) every call passes to it."""
    unknown = sorted(set(controls) - set(CONTROLS))
    if unknown:
        raise InvalidRequest(f"unknown argument {unknown[0]!r}: the controls are {list(CONTROLS)}")
    options = {k: v for k, v in controls.items() if v is not None}
    if agent is not None and base_url is not None:
        raise InvalidRequest("give agent or base_url, not both")
    if base_url is not None:
        sendable(options, "pass agent= instead of base_url")
        return RemoteRouter(base_url, api_key, REMOTE_TIMEOUT_S), options
    runner = default_router() if agent is None else agent
    if not hasattr(runner, "predict_states"):
        raise InvalidRequest(
            f"agent must be a laya Agent, ONNXAgent or Router, got {type(runner).__name__}"
        )
    if not hasattr(runner, "route"):
        _check_cannot_route(options)
    return runner, options


def _check_cannot_route(options: dict[str, Any]) -> None:
    routing = [k for k in ROUTING_CONTROLS if k in options]
    if routing:
        raise InvalidRequest(
            f"{routing[0]}: only a Router routes; pass agent=laya.Router() (or none) to use it, "
            "or drop it"
        )
