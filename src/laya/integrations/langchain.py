"""LangChain and LangGraph adapters (``langchain-core`` only; docs/integrations.md).

* :class:`LayaDecisionTool` — a ``BaseTool`` whose argument is the state. Its content is JSON: the
  result of ``predict`` for a question set, the Decision as JSON for a schema; the raw object is
  the ``ToolMessage``'s artifact. ``batch`` / ``abatch`` answer every input in one batched
  prediction, then hand each input to ``BaseTool``'s own ``batch``, so a ``ToolCall`` comes back
  as a ``ToolMessage`` with its id, callbacks fire per input, and ``handle_tool_error`` /
  ``return_exceptions`` act per input exactly as LangChain's.
* The reference's runnables (:mod:`laya.integrations.runnables`): ``LayaRouter``,
  ``LayaGuardrail``, ``LayaTriage``, ``LayaEvaluator``, ``LayaDecision`` and our ``LayaRunnable``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any, Literal

from .extras import require

require("langchain_core", "langchain", "langchain-core")

from langchain_core.runnables import RunnableConfig  # noqa: E402
from langchain_core.tools import BaseTool, ToolException  # noqa: E402
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError  # noqa: E402

from ..errors import LayaGuardrailError, one_line  # noqa: E402
from ..typed.decision_json import decision_json  # noqa: E402
from .arguments import StateInput, bad_arguments  # noqa: E402
from .common import Decisions  # noqa: E402
from .runnables import (  # noqa: E402
    LayaDecision,
    LayaEvaluator,
    LayaGuardrail,
    LayaRouter,
    LayaRunnable,
    LayaTriage,
)

__all__ = [
    "LayaDecision",
    "LayaDecisionTool",
    "LayaEvaluator",
    "LayaGuardrail",
    "LayaGuardrailError",
    "LayaRouter",
    "LayaRunnable",
    "LayaTriage",
    "StateInput",
]

# The answers of the batch in progress, by state: BaseTool.batch runs each input's invoke in a
# copy of this context, so each finds its answer here instead of predicting again.
_PREPARED: ContextVar[dict[str, Any] | None] = ContextVar("laya_prepared_answers", default=None)


def tool_error(code: str, message: str) -> ToolException:
    """A ToolException whose text is JSON, so a handled error's content parses like an answer."""
    return ToolException(json.dumps({"error": code, "message": message}))


class LayaDecisionTool(BaseTool):
    """A LangChain tool deciding one question set (or one schema) about a state."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "laya_decision"
    description: str = (
        "Fast typed decisions about a text or JSON state (milliseconds, calibrated "
        "probabilities): classify, score on a rubric, check a statement."
    )
    args_schema: type[BaseModel] = StateInput
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    runner: Any = Field(exclude=True)
    questions: dict[str, Any] | None = None
    decision_schema: Any = None
    state_key: str | None = None
    predict_options: dict[str, Any] = Field(default_factory=dict)
    _decisions: Decisions = PrivateAttr()

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        self._decisions = Decisions(
            self.runner, self.questions, self.decision_schema, self.state_key, self.predict_options
        )

    def _parse_input(self, tool_input: Any, tool_call_id: str | None) -> Any:
        """Arguments that do not fit the schema are a ToolException naming each argument."""
        try:
            return super()._parse_input(tool_input, tool_call_id)
        except ValidationError as exc:
            raise tool_error("invalid_arguments", bad_arguments(self.name, exc)) from exc

    def _run(self, state: Any, run_manager: Any = None) -> tuple[Any, Any]:
        """(content, artifact): the answer as JSON values, and the runner's own object."""
        prepared = _PREPARED.get() or {}
        key = _key(state)
        outcome = prepared[key] if key in prepared else self._answer([state])[0]
        content = decision_json(outcome) if self.decision_schema is not None else outcome
        return content, outcome

    async def _arun(self, state: Any, run_manager: Any = None) -> tuple[Any, Any]:
        return await asyncio.to_thread(self._run, state)

    def _answer(self, states: list[Any]) -> list[Any]:
        try:
            return self._decisions.answer(states)
        except (ValueError, TypeError) as exc:  # laya names the field and the fix
            raise tool_error("invalid_request", one_line(exc)) from exc

    def _prepare(self, inputs: Sequence[Any]) -> dict[str, Any]:
        """Every input's answer from one batched prediction (none when one input is bad: each
        is then answered alone, so each bad one gets its own error)."""
        states = [_state_of(i) for i in inputs]
        try:
            return {_key(s): o for s, o in zip(states, self._answer(states))}
        except ToolException:
            return {}

    def batch(
        self,
        inputs: list[Any],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """One batched prediction, then ``BaseTool.batch`` (ToolMessages, callbacks, errors)."""
        token = _PREPARED.set(self._prepare(inputs))
        try:
            return super().batch(inputs, config, return_exceptions=return_exceptions, **kwargs)
        finally:
            _PREPARED.reset(token)

    async def abatch(
        self,
        inputs: list[Any],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        token = _PREPARED.set(await asyncio.to_thread(self._prepare, inputs))
        try:
            return await super().abatch(
                inputs, config, return_exceptions=return_exceptions, **kwargs
            )
        finally:
            _PREPARED.reset(token)


def _state_of(tool_input: Any) -> Any:
    """A tool input (``"text"``, ``{"state": ...}`` or a tool call) -> the state."""
    if isinstance(tool_input, dict) and tool_input.get("type") == "tool_call":
        tool_input = tool_input.get("args", {})
    if isinstance(tool_input, dict) and set(tool_input) == {"state"}:
        return tool_input["state"]
    return tool_input


def _key(state: Any) -> str:
    """The state as canonical JSON: the same state finds the same prepared answer."""
    return json.dumps(state, sort_keys=True, default=repr)
