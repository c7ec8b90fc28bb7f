"""What a guardrail flags, and what it does then (raise, filter or annotate): the framework-neutral
core of LayaGuardrail, LayaTaskGuard and LayaAgnoGuardrail (docs/integrations.md).

A yes/no question is flagged when P(yes) reaches the threshold; a score question when the
probability of its middle level or higher does. Choice questions describe, they never flag.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

from ..errors import InvalidRequest, LayaGuardrailError
from ..typed.presets import guard_questions
from .choosing import check_threshold
from .common import Decisions
from .runners import published_controls, runner_for

__all__ = [
    "ACTIONS",
    "DEFAULT_REJECTION",
    "Guard",
    "Screen",
    "TextGuard",
    "Violation",
    "violations",
]

ACTIONS = ("raise", "filter", "annotate")
DEFAULT_REJECTION = "I can't help with that request."


class Violation(TypedDict):
    """One flagged question and the probability that flagged it."""

    question: str
    probability: float


class Screen(TypedDict):
    """A guardrail's verdict on one input."""

    passed: bool
    violations: list[Violation]
    answers: dict[str, Any]


def checked_action(action: Any) -> str:
    if action not in ACTIONS:
        raise InvalidRequest(f"action must be one of {list(ACTIONS)}, got {action!r}")
    return str(action)


def screening_questions(questions: dict[str, Any] | None) -> dict[str, Any]:
    """The questions a guardrail asks: the caller's, or the guard preset."""
    return guard_questions() if questions is None else questions


def violations(answers: dict[str, Any], threshold: float) -> list[Violation]:
    """The questions whose answer reaches ``threshold``, in question order."""
    flagged: list[Violation] = []
    for name, answer in answers.items():
        probability = _risk(answer)
        if probability is not None and probability >= threshold:
            flagged.append({"question": name, "probability": probability})
    return flagged


def screen(result: dict[str, Any], threshold: float) -> Screen:
    found = violations(result["answers"], threshold)
    return {"passed": not found, "violations": found, "answers": result["answers"]}


def _risk(answer: dict[str, Any]) -> float | None:
    if answer.get("type") == "noul":
        return float(answer["noul"])
    if answer.get("type") == "score":
        levels = sorted(answer["probabilities"], key=int)
        middle = len(levels) // 2
        return float(sum(answer["probabilities"][k] for k in levels[middle:]))
    return None


class Guard:
    """Screens inputs with one question set and acts on the verdict as ``action`` says."""

    def __init__(
        self,
        runner: Any,
        options: dict[str, Any],
        questions: dict[str, Any] | None,
        action: str,
        rejection_message: str,
        threshold: float,
        error: type[LayaGuardrailError] = LayaGuardrailError,
    ) -> None:
        self.decisions = Decisions(runner, screening_questions(questions), options=options)
        self.action = checked_action(action)
        if not isinstance(rejection_message, str):
            raise InvalidRequest("rejection_message must be a string")
        self.rejection_message = rejection_message
        self.threshold = check_threshold(threshold, "threshold")
        self.error = error

    def screens(self, states: list[Any]) -> list[Screen]:
        """One verdict per state, in one batched prediction."""
        return [screen(r, self.threshold) for r in self.decisions.answer(states)]

    def act(self, value: Any, verdict: Screen) -> Any:
        """``value`` when it passed; else the error raised, the rejection message, or ``value``
        annotated with the verdict (``annotate`` annotates passing values too)."""
        if self.action == "annotate":
            base = dict(value) if isinstance(value, dict) else {"input": value}
            return {**base, "guardrails": verdict}
        if verdict["passed"]:
            return value
        if self.action == "filter":
            return self.rejection_message
        raise self.error(verdict["violations"], {"answers": verdict["answers"]})


def text_of(value: Any) -> Any:
    """The state a task or message stands for: its description or content, or the value."""
    for attribute in ("description", "content"):
        text = getattr(value, attribute, None)
        if isinstance(text, str) and text:
            return text
    return value


class TextGuard:
    """Screens one task or message at a time (CrewAI's and Agno's guardrails, whose ``screen`` /
    ``ascreen`` name their argument); ``error`` is the class a flagged input raises with
    ``action="raise"``."""

    error: type[LayaGuardrailError] = LayaGuardrailError

    @published_controls()
    def __init__(
        self,
        questions: dict[str, Any] | None = None,
        action: str = "raise",
        rejection_message: str = DEFAULT_REJECTION,
        threshold: float = 0.5,
        agent: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        **controls: Any,
    ) -> None:
        runner, options = runner_for(agent, base_url, api_key, **controls)
        self.guard = Guard(
            runner, options, questions, action, rejection_message, threshold, self.error
        )

    def screened(self, value: Any) -> Any:
        """``value`` when it passes; else ``error`` raised, the rejection message, or the value
        annotated (``action``)."""
        return self.guard.act(value, self.guard.screens([text_of(value)])[0])

    async def ascreened(self, value: Any) -> Any:
        return await asyncio.to_thread(self.screened, value)
