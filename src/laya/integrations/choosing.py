"""One pick among labelled options (routes, agents, tools, query engines): the framework-neutral
core of every router and selector in docs/integrations.md.

The options become one ``choice`` question whose criteria are the labels and their descriptions;
the pick is the most probable label, its confidence that label's probability.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from ..errors import InvalidRequest, LayaLowConfidenceError
from .common import Decisions

__all__ = ["Pick", "Picker", "check_labelled", "check_threshold", "settle"]

QUESTION = "pick"


class Pick(TypedDict):
    """A pick: the label, its place among the options, how likely each option is, and why."""

    label: str
    index: int
    confidence: float
    probabilities: dict[str, float]
    reason: str
    is_fallback: bool
    raw_decision: dict[str, Any]


def check_threshold(value: Any, name: str = "confidence_threshold") -> float:
    """A probability in [0, 1], or an InvalidRequest naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise InvalidRequest(f"{name} must be a number between 0 and 1, got {value!r}")
    return float(value)


def check_labelled(
    labelled: object, name: str, entries: str, fallback: object, fallback_name: str, one: str
) -> None:
    """``labelled`` is a non-empty dict (of ``entries``) and ``fallback`` None or one of its
    keys (``one`` of them), else an InvalidRequest naming ``name`` or ``fallback_name``."""
    if not isinstance(labelled, dict) or not labelled:
        raise InvalidRequest(f"{name} must be a dict of {entries}")
    if fallback is not None and fallback not in labelled:
        raise InvalidRequest(
            f"{fallback_name} {fallback!r} is not {one}: use one of {list(labelled)}"
        )


class Picker:
    """Picks among ``options`` (label -> description) with one choice question per call."""

    def __init__(self, runner: Any, instructions: str, options: dict[str, Any]) -> None:
        if not isinstance(instructions, str) or not instructions.strip():
            raise InvalidRequest("instructions must be a non-empty string (the routing question)")
        self.runner = runner
        self.instructions = instructions
        self.options = options

    def pick_batch(self, states: Sequence[Any], criteria: Mapping[str, str]) -> list[Pick]:
        """One pick per state, in one batched prediction."""
        labels = _checked_labels(criteria)
        questions = {
            QUESTION: {"type": "choice", "instructions": self.instructions, "criteria": criteria}
        }
        decisions = Decisions(self.runner, questions, options=self.options)
        return [_pick(r, labels) for r in decisions.answer(states)]

    def pick(self, state: Any, criteria: Mapping[str, str]) -> Pick:
        return self.pick_batch([state], criteria)[0]


def settle(pick: Pick, threshold: float, fallback: str | None, raise_on_low: bool) -> Pick:
    """``pick`` when it is likely enough; else the fallback, LayaLowConfidenceError, or ``pick``."""
    if pick["confidence"] >= threshold:
        return pick
    if fallback is not None:
        index = list(pick["probabilities"]).index(fallback)
        reason = (
            f"confidence {pick['confidence']:.4f} of {pick['label']!r} is below {threshold}: "
            f"fell back to {fallback!r}"
        )
        return {**pick, "label": fallback, "index": index, "reason": reason, "is_fallback": True}
    if raise_on_low:
        raise LayaLowConfidenceError(pick["confidence"], threshold, pick["raw_decision"])
    return pick


def _checked_labels(criteria: Mapping[str, str]) -> list[str]:
    labels = list(criteria)
    if len(labels) < 1:
        raise InvalidRequest("nothing to choose from: give at least one option")
    return labels


def _pick(result: dict[str, Any], labels: list[str]) -> Pick:
    answer = result["answers"][QUESTION]
    label = answer["choice"]
    confidence = float(answer["probabilities"][label])
    return {
        "label": label,
        "index": labels.index(label),
        "confidence": confidence,
        "probabilities": dict(answer["probabilities"]),
        "reason": f"laya picked {label!r} with probability {confidence:.4f}",
        "is_fallback": False,
        "raw_decision": result,
    }
