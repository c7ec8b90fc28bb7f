"""Which agent of a crew or team should take a task: the core of LayaCrewRouter and LayaAgnoRouter
(docs/integrations.md). The agents' labels and descriptions become one choice question."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import InvalidRequest
from .choosing import Pick, Picker, check_threshold, settle
from .runners import published_controls, runner_for
from .screening import text_of

__all__ = ["AgentPicker"]


class AgentPicker:
    """Picks one of the agents given per call; below the threshold the fallback agent, or
    LayaLowConfidenceError with ``raise_on_low_confidence``."""

    @published_controls()
    def __init__(
        self,
        instructions: str = "Which agent should handle this?",
        confidence_threshold: float = 0.0,
        fallback_agent_index: int | None = None,
        raise_on_low_confidence: bool = False,
        agent: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        **controls: Any,
    ) -> None:
        runner, options = runner_for(agent, base_url, api_key, **controls)
        self.picker = Picker(runner, instructions, options)
        self.confidence_threshold = check_threshold(confidence_threshold)
        self.fallback_agent_index = fallback_agent_index
        self.raise_on_low_confidence = raise_on_low_confidence

    def pick_agent(self, task: Any, labelled: Sequence[tuple[str, str]]) -> Pick:
        """The pick among ``labelled`` agents ((label, description) each, in order)."""
        if not labelled:
            raise InvalidRequest("agents: nothing to choose from; give at least one agent")
        criteria: dict[str, str] = {}
        for i, (label, description) in enumerate(labelled):
            criteria[label if label not in criteria else f"{label} ({i})"] = description or label
        fallback = None
        if self.fallback_agent_index is not None:
            if not 0 <= self.fallback_agent_index < len(criteria):
                raise InvalidRequest(
                    f"fallback_agent_index {self.fallback_agent_index} is out of range for "
                    f"{len(criteria)} agents"
                )
            fallback = list(criteria)[self.fallback_agent_index]
        pick = self.picker.pick(text_of(task), criteria)
        return settle(pick, self.confidence_threshold, fallback, self.raise_on_low_confidence)
