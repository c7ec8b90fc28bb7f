"""``laya mcp``: decisions as Model Context Protocol tools, on the official ``mcp`` SDK
(docs/integrations.md). Importing this package does not import the SDK; its modules do, on first
use (``laya.mcp.server``, ``laya.mcp.tools``, ``laya.mcp.remote``, ``laya.mcp.device``)."""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

__all__ = ["device", "remote", "server", "tools"]


def __getattr__(name: str) -> ModuleType:
    """A module of this package, imported now."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return import_module(f"{__name__}.{name}")
