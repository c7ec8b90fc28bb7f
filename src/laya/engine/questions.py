"""Validate the caller's question dicts and turn them into the option texts the model reads.

A question is ``{"type", "instructions", "criteria"?, "labels"? (noul), "option_order"?,
"abstain"? (choice)}``.
Every rule raises where the question enters, naming the question id and the fix: among them,
every field (instructions, criteria, ...) nests JSON within the one limit (:mod:`laya.engine.nesting`),
and a choice's labels stay distinct once serialised (``1`` and ``"1"`` are one key in JSON).
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import InvalidRequest
from .nesting import TOO_DEEP, deeper_than

__all__ = [
    "QTYPES",
    "QTYPE_NAMES",
    "Label",
    "Question",
    "QuestionId",
    "check_count",
    "check_nesting",
    "internal_form",
    "parse_question",
    "parse_questions",
    "public_form",
    "render_criterion",
    "render_options",
    "temp_bucket",
    "with_abstain",
]

QTYPES = {"choice": 0, "score": 1, "noul": 2}
QTYPE_NAMES = {index: name for name, index in QTYPES.items()}
ABSTAIN_OPTION = "none of these: none of the other options applies"
Label = str | int | float | bool  # a choice's option, as the caller wrote it: also its answer key
QuestionId = str | int  # the caller's keys, kept as given (_check_qid)
Definition = dict[str, Any]  # a caller's question, JSON-shaped: checked field by field here
Fail = Callable[[str], InvalidRequest]
K = TypeVar("K")
NOUL_DEFAULT_TEXT = {
    "false": "no, the statement does not hold",
    "true": "yes, the statement holds",
}


@dataclass(frozen=True)
class Question:
    """One validated question: what the model reads and how its answer is keyed."""

    qid: QuestionId
    type: str
    instructions: str
    keys: tuple[Label, ...]
    options: tuple[str, ...]
    order: tuple[int, ...]
    legend: dict[str, str] | None = None
    abstain: bool = False
    source: object = field(default=None, compare=False, repr=False)
    """The caller's definition this question was read from (None for one made otherwise)."""

    @property
    def read_options(self) -> tuple[str, ...]:
        """The option texts the model scores: the caller's, then "none of these" with abstain."""
        return self.options + ((ABSTAIN_OPTION,) if self.abstain else ())

    @property
    def read_order(self) -> tuple[int, ...]:
        """The slot order of :attr:`read_options`: the caller's, "none of these" last."""
        return self.order + ((len(self.options),) if self.abstain else ())

    @property
    def qtype(self) -> int:
        """Index of the type in temperature lists and ``type_emb``."""
        return QTYPES[self.type]

    @property
    def bucket(self) -> str:
        """Temperature / gate bucket name, e.g. ``choice:3-5``."""
        return option_bucket(self.type, len(self.options))


def option_bucket(qtype: str, k: int) -> str:
    """Bucket ``<type>:<2|3-5|6-10|11+>`` by option count."""
    size = "2" if k <= 2 else "3-5" if k <= 5 else "6-10" if k <= 10 else "11+"
    return f"{qtype}:{size}"


def temp_bucket(qtype: int, k: int) -> str:
    """:func:`option_bucket` of a type given by its index (0 choice, 1 score, 2 noul)."""
    if qtype not in QTYPE_NAMES:
        raise InvalidRequest(f"qtype must be 0 (choice), 1 (score) or 2 (noul), got {qtype!r}")
    return option_bucket(QTYPE_NAMES[qtype], k)


def render_options(q: Mapping[str, object]) -> list[str]:
    """The option texts the model reads for a question definition, in the caller's option order
    (the question is validated first, so a bad one raises naming the field)."""
    return list(parse_question("question", q).options)


def internal_form(qid: object, question: Mapping[str, object]) -> dict[str, object]:
    """The published runtime's internal spelling of a question, after checking it: ``t``
    (type), ``ins`` (instructions; not a string: its JSON), ``crit`` (a choice list as
    ``{label: None}``, noul keys lower-cased), ``labels`` and ``option_order`` when given."""
    parse_question(qid, question)  # refuses a bad question, naming the field
    ins = question["instructions"]
    crit = question.get("criteria")
    if question["type"] == "choice" and isinstance(crit, list):
        crit = dict.fromkeys(crit)
    elif question["type"] == "noul" and isinstance(crit, dict):
        crit = {str(key).lower(): value for key, value in crit.items()}
    internal: dict[str, object] = {
        "t": question["type"],
        "ins": ins if isinstance(ins, str) else json.dumps(ins, ensure_ascii=False),
        "crit": crit,
    }
    for key in ("labels", "option_order"):
        if key in question:
            internal[key] = question[key]
    return internal


def public_form(q: dict[str, Any]) -> dict[str, Any]:
    """A question in the public spelling, given either spelling (:func:`internal_form`'s)."""
    if "t" not in q or "type" in q:
        return q
    public = {"type": q["t"], "instructions": q["ins"]}
    if q.get("crit") is not None:
        crit = q["crit"]
        plain = q["t"] == "choice" and all(v is None for v in crit.values())
        public["criteria"] = list(crit) if plain else crit
    for key in ("labels", "option_order"):
        if key in q:
            public[key] = q[key]
    return public


def render_criterion(value: object) -> str:
    """Text of a criterion: strings as is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


def parse_questions(questions: object) -> list[Question]:
    """Validate every question in order and return their normalised form."""
    if not isinstance(questions, dict):
        raise TypeError(
            f"questions must be a dict of question id -> definition, got {type(questions).__name__}"
        )
    return [parse_question(qid, definition) for qid, definition in questions.items()]


def check_count(name: str, value: object, unit: str = "tokens") -> None:
    """A call's count (``max_len``, ``head_max_len``, ``window``, ``stride``, ``batch_size``) is a
    whole number of at least 1, or None for the default; anything else (0 and negatives too, which
    would silently mean the default or an empty budget) is refused where it enters, not deep in
    the arithmetic."""
    if value is None or (
        isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) >= 1
    ):
        return
    raise InvalidRequest(
        f"{name} must be a whole number of {unit} (at least 1), or None for the default; "
        f"got {value!r}"
    )


def check_nesting(questions: Mapping[Any, Any]) -> None:
    """Every field of every question (a definition that is not a dict, as a whole) within the one
    nesting limit; a Router checks this before it walks them, :func:`parse_question` again."""
    for qid, definition in questions.items():
        fields = (
            definition.items() if isinstance(definition, dict) else [("definition", definition)]
        )
        for key, value in fields:
            if deeper_than(value):
                raise _failer(qid)(f"{key} {TOO_DEEP}")


def parse_question(qid: object, definition: object) -> Question:
    """Validate one question and build its option texts (docs/agent.md, "Asking")."""
    key = _check_qid(qid)
    fail = _failer(qid)
    if not isinstance(definition, dict):
        raise fail(f"definition must be a dict, got {type(definition).__name__}")
    qtype = definition.get("type")
    if not isinstance(qtype, str) or qtype not in QTYPES:
        raise fail(f"unknown type {qtype!r}; use one of {sorted(QTYPES)}")
    check_nesting({qid: definition})
    instructions = _instructions(definition, fail)
    if qtype == "choice":
        keys, options, legend = _choice(definition.get("criteria"), fail)
    elif qtype == "score":
        keys, options, legend = _score(definition.get("criteria"), fail)
    else:
        keys, options, legend = _noul(definition, fail)
    order = _option_order(definition.get("option_order"), len(options), fail)
    if "labels" in definition and qtype != "noul":
        raise fail("'labels' is only supported for noul questions; remove it or use type 'noul'")
    abstain = _abstain(definition.get("abstain", False), qtype, fail)
    return Question(key, qtype, instructions, keys, options, order, legend, abstain, definition)


def _abstain(value: object, qtype: str, fail: Fail) -> bool:
    """``abstain``: a boolean, and true only on a choice (docs/agent.md, "None of these")."""
    if not isinstance(value, bool):
        raise fail(f"'abstain' must be true or false, got {value!r}")
    if value and qtype != "choice":
        raise fail(
            f"'abstain' is only for choice questions (a {qtype} has no option to abstain with); "
            "remove it or use type 'choice'"
        )
    return value


def with_abstain(questions: Mapping[K, Any], ids: Collection[object] | None = None) -> dict[K, Any]:
    """``questions`` with "none of these" on every choice question (of ``ids``, if given) that
    does not say otherwise: what ``--abstain`` and ``decide(..., abstain=True)`` ask."""
    return {
        qid: {"abstain": True, **definition}
        if isinstance(definition, dict)
        and definition.get("type") == "choice"
        and (ids is None or qid in ids)
        else definition
        for qid, definition in questions.items()
    }


def _check_qid(qid: object) -> QuestionId:
    if qid is None:
        raise InvalidRequest(
            "question id must not be None; use a non-empty string such as 'intent'"
        )
    if (isinstance(qid, str) and qid.strip()) or (
        isinstance(qid, int) and not isinstance(qid, bool)
    ):
        return qid
    raise InvalidRequest(f"question id must be a non-empty string (or an int), got {qid!r}")


def _failer(qid: object) -> Fail:
    def fail(message: str) -> InvalidRequest:
        return InvalidRequest(f"question {qid!r}: {message}")

    return fail


def _instructions(definition: Definition, fail: Fail) -> str:
    if "instructions" not in definition:
        raise fail("no 'instructions'; add the text the model should answer")
    value = definition["instructions"]
    if value is None:
        raise fail("'instructions' must not be None; give the text the model should answer")
    if isinstance(value, str):
        if not value.strip():
            raise fail("'instructions' must not be empty; give the text the model should answer")
        return value
    if isinstance(value, (list, dict)) and not value:
        raise fail("'instructions' must not be empty; give the text the model should answer")
    if not isinstance(value, (dict, list, int, float)):
        raise fail(f"'instructions' must be a string, dict, or list, got {type(value).__name__}")
    return json.dumps(value, ensure_ascii=False)


def _choice(criteria: object, fail: Fail) -> tuple[tuple[Label, ...], tuple[str, ...], None]:
    if isinstance(criteria, list):
        items = [(label, None) for label in criteria]
    elif isinstance(criteria, dict):
        items = list(criteria.items())
    else:
        raise fail(
            "a choice question takes 'criteria' as a dict of label -> description, "
            "or a list of labels"
        )
    if not items:
        raise fail("a choice question needs at least one criterion")
    seen: dict[object, int] = {}
    written: dict[str, int] = {}
    for i, (label, _) in enumerate(items):
        _check_label(i, label, fail)
        if label in seen:
            raise fail(
                f"choice label {i} ({label!r}) repeats label {seen[label]}; the labels are the "
                f"answer keys, so each must be distinct (1, 1.0 and True are one key)"
            )
        seen[label] = i
        for text in _label_texts(label):
            if text in written:
                j = written[text]
                raise fail(
                    f"choice labels {j} ({items[j][0]!r}) and {i} ({label!r}) are both {text!r} "
                    f"once serialised (as the reply's JSON answer key or the option text the "
                    f"model reads), so the answer could not tell them apart: rename one"
                )
            written[text] = i
    options = tuple(
        str(label) if desc is None or desc == "" else f"{label}: {render_criterion(desc)}"
        for label, desc in items
    )
    return tuple(label for label, _ in items), options, None


def _label_texts(label: Label) -> tuple[str, ...]:
    """What a label becomes once serialised: its key in the reply's JSON (``1`` -> ``"1"``,
    ``True`` -> ``"true"``) and the option text the model reads (``str(label)``)."""
    key = label if isinstance(label, str) else json.dumps(label)
    return tuple(dict.fromkeys((key, str(label))))


def _check_label(i: int, label: object, fail: Fail) -> None:
    if label is None:
        raise fail(
            f'choice label {i} is null; it would render as the text "None" while its answer '
            f'key is "null": use a string label'
        )
    if not isinstance(label, (str, int, float, bool)):
        raise fail(
            f"choice label {i} is a {type(label).__name__}; a label is rendered as option text "
            f"and used as the answer key, so it must be a scalar (a string, number or bool)"
        )


def _score(
    criteria: object, fail: Fail
) -> tuple[tuple[Label, ...], tuple[str, ...], dict[str, str]]:
    if not isinstance(criteria, list):
        raise fail(
            "a score question takes 'criteria' as a list of level descriptions, index 0 first"
        )
    if not criteria:
        raise fail("a score question needs at least one level")
    for i, level in enumerate(criteria):
        if level is None:
            raise fail(f"score level {i} is null; give every level a description, index 0 first")
    texts = [render_criterion(level) for level in criteria]
    options = tuple(f"level {i}: {text}" for i, text in enumerate(texts))
    keys = tuple(str(i) for i in range(len(texts)))
    return keys, options, dict(zip(keys, texts))


def _noul(definition: Definition, fail: Fail) -> tuple[tuple[Label, ...], tuple[str, ...], None]:
    criteria = definition.get("criteria")
    if criteria is not None and not isinstance(criteria, dict):
        raise fail(
            "a noul question takes 'criteria' as a dict with optional 'true'/'false' "
            "descriptions, or omits it"
        )
    texts = {str(k).lower(): v for k, v in (criteria or {}).items()}
    extra = sorted(set(texts) - {"true", "false"})
    if extra:
        raise fail(
            f"a noul question takes 'criteria' keyed only 'true'/'false' (either or both, and "
            f"omitted is fine), got {sorted(texts)}. Put other wording in 'instructions'."
        )
    labels = _noul_labels(definition, fail)
    options = tuple(
        f"{labels[side]}: {_noul_text(texts.get(side), side)}" for side in ("false", "true")
    )
    return ("false", "true"), options, None


def _noul_text(value: object, side: str) -> str:
    if value is None or value == "":
        return NOUL_DEFAULT_TEXT[side]
    return render_criterion(value)


def _noul_labels(definition: Definition, fail: Fail) -> dict[str, str]:
    labels = definition.get("labels")
    if labels is None:
        return {"false": "false", "true": "true"}
    valid = (
        isinstance(labels, dict)
        and set(labels) == {"false", "true"}
        and all(isinstance(v, str) and v.strip() for v in labels.values())
    )
    stripped = {k: v.strip() for k, v in labels.items()} if valid else {}
    if not valid or stripped["false"] == stripped["true"]:
        raise fail(
            "noul labels must map exactly 'false' and 'true' to distinct non-empty strings, "
            f'e.g. {{"false": "calm", "true": "angry"}}; got {labels!r}'
        )
    return stripped


def _option_order(order: object, n: int, fail: Fail) -> tuple[int, ...]:
    if order is None:
        return tuple(range(n))
    if not (
        isinstance(order, (list, tuple))
        and all(isinstance(i, int) and not isinstance(i, bool) for i in order)
        and sorted(order) == list(range(n))
    ):
        raise fail(
            f"'option_order' must be a permutation of range({n}) -- one slot per option, each "
            f"option once -- got {order!r}"
        )
    return tuple(order)
