"""Find, download and read a checkpoint directory in the published Laya format.

A checkpoint is ``rl_agent_config.json`` + ``model.safetensors`` + ``encoder/`` + ``tokenizer/``.
This module knows the published names, fetches from the Hub through ``huggingface_hub``,
parses the config with its strict checks, and loads the tokenizer (one per directory per
process). It never writes into the checkpoint directory.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import os
import re
import threading
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import (
    CheckpointError,
    CheckpointUnavailable,
    InvalidRequest,
    MissingCheckpointFile,
    one_line,
)

__all__ = [
    "ALIASES",
    "BUILTIN",
    "BUNDLED",
    "BUNDLE_REPO",
    "CheckpointConfig",
    "cached_checkpoint",
    "Tokenizer",
    "canonical_name",
    "encoder_files",
    "encoder_positions",
    "file_sha256",
    "load_tokenizer",
    "read_json_object",
    "locate",
    "looks_like_path",
    "source_name",
    "read_config",
    "resolve_name",
    "resolve_source",
    "snapshot_revision",
    "unknown_name",
    "verify_sha256",
]

BUNDLE_REPO = "convaiinnovations/laya"
BUNDLED: dict[str, Path] = {"mini": Path(__file__).resolve().parent / "models" / "mini"}
BUILTIN: dict[str, tuple[str, str | None]] = {
    "english": (BUNDLE_REPO, None),
    "multilingual": (BUNDLE_REPO, "multilingual"),
    "typed-decisions": (BUNDLE_REPO, "typed-decisions"),
    **{name: (str(path), None) for name, path in BUNDLED.items()},
}
ALIASES = {
    "en": "english",
    "laya": "english",
    "default": "english",
    "multi": "multilingual",
    "ml": "multilingual",
    "laya-multilingual": "multilingual",
    "typed": "typed-decisions",
    "typed_decisions": "typed-decisions",
    "laya-typed-decisions": "typed-decisions",
    "decisions": "typed-decisions",
}
ARTIFACTS = ("rl_agent_config.json", "model.safetensors", "tokenizer/*", "encoder/*")
TOKENIZER_CONFIGS = ("special_tokens_map.json", "tokenizer_config.json")  # later ones win
TOKENIZER_FILES = ("tokenizer.json", *TOKENIZER_CONFIGS)  # an encoder's, when a checkpoint
ENCODER_FILES = ("config.json",)  # has no tokenizer/ or encoder/ of its own
TEMPERATURE_RANGE = (0.5, 5.0)


HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
Source = tuple[str, str | None]


def canonical_name(name: Any) -> str:
    """Trimmed, lower-cased name with aliases applied (never raises)."""
    key = str(name).strip().lower()
    return ALIASES.get(key, key)


def resolve_name(name: Any) -> Source | None:
    """``(repo, subfolder)`` of a built-in name or alias, else None.

    Bundled names (``mini``) resolve to their directory inside the package: no download.
    """
    return BUILTIN.get(canonical_name(name))


def looks_like_path(text: str) -> bool:
    """Whether ``text`` is meant as a filesystem path rather than a name or a Hub id."""
    return os.path.isabs(text) or text.startswith((".", "~"))


def check_path(value: Any, where: str) -> None:
    """A checkpoint written as a path (absolute, ``./``, ``~``) must be an existing directory:
    otherwise the caller mistyped it, an :class:`InvalidRequest` naming ``where``."""
    text = os.fspath(value) if isinstance(value, str | os.PathLike) else ""
    if looks_like_path(text) and not Path(text).expanduser().is_dir():
        raise InvalidRequest(f"{where}: no checkpoint directory at {text!r}")


def source_name(repo: str) -> str:
    """A checkpoint name made from where it lives: a directory's own name or a Hub id's last
    part, lowercased to the name rules (``runs/Mini FT`` -> ``mini-ft``; nothing left: ``local``)."""
    path = Path(repo).expanduser()
    stem = path.name if path.is_dir() else repo.rsplit("/", 1)[-1]
    return re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).strip("-._") or "local"


def unknown_name(
    name: Any,
    known: Iterable[str],
    aliases: Iterable[str] = (),
    field: str = "model",
    fix: str = "",
) -> InvalidRequest:
    """The one-line error for a checkpoint name that resolves nowhere: known names, closest match,
    and ``fix`` (what else the caller may give there) when there is more."""
    known, aliases = sorted(known), sorted(aliases)
    close = difflib.get_close_matches(canonical_name(name), known + aliases, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ";"
    alias_text = f" (aliases: {', '.join(aliases)})" if aliases else ""
    return InvalidRequest(
        f"unknown {field} {str(name)!r}{hint} known names are {', '.join(known)}"
        f"{alias_text}{'; ' + fix if fix else ''}"
    )


def resolve_source(model_id_or_path: Any, subfolder: str | None = None) -> Source:
    """Where a checkpoint lives, from what a caller names it: ``(repo or directory, subfolder)``.

    A published or bundled name or alias (``english``, ``ml``, ``mini``...) means that checkpoint,
    even beside a folder of the same name (write ``./mini`` for the folder); then an existing
    directory; then a Hub id ``owner/name``. A path that does not exist raises
    :class:`CheckpointUnavailable`; a bare word that is none of these raises
    :class:`InvalidRequest` naming the known names and the closest one.
    """
    text = os.fspath(model_id_or_path) if isinstance(model_id_or_path, str | os.PathLike) else None
    if not isinstance(text, str) or not text.strip():
        raise InvalidRequest(
            f"a checkpoint must be a name, a directory or a Hub id, got {model_id_or_path!r}"
        )
    if subfolder is not None and not isinstance(subfolder, str):
        raise InvalidRequest(
            f"subfolder must be a folder name inside the checkpoint, got {subfolder!r}"
        )
    subfolder = subfolder or None
    builtin = None if looks_like_path(text) else resolve_name(text)
    if builtin is None and Path(text).expanduser().is_dir():
        return text, subfolder
    if builtin is not None and subfolder is not None:
        raise InvalidRequest(
            f"subfolder={subfolder!r} goes with a directory or a Hub id, and {text!r} is a "
            f"built-in name that already picks its checkpoint ({'/'.join(map(str, filter(None, builtin)))}); "
            "drop subfolder, or name the directory or repo it is a folder of"
        )
    if builtin is not None:
        return builtin
    if looks_like_path(text):
        raise _missing_path(text)
    if HUB_ID.match(text.strip()):
        return text.strip(), subfolder
    raise unknown_name(
        text, BUILTIN, ALIASES, fix="or give a checkpoint directory or a Hub id such as owner/name"
    )


def locate(
    model_id_or_path: str | os.PathLike,
    subfolder: str | None = None,
    token: str | None = None,
    revision: str | None = None,
    artifacts: tuple[str, ...] = ARTIFACTS,
    name: str | None = None,
) -> Path:
    """Return the local checkpoint directory: an existing path, or a Hub snapshot of its files.

    ``name`` is what the caller called it (``english``), for the message when it is unavailable.
    """
    text = os.fspath(model_id_or_path)
    root = Path(text).expanduser()
    if not root.is_dir():
        if looks_like_path(text) or root.exists():
            raise _missing_path(text)
        root = _download(text, subfolder, token, revision, artifacts, name or text)
    if subfolder and not (root / subfolder).is_dir():
        raise CheckpointUnavailable(f"subfolder {subfolder!r} not found in {text!r} ({root})")
    return root / subfolder if subfolder else root


def cached_checkpoint(
    repo: str, subfolder: str | None = None, revision: str | None = None
) -> Path | None:
    """The checkpoint's directory in the local Hugging Face cache, complete, or None.

    Never touches the network (``local_files_only``): this is how a server tells, before it
    builds anything, whether answering a request would start a download.
    """
    try:
        root = _snapshot(repo, subfolder, ARTIFACTS, revision=revision, local_files_only=True)
    except Exception:  # noqa: BLE001 - not cached, or not a repo id at all: either way, not here
        return None
    directory = root / subfolder if subfolder else root
    needed = ("rl_agent_config.json", "model.safetensors", "encoder/config.json")
    return directory if all((directory / name).is_file() for name in needed) else None


def _missing_path(text: str) -> CheckpointUnavailable:
    return CheckpointUnavailable(
        f"Local model path not found: {text!r}. Check that the directory exists and that "
        "training saved the model there."
    )


def _download(
    repo: str,
    subfolder: str | None,
    token: str | None,
    revision: str | None,
    artifacts: tuple[str, ...],
    name: str,
) -> Path:
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        return _snapshot(
            repo, subfolder, artifacts, token=token or os.environ.get("HF_TOKEN"), revision=revision
        )
    except LocalEntryNotFoundError as exc:
        source = f"{repo}/{subfolder}" if subfolder else repo
        reason = _not_cached(name, exc)
        message = f"cannot load checkpoint {name!r} ({source}): {reason}"
        raise CheckpointUnavailable(message, reason) from None
    except HfHubHTTPError as exc:
        reason = one_line(exc)[:200]
        raise CheckpointUnavailable(
            f"the Hugging Face Hub refused checkpoint {name!r} ({repo}): {reason}. Check the repo "
            "id and your token (token= or HF_TOKEN), or use a local checkpoint directory"
        ) from None


def _snapshot(repo: str, subfolder: str | None, artifacts: tuple[str, ...], **options: Any) -> Path:
    """The Hub snapshot of a checkpoint's files (``artifacts`` under ``subfolder``)."""
    from huggingface_hub import snapshot_download

    prefix = f"{subfolder.strip('/')}/" if subfolder else ""
    patterns = [prefix + pattern for pattern in artifacts]
    return Path(snapshot_download(repo, allow_patterns=patterns, **options))


def _not_cached(name: str, exc: BaseException) -> str:
    """Why a checkpoint cannot be fetched, and every way out."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        why = "HF_HUB_OFFLINE is set"
    else:
        cause = exc.__cause__ or exc.__context__
        why = f"the Hub cannot be reached ({type(cause).__name__})" if cause else "no network"
    parent = Path(name).parent
    typo = HUB_ID.match(name) and parent.is_dir() and str(parent) != "."
    local = f" (and there is no local directory {name!r})" if typo else ""
    mini = (
        "the bundled offline model 'mini' (laya.load('mini'); --model mini on the command line), "
        if BUNDLED["mini"].is_dir()
        else ""
    )
    return (
        f"it is not in the Hugging Face cache ({constants.HF_HUB_CACHE}) and cannot be "
        f"downloaded now: {why}{local}. Use {mini}a local checkpoint directory (laya.load(PATH); "
        "--model PATH), or download it once while online (unset HF_HUB_OFFLINE; set "
        "HF_HUB_CACHE or HF_HOME if the cache lives elsewhere)"
    )


# --------------------------------------------------------------------------- config


@dataclass
class CheckpointConfig:
    """The parts of ``rl_agent_config.json`` the runtime uses, with temperatures clamped."""

    raw: dict[str, Any]
    head_layers: int
    n_act: int
    max_len: int
    head_max_len: int
    temperature: tuple[float, float, float]
    temperature_by_options: dict[str, float]
    amp_dtype: str
    replaced: list[str] = field(default_factory=list)


def read_json_object(path: Path, missing_ok: bool = False) -> dict[str, Any]:
    """A checkpoint's JSON file, which must hold an object; a bad one raises naming the file."""
    if missing_ok and not path.is_file():
        return {}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise CheckpointError(f"{path} must hold a JSON object, got {type(raw).__name__}")
    return raw


def read_config(directory: Path, model_id: str) -> CheckpointConfig:
    """Parse and check ``rl_agent_config.json`` (missing file or keys raise, naming the file)."""
    path = directory / "rl_agent_config.json"
    if not path.is_file():
        raise MissingCheckpointFile(
            f"Incompatible model: {model_id!r} does not contain 'rl_agent_config.json' (looked in "
            f"{directory}). A Laya checkpoint has rl_agent_config.json, model.safetensors, "
            f"encoder/ and tokenizer/."
        )
    raw = read_json_object(path)
    missing = [key for key in ("encoder", "head_layers") if key not in raw]
    if missing:
        raise CheckpointError(
            f"Incompatible model config for {model_id!r}: missing configuration keys {missing} "
            f"in {path}"
        )
    layout = raw.get("option_layout", "sequential")
    if layout not in ("sequential", "parallel"):
        raise CheckpointError(
            f"{path}: option_layout must be one of sequential, parallel, got {layout!r}"
        )
    if layout != "sequential":
        raise CheckpointError(
            f"{path}: option_layout={layout!r} is not supported by laya yet (neither the "
            "PyTorch Agent nor the ONNX runtime); only the sequential layout, which every "
            "published checkpoint uses, runs"
        )
    replaced: list[str] = []
    return CheckpointConfig(
        raw=raw,
        head_layers=int(raw.get("head_layers", 2)),
        n_act=len(raw.get("act_costs") or {}) + 1,
        max_len=int(raw.get("max_len", 512)),
        head_max_len=int(raw.get("head_max_len", 192)),
        temperature=_temperature_list(raw.get("temperature", [1.0, 1.0, 1.0]), model_id, replaced),
        temperature_by_options=_temperature_map(raw.get("temperature_by_options"), replaced),
        amp_dtype=str(raw.get("amp_dtype", "fp16")),
        replaced=replaced,
    )


def encoder_positions(directory: Path) -> int | None:
    """How many token positions the encoder can embed (``max_position_embeddings``), if stated."""
    path = directory / "encoder" / "config.json"
    try:
        value = json.loads(path.read_text(encoding="utf-8")).get("max_position_embeddings")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def verify_sha256(path: Path, expected: str | None) -> None:
    """Refuse a weights file whose SHA-256 is not ``expected`` (None: no check), before reading it."""
    if expected is None:
        return
    want = str(expected).strip().lower()
    if not re.fullmatch(r"[0-9a-f]{64}", want):
        raise InvalidRequest(
            f"expected_sha256 must be 64 hexadecimal digits (the SHA-256 of {path.name}), "
            f"got {expected!r}"
        )
    found = file_sha256(path)
    if found != want:
        raise CheckpointError(
            f"{path} has SHA-256 {found}, not the expected {want}; the file is "
            "corrupt or another version: download it again or pin the right revision"
        )


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, as 64 hexadecimal digits."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def snapshot_revision(directory: Path) -> str | None:
    """The Hub commit a directory was downloaded at (``.../snapshots/<commit>/...``), else None."""
    for folder in (directory, *directory.parents):
        if folder.parent.name == "snapshots":
            return folder.name
    return None


def clamp_temperature(value: Any) -> float:
    """A usable temperature: invalid or non-finite -> 1.0, else clamped to [0.5, 5]."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 1.0
    if isinstance(value, bool) or not math.isfinite(number):
        return 1.0
    low, high = TEMPERATURE_RANGE
    return min(high, max(low, number))


def _clamped(name: str, value: Any, replaced: list[str]) -> float:
    result = clamp_temperature(value)
    if not (isinstance(value, (int, float)) and not isinstance(value, bool) and value == result):
        replaced.append(f"{name}={value!r} -> {result:g}")
    return result


def _temperature_list(value: Any, model_id: str, replaced: list[str]) -> tuple[float, ...]:
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise CheckpointError(
            f"Incompatible model: {model_id} temperature must be a list of 3 floats "
            f"[choice, score, noul], got {value!r}"
        )
    return tuple(_clamped(f"temperature[{i}]", v, replaced) for i, v in enumerate(value))


def _temperature_map(value: Any, replaced: list[str]) -> dict[str, float]:
    if not value:
        return {}
    if not isinstance(value, dict):
        raise CheckpointError(
            f"temperature_by_options must be a mapping of bucket -> float, got "
            f"{type(value).__name__}"
        )
    return {str(k): _clamped(str(k), v, replaced) for k, v in value.items()}


def warn_replaced_temperatures(replaced: list[str]) -> None:
    """One warning listing every temperature the checkpoint ships outside the usable range."""
    if replaced:
        warnings.warn(
            "laya: this checkpoint ships invalid temperatures or values outside [0.5, 5]; using "
            + ", ".join(replaced)
            + ". Treat confidence from the affected entries as uncalibrated.",
            RuntimeWarning,
            stacklevel=3,
        )


# --------------------------------------------------------------------------- tokenizer


SEQUENTIAL_TEXTS = 32


@dataclass(frozen=True)
class Tokenizer:
    """A parsed fast tokenizer plus the special ids the token layout needs."""

    backend: Any
    cls_id: int
    sep_id: int
    mask_id: int
    pad_id: int
    mask_token: str

    def encode(self, texts: list[str]) -> list[list[int]]:
        """Token ids of each text, no special tokens added.

        A few texts (one call's questions and states) are encoded in the calling thread: handing
        them to the library's thread pool costs more than it saves, and on a busy CPU waiting for
        its threads to be scheduled can take milliseconds.
        """
        if len(texts) <= SEQUENTIAL_TEXTS:
            return [self.backend.encode(t, add_special_tokens=False).ids for t in texts]
        return [e.ids for e in self.backend.encode_batch(texts, add_special_tokens=False)]

    def decode(self, ids: list[int]) -> str:
        """Text of token ids, special tokens kept (how window texts are made)."""
        return self.backend.decode(ids, skip_special_tokens=False)


_tokenizers: dict[tuple[str, float], Tokenizer] = {}
_tokenizers_lock = threading.Lock()


def load_tokenizer(directory: Path, encoder_id: str | None) -> Tokenizer:
    """The tokenizer of a checkpoint, parsed once per directory (and file version) per process.

    Reads ``tokenizer.json`` with the ``tokenizers`` library directly, so configs written by
    transformers 4 or 5 both load and nothing in the checkpoint directory is rewritten.
    """
    tok_dir = directory / "tokenizer"
    if not (tok_dir / "tokenizer.json").is_file():
        tok_dir = encoder_files(directory, "tokenizer", encoder_id, TOKENIZER_FILES)
    stamp = (tok_dir / "tokenizer.json").stat().st_mtime
    key = (str(tok_dir.resolve()), stamp)
    with _tokenizers_lock:
        tokenizer = _tokenizers.get(key)
        if tokenizer is None:
            tokenizer = _tokenizers[key] = parse_tokenizer(tok_dir)
    return tokenizer


def encoder_files(
    directory: Path, folder: str, encoder_id: Any, artifacts: tuple[str, ...]
) -> Path:
    """A checkpoint without its own ``folder`` (``encoder``, ``tokenizer``) uses its encoder's
    files from the Hub or its cache, as the published runtime does; a failure names both."""
    what = f"{directory} has no {folder}/ of its own"
    if not isinstance(encoder_id, str) or not encoder_id.strip():
        raise CheckpointError(
            f"{what}, and its config names no 'encoder' to fetch one from; copy the {folder} "
            f"files into {directory / folder}"
        )
    try:
        return locate(encoder_id, artifacts=artifacts)
    except CheckpointUnavailable as exc:
        reason = f"{what}, so it needs its encoder's ({encoder_id!r}): {exc.reason}"
        raise CheckpointUnavailable(reason, reason, exc.retry_after) from None


def _special(config: dict[str, Any], name: str, default: str) -> str:
    value = config.get(name) or default
    return value.get("content", default) if isinstance(value, dict) else str(value)


def parse_tokenizer(tok_dir: Path) -> Tokenizer:
    """The tokenizer in ``tok_dir`` (``tokenizer.json`` plus its special-token configs), uncached."""
    from tokenizers import Tokenizer as Backend

    path = tok_dir / "tokenizer.json"
    try:
        backend = Backend.from_file(str(path))
    except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception for a bad file
        raise CheckpointError(f"{path} is not a tokenizer file: {one_line(exc)}") from None
    backend.no_truncation()
    backend.no_padding()
    config: dict[str, Any] = {}
    for name in TOKENIZER_CONFIGS:
        config.update(read_json_object(tok_dir / name, missing_ok=True))
    ids, tokens = {}, {}
    for name in ("cls", "sep", "mask", "pad"):
        token = tokens[name] = _special(config, f"{name}_token", f"[{name.upper()}]")
        ids[name] = backend.token_to_id(token)
        if ids[name] is None:
            raise CheckpointError(
                f"{tok_dir}: the {name} token {token!r} is not in tokenizer.json; a Laya checkpoint "
                f"needs cls, sep, mask and pad tokens"
            )
    return Tokenizer(backend, ids["cls"], ids["sep"], ids["mask"], ids["pad"], tokens["mask"])
