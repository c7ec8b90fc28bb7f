"""LlamaIndex adapter (``llama-index-core`` only): a ``FunctionTool`` over a laya runner.

``laya_tool(runner, questions=...)`` (or ``schema=...``) is a tool whose one argument is the
state; ``tool.call(state=...)`` returns a ``ToolOutput`` whose ``raw_output`` is what the runner
returns (the result of ``predict``, or the ``Decision`` of ``decision``); its content is that
object's text. ``acall`` runs the blocking call on a worker thread.
"""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.tools import FunctionTool
from pydantic import BaseModel, Field

from .common import Decisions

__all__ = ["StateInput", "laya_tool"]


class StateInput(BaseModel):
    """The tool's one argument."""

    state: str | dict[str, Any] | list[Any] = Field(
        description="what to decide about: text, or a JSON object or list"
    )


def laya_tool(
    runner: Any,
    questions: dict[str, Any] | None = None,
    schema: Any = None,
    *,
    name: str = "laya_decision",
    description: str = (
        "Fast typed decisions about a text or JSON state (milliseconds, calibrated "
        "probabilities): classify, score on a rubric, check a statement."
    ),
    state_key: str | None = None,
    **predict_options: Any,
) -> FunctionTool:
    """A FunctionTool deciding ``questions`` (or ``schema``) about the state it is called with."""
    decisions = Decisions(runner, questions, schema, state_key, predict_options)

    def decide(state: Any) -> Any:
        return decisions.answer([state])[0]

    async def adecide(state: Any) -> Any:
        return await asyncio.to_thread(decide, state)

    return FunctionTool.from_defaults(
        fn=decide, async_fn=adecide, name=name, description=description, fn_schema=StateInput
    )
