"""The ``laya`` command: route or answer requests from the shell, and dispatch the subcommands.

``laya "TEXT"`` only routes (which checkpoint the router picks, and why): it loads nothing and
never imports torch. ``--predict``, ``--preset`` or ``--questions`` answer through a
:class:`Router`, with the default model unless ``--model`` names another (or ``auto`` routes):
:mod:`laya.router.pins`. ``mini`` answers on its ONNX graph when it can
(:mod:`laya.cli.onnx_mini`). With no TEXT on a terminal, a prompt reads one request per line.
``laya serve|export-onnx|train|eval ...`` hand their argv to the module that owns the command.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import import_module
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from ..commands import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    RawHelpFormatter,
    chunk_rows,
    command_output,
    exit_status,
    failure_message,
    on_terminal,
    progress,
    read_input_text,
)
from ..engine.questions import parse_questions, with_abstain
from ..errors import InvalidRequest, LayaError, MissingExtra, TooManyOptions, one_line
from ..router import pins
from ..router.requests import REQUEST_KEYS, check_request
from ..typed.presets import PRESETS, Questions, state_field
from .interactive import prompt_loop
from .onnx_mini import attach_onnx_mini

if TYPE_CHECKING:
    from ..checkpoint.sources import Source
    from ..engine.result import Result
    from ..router import Router
from .render import (
    MANY_OPTIONS_HINT,
    Style,
    json_text,
    published_cut,
    route_row,
    show_answers,
    show_route,
)

__all__ = [
    "COMMANDS",
    "UsageError",
    "build_parser",
    "calibrate",
    "fraction",
    "group_size",
    "main",
    "pin",
    "positive_int",
    "read_questions_file",
    "script",
]

COMMANDS = {
    "serve": ("laya.server", "serve_main", "serve the Router over HTTP"),
    "export-onnx": ("laya.onnx", "export_main", "export a checkpoint to ONNX"),
    "train": (
        "laya.training.train_command",
        "main",
        "fine-tune a checkpoint on labelled decisions",
    ),
    "eval": (
        "laya.evals.evals_command",
        "eval_main",
        "score a checkpoint on labelled data: run, validate, compare, agreement, evidence",
    ),
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

# Requests per predict_batch call in --batch mode: progress and output advance per chunk
# (laya.commands.PROGRESS_STEP of them while a progress bar is shown).
CHUNK = 256
DEFAULT_STATE_KEY = "request"
LINE_KEYS = frozenset({*REQUEST_KEYS, "id"})  # a batch line: a request, and its id
_NEEDS_ANSWERING = "only applies when answering (--predict, --preset or --questions)"
_ANSWERING_FLAGS = (
    "--calibration",
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

    def __init__(self, name: str, source: Source | None, cause: BaseException) -> None:
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


def fraction(text: str) -> float | str:
    """An argparse type: a confidence threshold in [0, 1] (the decoding module's rule), or
    ``certified`` (gate on a certified calibration file's ``automate``)."""
    from ..engine.gate import CERTIFIED, check_min_confidence

    if text.strip().lower() == CERTIFIED:
        return CERTIFIED
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
        "--min-confidence",
        type=fraction,
        metavar="P",
        help="flag answers below P (0 to 1), or 'certified': those a --calibration file fitted "
        "with --risk does not automate",
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
    mode.add_argument(
        "--device",
        help="answer on PyTorch on this device, e.g. cpu, cuda, cuda:1, mps (default: mini on "
        "ONNX Runtime when installed, else the best torch device)",
    )
    mode.add_argument(
        "--abstain",
        action="store_true",
        help='let every choice answer "none of these" (abstain: true)',
    )
    mode.add_argument(
        "--calibration",
        metavar="FILE",
        help="calibrate the pinned checkpoint with this file (laya calibrate)",
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
        help="pin a checkpoint: name, alias, directory (mini: the bundled offline model), or auto "
        "(the default): route by language, an undecided one to LAYA_DEFAULT_MODEL, else "
        "multilingual",
    )
    route.add_argument("--task", metavar="NAME", help="pin by task, e.g. typed_decisions")
    route.add_argument("--lang", metavar="CODE", help="the language, decisive (skips detection)")
    route.add_argument("--lang-guess", metavar="CODE", help="a soft language hint")
    route.add_argument(
        "--explain", action="store_true", help="routing only: show the detector's diagnostics"
    )
    batch = p.add_argument_group("batch")
    batch.add_argument("--batch", metavar="FILE", help="one request per line; '-' reads stdin")
    batch.add_argument(
        "--batch-size", type=positive_int, metavar="N", help="states per pass (default: all)"
    )
    batch.add_argument("--sort-by-length", action="store_true", help="group similar lengths")
    out = p.add_argument_group("output")
    out.add_argument(
        "--json",
        action="store_const",
        const="auto",
        help="JSON instead of tables: a request indented, a batch one object per line",
    )
    for style in ("compact", "pretty"):  # matched whole by argparse before it splits on '='
        out.add_argument(
            f"--json={style}", dest="json", action="store_const", const=style, help=f"{style} JSON"
        )
    return p


def _check_combinations(args: argparse.Namespace, prompt: bool = False) -> None:
    """Refuse flags that would be silently ignored in the chosen mode (``prompt``: lines come
    from the interactive prompt)."""
    answering = _answering(args)
    rules = [
        (args.preset and args.questions, "--preset and --questions are exclusive"),
        (
            args.predict and (args.preset or args.questions),
            "--predict answers the 'router' preset: give it or --preset/--questions, not both",
        ),
        (args.text and args.batch, "give TEXT or --batch, not both"),
        (
            not args.text and not args.batch and not prompt,
            "nothing to do: give TEXT or --batch FILE (on a terminal, laya alone opens a prompt)",
        ),
        (not args.batch and args.batch_size, "--batch-size needs --batch"),
        (not args.batch and args.sort_by_length, "--sort-by-length needs --batch"),
        (
            args.explain and answering,
            "--explain shows how a request is routed; it does not apply when answering "
            "(drop --predict, --preset or --questions)",
        ),
        (
            args.calibration and args.model is not None and pins.routes(args.model),
            "--calibration calibrates one checkpoint; pin it with --model NAME, not auto",
        ),
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


def read_questions_file(path: str) -> tuple[Questions, str]:
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
    named = key if isinstance(key, str) else None
    return questions, named or state_field(questions) or DEFAULT_STATE_KEY


def _unwrap(path: str, data: dict[str, object]) -> tuple[object, object]:
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


def _read_json_object(path: str) -> dict[str, object]:
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


def _json_kind(value: object) -> str:
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
    id: object = None


@dataclass
class Job:
    """Everything a run needs, checked before anything is loaded: the Router, how a line becomes
    a request (the state key, the flags' keys), and the requests."""

    router: Router
    answering: bool
    batch: bool
    key: str
    defaults: dict[str, Any]
    device: str | None = None
    explain: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)


def _plan(args: argparse.Namespace, prompt: bool = False) -> Job:
    """Check the command line, read its files, and build the Router and the requests (none yet
    for the ``prompt``, which reads them one by one)."""
    _check_combinations(args, prompt)
    from ..router import Router

    device = _device(args.device)
    router = Router(device=device, preload=False, default=_default_name(args))
    questions, key = _question_set(args)
    if args.abstain:
        questions = with_abstain(questions)
    defaults = {"questions": questions, **_hints(router, args)}
    answering = _answering(args)
    if args.calibration:
        calibrate(router, defaults.get("model"), args.calibration)
    options = {"batch_size": args.batch_size, "min_confidence": args.min_confidence}
    options.update(tournament=args.tournament, shortlist=args.shortlist)
    if args.sort_by_length:
        options["sort_by_length"] = True
    job = Job(router, answering, bool(args.batch), key, defaults, device, args.explain)
    job.options = options
    if args.batch:
        job.requests = [_request(job, text, args.batch, n) for n, text in _batch_lines(args.batch)]
    elif args.text:
        job.requests = [_request(job, " ".join(args.text), "TEXT", 0)]
    return job


def _default_name(args: argparse.Namespace) -> str:
    """The Router's default checkpoint (``LAYA_DEFAULT_MODEL``, else ``multilingual``: what a
    state whose language cannot be told is answered by), checked as a name the Router knows (a
    directory or Hub id is pinned with ``--model``)."""
    from ..checkpoint import BUILTIN, canonical_name

    name = pins.default_model()
    if canonical_name(name) not in BUILTIN:
        raise UsageError(
            f"LAYA_DEFAULT_MODEL={name!r} is not a checkpoint name; use one of "
            f"{', '.join(sorted(BUILTIN))}, or pin a directory with --model PATH"
        )
    return name


def calibrate(router: Router, name: str | None, path: str) -> None:
    """Calibrate the pinned checkpoint ``name`` with the file at ``path`` (checked now)."""
    from ..engine.calibration import read_calibration

    if name is None:
        raise UsageError("--calibration calibrates one checkpoint; pin it with --model NAME")
    try:
        router.calibrations[name] = read_calibration(path)
    except InvalidRequest as exc:
        raise UsageError(f"--calibration: {one_line(exc)}") from None


def _device(requested: str | None) -> str | None:
    """``--device`` checked before anything loads: an unknown name is a usage error (exit 2)."""
    if requested is None:
        return None
    from ..engine.backends.torch import resolve_device

    try:
        return str(resolve_device(requested))
    except InvalidRequest as exc:
        raise UsageError(f"--{exc}") from None  # the message starts "device: ..."


def _question_set(args: argparse.Namespace) -> tuple[Questions, str]:
    """The shared questions and the state key of a plain line ({} and 'text' when routing)."""
    if args.questions:
        return read_questions_file(args.questions)
    if _answering(args):
        questions = PRESETS[args.preset or "router"]()
        return questions, state_field(questions) or DEFAULT_STATE_KEY
    return {}, "text"


def _hints(router: Router, args: argparse.Namespace) -> dict[str, Any]:
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


def _request(job: Job, text: str, source: str, n: int) -> Request:
    """A plain line becomes ``{key: text}``; a line starting with ``{`` is a request object with a
    ``state`` (anything else there is refused, as ``laya batch`` refuses it)."""
    where = f"{source} line {n}" if n else source
    if not text.startswith("{"):
        return Request({"state": {job.key: text}, **job.defaults}, text)
    data = _request_object(text, where)
    if data["state"] is None:
        raise UsageError(f"{where}: 'state' must not be null; give a string, object or list")
    unknown = sorted(set(data) - LINE_KEYS)
    if unknown:
        raise UsageError(
            f"{where}: unknown key {unknown[0]!r}; a request may have {', '.join(sorted(LINE_KEYS))}"
        )
    own = {k: v for k, v in data.items() if k != "id"}
    try:
        check_request({**job.defaults, **own}, f"{where}:")  # the Router's checks, named by line
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    try:
        parse_questions(own.get("questions", {}))
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{where}: {exc}") from None
    if own.get("model") is not None:
        own["model"] = pin(job.router, str(own["model"]), where)
    if own.get("task") is not None:
        _check_task(job.router, own["task"], f"{where}: task")
    shown = own["state"] if isinstance(own["state"], str) else json.dumps(own["state"])
    return Request({**job.defaults, **own}, shown, data.get("id"))


def _request_object(text: str, where: str) -> dict[str, Any]:
    """A line that starts with ``{``, parsed: a JSON object with a ``state``, or a usage error
    naming the line (such a line is never answered as text)."""
    fix = 'a line starting with "{" is a request, {"state": ...}; send text that starts with "{" as {"state": "..."}'
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{where}: not JSON ({one_line(exc)}); {fix}") from None
    if not isinstance(data, dict) or "state" not in data:
        raise UsageError(f"{where}: no 'state' key; {fix}")
    return data


# --------------------------------------------------------------------------- model pins


def pin(router: Router, value: str, where: str) -> str | None:
    """The Router name for ``--model`` (laya.router.pins: a name or alias, a local directory, or
    a Hub id, registered on first use); None routes."""
    try:
        pinned = pins.pin(value, router.models, local=True, where=where)
    except LayaError as exc:
        raise UsageError(one_line(exc)) from None
    if pinned.name is not None and pinned.source is not None:  # a new source comes named
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a near-builtin name is fine here
            router.register(pinned.name, pinned.source)
    return pinned.name


def _check_task(router: Router, task: str, where: str) -> str:
    """``task`` unchanged if the Router can route by it (``typed_decisions`` or a checkpoint name,
    both names it resolves); else a usage error naming ``where``."""
    try:
        router.resolve(task, "task")
    except InvalidRequest as exc:
        raise UsageError(f"{where}: {exc}") from None
    return task


# --------------------------------------------------------------------------- running


def run(job: Job, out: TextIO, json_style: str | None) -> None:
    """Route or answer every request and print the results as they come (``--json``: each
    result of a batch on one line, a single one indented, as published)."""
    human = _human_format(job, Style.for_stream(out))
    if json_style == "auto":
        json_style = "compact" if job.batch else "pretty"
    if not job.answering:
        routed = [r.routed for r in job.requests]
        decisions = job.router.route_batch(routed, explain=job.explain)
        for request, decision in zip(job.requests, decisions):
            _emit(out, request, dict(decision), json_style, human)
        return
    load_routed(job.router, [r.routed for r in job.requests], job.device)
    shown = job.batch and on_terminal()
    step = chunk_rows(CHUNK, shown)
    with progress(len(job.requests), unit="req", shown=shown) as advance:
        for start in range(0, len(job.requests), step):
            chunk = job.requests[start : start + step]
            results = _answer(job.router, [r.routed for r in chunk], job.options)
            for request, result in zip(chunk, results):
                _emit(out, request, result, json_style, human)
            out.flush()
            advance(len(chunk))


def _answer(
    router: Router, requests: list[dict[str, Any]], options: dict[str, Any]
) -> list[Result]:
    """One predict_batch call; a ValueError there is about the input (questions, budgets)."""
    try:
        return router.predict_batch(requests, **options)
    except TooManyOptions as exc:
        raise UsageError(f"{one_line(exc)}; or {MANY_OPTIONS_HINT}") from exc
    except ValueError as exc:
        raise UsageError(one_line(exc)) from exc


def load_routed(router: Router, requests: list[dict[str, Any]], device: str | None = None) -> None:
    """Load every checkpoint the requests route to before answering any: fail early, by name
    (``mini`` on ONNX Runtime when nothing asks for a torch ``device``: laya.cli.onnx_mini)."""
    names = dict.fromkeys(router.resolve(d["model"]) for d in router.route_batch(requests))
    router.max_loaded = max(router.max_loaded, len(names))
    for name in names:
        try:
            _load(router, name, names, device)
        except InvalidRequest:
            raise
        except Exception as exc:  # noqa: BLE001 - any load failure is reported with its checkpoint
            raise LoadFailed(name, router.models.get(name), exc) from exc


def _load(router: Router, name: str, names: Iterable[str], device: str | None) -> None:
    if name == "mini":
        attach_onnx_mini(router, names, device)
    router.load(name)


Human = Callable[[Mapping[str, object], Request], list[str]]


def _human_format(job: Job, style: Style) -> Human:
    """How one result reads: a routing block or row, or the answer tables (headed in a batch)."""
    if not job.answering:
        if job.batch and not job.explain:
            return lambda decision, request: [route_row(decision, request.shown, style)]
        return lambda decision, request: show_route(decision, style)
    if job.batch:
        return lambda result, request: [
            style.bold(f"# {published_cut(request.shown, 69)}"),
            *show_answers(result, style),
            "",
        ]
    return lambda result, request: show_answers(result, style)


def _emit(
    out: TextIO,
    request: Request,
    payload: Mapping[str, object],
    json_style: str | None,
    human: Human,
) -> None:
    """Write one result: JSON (with the request's id, if it had one) or its human lines."""
    if json_style is not None:
        record = payload if request.id is None else {"id": request.id, **payload}
        out.write(json_text(record, json_style) + "\n")
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
        entry: Callable[[list[str]], int] = getattr(import_module(module), function)
    except MissingExtra as exc:  # names the extra that installs it
        return _fail(one_line(exc), EXIT_USAGE)
    except (ModuleNotFoundError, AttributeError) as exc:
        missing = (exc.name or "") if isinstance(exc, ModuleNotFoundError) else "laya"
        if missing.split(".")[0] != "laya":
            return _fail(f"'{name}' needs {missing!r}: pip install {missing}", EXIT_USAGE)
        return _fail(f"'{name}' is not installed in this build of laya", EXIT_USAGE)
    return entry(argv)


def script(name: str) -> Callable[[], int]:
    """The console script ``laya-NAME`` (pyproject.toml): ``laya NAME`` with the process's
    arguments, the very same code."""

    def console_script() -> int:
        return main([name, *sys.argv[1:]])

    console_script.__name__ = console_script.__qualname__ = f"laya_{name.replace('-', '_')}"
    return console_script


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
    """The main command: route or answer TEXT, a batch file or the prompt's lines."""
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(encoding="utf-8")

    def work() -> int | None:
        parsed = build_parser().parse_args(args)
        if not parsed.text and not parsed.batch and on_terminal(sys.stdin):
            return _prompt(_plan(parsed, prompt=True), parsed.json)
        run(_plan(parsed), sys.stdout, parsed.json)
        return None

    return _reported(work)


def _reported(work: Callable[[], int | None]) -> int:
    """Do ``work``; every failure is one line on stderr and its exit status."""
    try:
        return work() or EXIT_OK
    except UsageError as exc:
        return _fail(one_line(exc), EXIT_USAGE)
    except BrokenPipeError:  # the reader went away (laya ... | head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    except Exception as exc:  # noqa: BLE001 - the command reports any failure as one line
        return _fail(failure_message(exc), exit_status(exc))


def _prompt(job: Job, json_style: str | None) -> int:
    """The interactive prompt: each line routed or answered as TEXT would be; a failed line is
    one error line and the session goes on (the exit status is the last failure's)."""

    def answer(text: str) -> int:
        line = replace(job, requests=[_request(job, text, "input", 0)])
        return _reported(lambda: run(line, sys.stdout, json_style))

    what = "answers" if job.answering else "routes"
    return prompt_loop(answer, f"laya {what} one request per line")
