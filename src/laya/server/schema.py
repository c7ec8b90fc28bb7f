"""The replies of ``laya serve``: what its OpenAPI document promises.

A decision reply is a :class:`laya.engine.result.Result` (one state) as the wire shows it, or a
list of them with the summed usage: the published fields are :mod:`laya.engine.result`'s own
types, and what laya adds goes out prefixed ``x_`` (:mod:`laya.server.replies`; a test checks the
two agree). With
``LAYA_JEV_STRICT=1`` the reply is the strict Jev shape, the projection below. ``HealthReply``,
``ModelsReply``, ``JevModelsReply`` and ``ErrorReply`` are the server's own. ``tests/test_server_fuzz.py`` checks real
replies against the document.
"""

from __future__ import annotations

from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict
from typing_extensions import NotRequired, TypedDict

from ..engine import result
from ..engine.questions import Label, QuestionId
from ..engine.result import (
    CalibrationStamp,
    LanguageWarning,
    Routing,
    Shortlist,
    Tournament,
    Usage,
)

__all__ = [
    "BatchReply",
    "ChoiceReply",
    "ErrorReply",
    "HealthReply",
    "JevModelsReply",
    "ModelsReply",
    "NoulReply",
    "ScoreReply",
    "StrictBatchReply",
    "StrictResult",
    "SystemOneReply",
    "reply_types",
]

Strategy = Literal["tournament", "shortlist", "shortlist+tournament"]


class ChoiceReply(result.ChoiceFields):
    """A ``choice`` in a reply: the published fields, then what laya adds, prefixed ``x_``."""

    x_jev_confidence: NotRequired[float]
    """Jev's own confidence formula on the same probabilities."""
    x_unsure: NotRequired[bool]
    """laya's ``unsure``: true when ``answer_confidence`` is under the checkpoint's
    ``recommended_min_confidence``."""
    x_abstain: NotRequired[float]
    """laya's ``abstain``: with ``"abstain": true``, the probability of "none of these"."""
    x_tournament: NotRequired[Tournament]
    x_shortlist: NotRequired[Shortlist]
    x_strategy: NotRequired[Strategy]
    """How a choice not read in one plain pass was answered (docs/server.md)."""
    x_automate: NotRequired[bool]
    """laya's ``automate``: with a certified calibration file, whether the answer reaches its
    certified threshold (docs/calibration.md)."""
    x_prediction_set: NotRequired[list[Label]]
    """laya's ``prediction_set``: with a certified calibration file, the labels that hold the
    right one with probability at least ``1 - risk``."""


class ScoreReply(result.ScoreFields):
    """A ``score`` in a reply."""

    x_jev_confidence: NotRequired[float]
    """Jev's own confidence formula on the same probabilities."""
    x_unsure: NotRequired[bool]
    """laya's ``unsure`` marker."""
    x_automate: NotRequired[bool]
    """laya's ``automate``: with a certified calibration file, whether the answer reaches its
    certified threshold (docs/calibration.md)."""


class NoulReply(result.NoulFields):
    """A ``noul`` in a reply."""

    x_unsure: NotRequired[bool]
    """laya's ``unsure`` marker."""
    x_automate: NotRequired[bool]
    """laya's ``automate``: with a certified calibration file, whether the answer reaches its
    certified threshold (docs/calibration.md)."""


class SystemOneReply(TypedDict):
    """One state's answers (``POST /v1/systemone``): the published result's fields, then what
    laya adds, prefixed ``x_``."""

    model: str
    answers: dict[QuestionId, ChoiceReply | ScoreReply | NoulReply]
    usage: Usage
    routing: NotRequired[Routing]
    x_calibration: NotRequired[CalibrationStamp]
    """laya's ``calibration``: which calibration file produced the answers."""
    x_warnings: NotRequired[list[LanguageWarning]]
    """laya's ``warnings``: e.g. a state in a language the checkpoint does not read."""


class TotalUsage(TypedDict):
    """Tokens of every state of a batch, summed."""

    input_tokens: int
    output_tokens: int


class BatchReply(TypedDict):
    """Every state's answers, in input order (``POST /v1/systemone/batch``)."""

    results: list[SystemOneReply]
    total_usage: TotalUsage


class StrictChoice(TypedDict):
    """A ``choice`` in the strict Jev shape; ``confidence`` is Jev's formula."""

    type: Literal["choice"]
    choice: Label | None
    confidence: NotRequired[float]
    probabilities: NotRequired[dict[str, float]]
    x_tournament: NotRequired[Tournament]
    x_strategy: NotRequired[Strategy]


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
    result.ChoiceFields,
    result.ScoreFields,
    result.NoulFields,
    result.Usage,
    ChoiceReply,
    ScoreReply,
    NoulReply,
    SystemOneReply,
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
    available: bool


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
