"""The replies of ``laya serve`` as pydantic models: what its OpenAPI document promises.

They describe what :mod:`laya.server.replies` sends (the server builds plain dicts and does not
validate them on the way out); ``tests/test_server_fuzz.py`` checks real replies against them.
Fields marked optional are absent in the strict Jev shape (``LAYA_JEV_STRICT=1``) or appear only
when asked for (the gate's fields with ``min_confidence``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BatchReply",
    "ErrorReply",
    "HealthReply",
    "ModelsReply",
    "SystemOneReply",
]

Label = str | int | float | bool


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Action(_Open):
    act_probability: float


class _Answer(_Open):
    confidence: float | None = Field(
        None, description="choice/score: 1 - normalised entropy; noul: max(p, 1 - p)"
    )
    answer_confidence: float | None = Field(None, description="the top probability")
    action: Action | None = None
    low_confidence: bool | None = Field(None, description="with min_confidence: below it")
    abstention: Literal["passed", "abstained", "unevaluated"] | None = None
    abstention_threshold: float | None = None


class Tournament(BaseModel):
    finalists: list[str] = Field(description="the labels of the last group")
    rounds: int = Field(description="rounds of groups, the last one included")


class Shortlist(BaseModel):
    candidates: list[Label] = Field(description="the labels the model read, nearest first")


class ChoiceAnswer(_Answer):
    type: Literal["choice"]
    choice: Label
    probabilities: dict[str, float] | None
    x_jev_confidence: float | None = Field(None, description="Jev's confidence formula")
    tournament: Tournament | None = Field(None, description="with tournament: how it was decided")
    shortlist: Shortlist | None = Field(None, description="with shortlist: the options read")


class ScoreAnswer(_Answer):
    type: Literal["score"]
    score: float = Field(description="the expected level index")
    legend: dict[str, str] | None = None
    probabilities: dict[str, float] | None
    x_jev_confidence: float | None = None


class NoulAnswer(_Answer):
    type: Literal["noul"]
    noul: float = Field(description="P(the statement is true)")


Answer = Annotated[ChoiceAnswer | ScoreAnswer | NoulAnswer, Field(discriminator="type")]


class Usage(_Open):
    input_tokens: int
    output_tokens: int
    state_tokens: int | None = None
    state_tokens_dropped: int | None = None
    truncated: bool | None = None
    truncated_questions: list[str | int] | None = None


class Routing(_Open):
    model: str
    repo: str | None = None
    reason: str
    detection: dict[str, Any] | None = None
    workflow: str | None = None


class SystemOneReply(_Open):
    """One state's answers (``POST /v1/systemone``)."""

    model: str
    answers: dict[str, Answer]
    usage: Usage
    routing: Routing | None = None


class TotalUsage(_Open):
    input_tokens: int
    output_tokens: int


class BatchReply(_Open):
    """Every state's answers, in input order (``POST /v1/systemone/batch``)."""

    results: list[SystemOneReply]
    total_usage: TotalUsage


class ErrorReply(BaseModel):
    """Every refusal and failure: one line naming the field and the fix."""

    detail: str


class Fallback(BaseModel):
    count: int
    last_reason: str


class HealthReply(_Open):
    """Liveness; the detail fields only without a key or with the bearer."""

    status: Literal["ok"]
    loaded: list[str] | None = None
    revisions: dict[str, str | None] | None = None
    precision: dict[str, str | None] | None = None
    device: str | None = None
    device_is_preference: bool | None = None
    checkpoint_devices: dict[str, str] | None = None
    cpu_fallbacks: dict[str, Fallback] | None = None
    default_model: str | None = None
    route: str | None = None
    in_flight: int | None = None
    max_concurrent: int | None = None


class CheckpointEntry(BaseModel):
    repo: str | None
    subfolder: str | None
    resident: bool


class ModelsReply(BaseModel):
    default: str
    route: str
    checkpoints: dict[str, CheckpointEntry]
    aliases: dict[str, str]
