"""The ``laya`` command: route or answer requests from the shell, and dispatch the subcommands.

``laya "TEXT"`` only routes (which checkpoint would answer, and why): it loads nothing and never
imports torch. ``--predict``, ``--preset`` or ``--questions`` answer through a :class:`Router`.
``laya serve|export-onnx|train|eval ...`` hand their argv to the module that owns the command.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import unicodedata
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from itertools import chain, count
from pathlib import Path
from typing import Any, TextIO

from .checkpoint import ALIASES, canonical_name
from .presets import PRESETS, state_field
from .questions import parse_questions

COMMANDS = {
    "serve": ("laya.server", "serve_main", "serve the Router over HTTP"),
    "export-onnx": ("laya.backends.onnx", "export_main", "export a checkpoint to ONNX"),
    "train": ("laya.train", "train_main", "fine-tune a checkpoint on labelled decisions"),
    "eval": ("laya.evaluate", "eval_main", "score a checkpoint on labelled decisions"),
    "batch": ("laya.ray", "batch_main", "answer a JSONL file on Ray Data (laya[ray])"),
}

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
# Requests per predict_batch call in --batch mode: progress and output advance per chunk.
CHUNK = 256
DEFAULT_STATE_KEY = "request"
REQUEST_KEYS = frozenset(
    {"state", "questions", "model", "task", "lang", "lang_guess", "max_len", "head_max_len", "id"}
)
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_NEEDS_ANSWERING = "only applies when answering (--predict, --preset or --questions)"


def _offline_hint() -> str:
    """The fix for a checkpoint that cannot be downloaded: the bundled model if installed, a path."""
    from .checkpoint import BUNDLED

    mini = "--model mini (the bundled model) or " if BUNDLED["mini"].is_dir() else ""
    return f"no network or HF_HUB_OFFLINE is set: pass {mini}--model PATH to a local checkpoint"


class UsageError(Exception):
    """A problem with the command line or its input files (exit 2)."""


class CheckpointError(Exception):
    """A checkpoint that cannot be loaded (exit 1): which one, from where, why, and the fix."""

    def __init__(self, name: str, source: Any, cause: BaseException) -> None:
        where = " from " + "/".join(p for p in source if p) if source else ""
        super().__init__(f"cannot load checkpoint {name!r}{where}: {_load_failure(cause)}")


def _load_failure(exc: BaseException) -> str:
    """Why a load failed, with the command-line fix when the Hub could not be reached."""
    from huggingface_hub.errors import LocalEntryNotFoundError

    if isinstance(exc.__cause__, LocalEntryNotFoundError):
        return (
            f"it is not in the local Hugging Face cache and cannot be downloaded; {_offline_hint()}"
        )
    return " ".join(str(exc).split()) or type(exc).__name__


# --------------------------------------------------------------------------- arguments


class _Parser(argparse.ArgumentParser):
    """argparse, with errors raised as :class:`UsageError` (one line, no usage dump)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see laya --help)")


def _positive_int(text: str) -> int:
    """An argparse type: a whole number above zero."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def _fraction(text: str) -> float:
    """An argparse type: a confidence threshold in [0, 1] (the decoding module's rule)."""
    from .decoding import check_min_confidence

    try:
        return check_min_confidence(float(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _epilog() -> str:
    commands = "\n".join(f"  {name:<12}  {summary}" for name, (_, _, summary) in COMMANDS.items())
    return f"commands (laya COMMAND --help):\n{commands}\n\nexit codes: 0 ok, 1 failed, 2 usage"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the main ``laya`` command."""
    p = _Parser(
        prog="laya",
        description="Route a request to a checkpoint, or answer typed questions about it.",
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("text", nargs="*", help="the request (words are joined by spaces)")
    mode = p.add_argument_group("answering (without these, laya only routes)")
    mode.add_argument("--predict", action="store_true", help="answer the 'router' preset")
    mode.add_argument("--preset", choices=sorted(PRESETS), help="answer a ready-made question set")
    mode.add_argument("--questions", metavar="FILE", help="answer the questions in a JSON file")
    mode.add_argument("--min-confidence", type=_fraction, metavar="P", help="abstain below P")
    mode.add_argument("--max-len", type=_positive_int, metavar="N", help="state token budget")
    mode.add_argument("--head-max-len", type=_positive_int, metavar="N", help="question budget")
    mode.add_argument("--device", help="torch device, e.g. cpu, cuda, cuda:1, mps")
    route = p.add_argument_group("routing")
    route.add_argument("--model", metavar="NAME|PATH", help="pin a checkpoint (name, alias, dir)")
    route.add_argument("--task", metavar="NAME", help="pin by task, e.g. typed_decisions")
    route.add_argument("--lang", metavar="CODE", help="the language, decisive (skips detection)")
    route.add_argument("--lang-guess", metavar="CODE", help="a soft language hint")
    batch = p.add_argument_group("batch")
    batch.add_argument("--batch", metavar="FILE", help="one request per line; '-' reads stdin")
    batch.add_argument("--batch-size", type=_positive_int, metavar="N", help="states per pass")
    batch.add_argument("--sort-by-length", action="store_true", help="group similar lengths")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    return p


def _check_combinations(args: argparse.Namespace) -> None:
    """Refuse flags that would be silently ignored in the chosen mode."""
    answering = _answering(args)
    rules = [
        (args.preset and args.questions, "--preset and --questions are exclusive"),
        (args.text and args.batch, "give TEXT or --batch, not both"),
        (not args.text and not args.batch, "nothing to do: give TEXT or --batch FILE"),
        (not args.batch and args.batch_size, "--batch-size needs --batch"),
        (not args.batch and args.sort_by_length, "--sort-by-length needs --batch"),
    ]
    rules += [
        (not answering and getattr(args, name) not in (None, False), f"{flag} {_NEEDS_ANSWERING}")
        for name, flag in [
            ("min_confidence", "--min-confidence"),
            ("max_len", "--max-len"),
            ("head_max_len", "--head-max-len"),
            ("batch_size", "--batch-size"),
            ("sort_by_length", "--sort-by-length"),
            ("device", "--device"),
        ]
    ]
    for broken, message in rules:
        if broken:
            raise UsageError(f"{message} (see laya --help)")


def _answering(args: argparse.Namespace) -> bool:
    return bool(args.predict or args.preset or args.questions)


# --------------------------------------------------------------------------- inputs


def read_questions_file(path: str) -> tuple[dict[str, Any], str]:
    """A question file's questions and the state key they read; errors name the file."""
    data = _read_json_object(path)
    wrapped = "questions" in data and set(data) <= {"questions", "state_key"}
    questions = data["questions"] if wrapped else data
    if not isinstance(questions, dict) or not questions:
        raise UsageError(f"{path}: 'questions' must be a non-empty object of id -> definition")
    try:
        parse_questions(questions)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{path}: {exc}") from None
    key = data.get("state_key") if wrapped else None
    if key is not None and (not isinstance(key, str) or not key.strip()):
        raise UsageError(f"{path}: 'state_key' must be a non-empty string, got {key!r}")
    return questions, key or state_field(questions) or DEFAULT_STATE_KEY


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
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


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
    from .router import Router

    router = Router(device=args.device, preload=False)
    questions, key = _question_set(args)
    defaults = {"questions": questions, **_hints(router, args)}
    source = args.batch or "TEXT"
    lines = _batch_lines(args.batch) if args.batch else [(0, " ".join(args.text))]
    requests = [_request(router, text, key, defaults, source, n) for n, text in lines]
    options = {"batch_size": args.batch_size, "min_confidence": args.min_confidence}
    if args.sort_by_length:
        options["sort_by_length"] = True
    return Job(router, requests, _answering(args), bool(args.batch), options)


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
        "task": args.task,
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
    unknown = sorted(set(data) - REQUEST_KEYS)
    if unknown:
        raise UsageError(
            f"{where}: unknown key {unknown[0]!r}; a request may have {', '.join(sorted(REQUEST_KEYS))}"
        )
    own = {k: v for k, v in data.items() if k != "id"}
    if "questions" in own:
        try:
            parse_questions(own["questions"])
        except (TypeError, ValueError) as exc:
            raise UsageError(f"{where}: {exc}") from None
    if own.get("model") is not None:
        own["model"] = pin(router, str(own["model"]), where)
    shown = own["state"] if isinstance(own["state"], str) else json.dumps(own["state"])
    return Request({**defaults, **own}, shown, data.get("id"))


# --------------------------------------------------------------------------- model pins


def pin(router: Any, value: str, where: str) -> str | None:
    """The Router name for ``--model``: a name or alias, a local directory, or a Hub repo id."""
    if canonical_name(value) == "auto":
        return None
    path = Path(value).expanduser()
    if path.is_dir():
        return _register(router, path.name, str(path.resolve()))
    if canonical_name(value) in router.models:
        return router.resolve(value)
    if _HUB_ID.match(value) and not value.startswith("."):
        return _register(router, value.rsplit("/", 1)[1], value)
    if os.sep in value or value.startswith((".", "~")):
        raise UsageError(f"{where}: no checkpoint directory at {value!r}")
    try:
        return router.resolve(value)
    except ValueError as exc:
        raise UsageError(f"{where}: {exc}; or give a checkpoint directory") from None


def _register(router: Any, stem: str, source: str) -> str:
    """Register ``source`` under a free name derived from ``stem`` (reusing an earlier one)."""
    for name, known in router.models.items():
        if known == (source, None):
            return name
    base = re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).strip("-._") or "local"
    taken = set(router.models) | set(ALIASES) | {"auto"}
    candidates = chain([base], (f"{base}-{n}" for n in count(2)))
    name = next(n for n in candidates if n not in taken)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a near-builtin name is fine here
        return router.register(name, source)


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
        raise UsageError(" ".join(str(exc).split())) from exc


def load_routed(router: Any, requests: list[dict[str, Any]]) -> None:
    """Load every checkpoint the requests route to before answering any: fail early, by name."""
    names = dict.fromkeys(router.resolve(d["model"]) for d in router.route_batch(requests))
    router.max_loaded = max(router.max_loaded, len(names))
    for name in names:
        try:
            router.load(name)
        except Exception as exc:  # noqa: BLE001 - any load failure is reported with its checkpoint
            raise CheckpointError(name, router.models.get(name), exc) from exc


Human = Callable[[dict[str, Any], Request], list[str]]


def _human_format(job: Job, style: Style) -> Human:
    """How one result reads: a routing block or row, or the answer tables (headed in a batch)."""
    if not job.answering:
        if job.batch:
            return lambda decision, request: [_route_row(decision, request.shown, style)]
        return lambda decision, request: show_route(decision, style)
    if job.batch:
        return lambda result, request: [
            style.bold(f"# {_cut(request.shown, 72)}"),
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


# --------------------------------------------------------------------------- human output

BAR_WIDTH = 20
_EIGHTHS = " ▏▎▍▌▋▊▉"
_MAX_OPTIONS_SHOWN = 8
_LABEL_WIDTH = 28


@dataclass(frozen=True)
class Style:
    """ANSI colours when writing to a terminal and NO_COLOR is unset; plain text otherwise."""

    colour: bool = False

    @classmethod
    def for_stream(cls, stream: TextIO) -> Style:
        """Colour only for an interactive stream, honouring https://no-color.org."""
        tty = getattr(stream, "isatty", lambda: False)()
        return cls(colour=tty and not os.environ.get("NO_COLOR"))

    def _paint(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour and text else text

    def bold(self, text: str) -> str:
        """Question names and headers."""
        return self._paint(text, "1")

    def dim(self, text: str) -> str:
        """Secondary information."""
        return self._paint(text, "2")

    def good(self, text: str) -> str:
        """The chosen answer."""
        return self._paint(text, "32")

    def warn(self, text: str) -> str:
        """Low-confidence and truncation notes."""
        return self._paint(text, "33")


def bar(p: float, width: int = BAR_WIDTH) -> str:
    """A probability as a bar of block characters, eighth-cell resolution, padded to ``width``."""
    cells = round(min(max(p, 0.0), 1.0) * width * 8)
    full, rest = divmod(cells, 8)
    return ("█" * full + (_EIGHTHS[rest] if rest else "")).ljust(width)


def _columns(char: str) -> int:
    """Terminal cells of one character: wide East Asian forms take two, combining marks none."""
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


def _cells(text: str) -> int:
    return sum(map(_columns, text))


def _cut(text: str, limit: int) -> str:
    """One line of at most ``limit`` terminal cells, with an ellipsis where it was cut."""
    text = " ".join(text.split())
    if _cells(text) <= limit:
        return text
    kept, used = [], 1
    for char in text:
        used += _columns(char)
        if used > limit:
            break
        kept.append(char)
    return "".join(kept) + "…"


def _fit(text: str, width: int) -> str:
    """``text`` cut and padded to exactly ``width`` terminal cells."""
    text = _cut(text, width)
    return text + " " * (width - _cells(text))


def show_route(decision: dict[str, Any], style: Style) -> list[str]:
    """The routing block: checkpoint, source, reason and what detection saw."""
    lines = [
        f"{style.dim('model ')}  {style.bold(decision['model'])}  {style.dim(decision.get('repo') or '')}",
        f"{style.dim('reason')}  {decision['reason']}",
    ]
    detection = decision.get("detection")
    if detection:
        lines.append(f"{style.dim('seen  ')}  {_detection(detection)}")
    return lines


def _detection(detection: dict[str, Any]) -> str:
    language = detection.get("language") or "undecided"
    return f"{detection['script']} script, language {language}"


def _route_row(decision: dict[str, Any], shown: str, style: Style) -> str:
    model = style.bold(decision["model"].ljust(14))
    return f"{model} {_fit(shown, 44)}  {style.dim(decision['reason'])}"


Row = tuple[str, float, bool]  # label, probability, whether it is the answer


def show_answers(result: dict[str, Any], style: Style) -> list[str]:
    """The routing line, then one table per answer (columns aligned across answers), then notes."""
    routing = result.get("routing") or {}
    source = f" ({routing['repo']})" if routing.get("repo") else ""
    lines = [style.dim(f"→ {routing.get('model', '?')}{source}: {routing.get('reason', '')}"), ""]
    tables = [(str(q), a, *_verdict_and_rows(a)) for q, a in result.get("answers", {}).items()]
    qid_width = max((len(t[0]) for t in tables), default=0)
    widths = (_cells(row[0]) for table in tables for row in table[3])
    label_width = min(max(widths, default=0), _LABEL_WIDTH)
    for qid, answer, verdict, rows in tables:
        lines.append(_header(qid.ljust(qid_width), verdict, answer, style))
        lines += [_row(row, label_width, style) for row in rows]
    lines += [style.warn(f"warning: {w['message']}") for w in result.get("warnings", [])]
    usage = result.get("usage") or {}
    if usage.get("truncated"):
        dropped = usage.get("state_tokens_dropped", 0)
        lines.append(style.warn(f"note: state truncated, {dropped} tokens dropped"))
    return lines


def _header(qid: str, verdict: str, answer: dict[str, Any], style: Style) -> str:
    """Question, answer, confidence, and the gate's flag when it fired."""
    conf = answer.get("confidence")
    conf_text = f"confidence {conf:.2f}" if isinstance(conf, (int, float)) else ""
    flag = style.warn("  low confidence") if answer.get("low_confidence") else ""
    return f"{style.bold(qid)}  {style.good(verdict)}  {style.dim(conf_text)}{flag}"


def _row(row: Row, width: int, style: Style) -> str:
    """One option: label, bar, probability; the answer's row in colour."""
    label, p, chosen = row
    text = f"  {_fit(label, width)}  {bar(p)}  {p:.2f}"
    return style.good(text) if chosen else text


def _verdict_and_rows(answer: dict[str, Any]) -> tuple[str, list[Row]]:
    """The answer in words and the rows of its table."""
    kind = answer.get("type")
    if kind == "noul":
        p = float(answer["noul"])
        return ("yes" if p >= 0.5 else "no"), [("p(true)", p, p >= 0.5)]
    probabilities = {str(k): float(v) for k, v in (answer.get("probabilities") or {}).items()}
    if kind == "score":
        legend = answer.get("legend") or {}
        top = max(probabilities, key=probabilities.get, default="")
        rows = [(f"{k} {legend.get(k, '')}".strip(), p, k == top) for k, p in probabilities.items()]
        return f"{answer['score']:.2f}, most likely {legend.get(top, top)}", rows
    if kind == "choice":
        choice = str(answer.get("choice"))
        ranked = sorted(probabilities.items(), key=lambda kv: -kv[1])[:_MAX_OPTIONS_SHOWN]
        return choice, [(k, p, k == choice) for k, p in ranked]
    return json.dumps(answer, ensure_ascii=False), []


# --------------------------------------------------------------------------- progress


class Progress:
    """A context manager yielding ``advance(n)``: tqdm on stderr if installed, else a plain bar."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.enabled, self.done, self.bar = total, enabled, 0, None

    def __enter__(self) -> Callable[[int], None]:
        if self.enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=self.total, unit="req", file=sys.stderr, leave=False)
            except ImportError:
                self._draw()
        return self.advance

    def advance(self, n: int) -> None:
        """Count ``n`` more requests as done."""
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.enabled:
            self._draw()

    def _draw(self) -> None:
        share = self.done / self.total
        sys.stderr.write(f"\r{bar(share, 30)} {self.done}/{self.total}")
        sys.stderr.flush()

    def __exit__(self, *exc_info: Any) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.enabled:
            sys.stderr.write("\r" + " " * 50 + "\r")


# --------------------------------------------------------------------------- entry point


def failure_message(exc: BaseException) -> str:
    """One line saying what failed and, where there is one, the fix."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, ModuleNotFoundError):
        return f"missing dependency {exc.name!r}; install laya with its dependencies ({text})"
    return text


def _fail(message: str, code: int) -> int:
    print(f"laya: {message}", file=sys.stderr)
    return code


def _subcommand(name: str, argv: list[str]) -> int:
    """Hand ``argv`` to the command's own ``*_main``; an absent module means not installed."""
    module, function, _ = COMMANDS[name]
    try:
        entry = getattr(import_module(module), function)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing.split(".")[0] != "laya":
            return _fail(f"'{name}' needs {missing!r}: pip install {missing}", EXIT_USAGE)
        entry = None
    except AttributeError:
        entry = None
    if entry is None:
        return _fail(f"'{name}' is not installed in this build of laya", EXIT_USAGE)
    return entry(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``laya``; returns the exit code (0 ok, 1 failed, 2 usage)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in COMMANDS:
        return _subcommand(args[0], args[1:])
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(encoding="utf-8")
    try:
        parsed = build_parser().parse_args(args)
        run(_plan(parsed), sys.stdout, parsed.json)
    except UsageError as exc:
        return _fail(str(exc), EXIT_USAGE)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:  # the reader went away (laya ... | head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    except Exception as exc:  # noqa: BLE001 - the command reports any failure as one line
        return _fail(failure_message(exc), EXIT_FAILED)
    return EXIT_OK
