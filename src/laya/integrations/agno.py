"""Agno adapters (the ``agno`` extra; docs/integrations.md).

* ``LayaAgnoRouter`` — which member of a team should answer a message, in place of a route-mode
  Team's leader LLM: ``route(message, agents)``, ``route_team(message, team)``, ``run``,
  ``__call__`` and their async forms give an :class:`AgnoRouteDecision`.
* ``LayaAgnoGuardrail`` — screens a message (raise, filter or annotate).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .extras import require

require("agno", "agno", "agno")

from agno.agent import Agent  # noqa: E402
from agno.team import Team  # noqa: E402

from ..errors import LayaGuardrailError  # noqa: E402
from .delegation import AgentPicker  # noqa: E402
from .screening import TextGuard  # noqa: E402

__all__ = [
    "AgnoAgent",
    "AgnoRouteDecision",
    "AgnoTeam",
    "LayaAgnoGuardrail",
    "LayaAgnoGuardrailError",
    "LayaAgnoRouter",
]

AgnoAgent = Agent  # the names the published module gives Agno's classes
AgnoTeam = Team


class LayaAgnoGuardrailError(LayaGuardrailError):
    """LayaAgnoGuardrail flagged a message (``violations``, ``raw_decision``)."""


@dataclass
class AgnoRouteDecision:
    """The member picked for a message, how sure, and why."""

    agent: Any
    agent_index: int
    name: str
    role: str
    confidence: float
    reason: str
    raw_decision: dict[str, Any]


def _label(member: Any, index: int) -> tuple[str, str]:
    """A member's (name, what it does): its role, description and instructions (Agno takes
    instructions as a string or a list of them)."""
    name = getattr(member, "name", None) or f"agent_{index}"
    about: list[str] = []
    for key in ("role", "description", "instructions"):
        value = getattr(member, key, None)
        parts = value if isinstance(value, list) else [value]
        about += [p for p in parts if isinstance(p, str) and p]
    return str(name), " ".join(about)


class LayaAgnoRouter(AgentPicker):
    """Picks the Agno agent (by name, role and description) that should answer each message."""

    def route(self, message: Any, agents: Sequence[Any]) -> AgnoRouteDecision:
        """The member of ``agents`` for ``message`` (text, or an Agno message)."""
        agents = list(agents)
        pick = self.pick_agent(message, [_label(a, i) for i, a in enumerate(agents)])
        chosen = agents[pick["index"]]
        return AgnoRouteDecision(
            agent=chosen,
            agent_index=pick["index"],
            name=_label(chosen, pick["index"])[0],
            role=str(getattr(chosen, "role", "") or ""),
            confidence=pick["confidence"],
            reason=pick["reason"],
            raw_decision=pick["raw_decision"],
        )

    def route_team(self, message: Any, team: Any) -> AgnoRouteDecision:
        """The member of ``team.members`` for ``message``."""
        return self.route(message, list(team.members))

    run = route
    __call__ = route

    async def aroute(self, message: Any, agents: Sequence[Any]) -> AgnoRouteDecision:
        return await asyncio.to_thread(self.route, message, agents)

    async def aroute_team(self, message: Any, team: Any) -> AgnoRouteDecision:
        return await asyncio.to_thread(self.route_team, message, team)

    arun = aroute


class LayaAgnoGuardrail(TextGuard):
    """Screens a message (the guard preset unless ``questions`` are given) before a team sees it."""

    error = LayaAgnoGuardrailError

    def screen(self, message: Any) -> Any:
        """``message`` when it passes; else LayaAgnoGuardrailError, the rejection message, or the
        message annotated (``action``)."""
        return self.screened(message)

    async def ascreen(self, message: Any) -> Any:
        return await self.ascreened(message)
