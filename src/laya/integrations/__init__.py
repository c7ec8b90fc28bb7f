"""Adapters for agent frameworks (docs/integrations.md): ``langchain`` (LangChain / LangGraph),
``llamaindex``, ``crewai``, ``agno`` and the framework-neutral ``tools`` (``LayaToolSelector``).

Each name here is imported from its module on first use, so only the framework it needs is
imported; a framework that is not installed is one ``MissingExtra`` line naming the extra.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_HOMES = {
    "LayaDecision": "langchain",
    "LayaEvaluator": "langchain",
    "LayaGuardrail": "langchain",
    "LayaRouter": "langchain",
    "LayaTriage": "langchain",
    "LayaMultiSelector": "llamaindex",
    "LayaQueryRouter": "llamaindex",
    "LayaSingleSelector": "llamaindex",
    "CrewRouteDecision": "crewai",
    "LayaCrewRouter": "crewai",
    "LayaTaskGuard": "crewai",
    "LayaTaskGuardError": "crewai",
    "AgnoRouteDecision": "agno",
    "LayaAgnoGuardrail": "agno",
    "LayaAgnoGuardrailError": "agno",
    "LayaAgnoRouter": "agno",
    "LayaToolSelector": "tool_selector",
    "ToolRouteDecision": "tool_selector",
}
_ERRORS = ("LayaGuardrailError", "LayaLowConfidenceError")

__all__ = sorted([*_HOMES, *_ERRORS])


def __getattr__(name: str) -> Any:
    """A class from the module of its framework, imported now."""
    if name in _ERRORS:
        return getattr(import_module("laya.errors"), name)
    if name not in _HOMES:
        raise AttributeError(f"module 'laya.integrations' has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
