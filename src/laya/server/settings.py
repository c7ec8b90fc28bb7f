"""What ``laya serve`` can be told: one table of settings, each a ``LAYA_*`` variable and a flag.

The table (:data:`OPTIONS`) is the single source for the environment names, the flags, their
parsers, their help text and the defaults shown by ``laya serve --help``; :func:`settings_from`
reads variables, then flags (a flag wins), into a frozen :class:`Settings`.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypeVar

from ..commands import CommandParser
from ..errors import InvalidRequest
from ..router.pins import DEFAULT_MODEL

if TYPE_CHECKING:
    from ..checkpoint.sources import Source

__all__ = [
    "OPTIONS",
    "Option",
    "Settings",
    "SettingsError",
    "arg_parser",
    "model_entries",
    "model_pairs",
    "settings_from",
]


class SettingsError(InvalidRequest):
    """A bad flag or ``LAYA_*`` value; ``laya serve`` prints it on one line and exits 2."""


@dataclass(frozen=True)
class Settings:
    """Everything ``laya serve`` can be told, with the defaults it runs on."""

    host: str = "127.0.0.1"
    port: int = 8000
    models: dict[str, str] = field(default_factory=dict)
    preload_models: tuple[str, ...] = ()  # LAYA_MODELS entries without '=': names to preload
    extra_models: dict[str, str | Source] = field(
        default_factory=dict
    )  # name -> source (reference form)
    default_model: str = DEFAULT_MODEL  # the Router's default, as every command's (router.pins)
    route: str = "auto"
    preload: bool = True
    auto_task: bool = False
    allow_downloads: bool = False
    device: str | None = None
    max_loaded: int | None = None
    threads: int | None = None
    api_key: str | None = None
    root_path: str = ""
    log_level: str = "info"
    max_concurrent: int = 64
    inference_workers: int = 1
    batch_window_ms: float = 2.0
    batch_tokens: int = 32_768
    idle_unload_seconds: float | None = None
    request_timeout: float = 60.0
    max_work_tokens: int = 131_072
    body_read_timeout: float = 10.0
    header_timeout: float = 10.0
    keep_alive_timeout: float = 5.0
    max_header_bytes: int = 16_384
    max_connections: int = 512
    max_client_connections: int = 128
    allowed_hosts: tuple[str, ...] | None = None  # None: loopback names on loopback, else any
    slice_tokens: int | None = None  # None: measured (laya.server.batcher.Pace)
    max_token_budget: int = 8192
    max_batch_tokens: int | None = None
    jev_strict: bool = False
    fast: bool = False
    precision: str | None = None  # None: fp32, or what --fast picks
    calibration: dict[str, str] = field(default_factory=dict)  # checkpoint name -> file
    tournament: int | bool | None = None
    tournament_group: int | None = None  # the reference's LAYA_TOURNAMENT_GROUP (or None)
    abstain: bool = False

    @property
    def default_tournament(self) -> int | bool | None:
        """The tournament of requests that send none: ``tournament``, else the reference's group."""
        return self.tournament if self.tournament is not None else self.tournament_group


# --------------------------------------------------------------------------- parsers


Number = TypeVar("Number", int, float)


def _number(
    kind: Callable[[str], Number], text: str, accept: Callable[[Number], bool], expected: str
) -> Number:
    """``text`` read as ``kind``, kept only if ``accept`` holds; ValueError naming ``expected``."""
    try:
        value = kind(text)
    except ValueError:
        raise ValueError(f"must be {expected}") from None
    if not accept(value):
        raise ValueError(f"must be {expected}")
    return value


def _positive_int(text: str) -> int:
    return _number(int, text, lambda v: v >= 1, "a positive integer")


def _port(text: str) -> int:
    return _number(int, text, lambda v: 1 <= v <= 65535, "a port number in 1-65535")


def _seconds(text: str) -> float:
    return _number(
        float, text, lambda v: math.isfinite(v) and v > 0, "a positive number of seconds"
    )


def _milliseconds(text: str) -> float:
    return _number(
        float, text, lambda v: math.isfinite(v) and 0 <= v <= 1000, "milliseconds in 0-1000"
    )


def _idle_seconds(text: str) -> float | None:
    """Seconds without a request before every checkpoint is unloaded; 0 turns it off."""
    value = _number(float, text, lambda v: math.isfinite(v) and v >= 0, "seconds, 0 for off")
    return value or None


def _boolean(text: str) -> bool:
    word = text.strip().lower()
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("0", "false", "no", "off"):
        return False
    raise ValueError("must be one of 1/true/yes/on or 0/false/no/off")


def _one_of(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        word = text.strip().lower()
        if word not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}")
        return word

    return parse


def _items(items: str | Sequence[str]) -> list[str]:
    """A list of flag values, or a comma-separated variable, without blank entries."""
    if isinstance(items, str):
        items = items.split(",")
    return [item.strip() for item in items if item.strip()]


def model_pairs(items: str | Sequence[str]) -> dict[str, str]:
    """``NAME=PATH`` pairs, from a list of flags or a comma-separated variable."""
    pairs = {}
    for item in _items(items):
        name, sep, path = item.partition("=")
        if not (sep and name.strip() and path.strip()):
            raise ValueError(f"expects NAME=PATH entries, got {item!r}")
        pairs[name.strip()] = path.strip()
    return pairs


def model_entries(items: str | Sequence[str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """``LAYA_MODELS`` / ``--models`` in both forms: an entry holding ``=`` is a ``NAME=PATH``
    pair (a checkpoint to serve and preload), one without is a name to preload (the reference's
    preload list)."""
    entries = _items(items)
    names = tuple(item for item in entries if "=" not in item)
    return model_pairs([item for item in entries if "=" in item]), names


def _extra_models(text: str) -> dict[str, str | Source]:
    """The reference's ``LAYA_EXTRA_MODELS``: a JSON object of name -> ``"repo-or-path"`` or
    ``["repo", "subfolder"]``."""
    import json

    try:
        table = json.loads(text)
    except ValueError:
        table = None
    if not isinstance(table, dict) or not table:
        raise ValueError('must be a JSON object such as {"support": "/srv/ckpt"}')
    extra: dict[str, str | Source] = {}
    for name, source in table.items():
        if isinstance(source, str) and source.strip():
            extra[name] = source.strip()
        elif _repo_pair(source):
            extra[name] = (source[0], source[1])
        else:
            raise ValueError(
                f'{name!r} must map to "repo-or-path" or ["repo", "subfolder"], got {source!r}'
            )
    return extra


def _repo_pair(source: object) -> bool:
    return (
        isinstance(source, list)
        and len(source) == 2
        and isinstance(source[0], str)
        and bool(source[0].strip())
        and (source[1] is None or isinstance(source[1], str))
    )


def _text(text: str) -> str:
    return text.strip()


def _api_key(text: str) -> str:
    """The bearer key as set: one that could never match (spaces around it, or only spaces) or
    that no header can carry (a control character) stops start-up instead of serving open."""
    if not text.strip():
        raise ValueError(
            "is only whitespace, which would leave the server open; unset it, or set a key"
        )
    if text != text.strip():
        raise ValueError(
            "has spaces or line breaks around it, so no bearer token could ever match; remove them"
        )
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise ValueError("holds a control character, which no Authorization header can carry")
    return text


def _hosts(text: str) -> tuple[str, ...]:
    """Host names the server answers to: ``name``, ``.domain`` (it and its subdomains) or ``*``."""
    names = tuple(
        item.strip().lower().rstrip(".") or "." for item in text.split(",") if item.strip()
    )
    bad = [name for name in names if name == "." or any(c in name for c in "/:@ ")]
    if not names or bad:
        raise ValueError(
            "must be host names separated by commas (api.example.com, .example.com for a domain "
            "and its subdomains, * for any), without ports"
        )
    return names


def _precision(text: str) -> str | None:
    """A precision every checkpoint runs in (``laya.engine.precision``); ``auto`` is None. int8
    is refused here, at start-up, on a CPU that cannot run it fast."""
    from ..engine.precision import PRECISIONS, choose_precision, parse_precision

    try:
        value = parse_precision(text)
        if value == "int8":
            choose_precision("cpu", precision=value)
    except InvalidRequest as exc:
        if "not one of" in str(exc):
            raise ValueError(f"must be one of auto, {', '.join(PRECISIONS)}") from None
        raise ValueError(str(exc).removeprefix("precision: ")) from None
    return value


def _tournament(text: str) -> int | bool | None:
    """``auto`` (True: the largest groups that fit), ``off`` (None), or a group size of 2 or more."""
    word = text.strip().lower()
    if word in ("auto", "off"):
        return True if word == "auto" else None
    return _number(int, word, lambda v: v >= 2, "auto, off or a group size of at least 2")


def _tournament_group(text: str) -> int | None:
    """The reference's ``LAYA_TOURNAMENT_GROUP``: a group size in 2-100, or 0 for off."""
    value = _number(
        int, text, lambda v: v == 0 or 2 <= v <= 100, "0 (off) or a group size in 2-100"
    )
    return value or None


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Option:
    """One setting: its ``Settings`` field, variable, parser, help, and whether it has a flag."""

    name: str
    env: str
    parse: Callable[[str], object]
    help: str
    flag: bool = True
    metavar: str | None = None
    blank_unsets: bool = True  # a variable of only spaces counts as unset (empty always does)
    secret: bool = False  # an error names the variable, never its value

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")


_LEVELS = ("critical", "error", "warning", "info", "debug")
OPTIONS: tuple[Option, ...] = (
    Option("host", "LAYA_HOST", _text, "bind address; 0.0.0.0 listens on every interface"),
    Option("port", "LAYA_PORT", _port, "TCP port, 1-65535"),
    Option(
        "models", "LAYA_MODELS", model_entries,
        "checkpoints to serve as NAME=PATH (a directory or Hub id each), or NAME to preload one "
        "the server knows", metavar="NAME[=PATH]",
    ),
    Option(
        "extra_models", "LAYA_EXTRA_MODELS", _extra_models,
        'checkpoints as a JSON object, {"name": "repo-or-path" or ["repo", "subfolder"]}',
        metavar="JSON",
    ),
    Option(
        "default_model", "LAYA_DEFAULT_MODEL", _text,
        "the router's default: the checkpoint for a state whose language cannot be told (and "
        "for model 'default')",
    ),
    Option(
        "route", "LAYA_ROUTE", _one_of("auto", "default"),
        "'auto': a request naming no model is routed by its language; 'default': it is answered "
        "by the default model",
    ),
    Option(
        "preload", "LAYA_PRELOAD", _boolean,
        "load at start-up what answers requests naming no model (english and multilingual, or "
        "the default model under --route default) and --models",
    ),
    Option(
        "auto_task", "LAYA_AUTO_TASK", _boolean,
        "route a request whose question ids match a typed-decisions workflow to typed-decisions",
    ),
    Option(
        "allow_downloads", "LAYA_ALLOW_DOWNLOADS", _boolean,
        "let a request for a checkpoint that is not cached start its download (in the "
        "background; the request gets 503 until it lands)",
    ),
    Option("device", "LAYA_DEVICE", _text, "torch device, e.g. cpu, cuda, cuda:1 (default: best)"),
    Option(
        "max_loaded", "LAYA_MAX_LOADED", _positive_int,
        "resident checkpoints (default 2, raised to fit the preloaded ones)",
    ),
    Option("threads", "LAYA_THREADS", _positive_int, "torch intra-op threads (default: torch's)"),
    Option(
        "api_key", "LAYA_API_KEY", _api_key,
        "require Authorization: Bearer KEY (no flag: ps shows flags)", flag=False,
        blank_unsets=False, secret=True,
    ),
    Option("root_path", "LAYA_ROOT_PATH", _text, "path prefix a reverse proxy strips"),
    Option("log_level", "LAYA_LOG_LEVEL", _one_of(*_LEVELS), ", ".join(_LEVELS)),
    Option(
        "max_concurrent", "LAYA_MAX_CONCURRENT", _positive_int,
        "requests admitted at once, after their body is read; more get 503",
    ),
    Option(
        "inference_workers", "LAYA_INFERENCE_WORKERS", _positive_int,
        "inferences at once (more than one share the torch threads)",
    ),
    Option(
        "batch_window_ms", "LAYA_BATCH_WINDOW_MS", _milliseconds,
        "how long a single request waits for others arriving with it to share its forward "
        "passes; 0 turns the batcher off", metavar="MS",
    ),
    Option(
        "batch_tokens", "LAYA_BATCH_TOKENS", _positive_int,
        "tokens (at most, counted as UTF-8 bytes) of the requests answered together",
    ),
    Option(
        "idle_unload_seconds", "LAYA_IDLE_UNLOAD_SECONDS", _idle_seconds,
        "unload every checkpoint after this many seconds without a request (0: never); the "
        "next request loads again", metavar="SECONDS",
    ),
    Option(
        "request_timeout", "LAYA_REQUEST_TIMEOUT", _seconds,
        "seconds a request may take once admitted; then 504, and its work stops at the next pass",
        metavar="SECONDS",
    ),
    Option(
        "max_work_tokens", "LAYA_MAX_WORK_TOKENS", _positive_int,
        "tokens of work (its rows' tokens, counted by the tokenizer) one request may ask for; "
        "more get 413",
    ),
    Option(
        "body_read_timeout", "LAYA_BODY_READ_TIMEOUT", _seconds,
        "seconds to receive a whole body; then 408", metavar="SECONDS",
    ),
    Option(
        "header_timeout", "LAYA_HEADER_TIMEOUT", _seconds,
        "seconds to receive a request's headers; then the connection is closed", metavar="SECONDS",
    ),
    Option(
        "keep_alive_timeout", "LAYA_KEEP_ALIVE_TIMEOUT", _seconds,
        "seconds an idle keep-alive connection stays open", metavar="SECONDS",
    ),
    Option(
        "max_header_bytes", "LAYA_MAX_HEADER_BYTES", _positive_int,
        "bytes of request line and headers; more get 431 and the connection closes",
    ),
    Option(
        "max_connections", "LAYA_MAX_CONNECTIONS", _positive_int,
        "open connections; a request arriving beyond them gets 503",
    ),
    Option(
        "max_client_connections", "LAYA_MAX_CLIENT_CONNECTIONS", _positive_int,
        "open connections from one client address; more are refused at once with 503 (behind a "
        "proxy every client is the proxy: raise it to --max-connections)",
    ),
    Option(
        "allowed_hosts", "LAYA_ALLOWED_HOSTS", _hosts,
        "host names the Host header may carry, comma-separated (.example.com: a domain and its "
        "subdomains; *: any); IP addresses and loopback names always pass (default: loopback "
        "names only when bound to a loopback address, else any)", metavar="NAMES",
    ),
    Option(
        "slice_tokens", "LAYA_SLICE_TOKENS", _positive_int,
        "padded tokens per forward pass of a long request (tournament, shortlist, batch) while "
        "small requests are about, so they wait for little between its passes (default: as many "
        "as run in the time a small request takes, measured)",
    ),
    Option(
        "max_token_budget", "LAYA_MAX_TOKEN_BUDGET", _positive_int,
        "ceiling for a request's max_len and head_max_len",
    ),
    Option(
        "max_batch_tokens", "LAYA_MAX_BATCH_TOKENS", _positive_int,
        "padded tokens per forward pass (default: the backend's own)",
    ),
    Option("jev_strict", "LAYA_JEV_STRICT", _boolean, "answer in the strict Jev shape"),
    Option(
        "fast", "LAYA_FAST", _boolean,
        "every checkpoint with fast=True: the precision this machine runs fastest while keeping "
        "the decisions (int8 where the CPU has VNNI or AMX and the checkpoint's fidelity record "
        "allows it, else bf16 where the CPU multiplies it natively, else fp32); /health names it",
    ),
    Option(
        "precision", "LAYA_PRECISION", _precision,
        "what every checkpoint computes in: auto, fp32, bf16, fp16 or int8 (int8 needs a CPU "
        "with VNNI or AMX: elsewhere the server refuses to start); wins over --fast; /health "
        "names it",
    ),
    Option(
        "calibration", "LAYA_CALIBRATION", model_pairs,
        "a calibration file per checkpoint (laya calibrate): its temperatures, and its "
        "thresholds gate requests that give no min_confidence", metavar="NAME=PATH",
    ),
    Option(
        "tournament", "LAYA_TOURNAMENT", _tournament,
        "default for requests that send no tournament field: choices in groups of G options, "
        "auto (the largest groups that fit) or off (default: off)", metavar="G",
    ),
    Option(
        "tournament_group", "LAYA_TOURNAMENT_GROUP", _tournament_group,
        "the reference's name for --tournament G: a group size in 2-100, or 0 for off; "
        "LAYA_TOURNAMENT wins when both are set", flag=False,
    ),
    Option(
        "abstain", "LAYA_ABSTAIN", _boolean,
        'every choice question that does not say otherwise also scores "none of these" '
        "(abstain: true)",
    ),
)  # fmt: skip
_BY_NAME = {option.name: option for option in OPTIONS}
_PAIRS = ("models", "calibration")  # NAME=PATH options: one flag takes several
_DEFAULTS = {f.name: f.default for f in fields(Settings) if f.default is not MISSING}


def _default_text(option: Option) -> str:
    value = _DEFAULTS.get(option.name)
    if option.name in _PAIRS or value in (None, ""):
        return ""
    if isinstance(value, bool):
        value = "on" if value else "off"
    return f" (default: {value})"


def arg_parser() -> CommandParser:
    """The ``laya serve`` argument parser, drawn from :data:`OPTIONS`."""
    parser = CommandParser(
        prog="laya serve",
        description="Serve laya decisions over HTTP (the Jev-compatible POST /v1/systemone).",
        epilog="Every flag but --model, --ray and --replicas has a LAYA_* variable, named in its help "
        "(see docs/server.md); a flag wins over its variable. LAYA_API_KEY has no flag.",
    )
    for option in OPTIONS:
        if not option.flag:
            continue
        text = f"{option.help}{_default_text(option)}; {option.env}"
        if option.parse is _boolean:
            parser.add_argument(
                option.option, action=argparse.BooleanOptionalAction, default=None, help=text
            )
        elif option.name in _PAIRS:
            parser.add_argument(
                option.option, nargs="+", action="extend", metavar=option.metavar, help=text
            )
        else:
            parser.add_argument(option.option, metavar=option.metavar, help=text)
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="answer every request that names no model with this checkpoint, e.g. mini (the "
        "bundled offline model): --default-model NAME --route default; no variable",
    )
    parser.add_argument(
        "--ray",
        action="store_true",
        default=None,
        help="serve on Ray Serve (docs/scaling.md); no variable",
    )
    parser.add_argument(
        "--replicas", metavar="N", help="Ray Serve replicas, with --ray (default: 1); no variable"
    )
    return parser


def _parsed(name: str, where: str, raw: str | bool) -> object:
    try:
        return raw if isinstance(raw, bool) else _BY_NAME[name].parse(raw)
    except ValueError as exc:
        shown = where if _BY_NAME[name].secret else f"{where}={raw!r}"
        raise SettingsError(f"{shown}: {exc}") from None


def settings_from(argv: Sequence[str] = (), environ: Mapping[str, str] | None = None) -> Settings:
    """Settings from ``LAYA_*`` variables, overridden by ``laya serve`` flags; SettingsError if bad."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for option in OPTIONS:
        text = environ.get(option.env)
        if text and (text.strip() or not option.blank_unsets):
            values[option.name] = _parsed(option.name, option.env, text)
    flags = vars(arg_parser().parse_args(list(argv)))
    ray, replicas, model = flags.pop("ray"), flags.pop("replicas"), flags.pop("model")
    if replicas is not None and not ray:
        raise SettingsError(f"--replicas={replicas!r}: needs --ray")
    for name, raw in flags.items():
        if raw is not None:
            values[name] = _parsed(name, _BY_NAME[name].option, raw)
    if model is not None:  # --model NAME: the default model answers every unpinned request
        values.update(default_model=_text(model), route="default")
    if "models" in values:
        values["models"], values["preload_models"] = values["models"]
    if "tournament" in values:  # LAYA_TOURNAMENT (or --tournament), even off, wins
        values.pop("tournament_group", None)
    return Settings(**values)
