"""LangChain adapters (``langchain-core`` only): a tool and a Runnable over a laya runner.

* :class:`LayaDecisionTool` — a ``BaseTool`` whose argument is the state. ``invoke`` returns what
  the runner returns (the result dict of ``predict`` for a question set, the ``Decision`` of
  ``decision`` for a schema); ``ainvoke`` runs the blocking call on a worker thread; ``batch``
  answers every input in one batched prediction. A bad input raises ``ToolException`` with
  laya's message (``handle_tool_error=True`` hands it to the model instead). When one input of a
  batch is bad and ``return_exceptions`` or ``handle_tool_error`` is set, the inputs are answered
  one by one, so each bad one gets its own error in its place and the others their answers.
* :class:`LayaRunnable` — a ``Runnable`` from a state to typed answers (the schema's instance,
  or the answers dict of a question set); it composes with ``|``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from ..errors import one_line
from .common import Decisions

__all__ = ["LayaDecisionTool", "LayaRunnable", "StateInput"]


class StateInput(BaseModel):
    """The tool's one argument."""

    state: str | dict[str, Any] | list[Any] = Field(
        description="what to decide about: text, or a JSON object or list"
    )


def _failing_as_tool_errors(call: Any, *args: Any) -> Any:
    try:
        return call(*args)
    except (ValueError, TypeError) as exc:  # laya names the field and the fix
        raise ToolException(one_line(exc)) from exc


def _one_by_one(call: Any, inputs: Sequence[Any], return_exceptions: bool) -> list[Any]:
    """Each input answered alone (after its batch failed); with ``return_exceptions`` an input's
    exception stands in its place, as ``Runnable.batch`` does, else the first one is raised."""
    outcomes = []
    for item in inputs:
        try:
            outcomes.append(call(item))
        except Exception as exc:
            if not return_exceptions:
                raise
            outcomes.append(exc)
    return outcomes


class LayaDecisionTool(BaseTool):
    """A LangChain tool deciding one question set (or one schema) about a state."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "laya_decision"
    description: str = (
        "Fast typed decisions about a text or JSON state (milliseconds, calibrated "
        "probabilities): classify, score on a rubric, check a statement."
    )
    args_schema: type[BaseModel] = StateInput
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
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in exc.errors()
            )
            raise ToolException(f"{self.name}: bad arguments: {problems}") from exc

    def _run(self, state: Any, run_manager: Any = None) -> Any:
        return _failing_as_tool_errors(self._decisions.answer, [state])[0]

    async def _arun(self, state: Any, run_manager: Any = None) -> Any:
        return await asyncio.to_thread(self._run, state)

    def batch(
        self,
        inputs: Sequence[Any],
        config: RunnableConfig | Sequence[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Every input in one batched prediction (not one call per input on a thread pool)."""
        states = [_state_of(i) for i in inputs]
        try:
            return _failing_as_tool_errors(self._decisions.answer, states)
        except ToolException:
            if not (return_exceptions or self.handle_tool_error):
                raise
        return _one_by_one(lambda s: self.invoke({"state": s}), states, return_exceptions)

    async def abatch(
        self,
        inputs: Sequence[Any],
        config: RunnableConfig | Sequence[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        return await asyncio.to_thread(
            self.batch, inputs, config, return_exceptions=return_exceptions
        )


def _state_of(tool_input: Any) -> Any:
    """A tool input (``"text"``, ``{"state": ...}`` or a tool call) -> the state."""
    if isinstance(tool_input, dict) and tool_input.get("type") == "tool_call":
        tool_input = tool_input.get("args", {})
    if isinstance(tool_input, dict) and set(tool_input) == {"state"}:
        return tool_input["state"]
    return tool_input


class LayaRunnable(Runnable[Any, Any]):
    """A state -> typed answers: the schema's instance, or the answers of a question set."""

    def __init__(
        self,
        runner: Any,
        questions: dict[str, Any] | None = None,
        schema: Any = None,
        state_key: str | None = None,
        **predict_options: Any,
    ) -> None:
        self.decisions = Decisions(runner, questions, schema, state_key, predict_options)

    def _typed(self, outcome: Any) -> Any:
        return outcome.value if self.decisions.schema is not None else outcome["answers"]

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self.batch([input])[0]

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return await asyncio.to_thread(self.invoke, input)

    def batch(
        self,
        inputs: list[Any],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Every input in one batched prediction (one by one, if that fails, with
        ``return_exceptions``: each bad input's exception in its place)."""
        try:
            return [self._typed(o) for o in self.decisions.answer(list(inputs))]
        except (ValueError, TypeError):
            if not return_exceptions:
                raise
        return _one_by_one(self.invoke, inputs, return_exceptions)
