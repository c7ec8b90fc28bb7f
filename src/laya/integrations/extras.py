"""The one check every framework module makes first: its framework is installed, or one line
naming the extra that installs it (docs/integrations.md)."""

from __future__ import annotations

from ..errors import require_extra

__all__ = ["require"]


def require(module: str, extra: str, package: str) -> None:
    """Nothing when ``module`` is installed; else MissingExtra naming ``pip install 'laya[extra]'``."""
    require_extra(module, extra, package, f"laya.integrations.{extra}")
