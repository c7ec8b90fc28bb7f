"""The reference's LangChain / LangGraph runnables, each batching for real (docs/integrations.md).

``batch`` / ``abatch`` answer every input in one batched prediction, with LangChain's callbacks
per input (``on_chain_start`` / ``on_chain_end`` / ``on_chain_error``); with
``return_exceptions=True`` a bad input's exception stands in its place and the others are
answered. An input is a state: text, a JSON object or list, a message, a LangGraph state (its
``state_key``, or else the content of its last message).
"""

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, TypedDict

from .extras import require

require("langchain_core", "langchain", "langchain-core")

from langchain_core.messages import BaseMessage  # noqa: E402
from langchain_core.runnables import Runnable, RunnableConfig  # noqa: E402

from ..errors import InvalidRequest  # noqa: E402
from ..typed.presets import triage_questions  # noqa: E402
from .choosing import Pick, Picker, check_labelled, check_threshold, settle  # noqa: E402
from .common import Decisions  # noqa: E402
from .runners import published_controls, runner_for  # noqa: E402
from .screening import DEFAULT_REJECTION, Guard, Screen  # noqa: E402

__all__ = [
    "LayaDecision",
    "LayaEvaluator",
    "LayaGuardrail",
    "LayaRouter",
    "LayaRunnable",
    "LayaTriage",
    "Triage",
]


class Triage(TypedDict):
    """What LayaTriage adds to a graph state."""

    intent: str
    intent_confidence: float
    is_urgent: bool
    frustration_score: float
    churn_risk: float
    refund_requested: bool


def state_in(value: Any, state_key: str | None) -> Any:
    """The state an input stands for: a dict's ``value[state_key]``, a message's content (a
    LangGraph state's last message), or ``value`` itself (text, a list)."""
    if state_key is not None and isinstance(value, Mapping):
        if state_key not in value:
            raise InvalidRequest(
                f"state_key {state_key!r}: the input has no such key; give a dict that has it"
            )
        return value[state_key]
    messages = value.get("messages") if isinstance(value, Mapping) else None
    if isinstance(messages, list) and messages and isinstance(messages[-1], BaseMessage):
        return messages[-1].content
    if isinstance(value, BaseMessage):
        return value.content
    return value


def _attempt(call: Callable[..., Any], *args: Any) -> Any:
    """``call(*args)``, or the ValueError / TypeError it raised (laya's, naming the field)."""
    try:
        return call(*args)
    except (ValueError, TypeError) as exc:
        return exc


class _BatchedRunnable(Runnable[Any, Any]):
    """A Runnable whose batch is one prediction: ``_predict`` answers inputs, ``_finish`` turns
    one input's answer into the output (and may raise for that input alone). By default the
    answers are those of ``decisions`` about each input's state (read at ``state_key``)."""

    # Evaluated annotations (no ``from __future__ import annotations`` here): LangGraph reads a
    # conditional edge's type hints with get_type_hints, which cannot resolve strings.
    decisions: Decisions
    state_key: str | None = None
    name: str | None = None  # LangChain's run name (the class name when None)

    def _predict(self, inputs: list[Any]) -> list[Any]:
        return self.decisions.answer([state_in(x, self.state_key) for x in inputs])

    def _finish(self, value: Any, outcome: Any) -> Any:
        return outcome

    def _each(self, inputs: list[Any]) -> list[Any]:
        outcomes = _attempt(self._predict, inputs)
        if isinstance(outcomes, Exception):  # a bad input: each alone, errors in their places
            outcomes = [_attempt(lambda x: self._predict([x])[0], x) for x in inputs]
        return [
            o if isinstance(o, Exception) else _attempt(self._finish, x, o)
            for x, o in zip(inputs, outcomes)
        ]

    def _one(self, value: Any) -> Any:
        outcome = self._each([value])[0]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self._call_with_config(self._one, input, config)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return await asyncio.to_thread(self.invoke, input, config)

    def batch(
        self,
        inputs: list[Any],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        return self._batch_with_config(
            self._each, list(inputs), config, return_exceptions=return_exceptions
        )

    async def abatch(
        self,
        inputs: list[Any],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        return await asyncio.to_thread(
            self.batch, inputs, config, return_exceptions=return_exceptions
        )


class LayaRunnable(_BatchedRunnable):
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

    def _finish(self, value: Any, outcome: Any) -> Any:
        return outcome.value if self.decisions.schema is not None else outcome["answers"]


class LayaRouter(_BatchedRunnable):
    """A route label per input, and a LangGraph conditional edge (``router(state)``).

    Below ``confidence_threshold`` the label is ``fallback`` when one is given; ``last_decision``
    keeps the last pick (label, confidence, probabilities, reason).
    """

    @published_controls(var_keyword=True)
    def __init__(
        self,
        criteria: dict[str, str],
        instructions: str = "Which route should handle this request?",
        confidence_threshold: float = 0.0,
        fallback: str | None = None,
        state_key: str | None = None,
        agent: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        **controls: Any,
    ) -> None:
        check_labelled(
            criteria, "criteria", "route label -> description", fallback, "fallback", "a route"
        )
        runner, options = runner_for(agent, base_url, api_key, **controls)
        self.criteria = criteria
        self.confidence_threshold = check_threshold(confidence_threshold)
        self.fallback = fallback
        self.state_key = state_key
        self.picker = Picker(runner, instructions, options)
        self.last_decision: Pick | None = None

    def _predict(self, inputs: list[Any]) -> list[Pick]:
        return self.picker.pick_batch([state_in(x, self.state_key) for x in inputs], self.criteria)

    def _finish(self, value: Any, outcome: Pick) -> str:
        self.last_decision = settle(outcome, self.confidence_threshold, self.fallback, False)
        return self.last_decision["label"]

    def __call__(self, state: Any) -> str:
        """The route label for a LangGraph state (``add_conditional_edges(node, router)``)."""
        return str(self.invoke(state))


class LayaGuardrail(_BatchedRunnable):
    """Screens each input (the guard preset unless ``questions`` are given) and raises
    LayaGuardrailError, returns ``rejection_message`` (``filter``) or annotates (``annotate``)."""

    @published_controls(var_keyword=True)
    def __init__(
        self,
        questions: dict[str, Any] | None = None,
        action: str = "raise",
        rejection_message: str = DEFAULT_REJECTION,
        threshold: float = 0.5,
        state_key: str | None = None,
        agent: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        **controls: Any,
    ) -> None:
        runner, options = runner_for(agent, base_url, api_key, **controls)
        self.guard = Guard(runner, options, questions, action, rejection_message, threshold)
        self.state_key = state_key

    def _predict(self, inputs: list[Any]) -> list[Screen]:
        return self.guard.screens([state_in(x, self.state_key) for x in inputs])

    def _finish(self, value: Any, outcome: Screen) -> Any:
        return self.guard.act(value, outcome)


class LayaTriage(_BatchedRunnable):
    """Adds ``triage`` (intent, urgency, frustration, churn risk, refund) to a graph state."""

    @published_controls(var_keyword=True)
    def __init__(
        self,
        state_key: str | None = None,
        agent: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        **controls: Any,
    ) -> None:
        runner, options = runner_for(agent, base_url, api_key, **controls)
        self.decisions = Decisions(runner, triage_questions(), options=options)
        self.state_key = state_key

    def invoke(  # type: ignore[override]  # the published name of its input: state
        self, state: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Any:
        """``state`` (a graph state, or a message) with ``triage`` added."""
        return super().invoke(state, config, **kwargs)

    def _finish(self, value: Any, outcome: Any) -> dict[str, Any]:
        base = dict(value) if isinstance(value, Mapping) else {"message": value}
        return {**base, "triage": triage_of(outcome["answers"])}


def triage_of(answers: dict[str, Any]) -> Triage:
    intent = answers["intent"]
    return {
        "intent": intent["choice"],
        "intent_confidence": float(intent["probabilities"][intent["choice"]]),
        "is_urgent": answers["is_urgent"]["noul"] >= 0.5,
        "frustration_score": float(answers["frustration"]["score"]),
        "churn_risk": float(answers["churn_risk"]["noul"]),
        "refund_requested": answers["refund_requested"]["noul"] >= 0.5,
    }


class LayaEvaluator(_BatchedRunnable):
    """Grades LLM outputs on a rubric (``questions``); returns the answers."""

    @published_controls(var_keyword=True)
    def __init__(
        self,
        questions: dict[str, Any],
        state_key: str | None = None,
        agent: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        **controls: Any,
    ) -> None:
        runner, options = runner_for(agent, base_url, api_key, **controls)
        self.decisions = Decisions(runner, questions, options=options)
        self.state_key = state_key

    def _finish(self, value: Any, outcome: Any) -> dict[str, Any]:
        return dict(outcome["answers"])

    def evaluate_strings(
        self, *, prediction: str, input: str | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """LangChain's string-evaluator call: the answers about ``{prediction, input}``."""
        state = (
            {"prediction": prediction}
            if input is None
            else {"input": input, "prediction": prediction}
        )
        return dict(self.decisions.answer([state])[0]["answers"])


class LayaDecision(_BatchedRunnable):
    """The LCEL form of ``decide``: the schema's typed value (the Decision with
    ``return_details=True``). The schema is checked when the runnable is built."""

    @published_controls(without=("lang", "min_confidence"), var_keyword=True)
    def __init__(
        self,
        decision_schema: Any,
        return_details: bool = False,
        state_key: str | None = None,
        agent: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        **controls: Any,
    ) -> None:
        refused = sorted({"lang", "min_confidence"} & set(controls))
        if refused:
            raise InvalidRequest(f"{refused[0]}: LayaDecision takes no {refused[0]}; drop it")
        runner, options = runner_for(agent, base_url, api_key, **controls)
        self.decisions = Decisions(runner, schema=decision_schema, options=options)
        self.return_details = return_details
        self.state_key = state_key

    def _finish(self, value: Any, outcome: Any) -> Any:
        return outcome if self.return_details else outcome.value
