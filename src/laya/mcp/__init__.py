"""``laya mcp``: decisions as Model Context Protocol tools, on the official ``mcp`` SDK
(docs/integrations.md). Importing this package does not import the SDK; its modules do, on
first use (``laya.mcp.tools``, as the published package lists them)."""

from importlib import import_module
from types import ModuleType

__all__ = ["device", "remote", "server", "tools"]


def __getattr__(name: str) -> ModuleType:
    """A submodule, imported the first time it is named."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return import_module(f"{__name__}.{name}")
