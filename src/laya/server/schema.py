"""The replies of ``laya serve``: what its OpenAPI document promises.

A decision reply is a :class:`laya.engine.result.Result` (one state) or a list of them with the
summed usage: the document is generated from those types, not written again here. With
``LAYA_JEV_STRICT=1`` the reply is the strict Jev shape, the projection below. ``HealthReply``,
``ModelsReply``, ``JevModelsReply`` and ``ErrorReply`` are the server's own. ``tests/test_server_fuzz.py`` checks real
replies against the document.
"""

from __future__ import annotations

from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict
from typing_extensions import NotRequired, TypedDict

from ..engine import result
from ..engine.questions import Label
from ..engine.result import Result, Tournament

__all__ = [
    "BatchReply",
    "ErrorReply",
    "HealthReply",
    "JevModelsReply",
    "ModelsReply",
    "StrictBatchReply",
    "StrictResult",
    "SystemOneReply",
    "reply_types",
]

SystemOneReply = Result


class TotalUsage(TypedDict):
    """Tokens of every state of a batch, summed."""

    input_tokens: int
    output_tokens: int


class BatchReply(TypedDict):
    """Every state's answers, in input order (``POST /v1/systemone/batch``)."""

    results: list[Result]
    total_usage: TotalUsage


class StrictChoice(TypedDict):
    """A ``choice`` in the strict Jev shape; ``confidence`` is Jev's formula."""

    type: Literal["choice"]
    choice: Label | None
    confidence: NotRequired[float]
    probabilities: NotRequired[dict[str, float]]
    x_tournament: NotRequired[Tournament]


class StrictScore(TypedDict):
    """A ``score`` in the strict Jev shape; ``confidence`` is Jev's formula."""

    type: Literal["score"]
    score: float
    confidence: NotRequired[float]
    probabilities: NotRequired[dict[str, float]]
    legend: NotRequired[dict[str, str]]


class StrictNoul(TypedDict):
    """A ``noul`` in the strict Jev shape."""

    type: Literal["noul"]
    noul: float


class StrictResult(TypedDict):
    """One state's answers in the strict Jev shape (``LAYA_JEV_STRICT=1``)."""

    model: str
    answers: dict[str, StrictChoice | StrictScore | StrictNoul]
    usage: TotalUsage


class StrictBatchReply(TypedDict):
    """Every state's answers in the strict Jev shape, in input order."""

    results: list[StrictResult]
    total_usage: TotalUsage


def reply_types(strict: bool) -> tuple[Any, Any]:
    """The single and batch reply types a server with this strictness sends."""
    return (StrictResult, StrictBatchReply) if strict else (SystemOneReply, BatchReply)


# Field descriptions in the document come from the result types' attribute docstrings.
for _type in (
    result.AnswerFields,
    result.Action,
    result.Window,
    result.Tournament,
    result.Shortlist,
    result.ChoiceAnswer,
    result.ScoreAnswer,
    result.NoulAnswer,
    result.Usage,
):
    cast(Any, _type).__pydantic_config__ = ConfigDict(use_attribute_docstrings=True)


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


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
    batches: dict[str, int] | None = None
    idle_unload_seconds: float | None = None
    idle_seconds: float | None = None


class CheckpointEntry(BaseModel):
    repo: str | None
    subfolder: str | None
    resident: bool


class JevModel(BaseModel):
    name: str
    description: str
    release_date: str


class JevModelsReply(BaseModel):
    """The checkpoints, in Jev's ``GET /v1/models`` shape."""

    models: list[JevModel]


class ModelsReply(BaseModel):
    default: str
    route: str
    checkpoints: dict[str, CheckpointEntry]
    aliases: dict[str, str]
