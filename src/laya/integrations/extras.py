"""The one check every framework module makes first: its framework is installed, or one line
naming the extra that installs it (docs/integrations.md)."""

from __future__ import annotations

from importlib.util import find_spec

from ..errors import MissingExtra

__all__ = ["require"]


def require(module: str, extra: str, package: str) -> None:
    """Nothing when ``module`` is installed; else MissingExtra naming ``pip install 'laya[extra]'``
    (found without importing it: CrewAI alone takes seconds to import)."""
    try:
        found = find_spec(module) is not None
    except ImportError:  # its parent package is missing
        found = False
    if not found:
        raise MissingExtra(
            f"laya.integrations.{extra} needs {package}: pip install 'laya[{extra}]'"
        )
