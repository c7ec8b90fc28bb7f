"""``laya mcp``: laya's decisions as Model Context Protocol tools (the official ``mcp`` SDK).

The ten tools of the published runtime (``laya_status``, ``laya_route``, ``laya_predict``,
``laya_predict_batch``, ``laya_route_batch``, ``laya_shortlist``, ``laya_tournament``,
``laya_preset``, ``laya_decide``, ``laya_predict_long``), one tool per preset (``laya_triage``...),
the presets as resources and prompts. The bodies are :mod:`laya.mcp.tools`'; this module gives
them typed input schemas, answers ``initialize`` at once while the model loads in the background
(a tool call waits for it, with a progress notification when the client asked for progress),
and turns every failure into a tool error whose text is ``{"error": code, "message": ...}``,
naming the argument and the fix. With ``LAYA_BASE_URL`` a running ``laya serve`` answers.
Over stdio by default; over streamable HTTP with ``--http``, behind ``LAYA_API_KEY`` as
``laya serve``. docs/integrations.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib
import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from inspect import Parameter, Signature
from typing import Any

from ..errors import one_line, require_extra

require_extra("mcp", "mcp", "the mcp SDK", "laya mcp")

import anyio  # noqa: E402
import anyio.to_thread  # noqa: E402
from mcp.server import MCPServer  # noqa: E402
from mcp.server.mcpserver import Context  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError as SdkToolError  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp.types import (  # noqa: E402
    INVALID_PARAMS,
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    TextContent,
)
from pydantic import ValidationError  # noqa: E402
from starlette.types import ASGIApp, Receive, Scope, Send  # noqa: E402

from ..commands import command_parser, run_command  # noqa: E402
from ..server import Settings, SettingsError, authorised, build_router, settings_from  # noqa: E402
from ..server.inference import answering, check_default_name  # noqa: E402
from ..server.limits import json_type  # noqa: E402
from ..server.settings import model_pairs  # noqa: E402
from ..typed.presets import PRESETS as PRESET_BUILDERS  # noqa: E402
from ..typed.presets import state_field  # noqa: E402
from ..version import __version__  # noqa: E402
from . import json_tools, tools  # noqa: E402
from .json_tools import *  # noqa: E402, F403  (the published module-level tool functions)
from .remote import remote_from_env  # noqa: E402
from .stdio import serve_stdio  # noqa: E402
from .tool_arguments import GUIDE, TOOLS, ToolSpec, parameters, preset_spec  # noqa: E402

__all__ = ["Preload", "build_mcp", "main", "mcp_main", *json_tools.__all__]

log = logging.getLogger("laya.mcp")

# --------------------------------------------------------------------------- loading


class Preload:
    """The checkpoints loading on a background thread from start-up; a call waits for them.

    A failed preload is said on stderr once; each call then loads (or refuses) on its own.
    """

    def __init__(self, router: tools.Runner | None = None, names: Sequence[str] = ()) -> None:
        self.names = list(names)
        self.done = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(router,), name="laya-preload", daemon=True
        )
        if router is None or not self.names:
            self.done.set()

    def start(self) -> Preload:
        if not self.done.is_set():
            self._thread.start()
        return self

    def _run(self, router: tools.Runner) -> None:
        try:
            router.preload(self.names)
        except Exception as exc:  # noqa: BLE001 - said once; every call retries the load
            self.error = exc
            print(f"laya mcp: warning: preload failed: {one_line(exc)}", file=sys.stderr)
        finally:
            self.done.set()

    async def wait(self, ctx: Context) -> None:
        """Return once loading is over, telling a client that asked for progress."""
        if self.done.is_set():
            return
        await ctx.report_progress(0, 1, f"loading checkpoint {', '.join(self.names)}")
        await anyio.to_thread.run_sync(self.done.wait)
        await ctx.report_progress(1, 1, "checkpoint loaded")


# --------------------------------------------------------------------------- the server


class _Server(MCPServer):
    """The SDK's server, except that a failed tool call answers ``{"error", "message"}`` JSON
    (arguments that do not fit the schema name the argument and what it takes, with no
    validator URL), and a prompt asked for by an unknown name or without a required argument is
    the client's mistake (invalid params, naming it), not an internal error."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            await self._check_names(name, arguments)
            return await super().call_tool(name, arguments, context)
        except tools.ToolError as exc:
            payload = exc.payload()
        except SdkToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, tools.ToolError):
                payload = cause.payload()
            elif isinstance(cause, ValidationError):
                payload = await self._argument_error(name, arguments, cause)
            elif cause is None:  # an unknown tool: the SDK's own answer
                raise
            else:  # a bug: logged here, a fixed message there
                log.error("tool %s failed", name, exc_info=cause)
                payload = {"error": "internal_error", "message": f"{name} failed; see the log"}
        text = json.dumps(payload)
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)

    async def _check_names(self, tool: str, arguments: dict[str, Any]) -> None:
        """An argument the tool does not take (a typo, another tool's) is refused by name, not
        dropped unseen."""
        schema = next((t.input_schema for t in await self.list_tools() if t.name == tool), None)
        if schema is None:  # an unknown tool: the SDK answers it
            return
        known = list(schema.get("properties", {}))
        unknown = [key for key in arguments or {} if key not in known]
        if unknown:
            raise tools.ToolError(
                "invalid_arguments",
                f"{tool} takes no argument {unknown[0]!r}; its arguments are {known}",
            )

    async def _argument_error(
        self, tool: str, arguments: dict[str, Any], error: ValidationError
    ) -> dict[str, str]:
        """The first argument the SDK's validation refused, what it got and what it takes."""
        first = error.errors(include_url=False)[0]
        loc = [str(part) for part in first["loc"]]
        schema = next(t.input_schema for t in await self.list_tools() if t.name == tool)
        wanted = schema.get("properties", {}).get(loc[0], {}).get("description", "")
        expects = f"; expected {wanted}" if wanted else ""
        value = arguments.get(loc[0])
        if first["type"] == "missing" and len(loc) == 1:
            message = f"{loc[0]} is required{expects}"
        elif not isinstance(value, (list, dict)) or (len(loc) == 1 and first["type"] in _BOUNDS):
            message = f"{loc[0]}: got {_shown(value)}{expects}"  # a union's branches: no place
        elif len(loc) == 1:
            message = f"{loc[0]}: got a JSON {json_type(value)}{expects}"
        else:
            message = f"{'.'.join(loc)}: {first['msg'][:1].lower()}{first['msg'][1:]}{expects}"
        return {"error": f"invalid_{loc[0]}", "message": message}

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        context: Context | None = None,
    ) -> GetPromptResult | InputRequiredResult:
        prompts = {p.name: p for p in await self.list_prompts()}
        if name not in prompts:
            known = ", ".join(sorted(prompts))
            raise MCPError(INVALID_PARAMS, f"unknown prompt {name!r}; use one of {known}")
        required = [a.name for a in prompts[name].arguments or [] if a.required]
        missing = [arg for arg in required if arg not in (arguments or {})]
        if missing:
            raise MCPError(INVALID_PARAMS, f"prompt {name!r} needs the argument {missing[0]!r}")
        return await super().get_prompt(name, arguments, context)


_BOUNDS = {  # pydantic errors of a value of the right type out of its range
    "greater_than_equal", "greater_than", "less_than_equal", "less_than", "too_short", "too_long",
}  # fmt: skip


def _shown(value: object) -> str:
    """A value as a refusal quotes it: short, and a list by its length."""
    if isinstance(value, (list, dict)):
        return f"a JSON {json_type(value)} of {len(value)} items"
    return repr(value)[:60]


class _Calls:
    """Runs a tool body on a worker thread once loading is over, with the server's router."""

    def __init__(self, router: tools.Runner, settings: Settings, preload: Preload) -> None:
        self.router, self.settings, self.preload = router, settings, preload

    async def __call__(
        self, ctx: Context, body: Callable[..., tools.Json], **arguments: object
    ) -> tools.Json:
        await self.preload.wait(ctx)
        call = functools.partial(body, router=self.router, settings=self.settings, **arguments)
        return await anyio.to_thread.run_sync(call)


def build_mcp(
    router: tools.Runner, settings: Settings | None = None, preload: Preload | None = None
) -> MCPServer:
    """An ``MCPServer`` answering through ``router`` (a Router, or a RemoteRouter)."""
    settings = settings or Settings()
    call = _Calls(router, settings, preload or Preload())
    server = _Server("laya", version=__version__, instructions=GUIDE)
    _add_reference_tools(server, call)
    for name in sorted(PRESET_BUILDERS):
        _add_preset(server, call, name)
    return server


def _add_reference_tools(server: MCPServer, call: _Calls) -> None:
    """The published runtime's ten tools, with its argument names (ours added where they help)."""

    @server.tool(description="Where laya answers from: checkpoints, devices, versions.")
    async def laya_status(ctx: Context) -> tools.Json:
        preload = call.preload
        return await call(ctx, tools.laya_status, preload=bool(preload.names))

    for name, spec in TOOLS.items():
        server.add_tool(_Tool(name, spec, call), name=name, description=spec.description)


class _Tool:
    """A tool as the SDK reads it: a callable whose signature is the tool's arguments (their
    types and defaults from :mod:`laya.mcp.tool_arguments`), answering through ``spec.body``."""

    def __init__(self, name: str, spec: ToolSpec, call: _Calls) -> None:
        self.spec, self.call = spec, call
        context = Parameter("ctx", Parameter.POSITIONAL_OR_KEYWORD, annotation=Context)
        arguments = parameters(spec)
        self.__signature__ = Signature([context, *arguments], return_annotation=tools.Json)
        self.__annotations__ = {p.name: p.annotation for p in arguments} | {"ctx": Context}
        self.__name__ = name

    async def __call__(self, ctx: Context, **given: object) -> tools.Json:
        return await self.call(ctx, self.spec.body, **{**_arguments(given), **self.spec.fixed})


def _arguments(given: dict[str, object]) -> dict[str, object]:
    """A tool's arguments, ``model: null`` as ``auto``."""
    if "model" in given and given["model"] is None:
        return {**given, "model": tools.AUTO}
    return given


def _add_preset(server: MCPServer, call: _Calls, name: str) -> None:
    """The preset as a tool ``laya_NAME``, a resource (its questions) and a prompt."""
    questions = PRESET_BUILDERS[name]()
    field_name = state_field(questions) or "text"
    asked = ", ".join(f"{qid} ({q['type']})" for qid, q in questions.items())
    description = f"The {name} preset: {asked}. A text state is read as its `{field_name}`. {GUIDE}"
    tool = f"laya_{name}"
    server.add_tool(
        _Tool(tool, preset_spec(name, description), call),
        name=tool,
        description=description,
    )

    @server.resource(
        f"laya://presets/{name}", name=f"{name} questions", mime_type="application/json"
    )
    def preset_questions() -> str:
        return json.dumps(PRESET_BUILDERS[name](), indent=2)

    @server.prompt(name=f"laya_{name}", description=f"Ask laya's {name} preset about a text.")
    def preset_prompt(text: str) -> str:
        return f"Call the laya_{name} tool with this {field_name} as its state:\n\n{text}"


# --------------------------------------------------------------------------- command


def _hooks(paths: Sequence[str]) -> list[object]:
    """``module:attr`` import paths -> hook objects (a list at the path contributes each)."""
    hooks: list[object] = []
    for path in paths:
        module, sep, attr = path.partition(":")
        if not (sep and module and attr):
            raise SettingsError(f"--hook {path!r}: expected MODULE:ATTRIBUTE")
        try:
            value = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise SettingsError(f"--hook {path!r}: {exc}") from None
        hooks.extend(value if isinstance(value, (list, tuple)) else [value])
    return hooks


def _arg_parser() -> argparse.ArgumentParser:
    parser = command_parser(
        "laya mcp",
        "Serve laya's decisions as MCP tools, over stdio (default) or streamable HTTP.",
        epilog="LAYA_* variables apply as for laya serve (LAYA_DEFAULT_MODEL, LAYA_MODELS, "
        "LAYA_DEVICE, LAYA_PRELOAD...); with --http, LAYA_API_KEY requires Authorization: "
        "Bearer KEY. LAYA_BASE_URL (or --base-url) answers through a running laya serve.",
    )
    add = parser.add_argument
    add(
        "--model",
        help="answer every call that names no model with this checkpoint, e.g. mini (the bundled "
        "offline model); without it calls are routed by language, as laya serve routes them",
    )
    add(
        "--models",
        nargs="+",
        action="extend",
        default=[],
        metavar="NAME=PATH",
        help="more checkpoints",
    )
    add("--hook", action="append", default=[], metavar="MODULE:ATTR", help="install a hook")
    add("--device", help="torch device, e.g. cpu or cuda")
    add("--base-url", help="answer through the laya serve at this address (LAYA_BASE_URL)")
    add("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    add("--host", default="127.0.0.1", help="with --http: bind address")
    add("--port", type=int, default=8000, help="with --http: TCP port")
    parser.set_defaults(preload=None)  # before the flag, so its help shows no default
    add(
        "--no-preload",
        dest="preload",
        action="store_false",
        default=argparse.SUPPRESS,
        help="load the model on the first call instead of in the background from start-up",
    )
    return parser


def settings_for(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> Settings:
    """The ``laya serve`` settings (its ``LAYA_*`` variables, then these flags) the tools check
    and route with."""
    environ = os.environ if environ is None else environ
    settings = settings_from((), environ)
    changes: dict[str, Any] = {"host": args.host, "port": args.port}  # mixed: kwargs
    if args.model is not None:
        check_default_name(args.model, "--model")
        changes.update(default_model=args.model, route="default")
    if args.models:
        try:
            changes["models"] = {**settings.models, **model_pairs(args.models)}
        except ValueError as exc:
            raise SettingsError(f"--models {exc}") from None
    if args.device:
        changes["device"] = args.device
    if args.preload is not None:
        changes["preload"] = args.preload
    return dataclasses.replace(settings, **changes)


def http_app(server: MCPServer, api_key: str | None) -> ASGIApp:
    """The streamable HTTP app at ``/mcp``; with a key, every request needs its bearer."""
    from starlette.responses import JSONResponse

    app = server.streamable_http_app()
    if api_key is None:
        return app

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header = dict(scope.get("headers") or []).get(b"authorization")
            if not authorised(None if header is None else header.decode("latin-1"), api_key):
                refusal = JSONResponse({"detail": "invalid or missing bearer token"}, 401)
                await refusal(scope, receive, send)
                return
        await app(scope, receive, send)

    return guarded


def mcp_main(argv: Sequence[str] | None = None) -> int:
    """``laya mcp [--model mini] [--http --host H --port P] [--hook MODULE:ATTR]``."""
    return run_command("laya mcp", argv, _arg_parser().parse_args, _serve_mcp)


main = mcp_main  # the published runtime's ``laya.mcp.server.main``


def _serve_mcp(args: argparse.Namespace) -> None:
    settings = settings_for(args)
    environ = {**os.environ, **({"LAYA_BASE_URL": args.base_url} if args.base_url else {})}
    remote = remote_from_env({**environ, "LAYA_DEFAULT_MODEL": settings.default_model})
    if remote is not None:
        server = build_mcp(remote, settings)
    else:
        router = build_router(
            dataclasses.replace(settings, preload=False), _hooks(args.hook) or None
        )
        names = [*answering(settings), *settings.models] if settings.preload else []
        server = build_mcp(router, settings, Preload(router, list(dict.fromkeys(names))).start())
    if not args.http:
        anyio.run(serve_stdio, server)
        return
    import uvicorn

    uvicorn.run(
        http_app(server, settings.api_key), host=args.host, port=args.port, log_level="warning"
    )


if __name__ == "__main__":  # ``python -m laya.mcp.server``: laya-mcp-server, as published
    raise SystemExit(mcp_main())
