"""``laya mcp``: laya's decisions as Model Context Protocol tools (the official ``mcp`` SDK).

Tools: ``laya_predict`` (a state and questions -> answers), ``laya_predict_batch`` (many states,
one question set, one batched pass), ``laya_route`` (which checkpoint would answer, and why;
loads nothing), ``laya_decide`` (a state and a JSON schema -> a typed object with per-field
confidence), ``laya_preset`` and one tool per preset (``laya_triage``, ``laya_guard``, ...). The
presets are also resources (``laya://presets/NAME``, their question sets) and prompts.

The tools validate and answer exactly as ``laya serve`` does (``laya.server``'s request checks
and Router calls), so a bad call comes back as an MCP tool error carrying the message the HTTP
server would put in its ``detail``, and the server keeps serving. Over stdio by default; over
streamable HTTP with ``--http``, behind the same ``LAYA_API_KEY`` bearer rule as ``laya serve``.
Needs the ``mcp`` extra; ``import laya`` never imports it.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from pydantic import Field

from ..commands import command_parser, run_command
from ..engine.result import Result
from ..errors import LayaError, one_line
from ..server import (
    Settings,
    SettingsError,
    authorised,
    build_router,
    parse_batch,
    parse_single,
    predict_batch,
    predict_single,
    refusal,
    routed_controls,
)
from ..server.inference import check_default_name
from ..server.settings import model_pairs
from ..typed.presets import PRESETS, state_field

__all__ = ["build_mcp", "mcp_main"]

State = Annotated[
    str | dict[str, Any] | list[Any],
    Field(
        description="What to decide about: text, or any JSON object or list (a ticket, an email)"
    ),
]
Questions = Annotated[
    dict[str, dict[str, Any]],
    Field(
        description="Question id -> {type: choice|score|noul, instructions, criteria?, labels?}: "
        "choice criteria map label -> description (or list labels), score criteria list the "
        "levels lowest first, noul asks whether a statement holds"
    ),
]
Model = Annotated[str | None, Field(description="checkpoint name (default: the server's model)")]
MinConfidence = Annotated[
    float | dict[str, float] | None,
    Field(
        description="abstain under this confidence (a number, or a map like {'choice:3-5': 0.7})"
    ),
]
Tournament = Annotated[
    bool | int | None,
    Field(
        description="answer a choice of many options (up to 1000) by tournament: groups of this "
        "many options (2 or more), true for the largest that fit"
    ),
]
Shortlist = Annotated[
    int | None,
    Field(description="read each choice as the k options nearest the state (up to 1000 options)"),
]
GUIDE = (
    "Fast typed decisions (milliseconds, no text generation) with calibrated probabilities. "
    "Use for structured decisions only: classify, score on a rubric, check a statement. "
    "Choices with more than 20 options lose accuracy."
)


class _Tools:
    """The tool bodies: each builds the HTTP body ``laya serve`` would receive and answers it."""

    def __init__(self, router: Any, settings: Settings) -> None:
        self.router, self.settings = router, settings

    def _call(self, work: Callable[[], Any]) -> Any:
        try:
            return work()
        except LayaError as exc:  # the detail laya serve would answer with
            raise ToolError(refusal(exc).detail) from None
        except (ValueError, TypeError, OSError) as exc:  # mistakes and unreadable files, named
            raise ToolError(one_line(exc)) from None

    def predict(self, body: dict[str, Any]) -> dict[str, Any]:
        def work() -> Result:
            return predict_single(self.router, parse_single(body, self.settings), self.settings)

        return self._call(work)

    def predict_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        def work() -> dict[str, Any]:
            parsed = parse_batch(body, self.settings)
            return {"results": predict_batch(self.router, parsed, self.settings)}

        return self._call(work)

    def route(self, state: Any, questions: Any, hints: dict[str, Any]) -> dict[str, Any]:
        def work() -> dict[str, Any]:
            controls = routed_controls(self.router, _given(hints), self.settings)
            return dict(self.router.route(state, questions or {}, **controls))

        return self._call(work)

    def decide(self, state: Any, schema: Any, model: Any, min_confidence: Any) -> dict[str, Any]:
        def work() -> dict[str, Any]:
            controls = routed_controls(self.router, _given({"model": model}), self.settings)
            decision = self.router.decide(state, schema, min_confidence=min_confidence, **controls)
            return decision_json(decision)

        return self._call(work)

    def preset(self, name: str, state: Any, model: Any, min_confidence: Any) -> dict[str, Any]:
        if name not in PRESETS:
            raise ToolError(f"unknown preset {name!r}; use one of {', '.join(sorted(PRESETS))}")
        questions = PRESETS[name]()
        if isinstance(state, str):
            state = {state_field(questions) or "text": state}
        body = {"state": state, "questions": questions, "model": model}
        return self.predict(_given({**body, "min_confidence": min_confidence}))


def _given(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def decision_json(decision: Any) -> dict[str, Any]:
    """A Decision as JSON: the values, then per field its probability, confidence, abstention."""
    return json.loads(
        json.dumps(
            {
                "value": decision.value,
                "fields": {
                    name: {
                        "value": f.value,
                        "probability": f.probability,
                        "confidence": f.confidence,
                        "abstained": f.abstained,
                        "threshold": f.threshold,
                    }
                    for name, f in decision.fields.items()
                },
                **{k: decision.raw[k] for k in ("routing", "calibration") if k in decision.raw},
            },
            default=_plain,
        )
    )


def _plain(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return getattr(value, "value", str(value))


# --------------------------------------------------------------------------- the server


class _Server(MCPServer):
    """The SDK's server, except that a prompt asked for by an unknown name or without a required
    argument is the client's mistake (invalid params, naming it), not an internal error."""

    async def get_prompt(self, name: str, arguments: Any = None, context: Any = None) -> Any:
        prompts = {p.name: p for p in await self.list_prompts()}
        if name not in prompts:
            known = ", ".join(sorted(prompts))
            raise MCPError(INVALID_PARAMS, f"unknown prompt {name!r}; use one of {known}")
        required = [a.name for a in prompts[name].arguments or [] if a.required]
        missing = [arg for arg in required if arg not in (arguments or {})]
        if missing:
            raise MCPError(INVALID_PARAMS, f"prompt {name!r} needs the argument {missing[0]!r}")
        return await super().get_prompt(name, arguments, context)


def build_mcp(router: Any, settings: Settings | None = None) -> Any:
    """An ``MCPServer`` answering through ``router`` (its tools, preset resources and prompts)."""
    settings = settings or Settings()
    tools = _Tools(router, settings)
    server = _Server("laya", instructions=GUIDE)

    @server.tool(description=f"Answer typed questions about one state. {GUIDE}")
    def laya_predict(
        state: State,
        questions: Questions,
        model: Model = None,
        task: str | None = None,
        lang: str | None = None,
        lang_guess: str | None = None,
        max_len: int | None = None,
        head_max_len: int | None = None,
        min_confidence: MinConfidence = None,
        tournament: Tournament = None,
        shortlist: Shortlist = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = dict(
            state=state, questions=questions, model=model, task=task, lang=lang
        )
        body.update(lang_guess=lang_guess, max_len=max_len, head_max_len=head_max_len)
        body.update(tournament=tournament, shortlist=shortlist)
        return tools.predict(_given({**body, "min_confidence": min_confidence}))

    @server.tool(description=f"Answer one question set about many states in one batch. {GUIDE}")
    def laya_predict_batch(
        states: Annotated[list[Any], Field(description="the states, up to 64")],
        questions: Questions,
        model: Model = None,
        task: str | None = None,
        lang: str | None = None,
        lang_guess: str | None = None,
        max_len: int | None = None,
        head_max_len: int | None = None,
        min_confidence: MinConfidence = None,
        batch_size: int | None = None,
        tournament: Tournament = None,
        shortlist: Shortlist = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = dict(
            states=states, questions=questions, model=model, task=task, lang=lang
        )
        body.update(lang_guess=lang_guess, max_len=max_len, head_max_len=head_max_len)
        body.update(batch_size=batch_size, tournament=tournament, shortlist=shortlist)
        return tools.predict_batch(_given({**body, "min_confidence": min_confidence}))

    @server.tool(description="Which checkpoint would answer this state, and why (loads nothing).")
    def laya_route(
        state: State,
        questions: dict[str, dict[str, Any]] | None = None,
        model: Model = None,
        task: str | None = None,
        lang: str | None = None,
        lang_guess: str | None = None,
    ) -> dict[str, Any]:
        hints = {"model": model, "task": task, "lang": lang, "lang_guess": lang_guess}
        return tools.route(state, questions, hints)

    @server.tool(
        description="Decide a JSON schema about one state: boolean -> yes/no, string enum -> "
        "choice, integer enum or integer with minimum/maximum -> score, array of a string enum "
        f"-> labels; returns the typed object and each field's confidence. {GUIDE}"
    )
    def laya_decide(
        state: State,
        schema: Annotated[dict[str, Any], Field(description="a JSON schema of an object")],
        model: Model = None,
        min_confidence: MinConfidence = None,
    ) -> dict[str, Any]:
        return tools.decide(state, schema, model, min_confidence)

    @server.tool(description=f"Answer a ready-made question set: {', '.join(sorted(PRESETS))}.")
    def laya_preset(
        preset: Annotated[str, Field(description=f"one of {', '.join(sorted(PRESETS))}")],
        state: State,
        model: Model = None,
        min_confidence: MinConfidence = None,
    ) -> dict[str, Any]:
        return tools.preset(preset, state, model, min_confidence)

    for name in sorted(PRESETS):
        _add_preset(server, tools, name)
    return server


def _add_preset(server: Any, tools: _Tools, name: str) -> None:
    """The preset as a tool ``laya_NAME``, a resource (its questions) and a prompt."""
    questions = PRESETS[name]()
    field_name = state_field(questions) or "text"
    asked = ", ".join(f"{qid} ({q['type']})" for qid, q in questions.items())

    def preset_tool(
        state: State, model: Model = None, min_confidence: MinConfidence = None
    ) -> dict[str, Any]:
        return tools.preset(name, state, model, min_confidence)

    description = f"The {name} preset: {asked}. A text state is read as its `{field_name}`. {GUIDE}"
    server.add_tool(preset_tool, name=f"laya_{name}", description=description)

    @server.resource(
        f"laya://presets/{name}", name=f"{name} questions", mime_type="application/json"
    )
    def preset_questions() -> str:
        return json.dumps(PRESETS[name](), indent=2)

    @server.prompt(name=f"laya_{name}", description=f"Ask laya's {name} preset about a text.")
    def preset_prompt(text: str) -> str:
        return f"Call the laya_{name} tool with this {field_name} as its state:\n\n{text}"


# --------------------------------------------------------------------------- command


def _hooks(paths: Sequence[str]) -> list[Any]:
    """``module:attr`` import paths -> hook objects (a list at the path contributes each)."""
    hooks: list[Any] = []
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
        epilog="With --http, LAYA_API_KEY (as for laya serve) requires Authorization: Bearer KEY.",
    )
    add = parser.add_argument
    add("--model", default="mini", help="the checkpoint calls use unless they name one")
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
    add("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    add("--host", default="127.0.0.1", help="with --http: bind address")
    add("--port", type=int, default=8000, help="with --http: TCP port")
    parser.set_defaults(preload=True)  # before the flag, so its help shows no "(default: True)"
    add(
        "--no-preload",
        dest="preload",
        action="store_false",
        default=argparse.SUPPRESS,
        help="load the model on the first call instead of at start-up",
    )
    return parser


def settings_for(args: argparse.Namespace, environ: Any = None) -> Settings:
    """The ``laya serve`` settings the MCP tools validate and route with."""
    environ = os.environ if environ is None else environ
    check_default_name(args.model, "--model")
    try:
        models = model_pairs(args.models)
    except ValueError as exc:
        raise SettingsError(f"--models {exc}") from None
    return Settings(
        host=args.host,
        port=args.port,
        models=models,
        default_model=args.model,
        preload=args.preload,
        device=args.device,
        api_key=environ.get("LAYA_API_KEY") or None,
    )


def http_app(server: Any, api_key: str | None) -> Any:
    """The streamable HTTP app at ``/mcp``; with a key, every request needs its bearer."""
    from starlette.responses import JSONResponse

    app = server.streamable_http_app()
    if api_key is None:
        return app

    async def guarded(scope: dict, receive: Any, send: Any) -> None:
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


def _serve_mcp(args: argparse.Namespace) -> None:
    settings = settings_for(args)
    router = build_router(settings, hooks=_hooks(args.hook) or None)
    server = build_mcp(router, settings)
    if not args.http:
        server.run("stdio")
        return
    import uvicorn

    uvicorn.run(
        http_app(server, settings.api_key), host=args.host, port=args.port, log_level="warning"
    )
