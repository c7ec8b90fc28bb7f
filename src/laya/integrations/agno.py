"""Agno adapters (the ``agno`` extra; docs/integrations.md).

* ``LayaAgnoRouter`` — which member of a team should answer a message, in place of a route-mode
  Team's leader LLM: ``route(message, agents)``, ``route_team(message, team)``, ``run``,
  ``__call__`` and their async forms give an :class:`AgnoRouteDecision`.
* ``LayaAgnoGuardrail`` — screens a message (raise, filter or annotate).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .extras import require

require("agno", "agno", "agno")

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


class LayaAgnoGuardrailError(LayaGuardrailError):
    """LayaAgnoGuardrail flagged a message (``violations``, ``raw_decision``)."""


@dataclass
class AgnoAgent:
    """A team member described by what LayaAgnoRouter reads of one (an Agno ``Agent`` works too)."""

    name: str
    role: str = ""
    description: str = ""
    instructions: str = ""


@dataclass
class AgnoTeam:
    """A team by its members (what ``route_team`` reads; an Agno ``Team`` works too)."""

    members: list[Any] | None = field(default=None)
    mode: str = "route"

    def __post_init__(self) -> None:
        self.members = list(self.members or [])


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
    name = getattr(member, "name", None) or f"agent_{index}"
    about = [getattr(member, k, None) for k in ("role", "description", "instructions")]
    return str(name), " ".join(str(a) for a in about if isinstance(a, str) and a)


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
        """``message`` when it passes; else raised, rejected or annotated (``action``)."""
        return super().screen(message)

    async def ascreen(self, message: Any) -> Any:
        return await super().ascreen(message)
