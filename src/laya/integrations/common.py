"""What the framework adapters share: one question set or one schema, and how a call's input
becomes a state and its answers come back (without importing any framework)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.questions import parse_questions
from ..errors import InvalidRequest
from ..typed.plans import plan_for
from ..typed.presets import state_field

__all__ = ["Decisions"]


@dataclass
class Decisions:
    """A runner (Agent, ONNXAgent or Router) with one question set or one schema to decide.

    A text input is placed under ``state_key`` (by default the field a preset's instructions
    name, e.g. ``prompt`` for the guard preset); other inputs are states as they are.
    """

    runner: Any
    questions: dict[str, Any] | None = None
    schema: Any = None
    state_key: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.schema is not None and self.questions is None:
            plan_for(self.schema)  # an unsupported schema fails here, not at the first call
        elif self.questions is not None and self.schema is None:
            parse_questions(self.questions)
            self.state_key = self.state_key or state_field(self.questions)
        else:
            raise InvalidRequest("give questions or a schema (exactly one of them)")
        if not hasattr(self.runner, "predict_states"):
            raise InvalidRequest(
                f"runner must be a laya Agent, ONNXAgent or Router, got {type(self.runner).__name__}"
            )

    def state(self, value: Any) -> Any:
        """The state a tool input stands for."""
        if isinstance(value, str) and self.state_key:
            return {self.state_key: value}
        return value

    def answer(self, values: Sequence[Any]) -> list[Any]:
        """One batched call: results (question set) or Decisions (schema), in input order."""
        states = [self.state(v) for v in values]
        if self.schema is not None:
            return self.runner.decide_batch(states, self.schema, **self.options)
        return self.runner.predict_states(states, self.questions, **self.options)
