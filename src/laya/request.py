"""The fields of one decision request, written once: every front end's schema comes from here.

:data:`FIELDS` names each field a call may carry (the state, the questions, the routing hints,
the budgets, the gate, the choice mode and the long-document scan) with the JSON schema of its
value, a one-line description and its default. The MCP tools' input schemas, the HTTP wire
models and the framework adapters' schemas are generated from it, so they cannot drift apart;
the groups below (:data:`ROUTING_KEYS`, :data:`HOOK_KEYS`...) say which calls take which fields.
Standard library only: ``import laya`` stays light (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, TypedDict

if TYPE_CHECKING:
    from .engine.strategies.tournament import ChoiceMode
    from .hooks.lifecycle import HookOptions

__all__ = [
    "BUDGET_KEYS",
    "Budgets",
    "CHOICE_KEYS",
    "CONTROL_KEYS",
    "FIELDS",
    "HOOK_KEYS",
    "REQUEST_KEYS",
    "ROUTING_KEYS",
    "SCAN_KEYS",
    "JsonSchema",
    "Lang",
    "Request",
    "RequestField",
    "field_schema",
]

JsonSchema = Mapping[str, object]  # a JSON-schema document, read only
Lang = str | Sequence[str | None] | None  # one language code for every state, or one per state


@dataclass(frozen=True)
class RequestField:
    """One field of a request: its ``name``, the JSON ``schema`` of a given value (``null``
    aside: ``nullable`` says whether null means "the default"), a one-line ``description``,
    the ``default`` a call uses when the field is absent, and whether it is ``required``."""

    name: str
    schema: JsonSchema
    description: str
    default: object = None
    nullable: bool = True
    required: bool = False

    def json_schema(self) -> dict[str, object]:
        """The field's full JSON schema: its value's, or null where null is accepted, with its
        description (and default where it has one)."""
        value = _plain(self.schema)
        schema: dict[str, object] = {"anyOf": [value, {"type": "null"}]} if self.nullable else value
        schema["description"] = self.description
        if not self.required:
            schema["default"] = self.default
        return schema


def _frozen(schema: dict[str, object]) -> JsonSchema:
    return MappingProxyType(schema)


def _plain(schema: JsonSchema) -> dict[str, object]:
    """A fresh, JSON-serialisable copy of a (read-only) schema, nested parts included."""
    return {key: _plain_value(value) for key, value in schema.items()}


def _plain_value(value: object) -> object:
    if isinstance(value, Mapping):
        return {str(k): _plain_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_value(v) for v in value]
    return value


_STRING: Final = _frozen({"type": "string"})
_POSITIVE: Final = _frozen({"type": "integer", "minimum": 1})
_UNIT: Final = _frozen({"type": "number", "minimum": 0, "maximum": 1})
_TURN: Final = _frozen({"anyOf": [{"type": "string"}, {"type": "object"}]})

_FIELD_LIST: Final = (
    RequestField(
        "state",
        _frozen(
            {"anyOf": [{"type": "string"}, {"type": "object"}, {"type": "array", "items": _TURN}]}
        ),
        "what to decide about: text, a JSON object (a ticket, an email), or a list of turns "
        "(not null)",
        nullable=False,
        required=True,
    ),
    RequestField(
        "questions",
        _frozen(
            {
                "type": "object",
                "additionalProperties": {"type": "object"},
                "minProperties": 1,
                "maxProperties": 64,
            }
        ),
        "question id -> {type: choice|score|noul, instructions, criteria?}: choice criteria map "
        "label -> description (or list labels), score criteria list the levels lowest first, "
        "noul asks whether a statement holds",
        nullable=False,
        required=True,
    ),
    RequestField("model", _STRING, "pin a checkpoint; omit (or 'auto') for the router's choice"),
    RequestField("task", _STRING, "typed-decisions workflow or checkpoint hint"),
    RequestField("lang", _STRING, "the state's language code, decisive (skips detection)"),
    RequestField("lang_guess", _STRING, "a soft language hint (a code)"),
    RequestField("max_len", _POSITIVE, "a positive integer: tokens per row (at most the limit)"),
    RequestField("head_max_len", _POSITIVE, "a positive integer: tokens for each question's head"),
    RequestField(
        "min_confidence",
        _frozen(
            {
                "anyOf": [
                    dict(_UNIT),
                    {"type": "object", "additionalProperties": dict(_UNIT)},
                    {"const": "certified"},
                ]
            }
        ),
        "abstain below this answer_confidence: one number in [0, 1], or by bucket; 'certified': "
        "abstain unless the answer automates (a certified calibration file)",
    ),
    RequestField(
        "tournament",
        _frozen({"anyOf": [{"type": "boolean"}, {"type": "integer", "minimum": 2}]}),
        "answer a choice of many options by tournament: groups of this many options (2 or "
        "more), true for the largest that fit, false for none",
    ),
    RequestField(
        "shortlist",
        _POSITIVE,
        "read each choice as the k options an embedder ranks nearest the state",
    ),
    RequestField("batch_size", _POSITIVE, "a positive integer: at most this many states per pass"),
    RequestField("window", _POSITIVE, "a positive integer: tokens per window of a long document"),
    RequestField("stride", _POSITIVE, "a positive integer: tokens between window starts"),
    RequestField(
        "aggregate",
        _frozen({"type": "string", "enum": ["auto"]}),
        "how a long document's windows combine: 'auto', each answer from the window most sure "
        "of it",
        default="auto",
        nullable=False,
    ),
)

FIELDS: Final[Mapping[str, RequestField]] = MappingProxyType({f.name: f for f in _FIELD_LIST})

ROUTING_KEYS: Final = ("model", "task", "lang", "lang_guess")  # what picks the checkpoint
BUDGET_KEYS: Final = ("max_len", "head_max_len")  # a request's token budgets
CONTROL_KEYS: Final = (*ROUTING_KEYS, *BUDGET_KEYS)  # a request's keys besides state, questions
REQUEST_KEYS: Final = ("state", "questions", *CONTROL_KEYS)  # one request, wherever it comes from
CHOICE_KEYS: Final = ("tournament", "shortlist")  # how a choice of many options is read
SCAN_KEYS: Final = ("window", "stride", "aggregate")  # a long document's scan
HOOK_KEYS: Final = ("hooks", "on_predict_start", "on_predict_end", "hooks_raise", "hooks_timeout")


def field_schema(names: tuple[str, ...]) -> dict[str, object]:
    """The JSON schema of an object holding ``names`` (each a key of :data:`FIELDS`): what a
    front end that takes exactly those fields accepts."""
    return {
        "type": "object",
        "properties": {name: FIELDS[name].json_schema() for name in names},
        "required": [name for name in names if FIELDS[name].required],
    }


class Budgets(TypedDict):
    """A request's token budgets (None: the checkpoint's)."""

    max_len: int | None
    head_max_len: int | None


def _no_hooks() -> HookOptions:
    return {}


@dataclass(frozen=True)
class Request:
    """One public call's options, built once where the call enters and read by one internal
    path (docs/architecture.md): routing hints, token budgets, the gate, how many-option
    choices are read, a long document's scan, and the call's hooks. The state(s) and questions
    travel beside it; each value is checked where it is read, so errors stay as they were.

    ``tournament``, ``shortlist``, ``embed`` and ``seed`` make the choice mode
    (:meth:`choice_mode`); ``scan``: the state is a long document read in overlapping windows
    (``window``, ``stride``, ``aggregate``); ``defaults=False`` leaves the process-wide default hooks out (a
    Router fires those once, at its own level).
    """

    model: object = None
    task: object = None
    lang: object = None  # a Lang for a runtime; a Router's requests carry one code
    lang_guess: object = None
    max_len: int | None = None
    head_max_len: int | None = None
    batch_size: int | None = None
    min_confidence: object = None
    tournament: object = None
    shortlist: int | None = None
    embed: Callable[[list[str]], object] | None = None
    seed: int = 0
    scan: bool = False
    window: int | None = None
    stride: int | None = None
    aggregate: str = "auto"
    hooks: HookOptions = field(default_factory=_no_hooks)
    defaults: bool = True

    @classmethod
    def read(cls, arguments: Mapping[str, Any], **overrides: Any) -> Request:
        """A public call's request from its arguments (a published-signature shim passes its
        ``locals()``): each argument named like a field, the five hook arguments
        (:data:`HOOK_KEYS`) as ``hooks``, then ``overrides`` (``k`` is a ``shortlist``...).
        Like transformers' ``_sanitize_parameters``: the one place a call's options are sorted."""
        from .hooks.lifecycle import hook_options

        given = {k: v for k, v in arguments.items() if k in _OPTION_NAMES}
        hooks = hook_options(*(arguments.get(key) for key in HOOK_KEYS))
        return cls(**{**given, **overrides}, hooks=hooks)

    def hints(self) -> dict[str, object]:
        """The routing hints (:data:`ROUTING_KEYS`), absent ones None."""
        return {key: getattr(self, key) for key in ROUTING_KEYS}

    def budgets(self) -> Budgets:
        """The token budgets (:data:`BUDGET_KEYS`), absent ones None (the checkpoint's)."""
        return Budgets(max_len=self.max_len, head_max_len=self.head_max_len)

    def asks_choice_mode(self) -> bool:
        """Whether the call asked for a tournament or a shortlist at all."""
        return not (self.tournament is None and self.shortlist is None and self.embed is None)

    def choice_mode(self) -> ChoiceMode | None:
        """The many-option mode the call asked for (None: an ordinary call), checked now;
        ``laya.engine.strategies.tournament`` loads only when one is asked for."""
        if not self.asks_choice_mode():
            return None
        from .engine.strategies.tournament import choice_mode

        return choice_mode(self.tournament, self.shortlist, self.embed, self.seed)

    def with_choice_mode(self) -> Request:
        """This request with its choice mode checked and built once: ``tournament`` then holds
        the :class:`~laya.engine.strategies.tournament.ChoiceMode` (or None for none)."""
        if not self.asks_choice_mode():
            return self
        return replace(self, tournament=self.choice_mode(), shortlist=None, embed=None, seed=0)


_OPTION_NAMES: Final = frozenset(f.name for f in fields(Request)) - {"hooks"}
