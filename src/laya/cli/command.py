"""The ``laya`` command: route or answer requests from the shell, and dispatch the subcommands.

``laya "TEXT"`` only routes (which checkpoint would answer, and why): it loads nothing and never
imports torch. ``--predict``, ``--preset`` or ``--questions`` answer through a :class:`Router`.
``laya serve|export-onnx|train|eval ...`` hand their argv to the module that owns the command.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any, NoReturn, TextIO

from ..commands import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    RawHelpFormatter,
    command_output,
    exit_status,
    failure_message,
    read_input_text,
)
from ..engine.questions import parse_questions, with_abstain
from ..errors import InvalidRequest, LayaError, one_line
from ..router import pins
from ..router.requests import REQUEST_KEYS, check_request
from ..typed.presets import PRESETS, state_field
from .render import Progress, Style, cut, route_row, show_answers, show_route

__all__ = [
    "COMMANDS",
    "UsageError",
    "build_parser",
    "group_size",
    "main",
    "pin",
    "positive_int",
    "read_questions_file",
]

COMMANDS = {
    "serve": ("laya.server", "serve_main", "serve the Router over HTTP"),
    "export-onnx": ("laya.onnx", "export_main", "export a checkpoint to ONNX"),
    "train": ("laya.training.train", "train_main", "fine-tune a checkpoint on labelled decisions"),
    "eval": ("laya.training.evaluate", "eval_main", "score a checkpoint on labelled decisions"),
    "calibrate": (
        "laya.training.fit_calibration",
        "calibrate_main",
        "fit a calibration file on labelled decisions",
    ),
    "batch": (
        "laya.cli.batch",
        "batch_main",
        "answer every line of a JSONL file (--ray: on Ray Data)",
    ),
    "mcp": ("laya.mcp.server", "mcp_main", "serve decisions as MCP tools (laya[mcp])"),
}

# Requests per predict_batch call in --batch mode: progress and output advance per chunk.
CHUNK = 256
DEFAULT_STATE_KEY = "request"
LINE_KEYS = frozenset({*REQUEST_KEYS, "id"})  # a batch line: a request, and its id
_NEEDS_ANSWERING = "only applies when answering (--predict, --preset or --questions)"
_ANSWERING_FLAGS = (
    "--min-confidence",
    "--max-len",
    "--head-max-len",
    "--batch-size",
    "--sort-by-length",
    "--device",
    "--tournament",
    "--shortlist",
    "--abstain",
)


class UsageError(InvalidRequest):
    """A problem with the command line or its input files (exit 2)."""


class LoadFailed(Exception):
    """A checkpoint that failed to load for a reason laya did not foresee (exit 1)."""

    def __init__(self, name: str, source: Any, cause: BaseException) -> None:
        where = " from " + "/".join(p for p in source if p) if source else ""
        text = getattr(cause, "reason", None) or str(cause)
        reason = " ".join(text.split()) or type(cause).__name__
        super().__init__(f"cannot load checkpoint {name!r}{where}: {reason}")


# --------------------------------------------------------------------------- arguments


class _Parser(argparse.ArgumentParser):
    """argparse, with errors raised as :class:`UsageError` (one line, no usage dump)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see laya --help)")


def _whole(text: str, least: int, expected: str) -> int:
    """``text`` as a whole number of at least ``least``; an argparse error naming ``expected``."""
    try:
        value = int(text)
    except ValueError:
        value = least - 1
    if value < least:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: a whole number above zero."""
    return _whole(text, 1, "a positive whole number")


def group_size(text: str) -> int | bool:
    """An argparse type: a tournament group size (2 or more), or ``auto`` for the largest that fits."""
    if text.strip().lower() == "auto":
        return True
    return _whole(text, 2, "'auto' or a group of at least 2")


def _fraction(text: str) -> float:
    """An argparse type: a confidence threshold in [0, 1] (the decoding module's rule)."""
    from ..engine.gate import check_min_confidence

    try:
        value = float(text)
        check_min_confidence(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def _epilog() -> str:
    commands = "\n".join(f"  {name:<12}  {summary}" for name, (_, _, summary) in COMMANDS.items())
    return f"commands (laya COMMAND --help):\n{commands}\n\nexit codes: 0 ok, 1 failed, 2 usage"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the main ``laya`` command."""
    p = _Parser(
        prog="laya",
        description="Route a request to a checkpoint, or answer typed questions about it.",
        epilog=_epilog(),
        formatter_class=RawHelpFormatter,
    )
    p.add_argument("text", nargs="*", help="the request (words are joined by spaces)")
    mode = p.add_argument_group("answering (without these, laya only routes)")
    mode.add_argument("--predict", action="store_true", help="answer the 'router' preset")
    mode.add_argument("--preset", choices=sorted(PRESETS), help="answer a ready-made question set")
    mode.add_argument("--questions", metavar="FILE", help="answer the questions in a JSON file")
    mode.add_argument(
        "--min-confidence", type=_fraction, metavar="P", help="flag answers below P (0 to 1)"
    )
    mode.add_argument(
        "--max-len", type=positive_int, metavar="N", help="tokens per row (default: the model's)"
    )
    mode.add_argument(
        "--head-max-len",
        type=positive_int,
        metavar="N",
        help="tokens per question (default: the model's)",
    )
    mode.add_argument("--device", help="torch device, e.g. cpu, cuda, cuda:1, mps (default: best)")
    mode.add_argument(
        "--abstain",
        action="store_true",
        help='let every choice answer "none of these" (abstain: true)',
    )
    many = p.add_argument_group("choices with many options")
    many.add_argument(
        "--tournament",
        type=group_size,
        metavar="G",
        help="answer choices in groups of G options, or auto (default: off)",
    )
    many.add_argument(
        "--shortlist",
        type=positive_int,
        metavar="K",
        help="read only the K options nearest the state (default: off)",
    )
    route = p.add_argument_group("routing")
    route.add_argument(
        "--model",
        metavar="NAME|PATH",
        help="pin a checkpoint: name, alias, directory (default: route)",
    )
    route.add_argument("--task", metavar="NAME", help="pin by task, e.g. typed_decisions")
    route.add_argument("--lang", metavar="CODE", help="the language, decisive (skips detection)")
    route.add_argument("--lang-guess", metavar="CODE", help="a soft language hint")
    batch = p.add_argument_group("batch")
    batch.add_argument("--batch", metavar="FILE", help="one request per line; '-' reads stdin")
    batch.add_argument(
        "--batch-size", type=positive_int, metavar="N", help="states per pass (default: all)"
    )
    batch.add_argument("--sort-by-length", action="store_true", help="group similar lengths")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    return p


def _check_combinations(args: argparse.Namespace) -> None:
    """Refuse flags that would be silently ignored in the chosen mode."""
    answering = _answering(args)
    rules = [
        (args.preset and args.questions, "--preset and --questions are exclusive"),
        (
            args.predict and (args.preset or args.questions),
            "--predict answers the 'router' preset: give it or --preset/--questions, not both",
        ),
        (args.text and args.batch, "give TEXT or --batch, not both"),
        (not args.text and not args.batch, "nothing to do: give TEXT or --batch FILE"),
        (not args.batch and args.batch_size, "--batch-size needs --batch"),
        (not args.batch and args.sort_by_length, "--sort-by-length needs --batch"),
    ]
    given = [
        f for f in _ANSWERING_FLAGS if vars(args)[f[2:].replace("-", "_")] not in (None, False)
    ]
    rules += [(not answering, f"{flag} {_NEEDS_ANSWERING}") for flag in given]
    for broken, message in rules:
        if broken:
            raise UsageError(f"{message} (see laya --help)")


def _answering(args: argparse.Namespace) -> bool:
    return bool(args.predict or args.preset or args.questions)


# --------------------------------------------------------------------------- inputs


def read_questions_file(path: str) -> tuple[dict[str, Any], str]:
    """A question file's questions and the state key they read; errors name the file."""
    questions, key = _unwrap(path, _read_json_object(path))
    if not isinstance(questions, dict) or not questions:
        raise UsageError(f"{path}: 'questions' must be a non-empty object of id -> definition")
    try:
        parse_questions(questions)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{path}: {exc}") from None
    if key is not None and (not isinstance(key, str) or not key.strip()):
        raise UsageError(f"{path}: 'state_key' must be a non-empty string, got {key!r}")
    return questions, key or state_field(questions) or DEFAULT_STATE_KEY


def _unwrap(path: str, data: dict[str, Any]) -> tuple[Any, Any]:
    """The questions and state key (None if absent) of a file that is either the wrapper
    ``{"questions": ..., "state_key": ...}`` or the questions themselves."""
    if "questions" not in data:
        return data, None
    extra = sorted(set(data) - {"questions", "state_key"})
    if not extra:
        return data["questions"], data.get("state_key")
    if isinstance(data["questions"], dict) and "type" in data["questions"]:
        return data, None  # the questions themselves, one of them with the id 'questions'
    keys = f"key{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))}"
    raise UsageError(
        f"{path}: unexpected {keys} beside 'questions'; a questions file is either "
        '{"questions": {ID: DEFINITION, ...}, "state_key": FIELD} or {ID: DEFINITION, ...}'
    )


def _read_json_object(path: str) -> dict[str, Any]:
    """Parse a JSON file that must hold an object."""
    text = _read_text(path, "questions file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    if not isinstance(data, dict) or not data:
        raise UsageError(
            f"{path}: expected a non-empty JSON object of question id -> definition, "
            f"got {_json_kind(data)}"
        )
    return data


def _json_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an empty object"
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _read_text(path: str, what: str) -> str:
    """A UTF-8 file (or stdin for ``-``); unreadable input is a usage error naming the file."""
    try:
        if path == "-":
            return sys.stdin.buffer.read().decode("utf-8")
        return read_input_text(path, what)
    except InvalidRequest as exc:
        raise UsageError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None


@dataclass
class Request:
    """One line of input: what the Router gets, what the output shows, an optional caller id."""

    routed: dict[str, Any]
    shown: str
    id: Any = None


@dataclass
class Job:
    """Everything a run needs, checked before anything is loaded."""

    router: Any
    requests: list[Request]
    answering: bool
    batch: bool
    options: dict[str, Any] = field(default_factory=dict)


def _plan(args: argparse.Namespace) -> Job:
    """Check the command line, read its files, and build the Router and the requests."""
    _check_combinations(args)
    from ..router import Router

    router = Router(device=_device(args.device), preload=False)
    questions, key = _question_set(args)
    if args.abstain:
        questions = with_abstain(questions)
    defaults = {"questions": questions, **_hints(router, args)}
    source = args.batch or "TEXT"
    lines = _batch_lines(args.batch) if args.batch else [(0, " ".join(args.text))]
    requests = [_request(router, text, key, defaults, source, n) for n, text in lines]
    options = {"batch_size": args.batch_size, "min_confidence": args.min_confidence}
    options.update(tournament=args.tournament, shortlist=args.shortlist)
    if args.sort_by_length:
        options["sort_by_length"] = True
    return Job(router, requests, _answering(args), bool(args.batch), options)


def _device(requested: str | None) -> str | None:
    """``--device`` checked before anything loads: an unknown name is a usage error (exit 2)."""
    if requested is None:
        return None
    from ..engine.backends.torch import resolve_device

    try:
        return str(resolve_device(requested))
    except InvalidRequest as exc:
        raise UsageError(f"--{exc}") from None  # the message starts "device: ..."


def _question_set(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """The shared questions and the state key of a plain line ({} and 'text' when routing)."""
    if args.questions:
        return read_questions_file(args.questions)
    if _answering(args):
        questions = PRESETS[args.preset or "router"]()
        return questions, state_field(questions) or DEFAULT_STATE_KEY
    return {}, "text"


def _hints(router: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The per-request keys the flags set (only those given)."""
    given = {
        "model": pin(router, args.model, "--model") if args.model else None,
        "task": _check_task(router, args.task, "--task") if args.task else None,
        "lang": args.lang,
        "lang_guess": args.lang_guess,
        "max_len": args.max_len,
        "head_max_len": args.head_max_len,
    }
    return {k: v for k, v in given.items() if v is not None}


def _batch_lines(path: str) -> list[tuple[int, str]]:
    """The non-blank lines of a batch file, numbered from 1."""
    lines = [
        (n, line.strip())
        for n, line in enumerate(_read_text(path, "batch file").splitlines(), 1)
        if line.strip()
    ]
    if not lines:
        raise UsageError(f"{path}: no requests (every line is blank)")
    return lines


def _request(
    router: Any, text: str, key: str, defaults: dict[str, Any], source: str, n: int
) -> Request:
    """A plain line becomes ``{key: text}``; a JSON object with a ``state`` is a request itself."""
    try:
        data = json.loads(text) if text.startswith("{") else None
    except ValueError:
        data = None
    if not isinstance(data, dict) or "state" not in data:
        return Request({"state": {key: text}, **defaults}, text)
    where = f"{source} line {n}" if n else source
    if data["state"] is None:
        raise UsageError(f"{where}: 'state' must not be null; give a string, object or list")
    unknown = sorted(set(data) - LINE_KEYS)
    if unknown:
        raise UsageError(
            f"{where}: unknown key {unknown[0]!r}; a request may have {', '.join(sorted(LINE_KEYS))}"
        )
    own = {k: v for k, v in data.items() if k != "id"}
    try:
        check_request({**defaults, **own}, f"{where}:")  # the Router's checks, named by line
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    try:
        parse_questions(own.get("questions", {}))
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{where}: {exc}") from None
    if own.get("model") is not None:
        own["model"] = pin(router, str(own["model"]), where)
    if own.get("task") is not None:
        _check_task(router, own["task"], f"{where}: task")
    shown = own["state"] if isinstance(own["state"], str) else json.dumps(own["state"])
    return Request({**defaults, **own}, shown, data.get("id"))


# --------------------------------------------------------------------------- model pins


def pin(router: Any, value: str, where: str) -> str | None:
    """The Router name for ``--model`` (laya.router.pins: a name or alias, a local directory, or
    a Hub id, registered on first use); None routes."""
    try:
        pinned = pins.pin(value, router.models, local=True, where=where)
    except LayaError as exc:
        raise UsageError(one_line(exc)) from None
    if pinned.source is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a near-builtin name is fine here
            router.register(pinned.name, pinned.source)
    return pinned.name


def _check_task(router: Any, task: Any, where: str) -> Any:
    """``task`` unchanged if the Router can route by it (``typed_decisions`` or a checkpoint name,
    both names it resolves); else a usage error naming ``where``."""
    try:
        router.resolve(task, "task")
    except InvalidRequest as exc:
        raise UsageError(f"{where}: {exc}") from None
    return task


# --------------------------------------------------------------------------- running


def run(job: Job, out: TextIO, json_lines: bool) -> None:
    """Route or answer every request and print the results as they come."""
    human = _human_format(job, Style.for_stream(out))
    if not job.answering:
        decisions = job.router.route_batch([r.routed for r in job.requests])
        for request, decision in zip(job.requests, decisions):
            _emit(out, request, dict(decision), json_lines, human)
        return
    load_routed(job.router, [r.routed for r in job.requests])
    with Progress(len(job.requests), enabled=job.batch and sys.stderr.isatty()) as advance:
        for start in range(0, len(job.requests), CHUNK):
            chunk = job.requests[start : start + CHUNK]
            results = _answer(job.router, [r.routed for r in chunk], job.options)
            for request, result in zip(chunk, results):
                _emit(out, request, result, json_lines, human)
            out.flush()
            advance(len(chunk))


def _answer(router: Any, requests: list[dict[str, Any]], options: dict[str, Any]) -> list[Any]:
    """One predict_batch call; a ValueError there is about the input (questions, budgets)."""
    try:
        return router.predict_batch(requests, **options)
    except ValueError as exc:
        raise UsageError(one_line(exc)) from exc


def load_routed(router: Any, requests: list[dict[str, Any]]) -> None:
    """Load every checkpoint the requests route to before answering any: fail early, by name."""
    names = dict.fromkeys(router.resolve(d["model"]) for d in router.route_batch(requests))
    router.max_loaded = max(router.max_loaded, len(names))
    for name in names:
        try:
            router.load(name)
        except InvalidRequest:
            raise
        except Exception as exc:  # noqa: BLE001 - any load failure is reported with its checkpoint
            raise LoadFailed(name, router.models.get(name), exc) from exc


Human = Callable[[dict[str, Any], Request], list[str]]


def _human_format(job: Job, style: Style) -> Human:
    """How one result reads: a routing block or row, or the answer tables (headed in a batch)."""
    if not job.answering:
        if job.batch:
            return lambda decision, request: [route_row(decision, request.shown, style)]
        return lambda decision, request: show_route(decision, style)
    if job.batch:
        return lambda result, request: [
            style.bold(f"# {cut(request.shown, 72)}"),
            *show_answers(result, style),
            "",
        ]
    return lambda result, request: show_answers(result, style)


def _emit(
    out: TextIO, request: Request, payload: dict[str, Any], json_lines: bool, human: Human
) -> None:
    """Write one result: a JSON line (with the request's id, if it had one) or its human lines."""
    if json_lines:
        record = payload if request.id is None else {"id": request.id, **payload}
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
    else:
        out.write("\n".join(human(payload, request)) + "\n")


# --------------------------------------------------------------------------- entry point


def _fail(message: str, code: int) -> int:
    print(f"laya: {message}", file=sys.stderr)
    return code


def _subcommand(name: str, argv: list[str]) -> int:
    """Hand ``argv`` to the command's own ``*_main``; an absent module means not installed.

    ``laya serve --ray`` is Ray Serve's (``laya.ray``), the rest of ``laya serve`` the server's.
    """
    module, function, _ = COMMANDS[name]
    if name == "serve" and "--ray" in argv:
        module = "laya.ray"
    try:
        entry = getattr(import_module(module), function)
    except (ModuleNotFoundError, AttributeError) as exc:
        missing = (exc.name or "") if isinstance(exc, ModuleNotFoundError) else "laya"
        if missing.split(".")[0] != "laya":
            return _fail(f"'{name}' needs {missing!r}: pip install {missing}", EXIT_USAGE)
        return _fail(f"'{name}' is not installed in this build of laya", EXIT_USAGE)
    return entry(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``laya`` or one of its subcommands; returns the exit code (0 ok, 1 failed, 2 usage,
    130 interrupted: ``laya: interrupted``, whichever command was running)."""
    args = list(sys.argv[1:] if argv is None else argv)
    with command_output():
        try:
            if args and args[0] in COMMANDS:
                return _subcommand(args[0], args[1:])
            return _route_or_answer(args)
        except KeyboardInterrupt:
            return _fail("interrupted", EXIT_INTERRUPTED)


def _route_or_answer(args: list[str]) -> int:
    """The main command: route or answer TEXT or a batch file; every failure is one line."""
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(encoding="utf-8")
    try:
        parsed = build_parser().parse_args(args)
        run(_plan(parsed), sys.stdout, parsed.json)
    except UsageError as exc:
        return _fail(one_line(exc), EXIT_USAGE)
    except BrokenPipeError:  # the reader went away (laya ... | head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    except Exception as exc:  # noqa: BLE001 - the command reports any failure as one line
        return _fail(failure_message(exc), exit_status(exc))
    return EXIT_OK
