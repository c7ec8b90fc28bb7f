"""``LayaToolSelector``: which tool should handle a request, for any framework (docs/integrations.md).

The tools may be Python functions, LangChain / CrewAI / LlamaIndex tools or JSON-schema tool specs
(``{"name", "description"}``, or OpenAI's ``{"type": "function", "function": {...}}``); their
names and descriptions become one choice question. Imported as ``laya.integrations.tools``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidRequest, LayaLowConfidenceError
from .choosing import Pick, Picker, check_threshold
from .extras import require
from .runners import published_controls, runner_for

__all__ = ["LayaLowConfidenceError", "LayaToolSelector", "ToolRouteDecision"]

DIRECT_ANSWER = "direct_answer"


@dataclass
class ToolRouteDecision:
    """The tool picked (``None`` for a direct answer), how sure, and why."""

    tool: Any
    tool_name: str
    tool_index: int
    confidence: float
    probabilities: dict[str, float]
    reason: str
    is_direct_answer: bool
    is_fallback: bool
    raw_decision: dict[str, Any]


def describe(tool: Any, where: str) -> tuple[str, str]:
    """A tool's (name, description), whatever framework it comes from."""
    if isinstance(tool, dict):
        spec = tool.get("function", tool) if tool.get("type") == "function" else tool
        name, description = spec.get("name"), spec.get("description", "")
    elif hasattr(tool, "metadata") and hasattr(tool.metadata, "description"):
        name, description = tool.metadata.name, tool.metadata.description
    elif isinstance(getattr(tool, "name", None), str):
        name, description = tool.name, getattr(tool, "description", "")
    elif callable(tool):
        name, description = getattr(tool, "__name__", None), inspect.getdoc(tool) or ""
    else:
        raise InvalidRequest(
            f"{where}: a {type(tool).__name__} is not a tool; give a function, a LangChain, "
            "CrewAI or LlamaIndex tool, or a {'name', 'description'} spec"
        )
    if not isinstance(name, str) or not name:
        raise InvalidRequest(f"{where}: the tool has no name; give it one")
    return name, str(description or name).strip().split("\n\n")[0]


def run_tool(tool: Any, state: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Call ``tool`` its framework's way, on ``args`` / ``kwargs`` or else on the state."""
    if isinstance(tool, dict):
        raise InvalidRequest(
            "a JSON-schema tool spec cannot be called here: call the tool it names"
        )
    if not args and not kwargs:
        args = (state,)
    if hasattr(tool, "metadata") and hasattr(tool, "call"):  # LlamaIndex
        return tool.call(*args, **kwargs)
    if hasattr(tool, "invoke"):  # LangChain
        return tool.invoke(kwargs or args[0])
    if hasattr(tool, "run"):  # CrewAI
        return tool.run(*args, **kwargs)
    return tool(*args, **kwargs)


class LayaToolSelector:
    """Picks the tool for a request; ``call`` runs it, ``as_runnable`` is a LangChain Runnable."""

    @published_controls(without=("task", "lang_guess"))
    def __init__(
        self,
        tools: Sequence[Any] | None = None,
        instructions: str = "Which tool should handle this request?",
        allow_direct_answer: bool = False,
        direct_answer_description: str = "no tool is needed: answer directly",
        confidence_threshold: float | None = None,
        fallback_tool: Any = None,
        agent: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        **controls: Any,
    ) -> None:
        runner, options = runner_for(agent, base_url, api_key, **controls)
        self.tools = list(tools or [])
        self.picker = Picker(runner, instructions, options)
        self.allow_direct_answer = allow_direct_answer
        self.direct_answer_description = direct_answer_description
        self.confidence_threshold = (
            None if confidence_threshold is None else check_threshold(confidence_threshold)
        )
        self.fallback_tool = fallback_tool

    def _criteria(self, tools: list[Any]) -> dict[str, str]:
        if not tools:
            raise InvalidRequest("tools: nothing to choose from; give at least one tool")
        criteria: dict[str, str] = {}
        for i, tool in enumerate(tools):
            name, description = describe(tool, f"tools[{i}]")
            if name in criteria or (self.allow_direct_answer and name == DIRECT_ANSWER):
                raise InvalidRequest(f"tools[{i}]: the name {name!r} is taken; rename one tool")
            criteria[name] = description
        if self.allow_direct_answer:
            criteria[DIRECT_ANSWER] = self.direct_answer_description
        return criteria

    def select(
        self,
        state: Any,
        tools: Sequence[Any] | None = None,
        instructions: str | None = None,
    ) -> ToolRouteDecision:
        """The tool that should handle ``state`` (among ``tools``, or those given at build)."""
        chosen = list(tools) if tools is not None else self.tools
        criteria = self._criteria(chosen)
        picker = self.picker
        if instructions is not None:
            picker = Picker(picker.runner, instructions, picker.options)
        return self._decision(picker.pick(state, criteria), chosen)

    async def aselect(
        self,
        state: Any,
        tools: Sequence[Any] | None = None,
        instructions: str | None = None,
    ) -> ToolRouteDecision:
        return await asyncio.to_thread(self.select, state, tools, instructions)

    def _decision(self, pick: Pick, tools: list[Any]) -> ToolRouteDecision:
        threshold = self.confidence_threshold
        if threshold is not None and pick["confidence"] < threshold:
            if self.fallback_tool is None:
                raise LayaLowConfidenceError(pick["confidence"], threshold, pick["raw_decision"])
            name, _ = describe(self.fallback_tool, "fallback_tool")
            index = next((i for i, t in enumerate(tools) if t is self.fallback_tool), -1)
            reason = f"{pick['reason']}, below {threshold}: fell back to {name!r}"
            return self._made(self.fallback_tool, name, index, pick, reason, fallback=True)
        if pick["label"] == DIRECT_ANSWER and self.allow_direct_answer:
            return self._made(None, DIRECT_ANSWER, -1, pick, pick["reason"], fallback=False)
        tool = tools[pick["index"]]
        return self._made(tool, pick["label"], pick["index"], pick, pick["reason"], fallback=False)

    @staticmethod
    def _made(
        tool: Any, name: str, index: int, pick: Pick, reason: str, *, fallback: bool
    ) -> ToolRouteDecision:
        return ToolRouteDecision(
            tool=tool,
            tool_name=name,
            tool_index=index,
            confidence=pick["confidence"],
            probabilities=pick["probabilities"],
            reason=reason,
            is_direct_answer=tool is None,
            is_fallback=fallback,
            raw_decision=pick["raw_decision"],
        )

    def call(
        self, state: Any, tools: Sequence[Any] | None = None, *args: Any, **kwargs: Any
    ) -> Any:
        """Pick the tool and run it (on ``args`` / ``kwargs``, or else on ``state``); a direct
        answer returns the ToolRouteDecision, for the caller to answer."""
        decision = self.select(state, tools)
        if decision.is_direct_answer:
            return decision
        return run_tool(decision.tool, state, args, kwargs)

    def as_runnable(self) -> Any:
        """A LangChain Runnable from a state to its ToolRouteDecision (needs langchain-core)."""
        require("langchain_core", "langchain", "langchain-core")
        from langchain_core.runnables import RunnableLambda

        return RunnableLambda(self.select, afunc=self.aselect, name="LayaToolSelector")
