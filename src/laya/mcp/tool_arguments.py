"""The MCP tools' arguments, declared once: each argument's pydantic type (what the SDK checks and
publishes as the tool's input schema, with the description :data:`laya.request.FIELDS` gives the
request field of that name), and which arguments each tool takes (:data:`TOOLS`). The server
(:mod:`laya.mcp.server`) builds every tool's signature from these; docs/integrations.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from inspect import Parameter
from typing import Annotated, Literal

from pydantic import Field, StrictBool
from pydantic.fields import FieldInfo
from typing_extensions import NotRequired, TypedDict

from ..request import FIELDS
from . import tools

__all__ = [
    "GUIDE",
    "PRESET_NAMES",
    "TOOLS",
    "BatchItem",
    "ToolSpec",
    "parameters",
    "preset_spec",
]


def _about(name: str, more: str = "") -> FieldInfo:
    """The pydantic ``Field`` describing argument ``name`` as the request table does."""
    described: FieldInfo = Field(description=FIELDS[name].description + more)
    return described


Turn = Annotated[
    str | dict[str, object], Field(description="one turn or part: text, or a JSON object")
]
State = Annotated[str | dict[str, object] | list[Turn], _about("state")]
Questions = Annotated[dict[str, dict[str, object]], _about("questions")]
Text = str | None
Positive = Annotated[int, Field(ge=1)]
Unit = Annotated[float, Field(ge=0, le=1)]
Seconds = Annotated[Annotated[float, Field(ge=0)] | None, Field(description="accepted; unused")]


class BatchItem(TypedDict):
    """One request of ``laya_predict_batch`` / ``laya_route_batch``."""

    state: State
    questions: Questions
    model: NotRequired[str]
    task: NotRequired[str]
    lang: NotRequired[str]
    lang_guess: NotRequired[str]
    max_len: NotRequired[Positive]
    head_max_len: NotRequired[Positive]


Batch = Annotated[list[BatchItem], Field(min_length=1, max_length=64)]
PRESET_NAMES = ", ".join([*tools.PRESETS, *tools.PRESET_ALIASES])
GUIDE = (
    "Fast typed decisions (milliseconds, no text generation) with calibrated probabilities. "
    "Use for structured decisions only: classify, score on a rubric, check a statement; not "
    "for open questions. A choice of more than 20 options loses accuracy: use laya_shortlist "
    "or laya_tournament."
)

_TYPES: dict[str, object] = {  # an argument's type where the tool gives it a default
    "state": State,
    "questions": Questions | None,
    "model": Annotated[Text, _about("model")],
    "task": Annotated[Text, _about("task")],
    "lang": Annotated[Text, _about("lang")],
    "lang_guess": Annotated[Text, _about("lang_guess")],
    "max_len": Annotated[Positive | None, _about("max_len")],
    "head_max_len": Annotated[Positive | None, _about("head_max_len")],
    "min_confidence": Annotated[
        Unit | dict[str, Unit] | Literal["certified"] | None, _about("min_confidence")
    ],
    "tournament": Annotated[
        StrictBool | Annotated[int, Field(ge=2)] | None, _about("tournament", " (up to 1000)")
    ],
    "shortlist": Annotated[Positive | None, _about("shortlist", " (up to 1000)")],
    "batch_size": Annotated[
        Annotated[int, Field(ge=0)] | None, _about("batch_size", " (0: unset)")
    ],
    "window": Annotated[Positive | None, _about("window")],
    "stride": Annotated[Positive | None, _about("stride")],
    "requests": Annotated[
        Batch | None,
        Field(description="up to 64 requests, each {state, questions, model?, task?, lang?, ...}"),
    ],
    "states": Annotated[
        Annotated[list[State], Field(min_length=1, max_length=64)] | None,
        Field(description="up to 64 states"),
    ],
    "hooks_timeout": Seconds,
    "sort_by_length": StrictBool,
    "k": Annotated[int, Field(ge=1, description="a positive integer: options kept per choice")],
    "group_size": Annotated[
        int, Field(ge=2, description="an integer of 2 or more: options per group")
    ],
}
_REQUIRED_TYPES: dict[str, object] = {  # where a tool requires it, when that type differs
    "questions": Questions,
    "requests": Annotated[Batch, Field(description="up to 64 requests")],
    "preset": Annotated[str, Field(description=f"one of {PRESET_NAMES}")],
    "schema": Annotated[dict[str, object], Field(description="a JSON schema of an object")],
}
_DEFAULTS: dict[str, object] = {  # what an argument left out is (None unless here)
    "k": 20,
    "group_size": 16,
    "sort_by_length": False,
}


def parameters(spec: ToolSpec) -> list[Parameter]:
    """The tool's arguments as its signature lists them: the required ones, then those with a
    default (None unless :data:`_DEFAULTS` says otherwise), each annotated with its type."""
    kind = Parameter.POSITIONAL_OR_KEYWORD
    required = [
        Parameter(k, kind, annotation=_REQUIRED_TYPES[k] if k in _REQUIRED_TYPES else _TYPES[k])
        for k in spec.required
    ]
    optional = [
        Parameter(k, kind, default=_DEFAULTS.get(k), annotation=_TYPES[k]) for k in spec.optional
    ]
    return required + optional


@dataclass(frozen=True)
class ToolSpec:
    """One tool: the body (:mod:`laya.mcp.tools`) that answers it, its description, its
    arguments (the required ones first, in the order its input schema lists them), and the
    keywords the body gets whatever the call says (``fixed``)."""

    body: Callable[..., dict[str, object]]
    description: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    fixed: Mapping[str, object] = field(default_factory=dict)


_HINTS = ("model", "task", "lang", "lang_guess")
_BUDGETS = ("max_len", "head_max_len", "min_confidence")
_UNUSED = {"hooks_timeout": None}  # hooks run in this process; nothing to time here
_MANY = "A choice over many options (up to 1000)"

TOOLS: dict[str, ToolSpec] = {
    "laya_route": ToolSpec(
        tools.laya_route,
        "Which checkpoint would answer this state, and why (loads nothing).",
        ("state",),
        ("questions", *_HINTS),
    ),
    "laya_predict": ToolSpec(
        tools.laya_predict,
        f"Answer typed questions about one state. {GUIDE}",
        ("state", "questions"),
        (*_HINTS, *_BUDGETS, "tournament", "shortlist"),
    ),
    "laya_predict_batch": ToolSpec(
        tools.laya_predict_batch,
        "Answer many requests in one batched pass: `requests` (each its own state, questions "
        "and overrides), or `states` sharing one `questions`. Results in input order, with "
        f"model_counts and latencies. {GUIDE}",
        (),
        ("requests", "batch_size", "hooks_timeout", "min_confidence", "sort_by_length")
        + ("states", "questions", *_HINTS, "max_len", "head_max_len", "tournament", "shortlist"),
        _UNUSED,
    ),
    "laya_route_batch": ToolSpec(
        tools.laya_route_batch,
        "Route many requests (no budgets): one {model, repo, reason} each.",
        ("requests",),
        ("hooks_timeout",),
        _UNUSED,
    ),
    "laya_shortlist": ToolSpec(
        tools.laya_shortlist,
        f"{_MANY}: each choice read as the k options an embedder ranks nearest the state. {GUIDE}",
        ("state", "questions"),
        ("model", "k", *_HINTS[1:], *_BUDGETS),
    ),
    "laya_tournament": ToolSpec(
        tools.laya_tournament,
        f"{_MANY} played as a tournament of groups. {GUIDE}",
        ("state", "questions"),
        ("model", "group_size", *_HINTS[1:], *_BUDGETS),
    ),
    "laya_preset": ToolSpec(
        tools.laya_preset,
        f"Answer a ready-made question set: {PRESET_NAMES}. {GUIDE}",
        ("preset", "state"),
        (*_HINTS, *_BUDGETS),
    ),
    "laya_decide": ToolSpec(
        tools.laya_decide,
        "Decide a JSON schema about one state: boolean -> yes/no, string enum -> choice, "
        "integer enum or integer with minimum/maximum -> score, array of a string enum -> "
        f"labels; returns the typed object and each field's confidence. {GUIDE}",
        ("state", "schema"),
        ("model", "min_confidence"),
    ),
    "laya_predict_long": ToolSpec(
        tools.laya_predict_long,
        "Answer about a document longer than one window: overlapping windows, each answer "
        f"saying which window decided it. {GUIDE}",
        ("state", "questions"),
        ("model", "window", "stride", "task", "lang"),
    ),
}


def preset_spec(name: str, description: str) -> ToolSpec:
    """The tool ``laya_NAME`` of one preset: its state, a model and a gate."""
    return ToolSpec(
        tools.laya_preset, description, ("state",), ("model", "min_confidence"), {"preset": name}
    )
