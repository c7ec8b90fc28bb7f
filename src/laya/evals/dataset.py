"""A labelled evaluation dataset: rows of a state, its questions and the answers expected.

One JSON object per line (docs/cli.md, "laya eval run"): ``{"state", "questions", "expected":
{qid: label | bool | number}, "tags"?: [...], "language"?, "model"?}``. A row of laya's own
training data, with ``answers`` for ``expected``, reads the same. Blank lines and lines starting
with ``#`` are skipped; a malformed row raises :class:`EvalError` naming ``file:line`` and the
field. Reading needs neither torch nor a model.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..commands import read_input_text
from ..engine.questions import Question, parse_questions
from ..engine.states import check_state
from ..errors import InvalidRequest
from ..files.row_input import BadRows, read_rows

__all__ = [
    "Dataset",
    "EvalError",
    "Example",
    "file_fingerprint",
    "parsed_questions",
    "questions_fingerprint",
]

_NOUL_WORDS = {"true": True, "yes": True, "false": False, "no": False}


class EvalError(InvalidRequest):
    """A dataset, report or setting the evaluation cannot use: the message names the file, the
    line or the field, and the fix."""


@dataclass(frozen=True)
class Example:
    """One labelled row: a state, its questions, the answer expected per question id, and the
    tags, language and model it is sliced by."""

    state: object
    questions: dict[str, object]
    expected: dict[str, object]
    tags: tuple[str, ...] = ()
    language: str | None = None
    model: str | None = None

    @classmethod
    def from_dict(cls, row: object, where: str = "row") -> Example:
        """A decoded row checked field by field; a refusal is an :class:`EvalError` naming
        ``where`` and the field."""
        if not isinstance(row, Mapping):
            raise EvalError(f"{where}: a row must be a JSON object, got {type(row).__name__}")
        if row.get("state") is None:
            raise EvalError(f"{where}: field 'state' is missing; give the text, object or list")
        try:
            check_state(row["state"], f"{where}: field 'state':")
        except (TypeError, ValueError) as exc:
            raise EvalError(str(exc)) from None
        questions = row.get("questions")
        if not isinstance(questions, Mapping) or not questions:
            raise EvalError(
                f"{where}: field 'questions' must be a non-empty object of id -> question"
            )
        try:
            parsed = {q.qid: q for q in parse_questions(dict(questions))}
        except (TypeError, ValueError) as exc:
            raise EvalError(f"{where}: field 'questions': {exc}") from None
        key = "expected" if "expected" in row else "answers"
        expected = row.get(key)
        if not isinstance(expected, Mapping) or not expected:
            raise EvalError(
                f"{where}: field 'expected' must be a non-empty object of question id -> answer"
            )
        checked = {
            str(qid): _expected(parsed, qid, value, f"{where}: field '{key}.{qid}'")
            for qid, value in expected.items()
        }
        return cls(
            row["state"],
            dict(questions),
            checked,
            _tags(row.get("tags"), where),
            _text(row.get("language"), "language", where),
            _text(row.get("model"), "model", where),
        )


def _expected(parsed: Mapping[Any, Question], qid: object, value: object, field: str) -> object:
    """The expected answer of one question, checked against its type and options: a choice's
    label, a noul's truth (true/false, 1/0, "yes"/"no"), a score's level (a number of levels)."""
    question = parsed.get(qid)
    if question is None:
        raise EvalError(f"{field}: there is no question {qid!r} in 'questions'")
    if question.type == "choice":
        if not any(key == value and type(key) is type(value) for key in question.keys):
            raise EvalError(f"{field}: {value!r} is not one of the labels {list(question.keys)!r}")
        return value
    if question.type == "noul":
        truth = _truth(value)
        if truth is None:
            raise EvalError(
                f"{field}: a noul answer is true or false (or 1/0, yes/no), got {value!r}"
            )
        return truth
    top = len(question.options) - 1
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise EvalError(f"{field}: a score answer is a level number 0..{top}, got {value!r}")
    if not 0 <= value <= top:
        raise EvalError(f"{field}: a score answer is a level number 0..{top}, got {value!r}")
    return value


def _truth(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        return _NOUL_WORDS.get(value.strip().lower())
    return None


def _tags(value: object, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(t, str) and t for t in value):
        raise EvalError(f"{where}: field 'tags' must be a list of non-empty strings, got {value!r}")
    return tuple(value)


def _text(value: object, name: str, where: str) -> str | None:
    if value is None or (isinstance(value, str) and value.strip()):
        return value
    raise EvalError(f"{where}: field {name!r} must be a non-empty string, got {value!r}")


class Dataset:
    """The examples of an evaluation, in order, with the file they came from (if any)."""

    def __init__(
        self, examples: Iterable[Example], path: str | None = None, lines: list[int] | None = None
    ) -> None:
        self.examples = list(examples)
        self.path = path
        self.lines = lines or list(range(1, len(self.examples) + 1))  # where each example is

    def __len__(self) -> int:
        return len(self.examples)

    def __iter__(self) -> Iterator[Example]:
        return iter(self.examples)

    @classmethod
    def from_jsonl(cls, path: str, bad: BadRows | None = None) -> Dataset:
        """Every row of a JSONL file; blank and ``#`` lines skipped, an empty file refused. With
        ``bad`` (the commands), a row that cannot be used goes there instead of raising."""
        if bad is not None:
            return cls._usable(path, bad)
        try:
            text = read_input_text(path, "dataset")
        except InvalidRequest as exc:
            raise EvalError(str(exc)) from None
        examples, lines = [], []
        for n, line in enumerate(text.split("\n"), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            where = f"{path}:{n}"
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise EvalError(f"{where}: not JSON ({exc})") from None
            examples.append(Example.from_dict(row, where))
            lines.append(n)
        if not examples:
            raise EvalError(f"{path}: no examples (every line is blank or a # comment)")
        return cls(examples, str(path), lines)

    @classmethod
    def _usable(cls, path: str, bad: BadRows) -> Dataset:
        """The rows of ``path`` that can be used; the others go to ``bad``."""
        try:
            rows = read_rows(path, "dataset", bad, format="jsonl", comments=True).rows
        except InvalidRequest as exc:
            raise EvalError(str(exc)) from None
        examples, lines = [], []
        for row in rows:
            try:
                examples.append(Example.from_dict(row.value, row.where))
            except EvalError as exc:
                bad.add(row.where, bad.problem(row.where, str(exc)))
                continue
            lines.append(row.number)
        if not examples:
            raise EvalError(str(bad.none_usable(path, "example")))
        return cls(examples, str(path), lines)


def parsed_questions(example: Example) -> dict[str, Question]:
    """An example's questions, parsed (they were checked when the example was read)."""
    return {str(q.qid): q for q in parse_questions(example.questions)}


def file_fingerprint(path: str) -> str:
    """The SHA-256 of a file's bytes, hex."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def questions_fingerprint(dataset: Dataset) -> str:
    """The SHA-256 of every distinct question set of the dataset (canonical JSON, in order of
    first use): two reports answered the same questions when these agree."""
    seen = dict.fromkeys(json.dumps(e.questions, sort_keys=True) for e in dataset)
    return hashlib.sha256("\n".join(seen).encode()).hexdigest()
