"""The one argument of laya's LangChain and LlamaIndex tools, and how arguments that do not fit it
are told back: each field named with what it takes, no validator URL (docs/integrations.md)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from ..request import FIELDS

__all__ = ["StateInput", "bad_arguments"]


class StateInput(BaseModel):
    """The tool's one argument."""

    model_config = ConfigDict(extra="forbid")

    state: str | dict[str, object] | list[object] = Field(description=FIELDS["state"].description)


def bad_arguments(tool: str, error: ValidationError) -> str:
    """``tool: bad arguments: <field>: <what is wrong>; ...`` and the call that fits."""
    problems: dict[str, str] = {}
    for e in error.errors(include_url=False):
        field = str(e["loc"][0]) if e["loc"] else "input"
        problems.setdefault(field, _problem(field, e))
    told = "; ".join(f"{field}: {problem}" for field, problem in problems.items())
    return f"{tool}: bad arguments: {told}; call it with state=<text, a JSON object or list>"


def _problem(field: str, error: ErrorDetails) -> str:
    if error["type"] == "missing":
        return "required"
    if error["type"] == "extra_forbidden":
        return "not an argument of this tool"
    known = StateInput.model_fields.get(field)
    wanted = known.description if known is not None else error["msg"]
    return f"got {type(error['input']).__name__}; expected {wanted}"
