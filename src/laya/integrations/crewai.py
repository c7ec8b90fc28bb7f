"""CrewAI adapters (the ``crewai`` extra; docs/integrations.md).

* ``LayaCrewRouter`` — which agent of a crew should take a task: ``route(task, agents)`` gives a
  :class:`CrewRouteDecision`, ``delegate`` also sets ``task.agent``.
* ``LayaTaskGuard`` — screens a task before a crew runs it (raise, filter or annotate).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from .extras import require

require("crewai", "crewai", "crewai")

from ..errors import LayaGuardrailError  # noqa: E402
from .delegation import AgentPicker  # noqa: E402
from .screening import TextGuard  # noqa: E402

__all__ = [
    "CrewAgent",  # noqa: F822 (from __getattr__, imported on first use)
    "CrewRouteDecision",
    "CrewTask",  # noqa: F822
    "LayaCrewRouter",
    "LayaTaskGuard",
    "LayaTaskGuardError",
]

_CREWAI_NAMES = {"CrewAgent": "Agent", "CrewTask": "Task"}  # as the published module names them


def __getattr__(name: str) -> Any:
    """CrewAI's Agent and Task under their published names, imported on first use (importing
    CrewAI takes seconds)."""
    if name not in _CREWAI_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module("crewai"), _CREWAI_NAMES[name])


class LayaTaskGuardError(LayaGuardrailError):
    """LayaTaskGuard flagged a task (``violations``, ``raw_decision``)."""


@dataclass
class CrewRouteDecision:
    """The agent picked for a task, how sure, and why."""

    agent: Any
    agent_index: int
    role: str
    confidence: float
    reason: str
    raw_decision: dict[str, Any]


class LayaCrewRouter(AgentPicker):
    """Picks the crew agent (by role and goal) that should take each task."""

    def route(self, task: Any, agents: Sequence[Any]) -> CrewRouteDecision:
        """The agent of ``agents`` for ``task`` (a crewai Task, or its text)."""
        agents = list(agents)
        labelled = [(str(a.role), str(getattr(a, "goal", "") or "")) for a in agents]
        pick = self.pick_agent(task, labelled)
        return CrewRouteDecision(
            agent=agents[pick["index"]],
            agent_index=pick["index"],
            role=str(agents[pick["index"]].role),
            confidence=pick["confidence"],
            reason=pick["reason"],
            raw_decision=pick["raw_decision"],
        )

    def delegate(self, task: Any, agents: Sequence[Any]) -> Any:
        """``task`` with ``task.agent`` set to the agent picked for it."""
        task.agent = self.route(task, agents).agent
        return task

    async def aroute(self, task: Any, agents: Sequence[Any]) -> CrewRouteDecision:
        return await asyncio.to_thread(self.route, task, agents)

    async def adelegate(self, task: Any, agents: Sequence[Any]) -> Any:
        return await asyncio.to_thread(self.delegate, task, agents)


class LayaTaskGuard(TextGuard):
    """Screens a task (the guard preset unless ``questions`` are given) before a crew runs it."""

    error = LayaTaskGuardError

    def screen(self, task: Any) -> Any:
        """``task`` when it passes; else LayaTaskGuardError, the rejection message, or the task
        annotated (``action``)."""
        return self.screened(task)

    async def ascreen(self, task: Any) -> Any:
        return await self.ascreened(task)
