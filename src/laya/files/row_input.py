"""A command's input rows, and account of the rows it cannot use.

:func:`read_rows` reads JSONL (one JSON object a line), CSV (a header row, then one record per
row) or Parquet (``.parquet``, through pyarrow: the ``parquet`` extra), chosen by the file's
extension, and names each row ``FILE:N`` (N: the line a JSONL or CSV row starts on, counting
blank lines; a Parquet row's number, from 1). A row that cannot be read (not JSON, not an object,
a CSV record whose fields do not match the header) goes to :class:`BadRows` instead of stopping
the command; so do the rows a command finds unusable later (no state, a label that is not an
option...). At the end the command names them on stderr and exits 2, or 0 with ``--skip-bad``
(:meth:`BadRows.report`; docs/cli.md, "Rows that cannot be used").
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..commands import EXIT_OK, EXIT_USAGE, read_input_text
from ..errors import InvalidRequest

if TYPE_CHECKING:
    import pyarrow

__all__ = [
    "FORMATS",
    "SHOWN_BAD_ROWS",
    "BadRows",
    "RowFile",
    "SourceRow",
    "file_digest",
    "read_rows",
    "row_format",
]

FORMATS = ("jsonl", "csv", "parquet")
SHOWN_BAD_ROWS = 50  # named one a line on stderr; the rest are counted


def row_format(path: str | os.PathLike[str]) -> str:
    """``parquet`` for ``.parquet`` / ``.pq``, ``csv`` for ``.csv``, else ``jsonl``."""
    suffix = Path(path).suffix.lower()
    if suffix in (".parquet", ".pq"):
        return "parquet"
    return "csv" if suffix == ".csv" else "jsonl"


@dataclass(frozen=True)
class SourceRow:
    """One row as read: where it is (``FILE:N``; ``number`` is N), its place among the file's
    rows (from 0, bad rows included) and its fields."""

    where: str
    number: int
    index: int
    value: dict[str, Any]


@dataclass
class RowFile:
    """The usable rows of a file, its format, and its columns in order (a CSV header, a Parquet
    schema, or the keys of JSONL rows in order of first use). ``table`` is the pyarrow table of a
    Parquet file (its columns keep their types in a Parquet output)."""

    path: str
    format: str
    rows: list[SourceRow] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    read: int = 0  # rows read, the unreadable ones included
    table: pyarrow.Table | None = None


class BadRows:
    """The rows a command could not use, each named ``FILE:N: what is wrong``."""

    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []
        self.read = 0  # rows read (by read_rows) with this account, the bad ones included

    def __len__(self) -> int:
        return len(self.found)

    def add(self, where: str, problem: str) -> None:
        """Count a row that cannot be used (``where``: ``FILE:N``)."""
        self.found.append((where, problem))

    @property
    def named(self) -> list[str]:
        """``FILE:N: problem`` of each, in the order of the file (as found, within a line)."""
        ordered = sorted(self.found, key=lambda found: _place(found[0]))
        return [f"{where}: {problem}" for where, problem in ordered]

    def none_usable(self, path: str | os.PathLike[str], what: str = "row") -> InvalidRequest:
        """The error of a file none of whose rows can be used, naming the first bad one."""
        named = self.named
        first = f"; {named[0]}" if named else ""
        more = f" (and {len(named) - 1} more bad rows)" if len(named) > 1 else ""
        return InvalidRequest(f"{path}: no {what} can be used{first}{more}")

    def problem(self, where: str, message: str) -> str:
        """``message`` without the ``where`` it starts with (an error that names its row)."""
        return message.removeprefix(where).lstrip(",: ") or message

    def report(self, prog: str, accepted: bool) -> int:
        """Name every bad row on stderr (the first :data:`SHOWN_BAD_ROWS`, then a count); the
        exit status: 2, or 0 when ``accepted`` (``--skip-bad``). Nothing when there are none."""
        named = self.named
        if not named:
            return EXIT_OK
        for line in named[:SHOWN_BAD_ROWS]:
            print(f"{prog}: bad row {line}", file=sys.stderr)
        if len(named) > SHOWN_BAD_ROWS:
            print(f"{prog}: ... and {len(named) - SHOWN_BAD_ROWS} more", file=sys.stderr)
        n = f"{len(named)} of {self.read} rows"
        if accepted:
            print(f"{prog}: skipped {n} that could not be used (--skip-bad)", file=sys.stderr)
            return EXIT_OK
        print(
            f"{prog}: error: {n} could not be used (named above); fix them, or pass --skip-bad "
            "to accept the rest",
            file=sys.stderr,
        )
        return EXIT_USAGE


def _place(where: str) -> int:
    """N of ``FILE:N`` (0 when there is none)."""
    number = where.rsplit(":", 1)[-1]
    return int(number) if number.isdigit() else 0


def file_digest(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes, hex (read in blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_rows(
    path: str | os.PathLike[str],
    what: str,
    bad: BadRows,
    *,
    format: str | None = None,
    comments: bool = False,
) -> RowFile:
    """The rows of ``path`` (``format``: by extension when None); rows that cannot be read go to
    ``bad``. ``comments``: JSONL lines starting with ``#`` are skipped, as blank lines are. A
    file that cannot be read at all (missing, not UTF-8, a CSV without a header) raises
    :class:`InvalidRequest` naming it."""
    path = str(path)
    kind = format or row_format(path)
    if kind == "parquet":
        found = _parquet_rows(path, what)
    elif kind == "csv":
        found = _csv_rows(path, read_input_text(path, what), bad)
    else:
        found = _jsonl_rows(path, read_input_text(path, what), bad, comments)
    bad.read += found.read
    return found


def _jsonl_rows(path: str, text: str, bad: BadRows, comments: bool) -> RowFile:
    found = RowFile(path, "jsonl")
    columns: dict[str, None] = {}
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip() or (comments and line.lstrip().startswith("#")):
            continue
        where, index = f"{path}:{n}", found.read
        found.read += 1
        try:
            value = json.loads(line)
        except ValueError as exc:
            bad.add(where, f"not JSON ({exc})")
            continue
        if not isinstance(value, dict):
            bad.add(where, f"not a JSON object (a {type(value).__name__})")
            continue
        columns.update(dict.fromkeys(value))
        found.rows.append(SourceRow(where, n, index, value))
    found.columns = list(columns)
    return found


def _csv_rows(path: str, text: str, bad: BadRows) -> RowFile:
    """Records after the header, as {column: text}; a record of another number of fields than
    the header is a bad row."""
    found = RowFile(path, "csv")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise InvalidRequest(f"{path}: the header row is not CSV ({exc})") from None
    if not header:
        raise InvalidRequest(f"{path}: no header row; a CSV input starts with its column names")
    doubled = sorted({name for name in header if header.count(name) > 1})
    if doubled:
        raise InvalidRequest(f"{path}: column {doubled[0]!r} is named twice in the header")
    found.columns = header
    line = reader.line_num
    while True:
        start = line + 1
        try:
            record = next(reader, None)
        except csv.Error as exc:  # an unterminated quote runs to the end: nothing after it
            bad.add(f"{path}:{start}", f"not CSV ({exc})")
            found.read += 1
            break
        line = reader.line_num
        if record is None:
            break
        if not record:
            continue  # a blank line
        where, index = f"{path}:{start}", found.read
        found.read += 1
        if len(record) != len(header):
            bad.add(where, f"{len(record)} fields where the header has {len(header)}")
            continue
        found.rows.append(SourceRow(where, start, index, dict(zip(header, record))))
    return found


def _parquet_rows(path: str, what: str) -> RowFile:
    from .parquet import read_table

    table = read_table(path, what)
    values = table.to_pylist()
    rows = [SourceRow(f"{path}:{i + 1}", i + 1, i, value) for i, value in enumerate(values)]
    return RowFile(path, "parquet", rows, list(table.column_names), len(rows), table)
