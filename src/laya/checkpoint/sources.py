"""Which checkpoint a name means, and where it lies: the published and bundled names, paths and
Hub ids, and Hub downloads (through ``huggingface_hub``, into its cache; nothing is written into
a checkpoint directory)."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable
from pathlib import Path

from ..errors import (
    CheckpointUnavailable,
    InvalidRequest,
    UnknownName,
    one_line,
)
from .revisions import resolve_revision

BUNDLE_REPO = "convaiinnovations/laya"
BUNDLED: dict[str, Path] = {"mini": Path(__file__).resolve().parents[1] / "models" / "mini"}
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
# fidelity.json (optional, laya.checkpoint.fidelity): what int8 changes in the decisions
ARTIFACTS = (
    "rl_agent_config.json",
    "model.safetensors",
    "tokenizer/*",
    "encoder/*",
    "fidelity.json",
)
ENCODER_FILES = (
    "config.json",
)  # an encoder's config, when a checkpoint has no encoder/ of its own


HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
Source = tuple[str, str | None]


def canonical_name(name: object) -> str:
    """Trimmed, lower-cased name with aliases applied (never raises)."""
    key = str(name).strip().lower()
    return ALIASES.get(key, key)


def resolve_name(name: object) -> Source | None:
    """``(repo, subfolder)`` of a built-in name or alias, else None.

    Bundled names (``mini``) resolve to their directory inside the package: no download.
    """
    return BUILTIN.get(canonical_name(name))


def looks_like_path(text: str) -> bool:
    """Whether ``text`` is meant as a filesystem path rather than a name or a Hub id."""
    return os.path.isabs(text) or text.startswith((".", "~"))


def check_path(value: object, where: str) -> None:
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
    name: object,
    known: Iterable[str],
    aliases: Iterable[str] = (),
    field: str = "model",
    fix: str = "",
) -> UnknownName:
    """The one-line error for a checkpoint name that resolves nowhere: known names, closest match,
    and ``fix`` (what else the caller may give there) when there is more."""
    known, aliases = sorted(known), sorted(aliases)
    close = difflib.get_close_matches(canonical_name(name), known + aliases, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ";"
    alias_text = f" (aliases: {', '.join(aliases)})" if aliases else ""
    return UnknownName(
        f"unknown {field} {str(name)!r}{hint} known names are {', '.join(known)}"
        f"{alias_text}{'; ' + fix if fix else ''}",
        field,
    )


def resolve_source(model_id_or_path: object, subfolder: str | None = None) -> Source:
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
    model_id_or_path: str | os.PathLike[str],
    subfolder: str | None = None,
    token: str | None = None,
    revision: str | None = None,
    artifacts: tuple[str, ...] = ARTIFACTS,
    name: str | None = None,
) -> Path:
    """Return the local checkpoint directory: an existing path, or a Hub snapshot of its files.

    ``name`` is what the caller called it (``english``), for the message when it is unavailable;
    ``revision`` (else ``LAYA_REVISION``) pins a download (:func:`resolve_revision`).
    """
    text = os.fspath(model_id_or_path)
    root = Path(text).expanduser()
    if not root.is_dir():
        if looks_like_path(text) or root.exists():
            raise _missing_path(text)
        revision = resolve_revision(text, revision)
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
        revision = resolve_revision(repo, revision)
        root = _snapshot(repo, subfolder, ARTIFACTS, revision, local_files_only=True)
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

    token = token or os.environ.get("HF_TOKEN")
    try:
        return _snapshot(repo, subfolder, artifacts, revision, token=token)
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


def _snapshot(
    repo: str,
    subfolder: str | None,
    artifacts: tuple[str, ...],
    revision: str | None,
    *,
    token: str | None = None,
    local_files_only: bool = False,
) -> Path:
    """The Hub snapshot of a checkpoint's files (``artifacts`` under ``subfolder``) at
    ``revision``; with ``local_files_only``, from the cache alone."""
    from huggingface_hub import snapshot_download

    prefix = f"{subfolder.strip('/')}/" if subfolder else ""
    patterns = [prefix + pattern for pattern in artifacts]
    return Path(
        snapshot_download(
            repo,
            allow_patterns=patterns,
            revision=revision,
            token=token,
            local_files_only=local_files_only,
        )
    )


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
