"""A Router's checkpoint table: which names exist, where each one loads from, and their rules.

The built-in names, their aliases and where they live are :mod:`laya.checkpoint`'s (``laya.load``
reads the same table); a Router adds the names registered on it. Every way a name comes in —
``models=``, ``register``, an attached runtime — goes through :meth:`Names.add`.
"""

from __future__ import annotations

import os
import re
import threading
import warnings
from collections.abc import Mapping
from typing import Any, overload

from ..checkpoint import (
    ALIASES,
    BUILTIN,
    HUB_ID,
    Source,
    canonical_name,
    looks_like_path,
    unknown_name,
)
from ..errors import InvalidRequest

__all__ = [
    "DEFAULT_MODELS",
    "STANDALONE_MODELS",
    "STANDALONE_REPOS",
    "Names",
    "display_source",
    "name_map",
    "normalise_name",
    "resolve_model_spec",
]

# With ``standalone_repos=True`` these names load from their own repos; others keep the bundle.
STANDALONE_REPOS: dict[str, Source] = {
    "multilingual": ("convaiinnovations/laya-multilingual", None),
    "typed-decisions": ("convaiinnovations/laya-typed-decisions", None),
}
# The published checkpoints, as the published runtime names them: (repo, subfolder) in the
# bundle, and each one's standalone repo (docs/routing.md).
PUBLISHED = ("english", "multilingual", "typed-decisions")
DEFAULT_MODELS: dict[str, Source] = {name: BUILTIN[name] for name in PUBLISHED}
STANDALONE_MODELS: dict[str, str] = {
    "english": BUILTIN["english"][0],
    **{name: repo for name, (repo, _) in STANDALONE_REPOS.items()},
}

_NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
REGISTER_FIRST = (
    "a directory or Hub id is registered under a name first: Router(models={name: source}) or "
    "router.register(name, source)"
)


@overload
def display_source(source: Source) -> str: ...


@overload
def display_source(source: None) -> None: ...


def display_source(source: Source | None) -> str | None:
    """``"repo/subfolder"`` for display, or the repo (or path) alone."""
    if source is None:
        return None
    repo, sub = source
    return f"{repo}/{sub}" if sub else repo


class Names:
    """Checkpoint name -> source (None: an attached runtime with nowhere to rebuild it from)."""

    def __init__(self, models: Mapping[str, object] | None, standalone_repos: bool) -> None:
        self._lock = threading.Lock()
        self.table: dict[str, Source | None] = {
            **BUILTIN,
            **(STANDALONE_REPOS if standalone_repos else {}),
        }
        for name, source in name_map("models", models):
            self.add(name, source)

    def resolve(self, name: object, field: str = "model") -> str:
        """The canonical name for ``name`` (an alias, any case); unknown -> InvalidRequest naming
        ``field`` and the names this Router knows (a directory is registered, not named here)."""
        key = canonical_name(name)
        if key in self.table:
            return key
        text = str(name)
        fix = REGISTER_FIRST if looks_like_path(text) or HUB_ID.match(text) else ""
        raise unknown_name(name, self.table, ALIASES, field, fix)

    def add(self, name: object, source: object, attached: bool = False) -> tuple[str, bool]:
        """Register or re-point ``name``; returns its key and whether its source changed.

        ``attached``: a built runtime with no source (``Router.attach``), so ``source`` is None.
        """
        key = canonical_name(name)
        if key not in BUILTIN:
            _check_new_name(name, key)
        normalised = None if attached else _as_source(key, source)
        with self._lock:
            changed = key in self.table and self.table[key] != normalised
            self.table = {**self.table, key: normalised}
        return key, changed

    def remove(self, name: object, default: str) -> str:
        """Unregister a name that is neither built in nor the Router's default."""
        key = self.resolve(name)
        if key in BUILTIN:
            raise InvalidRequest(f"{key!r} is a built-in checkpoint and cannot be unregistered")
        if key == default:
            raise InvalidRequest(
                f"{key!r} is this Router's default checkpoint; set another default before "
                "unregistering it"
            )
        with self._lock:
            self.table = {k: v for k, v in self.table.items() if k != key}
        return key


def normalise_name(name: object) -> str:
    """The canonical name of a published checkpoint (an alias, any case); anything else is an
    InvalidRequest naming the published names."""
    key = canonical_name(name)
    if key not in DEFAULT_MODELS:
        raise unknown_name(name, DEFAULT_MODELS, ALIASES)
    return key


def resolve_model_spec(name: object) -> Source | None:
    """``(repo, subfolder)`` of a published checkpoint name or alias, else None (never raises)."""
    return DEFAULT_MODELS.get(canonical_name(name))


def name_map(argument: str, value: object) -> list[tuple[str, Any]]:
    """The ``name -> value`` entries of a Router argument given as a mapping (or None)."""
    if value is not None and not isinstance(value, Mapping):
        raise TypeError(
            f"{argument} must be a mapping of name -> value, got {type(value).__name__}"
        )
    return list((value or {}).items())


def _as_source(name: str, source: object) -> Source:
    """Normalise a local path, Hub id or ``(repo, subfolder)`` pair; ``~`` is expanded."""
    if isinstance(source, str):
        source = (source, None)
    if (
        not isinstance(source, (tuple, list))
        or len(source) != 2
        or not isinstance(source[0], str)
        or not source[0].strip()
        or not isinstance(source[1], (str, type(None)))
    ):
        raise TypeError(
            f"checkpoint source for {name!r} must be a repo id, a local path or a "
            f"(repo, subfolder) pair, got {source!r}"
        )
    repo, sub = source
    return (os.path.expanduser(repo) if repo.startswith("~") else repo, sub or None)


def _check_new_name(name: object, key: str) -> None:
    """Rules for a name that is not built in; one edit from a built-in warns (a likely typo)."""
    if not isinstance(name, str) or not _NAME_PATTERN.match(key):
        raise InvalidRequest(
            f"invalid checkpoint name {name!r}: use lowercase letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    if key == "auto":
        raise InvalidRequest(
            f"invalid checkpoint name {name!r}: 'auto' means automatic routing in every "
            "model= argument"
        )
    near = next((b for b in BUILTIN if _edit_distance(key, b) == 1), None)
    if near is not None:
        warnings.warn(
            f"laya: checkpoint name {key!r} is one edit from the built-in {near!r}; it is "
            f"registered as a separate checkpoint and {near!r} is unchanged.",
            RuntimeWarning,
            stacklevel=5,
        )


def _edit_distance(a: str, b: str) -> int:
    """Optimal-string-alignment distance: insert, delete, substitute, swap neighbours cost 1."""
    before, prev = [0] * (len(b) + 1), list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], before[j - 2] + 1)
        before, prev = prev, row
    return prev[-1]
