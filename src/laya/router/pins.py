"""What a front end's ``model`` value pins: the one rule of the command line, ``laya batch``, the
server, MCP and Ray (docs/routing.md, "Pinning a checkpoint").

A value is a checkpoint name or alias (any case), ``auto`` or nothing (route), the published
bundle's Hub id (route among its checkpoints) or a standalone repo's (its name). Where the caller
runs on this machine (``local``: the command line, Ray's driver) it may also be a directory or a
Hub id, registered under a name made from it; a server refuses paths and routes a name it does
not know (a Jev client sends its own model names).

The default model is one rule too (docs/routing.md, "The default checkpoint"): the checkpoint a
Router sends a state whose language cannot be told, :func:`default_model` (``LAYA_DEFAULT_MODEL``,
else ``multilingual``, as in the published runtime; the name ``default`` is the published alias
of ``english``, not this). A request that names no model is routed by its language, never
quietly pinned to another checkpoint: the bundled ``mini`` answers only where it is named.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain, count
from pathlib import Path

from ..checkpoint import (
    ALIASES,
    BUNDLE_REPO,
    Source,
    canonical_name,
    check_path,
    looks_like_path,
    resolve_source,
    source_name,
)
from ..errors import InvalidRequest, UnknownName
from .names import STANDALONE_REPOS

__all__ = ["DEFAULT_MODEL", "Pin", "default_model", "pin", "routes"]

DEFAULT_MODEL = "multilingual"  # the published Router's default: it reads every language

_HUB_IDS = {repo.lower(): name for name, (repo, _) in STANDALONE_REPOS.items()}


@dataclass(frozen=True)
class Pin:
    """A checkpoint ``name`` to answer with (None: route), and the ``source`` to register under
    that name first when the table does not have it yet (a directory or Hub id)."""

    name: str | None
    source: Source | None = None


def default_model(environ: Mapping[str, str] | None = None) -> str:
    """Every front end's Router default (the checkpoint for a state whose language cannot be
    told): ``LAYA_DEFAULT_MODEL`` (``environ``, default the process's) when set, else
    :data:`DEFAULT_MODEL`."""
    value = (os.environ if environ is None else environ).get("LAYA_DEFAULT_MODEL", "")
    return value.strip() or DEFAULT_MODEL


def routes(value: str | None) -> bool:
    """Whether ``value`` asks to route rather than pin: nothing, ``auto`` or the bundle's Hub id."""
    text = (value or "").strip()
    return not text or canonical_name(text) == "auto" or text.lower() == BUNDLE_REPO


def pin(
    value: str | None,
    table: Mapping[str, Source | None],
    *,
    local: bool,
    where: str = "model",
) -> Pin:
    """What ``value`` pins against the checkpoint ``table`` (a Router's ``models``)."""
    text = (value or "").strip()
    if routes(text):
        return Pin(None)
    if text.lower() in _HUB_IDS:
        return Pin(_HUB_IDS[text.lower()])
    if canonical_name(text) in table and not looks_like_path(text):
        return Pin(canonical_name(text))  # a name, even beside a folder of that name
    if not local:
        if _foreign(text):
            return Pin(None)
        raise _unknown_model(table, text, where)
    return _registered(text, table, where)


def _foreign(text: str) -> bool:
    """A model name a client of another service sends, which a server routes: Jev's own
    (``jev-latest``, ``jev-1.13.0``...) and the ``model`` a published result carries."""
    from ..engine.decoding import MODEL_NAME  # here: importing the router stays light

    name = text.lower()
    return name == "jev" or name.startswith(("jev-", "jev_", MODEL_NAME))


def _registered(text: str, table: Mapping[str, Source | None], where: str) -> Pin:
    """A directory or Hub id, under the name it already has in ``table`` or a new one."""
    check_path(text, where)
    try:
        repo, subfolder = resolve_source(text)
    except InvalidRequest as exc:
        raise InvalidRequest(f"{where}: {exc}") from None
    path = Path(repo).expanduser()
    source = (str(path.resolve()), subfolder) if path.is_dir() else (repo, subfolder)
    known = next((name for name, have in table.items() if have == source), None)
    if known is not None:
        return Pin(known)
    base = source_name(source[0])
    taken = set(table) | set(ALIASES) | {"auto"}
    name = next(n for n in chain([base], (f"{base}-{i}" for i in count(2))) if n not in taken)
    return Pin(name, source)


def _unknown_model(table: Mapping[str, Source | None], text: str, where: str) -> UnknownName:
    """A name or path a server does not know: only the checkpoints it was started with answer."""
    names = sorted(table)
    aliases = sorted(alias for alias, name in ALIASES.items() if name in names)
    alias_text = f" (aliases: {', '.join(aliases)})" if aliases else ""
    close = difflib.get_close_matches(text.lower(), [*names, *aliases], n=1)
    guess = f" (did you mean {close[0]!r}?)" if close else ""
    return UnknownName(
        f"unknown {where} {text[:100]!r}{guess}; this server answers only with the checkpoints it "
        f"was started with: {', '.join(names)}{alias_text}; send one of those names, or omit "
        f"{where} to let the router choose",
        where,
    )
