"""A user's type -> the questions laya asks, and how each answer becomes a field value.

A schema is a pydantic v2 model class, a dataclass, a ``TypedDict`` or a JSON-schema dict. Each
field becomes one question (a multi-label field one ``noul`` per option):

* ``bool`` -> noul; ``Literal[...]`` / ``Enum`` / ``StrEnum`` -> choice;
* ``IntEnum``, ``Annotated[int, Scale(...)]`` or an ``int`` with ``ge``/``le`` bounds -> score;
* ``list`` / ``set`` / ``frozenset`` / ``tuple[X, ...]`` of a ``Literal`` or ``Enum`` -> labels;
* ``Optional[X]`` -> X, answered ``None`` when it abstains.

The field's description (``Field(description=...)``, ``field(metadata={"description": ...})``, a
string in ``Annotated``, or the docstring under the attribute) is the instruction; member
docstrings, :class:`Criteria` or ``oneOf``/``x-laya-criteria`` describe the options. A plan is
built once per schema (cached); anything unsupported raises :class:`~laya.errors.InvalidSchema`
(a ``TypeError``) naming the field and the supported forms, before any forward pass.
Pure Python: pydantic is never imported here (a pydantic class is recognised by its methods).
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import functools
import inspect
import json
import re
import textwrap
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

from ..errors import InvalidSchema

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["Criteria", "FieldPlan", "Option", "Plan", "Scale", "plan_for"]

MAX_LEVELS = 32
MAX_OPTIONS = 100
SUPPORTED = (
    "bool, Literal[...], Enum or StrEnum, IntEnum, Annotated[int, Scale(...)] or int with ge/le "
    "bounds, list/set/frozenset/tuple[X, ...] of a Literal or Enum, and Optional[any of these]"
)
_CONTAINERS = (list, set, frozenset, tuple)
_WRAPPERS = {"Required", "NotRequired", "ReadOnly"}


class Scale:
    """The levels of a score field, lowest first: ``Annotated[int, Scale("low", "mid", "high")]``.

    The value is the level index (plus the field's ``ge`` bound when it has one).
    """

    def __init__(self, *levels: str) -> None:
        self.levels = tuple(levels)


class Criteria:
    """Descriptions of a choice's options: ``Annotated[Literal["a", "b"], Criteria(a="...")]``."""

    def __init__(self, texts: Mapping[Any, str] | None = None, /, **more: str) -> None:
        self.texts = {**(texts or {}), **more}


@dataclass(frozen=True)
class Option:
    """One option (or score level): the label the model reads, the value returned, its text."""

    label: Any
    value: Any
    text: str | None = None


@dataclass(frozen=True)
class FieldPlan:
    """One field: its kind (choice, score, noul, labels), instruction, options and wrapping."""

    name: str
    kind: str
    instruction: str
    options: tuple[Option, ...] = ()
    optional: bool = False
    container: Callable[[list[object]], object] | None = None

    def question_ids(self) -> list[str]:
        """The question ids this field asks: its name, or ``name[label]`` per option (labels)."""
        if self.kind == "labels":
            return [f"{self.name}[{o.label}]" for o in self.options]
        return [self.name]

    def questions(self) -> dict[str, dict[str, object]]:
        """The question definitions of this field, keyed by question id."""
        if self.kind == "noul":
            return {self.name: {"type": "noul", "instructions": self.instruction}}
        if self.kind == "labels":
            shown = [f"{o.label} ({o.text})" if o.text else str(o.label) for o in self.options]
            return {
                qid: {"type": "noul", "instructions": f"{self.instruction}: {text}"}
                for qid, text in zip(self.question_ids(), shown)
            }
        if self.kind == "score":
            criteria: object = [o.text or str(o.label) for o in self.options]
        elif any(o.text for o in self.options):
            criteria = {o.label: o.text or "" for o in self.options}
        else:
            criteria = [o.label for o in self.options]
        return {
            self.name: {"type": self.kind, "instructions": self.instruction, "criteria": criteria}
        }


@dataclass(frozen=True)
class Plan:
    """The questions of a schema and how to build an instance of it from field values."""

    name: str
    fields: tuple[FieldPlan, ...]
    questions: dict[str, dict[str, object]]
    build: Callable[[dict[str, Any]], Any]


# --------------------------------------------------------------------------- entry point


def plan_for(schema: object) -> Plan:
    """The (cached) plan of a pydantic model, dataclass, TypedDict or JSON-schema dict."""
    if isinstance(schema, Mapping):
        return _json_plan(json.dumps(schema, sort_keys=True, default=str))
    if not isinstance(schema, type):
        raise InvalidSchema(
            f"schema must be a pydantic model class, a dataclass, a TypedDict or a JSON-schema "
            f"dict, got {type(schema).__name__} {schema!r}"
        )
    return _class_plan(schema)


@functools.lru_cache(maxsize=256)
def _class_plan(cls: type) -> Plan:
    build: Callable[[dict[str, Any]], Any]  # field values -> an instance of the user's class
    if _is_pydantic(cls):
        specs, build = _pydantic_fields(cls), cls.model_validate
    elif dataclasses.is_dataclass(cls):
        specs, build = _dataclass_fields(cls), lambda values: cls(**values)
    elif typing.is_typeddict(cls) or _is_typeddict(cls):
        specs, build = _typeddict_fields(cls), lambda values: cls(**values)
    else:
        raise InvalidSchema(
            f"schema {cls.__name__} is not a pydantic model, a dataclass or a TypedDict; "
            "describe the decision as one of those, or as a JSON-schema dict"
        )
    docs = attribute_docs(cls)
    fields = tuple(
        _field(cls.__name__, name, key, tp, meta, desc or docs.get(name))
        for name, key, tp, meta, desc in specs
    )
    return _plan(cls.__name__, fields, build)


def _is_typeddict(cls: type) -> bool:
    from typing_extensions import is_typeddict  # TypedDicts built by typing_extensions

    return is_typeddict(cls)


def _plan(name: str, fields: tuple[FieldPlan, ...], build: Callable[[dict[str, Any]], Any]) -> Plan:
    if not fields:
        raise InvalidSchema(f"{name} has no fields to decide; add at least one")
    questions: dict[str, dict[str, object]] = {}
    for f in fields:
        questions.update(f.questions())
    return Plan(name, fields, questions, build)


# --------------------------------------------------------------------------- Python classes

Spec = tuple[
    str, str, object, list[object], "str | None"
]  # name, key in the values, type, metadata, doc


def _is_pydantic(cls: type) -> TypeGuard[type[BaseModel]]:
    """A pydantic model class, told by its members (pydantic is not imported for it)."""
    return hasattr(cls, "model_fields") and hasattr(cls, "model_validate")


def _pydantic_fields(cls: type[BaseModel]) -> list[Spec]:
    return [
        (name, info.alias or name, info.annotation, list(info.metadata), info.description)
        for name, info in cls.model_fields.items()
    ]


def _dataclass_fields(cls: type) -> list[Spec]:
    hints = _hints(cls)
    return [
        (f.name, f.name, hints[f.name], [], f.metadata.get("description"))
        for f in dataclasses.fields(cls)
        if f.init
    ]


def _typeddict_fields(cls: type) -> list[Spec]:
    return [(name, name, tp, [], None) for name, tp in _hints(cls).items()]


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception as exc:  # noqa: BLE001 - an unresolvable annotation names the schema
        raise InvalidSchema(f"schema {cls.__name__}: cannot read its annotations ({exc})") from None


def attribute_docs(cls: type) -> dict[str, str]:
    """Docstrings written under class attributes (``x: int`` then ``\"\"\"text\"\"\"``), by name."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
        node = ast.parse(source).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return {}
    body = node.body if isinstance(node, ast.ClassDef) else []
    docs = {}
    for node, following in zip(body, body[1:]):
        target = getattr(node, "target", None) or (getattr(node, "targets", None) or [None])[0]
        doc = getattr(following, "value", None)
        if (
            isinstance(target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(doc, ast.Constant)
            and isinstance(doc.value, str)
        ):
            docs[target.id] = inspect.cleandoc(doc.value)
    return docs


def _field(
    schema: str, name: str, key: str, tp: Any, meta: list[object], doc: str | None
) -> FieldPlan:
    """Map one annotated field to its plan; unsupported forms raise naming the field."""
    where = f"field {name!r} of {schema}"
    tp, meta, optional = _unwrap(tp, list(meta), where)
    description = doc or next((m for m in meta if isinstance(m, str)), None)
    description = description or _nested_description(meta)
    origin = typing.get_origin(tp)
    if tp is bool:
        return FieldPlan(key, "noul", description or f"Is `{name}` true?", (), optional)
    if origin is typing.Literal or _is_enum(tp) and not _is_int_enum(tp):
        options = _choice_options(tp, meta, where)
        instruction = description or _class_doc(tp) or f"What is `{name}`?"
        return FieldPlan(key, "choice", instruction, options, optional)
    if _is_int_enum(tp) or tp is int:
        levels = _levels(tp, meta, where)
        instruction = (
            description or _class_doc(tp) or f"Score `{name}` from the lowest level to the highest."
        )
        return FieldPlan(key, "score", instruction, levels, optional)
    if origin in _CONTAINERS:
        item = _container_item(tp, origin, where)
        if typing.get_origin(item) is typing.Literal or _is_enum(item) and not _is_int_enum(item):
            options = _choice_options(item, meta, where)
            instruction = description or _class_doc(item) or f"`{name}` includes"
            return FieldPlan(key, "labels", instruction, options, optional, origin)
    plain = typing.get_origin(tp) is None and isinstance(tp, type)
    shown = tp.__name__ if plain else repr(tp).replace("typing.", "")
    raise InvalidSchema(f"{where}: {shown} is not supported; use {SUPPORTED}")


def _unwrap(tp: Any, meta: list[object], where: str) -> tuple[Any, list[object], bool]:
    """Strip ``Annotated`` (collecting metadata), ``Required``-style wrappers and ``Optional``."""
    optional = False
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp, meta = tp.__origin__, meta + list(tp.__metadata__)
        elif {getattr(origin, "_name", None), getattr(origin, "__name__", None)} & _WRAPPERS:
            tp = typing.get_args(tp)[0]
        elif origin is typing.Union or origin is types.UnionType:
            rest = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(rest) != 1:
                raise InvalidSchema(
                    f"{where}: a union of {len(rest)} types is not supported; use one type, "
                    f"or Optional[X] for an answer that may abstain ({SUPPORTED})"
                )
            tp, optional = rest[0], True
        else:
            return tp, meta, optional


def _nested_description(meta: list[object]) -> str | None:
    """A pydantic ``Field(description=...)`` used inside ``Annotated`` (dataclass, TypedDict)."""
    for m in meta:
        description = getattr(m, "description", None)
        if isinstance(description, str) and description.strip():
            return description
    return None


def _is_enum(tp: object) -> TypeGuard[type[enum.Enum]]:
    return isinstance(tp, type) and issubclass(tp, enum.Enum)


def _is_int_enum(tp: object) -> bool:
    return _is_enum(tp) and issubclass(tp, int)


def _class_doc(tp: object) -> str | None:
    doc = tp.__dict__.get("__doc__") if isinstance(tp, type) and _is_enum(tp) else None
    return inspect.cleandoc(doc) if isinstance(doc, str) and doc.strip() else None


def _container_item(tp: Any, origin: Any, where: str) -> Any:
    args = typing.get_args(tp)
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        raise InvalidSchema(f"{where}: a tuple field must be tuple[X, ...]; use {SUPPORTED}")
    if not args:
        raise InvalidSchema(f"{where}: a bare {origin.__name__} has no options; use {SUPPORTED}")
    item, _, optional = _unwrap(args[0], [], where)
    if optional:
        raise InvalidSchema(f"{where}: the items of a multi-label field cannot be Optional")
    return item


def _choice_options(tp: object, meta: list[object], where: str) -> tuple[Option, ...]:
    """The options of a Literal or an Enum: label, returned value, description."""
    given = {}
    for m in meta:
        if isinstance(m, Criteria):
            given.update(m.texts)
    if _is_enum(tp):
        docs = attribute_docs(tp)
        members = list(tp)
        options = [
            Option(m.value if isinstance(m.value, str) else m.name, m, docs.get(m.name))
            for m in members
        ]
        if not members:
            raise InvalidSchema(f"{where}: the enum {tp.__name__} has no members; add at least two")
    else:
        values = typing.get_args(tp)
        for v in values:
            if isinstance(v, bool) or not isinstance(v, (str, int)):
                raise InvalidSchema(
                    f"{where}: Literal values must be strings or integers, got {v!r}; "
                    "use bool for a yes/no field"
                )
        options = [Option(v, v) for v in values]
    options = [
        Option(o.label, o.value, given.get(o.label, given.get(o.value, o.text))) for o in options
    ]
    return _checked_options(options, where)


def _check_count(items: list[Option], where: str, owner: str, noun: str, most: int) -> None:
    """A choice's options or a score's levels: at least two, at most ``most``."""
    if len(items) < 2:
        raise InvalidSchema(
            f"{where}: a {owner} needs at least two {noun}s, got {len(items)}; "
            f"add {noun}s, or use bool for a yes/no field"
        )
    if len(items) > most:
        raise InvalidSchema(f"{where}: {len(items)} {noun}s; a {owner} takes at most {most}")


def _checked_options(options: list[Option], where: str) -> tuple[Option, ...]:
    _check_count(options, where, "choice", "option", MAX_OPTIONS)
    labels = [o.label for o in options]
    if len(set(map(str, labels))) != len(labels):
        raise InvalidSchema(f"{where}: options {labels!r} repeat a label; make each distinct")
    return tuple(options)


def _levels(tp: Any, meta: list[object], where: str) -> tuple[Option, ...]:
    """The levels of a score: IntEnum members, a Scale, or the ge/le bounds."""
    scale = next((m for m in meta if isinstance(m, Scale)), None)
    if _is_int_enum(tp):
        docs = attribute_docs(tp)
        members = sorted(tp, key=int)
        levels = [Option(m.name.lower(), m, docs.get(m.name)) for m in members]
        if scale is not None:
            levels = _named_levels(levels, scale, where)
        return _checked_levels(levels, where)
    low, high = _bounds(meta, where)
    if scale is not None:
        first = 0 if low is None else low
        levels = [Option(str(first + i), first + i, text) for i, text in enumerate(scale.levels)]
        if high is not None and first + len(levels) - 1 != high:
            raise InvalidSchema(
                f"{where}: Scale has {len(levels)} levels but the bounds {first}..{high} "
                f"hold {high - first + 1}; make them agree"
            )
        return _checked_levels(levels, where)
    if low is None or high is None:
        raise InvalidSchema(
            f"{where}: an int field is a score and needs its levels: Annotated[int, "
            f"Scale('low', 'mid', 'high')], ge/le bounds, or an IntEnum ({SUPPORTED})"
        )
    if high - low + 1 > MAX_LEVELS:
        raise InvalidSchema(
            f"{where}: bounds {low}..{high} make {high - low + 1} levels; a score takes at most "
            f"{MAX_LEVELS} (narrow the bounds or describe the levels with Scale(...))"
        )
    return _checked_levels([Option(str(v), v) for v in range(low, high + 1)], where)


def _named_levels(levels: list[Option], scale: Scale, where: str) -> list[Option]:
    if len(scale.levels) != len(levels):
        raise InvalidSchema(
            f"{where}: Scale has {len(scale.levels)} levels for {len(levels)} enum members"
        )
    return [Option(o.label, o.value, text) for o, text in zip(levels, scale.levels)]


def _checked_levels(levels: list[Option], where: str) -> tuple[Option, ...]:
    _check_count(levels, where, "score", "level", MAX_LEVELS)
    for o in levels:
        if o.text is not None and not (isinstance(o.text, str) and o.text.strip()):
            raise InvalidSchema(f"{where}: level {o.label!r} needs a non-empty description")
    return tuple(levels)


def _bounds(meta: list[object], where: str) -> tuple[int | None, int | None]:
    """``ge``/``gt``/``le``/``lt`` from annotated-types or pydantic metadata (duck-typed)."""
    low = high = None
    for m in meta:
        nested = getattr(m, "metadata", None)
        if isinstance(nested, list) and nested is not meta:
            lo, hi = _bounds(nested, where)
            low, high = lo if lo is not None else low, hi if hi is not None else high
        for attr, shift, is_low in (
            ("ge", 0, True),
            ("gt", 1, True),
            ("le", 0, False),
            ("lt", -1, False),
        ):
            value = getattr(m, attr, None)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidSchema(f"{where}: bound {attr}={value!r} must be an integer")
            if is_low:
                low = value + shift
            else:
                high = value + shift
    return low, high


# --------------------------------------------------------------------------- JSON schema


@functools.lru_cache(maxsize=256)
def _json_plan(text: str) -> Plan:
    schema = json.loads(text)
    name = str(schema.get("title") or "schema")
    if schema.get("type", "object") != "object" or not isinstance(schema.get("properties"), dict):
        raise InvalidSchema(
            f"JSON schema {name}: the top level must be an object with 'properties' (one per field)"
        )
    fields = tuple(
        _json_field(name, key, prop, schema) for key, prop in schema["properties"].items()
    )
    return _plan(name, fields, dict)


def _deref(
    prop: Any, root: dict[str, Any], where: str, seen: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Inline a local ``$ref`` (``#/$defs/X`` or ``#/definitions/X``); a cycle is refused."""
    if not isinstance(prop, dict):
        raise InvalidSchema(f"{where}: a property must be a JSON object, got {prop!r}")
    ref = prop.get("$ref")
    if ref is None:
        return prop
    match = re.fullmatch(r"#/(\$defs|definitions)/([^/]+)", str(ref))
    if not match or ref in seen or match.group(2) not in (root.get(match.group(1)) or {}):
        raise InvalidSchema(f"{where}: cannot follow $ref {ref!r} (local $defs only, no cycles)")
    target = root[match.group(1)][match.group(2)]
    merged = {
        **_deref(target, root, where, (*seen, ref)),
        **{k: v for k, v in prop.items() if k != "$ref"},
    }
    return merged


def _json_unwrap(prop: Any, root: dict[str, Any], where: str) -> tuple[dict[str, Any], bool]:
    """Unwrap ``type: [X, "null"]`` and ``anyOf``/``oneOf``/``allOf`` with one non-null branch."""
    prop, optional = _deref(prop, root, where), False
    while True:
        kind = prop.get("type")
        if isinstance(kind, list):
            rest = [t for t in kind if t != "null"]
            if len(rest) != 1:
                raise InvalidSchema(f"{where}: type {kind!r} mixes types; use one ({SUPPORTED})")
            prop, optional = {**prop, "type": rest[0]}, optional or len(rest) < len(kind)
            continue
        key = next((k for k in ("anyOf", "oneOf", "allOf") if _is_union(prop, k)), None)
        if key is None:
            return prop, optional
        branches = [_deref(b, root, where) for b in prop[key]]
        real = [b for b in branches if b.get("type") != "null"]
        if len(real) != 1:
            raise InvalidSchema(
                f"{where}: {key} with {len(real)} non-null schemas is not supported; use one "
                "schema, or one and null for an answer that may abstain"
            )
        outer = {k: v for k, v in prop.items() if k != key}
        prop, optional = {**real[0], **outer}, optional or len(real) < len(branches)


def _is_union(prop: Mapping[str, object], key: str) -> bool:
    """A union to unwrap (a ``oneOf`` of documented consts is an enum, not a union)."""
    return isinstance(prop.get(key), list) and not (
        key == "oneOf" and _documented_consts(prop[key])
    )


def _documented_consts(branches: object) -> bool:
    return isinstance(branches, list) and all(
        isinstance(b, dict) and "const" in b for b in branches
    )


def _json_field(schema: str, key: str, prop: Any, root: dict[str, Any]) -> FieldPlan:
    where = f"field {key!r} of {schema}"
    description = prop.get("description") if isinstance(prop, dict) else None
    prop, optional = _json_unwrap(prop, root, where)
    description = description or prop.get("description")
    kind = prop.get("type")
    options = _json_options(prop, where)
    if kind == "boolean" and options is None:
        return FieldPlan(key, "noul", description or f"Is `{key}` true?", (), optional)
    if kind == "integer" and (options is not None or "minimum" in prop or "maximum" in prop):
        levels = _json_levels(prop, options, where)
        return FieldPlan(
            key,
            "score",
            description or f"Score `{key}` from the lowest level to the highest.",
            levels,
            optional,
        )
    if options is not None and kind in (None, "string"):
        choice = _checked_options(options, where)
        instruction = description or f"What is `{key}`?"
        return FieldPlan(key, "choice", instruction, choice, optional)
    if kind == "array":
        item, _ = _json_unwrap(prop.get("items") or {}, root, where)
        item_options = _json_options(item, where)
        if item_options is not None and item.get("type") in (None, "string"):
            labels = _checked_options(item_options, where)
            instruction = description or item.get("description") or f"`{key}` includes"
            return FieldPlan(key, "labels", instruction, labels, optional, list)
    raise InvalidSchema(
        f"{where}: {json.dumps(prop)[:80]} is not supported; use boolean, a string enum, an "
        "integer enum or an integer with minimum/maximum, an array of a string enum, or any of "
        "these with null"
    )


def _json_options(prop: dict[str, Any], where: str) -> list[Option] | None:
    """Options from ``enum``/``const`` or documented ``oneOf`` consts; None when there are none."""
    texts = prop.get("x-laya-criteria") or {}
    if not isinstance(texts, dict):
        raise InvalidSchema(
            f"{where}: 'x-laya-criteria' must be an object of option value -> description, "
            f"got {json.dumps(texts)[:60]}"
        )
    if _documented_consts(prop.get("oneOf")):
        entries = [(b["const"], b.get("description")) for b in prop["oneOf"]]
    elif "enum" in prop:
        if not isinstance(prop["enum"], list):
            raise InvalidSchema(f"{where}: 'enum' must be a list of values")
        entries = [(v, None) for v in prop["enum"]]
    elif "const" in prop:
        entries = [(prop["const"], None)]
    else:
        return None
    entries = [(v, d) for v, d in entries if v is not None]
    for value, _ in entries:
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise InvalidSchema(f"{where}: enum values must be strings or integers, got {value!r}")
    if not entries:
        raise InvalidSchema(f"{where}: the enum has no values; add at least two")
    stray = sorted(set(map(str, texts)) - {str(v) for v, _ in entries})
    if stray:
        raise InvalidSchema(
            f"{where}: 'x-laya-criteria' describes {stray[0]!r}, which is not one of the options "
            f"({', '.join(str(v) for v, _ in entries)})"
        )
    return [Option(v, v, texts.get(str(v), d)) for v, d in entries]


def _whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _json_levels(
    prop: dict[str, Any], options: list[Option] | None, where: str
) -> tuple[Option, ...]:
    texts = prop.get("x-laya-levels")
    if options is not None:
        levels = sorted(options, key=lambda o: o.value)
    else:
        low, high = prop.get("minimum"), prop.get("maximum")
        if not (_whole(low) and _whole(high)):
            raise InvalidSchema(f"{where}: an integer score needs integer minimum and maximum")
        if high - low + 1 > MAX_LEVELS:
            raise InvalidSchema(
                f"{where}: minimum {low} .. maximum {high} make {high - low + 1} levels; a score "
                f"takes at most {MAX_LEVELS}"
            )
        levels = [Option(str(v), v) for v in range(low, high + 1)]
    if texts is not None:
        if not isinstance(texts, list) or len(texts) != len(levels):
            raise InvalidSchema(
                f"{where}: x-laya-levels must list one text per level ({len(levels)})"
            )
        levels = [Option(o.label, o.value, t) for o, t in zip(levels, texts)]
    return _checked_levels(levels, where)
