"""LlamaIndex adapters (``llama-index-core`` only; docs/integrations.md).

* ``LayaSingleSelector`` / ``LayaMultiSelector`` — drop-ins for ``LLMSingleSelector`` /
  ``LLMMultiSelector`` in a ``RouterQueryEngine``: one choice question over the tools' names and
  descriptions instead of an LLM call.
* ``LayaQueryRouter`` — a direct dispatcher: ``route(query)`` names a query engine, ``query``
  runs it.
* ``laya_tool`` — a ``FunctionTool`` over a laya runner.

``laya_tool(runner, questions=...)`` (or ``schema=...``) is a tool whose one argument is the
state; ``tool.call(state=...)`` returns a ``ToolOutput`` whose ``raw_output`` is what the runner
returns (the result of ``predict``, or the ``Decision`` of ``decision``); its content is that
object's JSON. ``acall`` runs the blocking call on a worker thread.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from .extras import require

require("llama_index.core", "llamaindex", "llama-index-core")

from llama_index.core.base.base_selector import (  # noqa: E402
    BaseSelector,
    SelectorResult,
    SingleSelection,
)
from llama_index.core.schema import QueryBundle  # noqa: E402
from llama_index.core.tools import FunctionTool, ToolMetadata  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from ..errors import InvalidRequest  # noqa: E402
from ..typed.decision_json import decision_json  # noqa: E402
from .arguments import StateInput, bad_arguments  # noqa: E402
from .choosing import Pick, Picker, check_labelled, check_threshold, settle  # noqa: E402
from .common import Decisions  # noqa: E402
from .runners import published_controls, runner_for  # noqa: E402

__all__ = [
    "LayaMultiSelector",
    "LayaQueryRouter",
    "LayaSingleSelector",
    "QueryBundle",
    "SelectorResult",
    "StateInput",
    "ToolMetadata",
    "ToolSelection",
    "laya_tool",
]

ToolSelection = SingleSelection  # the name the published module gives a selection

SELECT_INSTRUCTIONS = "Which choice is most relevant to the query?"


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

    def decide(*given: Any, **arguments: Any) -> Any:
        """The answer about ``state`` (by name, or alone by position); other or ill-typed
        arguments are refused by name."""
        if given:
            extra = {f"positional argument {i}": v for i, v in enumerate(given[1:], 2)}
            arguments = {"state": given[0], **arguments, **extra}
        try:
            state = StateInput.model_validate(arguments).state
        except ValidationError as exc:
            raise InvalidRequest(bad_arguments(name, exc)) from None
        return decisions.answer([state])[0]

    async def adecide(*given: Any, **arguments: Any) -> Any:
        return await asyncio.to_thread(decide, *given, **arguments)

    def content(outcome: Any) -> str:
        """The ToolOutput's content: the answer as JSON text."""
        return json.dumps(decision_json(outcome) if schema is not None else outcome)

    async def acontent(outcome: Any) -> str:
        return content(outcome)

    return FunctionTool.from_defaults(
        fn=decide,
        async_fn=adecide,
        name=name,
        description=description,
        fn_schema=StateInput,
        callback=content,
        async_callback=acontent,
    )


def _criteria(choices: Sequence[ToolMetadata]) -> dict[str, str]:
    """label -> description per choice, in order (a choice without a name is ``choice_<i>``)."""
    criteria: dict[str, str] = {}
    for i, choice in enumerate(choices):
        label = choice.name or f"choice_{i}"
        criteria[label if label not in criteria else f"{label}_{i}"] = choice.description
    return criteria


class _LayaSelector(BaseSelector):
    """What both selectors share: a Picker over the choices, and no prompts to show or edit."""

    def __init__(
        self, instructions: str, agent: Any, base_url: str | None, api_key: str | None, **c: Any
    ) -> None:
        runner, options = runner_for(agent, base_url, api_key, **c)
        self.picker = Picker(runner, instructions, options)

    def _get_prompts(self) -> dict[str, Any]:
        return {}

    def _update_prompts(self, prompts: dict[str, Any]) -> None:
        """A selector with no LLM prompt: nothing to update."""

    def pick(self, choices: Sequence[ToolMetadata], query: QueryBundle) -> Pick:
        return self.picker.pick(query.query_str, _criteria(choices))

    async def _aselect(self, choices: Sequence[ToolMetadata], query: QueryBundle) -> SelectorResult:
        return await asyncio.to_thread(self.select, choices, query)


class LayaSingleSelector(_LayaSelector):
    """One choice per query; below ``confidence_threshold`` the ``fallback_index`` choice (or
    LayaLowConfidenceError with ``raise_on_low_confidence``)."""

    @published_controls()
    def __init__(
        self,
        instructions: str = SELECT_INSTRUCTIONS,
        confidence_threshold: float = 0.0,
        fallback_index: int | None = None,
        raise_on_low_confidence: bool = False,
        agent: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        **controls: Any,
    ) -> None:
        super().__init__(instructions, agent, base_url, api_key, **controls)
        self.confidence_threshold = check_threshold(confidence_threshold)
        self.fallback_index = fallback_index
        self.raise_on_low_confidence = raise_on_low_confidence

    def _select(self, choices: Sequence[ToolMetadata], query: QueryBundle) -> SelectorResult:
        pick = self.pick(choices, query)
        labels = list(pick["probabilities"])
        fallback = None
        if self.fallback_index is not None:
            if not 0 <= self.fallback_index < len(labels):
                raise InvalidRequest(
                    f"fallback_index {self.fallback_index} is out of range for "
                    f"{len(labels)} choices"
                )
            fallback = labels[self.fallback_index]
        held = settle(pick, self.confidence_threshold, fallback, self.raise_on_low_confidence)
        return SelectorResult(
            selections=[SingleSelection(index=held["index"], reason=held["reason"])]
        )


class LayaMultiSelector(_LayaSelector):
    """Every choice at least ``probability_threshold`` likely (most likely first, at most
    ``max_outputs``); ``default_index`` when none is."""

    @published_controls()
    def __init__(
        self,
        instructions: str = SELECT_INSTRUCTIONS,
        max_outputs: int | None = None,
        probability_threshold: float = 0.25,
        default_index: int = 0,
        agent: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        **controls: Any,
    ) -> None:
        super().__init__(instructions, agent, base_url, api_key, **controls)
        if max_outputs is not None and (isinstance(max_outputs, bool) or max_outputs < 1):
            raise InvalidRequest(f"max_outputs must be a positive integer, got {max_outputs!r}")
        self.max_outputs = max_outputs
        self.probability_threshold = check_threshold(probability_threshold, "probability_threshold")
        self.default_index = default_index

    def _select(self, choices: Sequence[ToolMetadata], query: QueryBundle) -> SelectorResult:
        probabilities = self.pick(choices, query)["probabilities"]
        ranked = sorted(enumerate(probabilities.values()), key=lambda p: -p[1])
        chosen = [(i, p) for i, p in ranked if p >= self.probability_threshold]
        selections = [
            SingleSelection(index=i, reason=f"laya probability {p:.4f}")
            for i, p in chosen[: self.max_outputs]
        ] or [SingleSelection(index=self.default_index, reason="no choice reached the threshold")]
        return SelectorResult(selections=selections)


class LayaQueryRouter:
    """Picks one of ``query_engines`` (key -> engine) per query and runs it."""

    @published_controls()
    def __init__(
        self,
        query_engines: dict[str, Any],
        descriptions: dict[str, str] | None = None,
        instructions: str = "Which source should answer the query?",
        confidence_threshold: float = 0.0,
        fallback_key: str | None = None,
        agent: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        **controls: Any,
    ) -> None:
        check_labelled(
            query_engines,
            "query_engines",
            "key -> query engine",
            fallback_key,
            "fallback_key",
            "a query engine",
        )
        runner, options = runner_for(agent, base_url, api_key, **controls)
        self.query_engines = query_engines
        self.criteria = {k: (descriptions or {}).get(k, k) for k in query_engines}
        self.confidence_threshold = check_threshold(confidence_threshold)
        self.fallback_key = fallback_key
        self.picker = Picker(runner, instructions, options)
        self.last_decision: Pick | None = None

    def route(self, query: QueryBundle | str) -> str:
        """The key of the engine that should answer ``query``."""
        text = query.query_str if isinstance(query, QueryBundle) else query
        pick = self.picker.pick(text, self.criteria)
        self.last_decision = settle(pick, self.confidence_threshold, self.fallback_key, False)
        return self.last_decision["label"]

    def query(self, query: QueryBundle | str, **kwargs: Any) -> Any:
        return self.query_engines[self.route(query)].query(query, **kwargs)

    async def aquery(self, query: QueryBundle | str, **kwargs: Any) -> Any:
        key = await asyncio.to_thread(self.route, query)
        return await self.query_engines[key].aquery(query, **kwargs)
