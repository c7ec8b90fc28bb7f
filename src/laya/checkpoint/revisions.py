"""Which commit of a Hub checkpoint to download, and which file digests to hold it to.

``revision`` pins a download: a commit (or branch or tag), or ``"reviewed"`` for the commit this
package pins for a published repo (:data:`PINNED_REVISIONS`); without one, ``LAYA_REVISION``
applies. ``expected_sha256`` holds the files to their SHA-256 before anything is parsed, in two
forms: a string, the digest of the weights file (laya's), or a mapping ``{relative path: digest}``
(the published runtime's; ``LAYA_SHA256_DIGESTS`` holds one as JSON). See docs/agent.md and
docs/migrating.md; this is also the published runtime's ``laya.revisions`` path.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from ..errors import CheckpointError, InvalidRequest, MissingCheckpointFile
from .config import file_sha256, snapshot_revision

__all__ = [
    "DIGESTS_ENV",
    "PINNED_REVISIONS",
    "REVIEWED",
    "REVISION_ENV",
    "digests_from_env",
    "resolve_revision",
    "router_digests_from_env",
    "snapshot_revision",
    "split_digests",
    "verify_digests",
]

REVIEWED = "reviewed"
REVISION_ENV = "LAYA_REVISION"
DIGESTS_ENV = "LAYA_SHA256_DIGESTS"
ONNX_KEYS = ("onnx", "onnx_path")
# The commits the published runtime pins for ``revision="reviewed"``. Its table names a third
# repo (laya-typed-decisions) whose commit the reference notes do not give, so it is not here.
PINNED_REVISIONS: dict[str, str] = {
    "convaiinnovations/laya": "55cf4c4ebb4ebe31b2550e8bdf3bd21b99753851",
    "convaiinnovations/laya-multilingual": "e4e9ddf21a7b1903b7acffd8814ad4307bf63a67",
}
_HEX = re.compile(r"[0-9a-f]{64}")


def resolve_revision(model_id_or_path: str, revision: str | None = None) -> str | None:
    """The revision to download ``model_id_or_path`` at: ``revision``, else ``LAYA_REVISION``,
    else None (the repo's main branch); ``"reviewed"`` means the commit pinned for the repo."""
    value = revision if revision is not None else os.environ.get(REVISION_ENV, "").strip() or None
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidRequest(f"revision must be a commit, branch or tag, got {value!r}")
    if value.strip().lower() != REVIEWED:
        return value.strip()
    pinned = PINNED_REVISIONS.get(str(model_id_or_path))
    if pinned is None:
        raise InvalidRequest(
            f"revision='reviewed' pins only {', '.join(sorted(PINNED_REVISIONS))}; "
            f"{model_id_or_path!r} has no reviewed commit: pass its commit as revision="
        )
    return pinned


def split_digests(expected: object) -> tuple[str | None, dict[str, str] | None]:
    """``expected_sha256`` as ``(digest of the weights file, {relative path: digest})``: a
    string is the first form, a mapping the second, None either way (then the flat map of
    ``LAYA_SHA256_DIGESTS``, if it holds one)."""
    if expected is None:
        return None, digests_from_env()
    if isinstance(expected, str):
        return expected, None
    if isinstance(expected, Mapping):
        return None, _checked_map(expected, "expected_sha256")
    raise InvalidRequest(
        f"expected_sha256 must be the weights file's SHA-256 (a string) or a mapping of "
        f"relative path -> SHA-256, got {type(expected).__name__}"
    )


def digests_from_env() -> dict[str, str] | None:
    """The flat ``{relative path: digest}`` map of ``LAYA_SHA256_DIGESTS``; None when unset,
    or when it holds the Router's per-checkpoint form ``{name: {path: digest}}``."""
    parsed = _env_json()
    if not parsed or any(isinstance(v, Mapping) for v in parsed.values()):
        return None
    return _checked_map(parsed, DIGESTS_ENV)


def router_digests_from_env() -> dict[str, dict[str, str]]:
    """The per-checkpoint form of ``LAYA_SHA256_DIGESTS`` (``{name: {path: digest}}``), as a
    Router reads it; {} when unset or flat. Mixing the two forms is refused."""
    parsed = _env_json()
    if not parsed:
        return {}
    nested = [isinstance(v, Mapping) for v in parsed.values()]
    if not any(nested):
        return {}
    if not all(nested):
        raise InvalidRequest(
            f"{DIGESTS_ENV} mixes the two forms: give {{path: digest}} for every checkpoint, or "
            "{checkpoint name: {path: digest}}"
        )
    return {
        str(name): _checked_map(files, f"{DIGESTS_ENV}[{name!r}]") for name, files in parsed.items()
    }


def _env_json() -> dict[str, Any] | None:
    text = os.environ.get(DIGESTS_ENV, "").strip()
    if not text:
        return None
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidRequest(f"{DIGESTS_ENV} is not JSON ({exc}); unset it or fix it") from None
    if not isinstance(parsed, dict):
        raise InvalidRequest(f"{DIGESTS_ENV} must hold a JSON object, got {type(parsed).__name__}")
    return parsed


def _checked_map(expected: Mapping[Any, Any], where: str) -> dict[str, str]:
    checked = {}
    for name, digest in expected.items():
        if not isinstance(name, str) or not name.strip():
            raise InvalidRequest(f"{where}: a key must be a file's relative path, got {name!r}")
        if not isinstance(digest, str) or not _HEX.fullmatch(digest.strip().lower()):
            raise InvalidRequest(
                f"{where}[{name!r}] must be 64 hexadecimal digits (a SHA-256), got {digest!r}"
            )
        checked[name] = digest.strip().lower()
    return checked


def verify_digests(
    model_dir: str | os.PathLike[str],
    expected: Mapping[str, str] | None = None,
    onnx_path: str | os.PathLike[str] | None = None,
) -> None:
    """Hold each listed file of a checkpoint to its SHA-256 before anything reads it.

    Keys are paths relative to ``model_dir`` (``model.safetensors``,
    ``tokenizer/tokenizer.json``...); ``onnx`` or ``onnx_path`` names the ONNX graph at
    ``onnx_path``. A key outside the directory is an InvalidRequest, a missing file a
    :class:`~laya.errors.MissingCheckpointFile`, a different digest a CheckpointError.
    """
    if not expected:
        return
    root = Path(model_dir)
    for name, digest in _checked_map(expected, "expected_sha256").items():
        path = _graph(root, onnx_path) if name in ONNX_KEYS else _inside(root, name)
        if not path.is_file():
            raise MissingCheckpointFile(
                f"expected_sha256 lists {name!r}, but {path} does not exist; check the name"
            )
        found = file_sha256(path)
        if found != digest:
            raise CheckpointError(
                f"laya: SHA-256 mismatch for {name} ({path}): found {found}, expected {digest}; "
                "the file is corrupt or another version: download it again or pin the revision"
            )


def _inside(root: Path, name: str) -> Path:
    """``root / name`` for a relative path that stays inside ``root``."""
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if PureWindowsPath(name).is_absolute() or name.startswith("/") or ".." in parts:
        raise InvalidRequest(
            f"expected_sha256 key {name!r} must be a path inside the checkpoint directory "
            "(relative, without '..')"
        )
    return root.joinpath(*parts)


def _graph(root: Path, onnx_path: str | os.PathLike[str] | None) -> Path:
    if onnx_path is None:
        raise InvalidRequest(
            "expected_sha256 names the ONNX graph ('onnx'), which only an ONNXAgent reads"
        )
    path = Path(onnx_path).expanduser()
    return path if path.is_absolute() else root / path
