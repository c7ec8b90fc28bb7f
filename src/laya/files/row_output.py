"""Answered rows written as they come, and resumed after an interruption (``laya batch``).

Each input row becomes one output row: its fields, then the answer columns. The format follows
the output's extension (:func:`~laya.files.row_input.row_format`):

* JSONL: one line a row, written with one ``write`` of the whole line;
* CSV: a header, then one record a row (a value that is not text, such as ``result``, as JSON);
* Parquet: a file is only readable once closed, so each row's answers go to the run file as a
  line as they come, and the Parquet file is written from them (atomically) whenever the command
  stops: done, Ctrl-C, ``SIGTERM``, an error. Input columns keep their types (a Parquet input's
  own; otherwise pyarrow's, or JSON text for a column of mixed kinds), one column per answer.

Beside the output, ``OUT.laya-run`` (the run file) records what the output is for: the input's
SHA-256 and row count, and the settings that change answers. ``--resume`` reads it, refuses a
different input or setting naming what differs, counts the rows already written (dropping a last
line cut short, as a ``kill -9`` can leave), and goes on after them; without ``--resume`` or
``--force`` an existing output is refused. New files take the mode the umask allows, a replaced
output keeps its own, and the run file is never written through a symbolic link.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from typing_extensions import NotRequired, TypedDict

from ..errors import InvalidRequest
from .atomic import file_mode, write_all, write_atomically
from .plain import json_text, plain_value
from .row_input import RowFile, file_digest, row_format

if TYPE_CHECKING:
    import pyarrow

__all__ = [
    "RUN_SUFFIX",
    "RUN_VERSION",
    "OutputPlan",
    "RowOutput",
    "open_rows",
    "output_columns",
    "plan_output",
    "run_path",
    "run_record",
]

RUN_SUFFIX = ".laya-run"
RUN_VERSION = 1
RESULT_COLUMN = "result"


def run_path(output: str | os.PathLike[str]) -> Path:
    """The run file of an output: ``OUT.laya-run`` beside it."""
    target = Path(output)
    return target.with_name(target.name + RUN_SUFFIX)


# --------------------------------------------------------------------------- planning


class RunInput(TypedDict):
    """The input a run file records: its name, SHA-256 and usable rows."""

    file: str
    sha256: str
    rows: int


class RunRecord(TypedDict):
    """A run file's first line (``complete`` once the run finished)."""

    laya_run: int
    command: str
    input: RunInput
    settings: dict[str, object]
    columns: list[str]
    complete: NotRequired[bool]


def run_record(
    command: str, source: RowFile, settings: Mapping[str, object], kinds: Mapping[str, str]
) -> RunRecord:
    """What the run file records of a run: the input (name, SHA-256, usable rows), the settings
    that change answers (a file or question set as ``{"sha256", "from"}``) and the output's
    columns."""
    return {
        "laya_run": RUN_VERSION,
        "command": command,
        "input": {
            "file": Path(source.path).name,
            "sha256": file_digest(source.path),
            "rows": len(source.rows),
        },
        "settings": dict(settings),
        "columns": output_columns(source.columns, kinds),
    }


@dataclass
class OutputPlan:
    """Where a run writes and how far an earlier run got, decided before any work.

    ``record`` is the run file's first line; ``done`` the rows already in the output; ``mode``
    the permission bits of the files written; ``cut`` the length of the output (or, for Parquet,
    the run file) that holds only whole rows."""

    path: Path
    format: str
    record: RunRecord
    resume: bool
    done: int = 0
    mode: int = 0o644
    cut: int | None = None
    complete: bool = False
    answers: list[str] = field(default_factory=list)  # Parquet: the run file's answer lines

    @property
    def run_file(self) -> Path:
        """The run file beside the output."""
        return run_path(self.path)


def plan_output(
    path: str | os.PathLike[str], record: RunRecord, *, resume: bool, force: bool
) -> OutputPlan:
    """Check the output before any work: refused when it (or its run file) exists and neither
    ``resume`` nor ``force`` is given; with ``resume``, refused when its run file records another
    input or other settings (one line naming each difference), else how many rows are done."""
    target = Path(path)
    plan = OutputPlan(target, row_format(target), record, resume, mode=file_mode(target))
    there = [p for p in (target, plan.run_file) if os.path.lexists(p)]
    if not there or force:
        plan.resume = False
        return plan
    if not resume:
        raise InvalidRequest(
            f"{there[0]} exists; pass --resume to continue it or --force to replace it"
        )
    if plan.run_file.is_symlink():
        raise InvalidRequest(
            f"{plan.run_file} is a symbolic link; laya does not write through one: remove it, "
            "or pass --force to start the output again"
        )
    earlier = _read_record(plan.run_file, target)
    _check_same_run(earlier, record, target)
    rows = int(record["input"]["rows"])
    finished = bool(earlier.get("complete"))
    if plan.format == "parquet":
        plan.complete = finished
        _count_parquet(plan)
    else:
        _count_rows(plan)
        plan.complete = finished and plan.done == rows
    if plan.done > rows:
        raise InvalidRequest(
            f"{target} holds {plan.done} rows but its input has {rows}; pass --force to start again"
        )
    return plan


def _read_record(run_file: Path, target: Path) -> dict[str, object]:
    """The run file's record (its first line)."""
    if not run_file.is_file():
        raise InvalidRequest(
            f"{target} has no run file ({run_file.name}): it was not begun by laya batch "
            "with this output; pass --force to replace it"
        )
    with open(run_file, "rb") as source:
        first = source.readline()
    try:
        record = json.loads(first)
    except ValueError:
        record = None
    if not isinstance(record, dict) or record.get("laya_run") != RUN_VERSION:
        raise InvalidRequest(f"{run_file} is not a laya run file; pass --force to start again")
    return record


def _check_same_run(earlier: Mapping[str, object], now: RunRecord, target: Path) -> None:
    """Refuse to continue an output begun from another input or with other settings."""
    differences = []
    before, after = _part(earlier, "input"), now["input"]
    if before.get("sha256") != after["sha256"]:
        differences.append(
            f"the input {after['file']} is not the file it was begun from (its SHA-256 differs)"
        )
    old, new = _part(earlier, "settings"), now["settings"]
    for name in dict.fromkeys([*new, *old]):
        if _comparable(old.get(name)) != _comparable(new.get(name)):
            differences.append(f"{name} {_shown(old.get(name))} then, {_shown(new.get(name))} now")
    if differences:
        raise InvalidRequest(
            f"cannot resume {target}: {'; '.join(differences)}; give the settings it was begun "
            "with, or pass --force to start again"
        )


def _part(record: Mapping[str, object], name: str) -> Mapping[str, object]:
    """A section of an earlier run record ({} where it has none)."""
    value = record.get(name)
    return value if isinstance(value, Mapping) else {}


def _comparable(value: object) -> object:
    """A setting as compared: a file's or a question set's digest, else the value."""
    return value.get("sha256") if isinstance(value, dict) else value


def _shown(value: object) -> str:
    """A setting as a message shows it."""
    if isinstance(value, dict):
        return str(value.get("from") or value.get("sha256", "")[:12])
    return "(none)" if value is None else repr(value)


def _count_rows(plan: OutputPlan) -> None:
    """JSONL or CSV: the whole rows already in the output, and the length that holds them."""
    if not plan.path.exists():
        return
    data = plan.path.read_bytes()
    if plan.format == "csv":
        plan.done, plan.cut = _csv_records(data, plan.record["columns"], plan.path)
    else:
        plan.cut = data.rfind(b"\n") + 1
        plan.done = data.count(b"\n", 0, plan.cut)


def _csv_records(data: bytes, header: list[str], path: Path) -> tuple[int, int]:
    """(records after the header, length in bytes up to the end of the last whole record)."""
    text = data.decode("utf-8", errors="replace")
    consumed = 0

    def lines() -> Iterator[str]:
        nonlocal consumed
        for line in io.StringIO(text, newline=""):
            consumed += len(line)
            yield line

    reader = csv.reader(lines())
    records, whole = -1, 0
    with suppress(csv.Error):  # a record cut inside its quotes: the rest is not whole
        for record in reader:
            if text[consumed - 1] not in "\r\n":
                break
            if records < 0 and record != header:
                raise InvalidRequest(
                    f"cannot resume {path}: its columns are not this run's; pass --force"
                )
            records, whole = records + 1, consumed
    return max(records, 0), len(text[:whole].encode("utf-8"))


def _count_parquet(plan: OutputPlan) -> None:
    """Parquet: the answer lines of the run file (a complete run keeps none: its output holds
    every row)."""
    if plan.complete:
        if not plan.path.is_file():
            raise InvalidRequest(
                f"{plan.path} is missing though its run finished; pass --force to answer again"
            )
        plan.done = int(plan.record["input"]["rows"])
        return
    data = plan.run_file.read_bytes()
    plan.cut = data.rfind(b"\n") + 1
    lines = data[: plan.cut].decode("utf-8").split("\n")[1:-1]
    plan.answers = lines
    plan.done = len(lines)


# --------------------------------------------------------------------------- writing


class RowOutput:
    """An output taking answered rows in input order: :meth:`write` puts each whole row where a
    reader (or ``--resume``) finds it at once; :meth:`close` finishes the file."""

    def __init__(
        self, plan: OutputPlan, source: RowFile, kinds: Mapping[str, str], fd: int
    ) -> None:
        self.plan = plan
        self.source = source
        self.kinds = dict(kinds)  # answer column -> text | number
        self.fd = fd
        self.written = 0
        self.columns = output_columns(source.columns, kinds)

    @property
    def done(self) -> int:
        """Rows in the output: those of earlier runs and those written now."""
        return self.plan.done + self.written

    def write(self, answers: Sequence[Mapping[str, object]]) -> None:
        """The next rows' answer columns (``result`` as JSON text), in input order."""
        for row_answers in answers:
            if self.plan.format == "parquet":
                line = json_text(dict(row_answers))
                self.plan.answers.append(line)
                data = (line + "\n").encode("utf-8")
            else:
                data = self._line(self.source.rows[self.done].value, row_answers)
            write_all(self.fd, data)
            self.written += 1

    def _line(self, fields: Mapping[str, object], answers: Mapping[str, object]) -> bytes:
        """A JSONL line or a CSV record: the input row's fields, then its answers."""
        row = {**fields, **answers}
        result = row.get(RESULT_COLUMN)
        if isinstance(result, str):
            row[RESULT_COLUMN] = json.loads(result)
        if self.plan.format == "csv":
            return _csv_line([_csv_value(row.get(name)) for name in self.columns])
        return (json_text(row) + "\n").encode("utf-8")

    def finish(self, complete: bool) -> None:
        """Close the file; a Parquet output is written from the answers so far; a complete run
        marks its run file so (and a Parquet one drops its answer lines). A run that was
        complete already changes nothing."""
        if self.plan.complete:
            return
        os.close(self.fd)
        if self.plan.format == "parquet":
            self._write_parquet()
        if complete:
            record = {**self.plan.record, "complete": True}
            write_atomically(self.plan.run_file, json_text(record) + "\n", self.plan.mode)

    def _write_parquet(self) -> None:
        from .parquet import arrow_type, table_from_rows, write_table

        answers = [json.loads(line) for line in self.plan.answers]
        rows = self.source.rows[: len(answers)]
        kept = [c for c in self.source.columns if c not in self.kinds]
        types = {name: arrow_type(kind) for name, kind in self.kinds.items()}
        if self.source.table is not None:
            table = self.source.table.select(kept).take([r.index for r in rows])
        else:
            table = table_from_rows([r.value for r in rows], kept, {})
        for name in self.kinds:
            values = [a.get(name) for a in answers]
            table = table.append_column(name, _arrow_array(values, types[name]))
        write_table(table, self.plan.path, self.plan.mode)


def _arrow_array(values: list[object], kind: pyarrow.DataType) -> pyarrow.Array:
    from .parquet import require_pyarrow

    return require_pyarrow("a Parquet output").array(values, type=kind)


@contextmanager
def open_rows(plan: OutputPlan, source: RowFile, kinds: Mapping[str, str]) -> Iterator[RowOutput]:
    """The output of ``plan`` opened for the rows after ``plan.done``; on every way out (done,
    an error, Ctrl-C, ``SIGTERM``) it is finished: whole rows only, a Parquet file written."""
    output = RowOutput(plan, source, kinds, _open(plan, source, kinds))
    finished = False
    try:
        yield output
        finished = True
    finally:
        output.finish(finished and output.done == len(source.rows))


def _open(plan: OutputPlan, source: RowFile, kinds: Mapping[str, str]) -> int:
    """The descriptor rows are appended through: the output (JSONL, CSV) or the run file
    (Parquet), continued after its whole rows or made new."""
    if plan.complete:
        return -1
    if plan.resume:
        return _continue(plan)
    head = (json_text(plan.record) + "\n").encode("utf-8")
    if plan.format == "parquet":
        with suppress(FileNotFoundError):
            plan.path.unlink()  # --force: the old output goes now, not when this run stops
        return _placed(plan.run_file, head, plan.mode)
    write_atomically(plan.run_file, head, plan.mode)
    return _placed(plan.path, _header(plan), plan.mode)


def _header(plan: OutputPlan) -> bytes:
    """What a new output starts with: a CSV's header record, else nothing."""
    return _csv_line(plan.record["columns"]) if plan.format == "csv" else b""


def _continue(plan: OutputPlan) -> int:
    """Open what an earlier run wrote for appending, cut after its last whole row."""
    if plan.format == "parquet":
        fd = os.open(plan.run_file, os.O_RDWR | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0))
    elif not plan.path.exists():
        return _placed(plan.path, _header(plan), plan.mode)
    else:
        fd = os.open(plan.path, os.O_RDWR | os.O_APPEND)
    if plan.cut is not None:
        os.ftruncate(fd, plan.cut)
        if plan.cut == 0:  # not even the CSV header was whole
            write_all(fd, _header(plan))
    return fd


def _placed(path: Path, head: bytes, mode: int) -> int:
    """A new file at ``path`` holding ``head``, open for appending: made under a temporary name
    (``tempfile``) with ``mode``, then renamed into place."""
    import tempfile

    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        write_all(fd, head)
        os.replace(name, path)
    except BaseException:
        os.close(fd)
        with suppress(FileNotFoundError):
            os.unlink(name)
        raise
    return fd


def output_columns(columns: Sequence[str], kinds: Mapping[str, str]) -> list[str]:
    """The output's columns: the input's, then the answer columns it does not have already."""
    return [*columns, *(name for name in kinds if name not in columns)]


def _csv_line(values: Sequence[object]) -> bytes:
    text = io.StringIO()
    csv.writer(text).writerow(values)
    return text.getvalue().encode("utf-8")


def _csv_value(value: object) -> object:
    """A value as CSV holds it: text as is, nothing as an empty field, numbers, truths, lists and
    objects as JSON, anything else (a date, a time) as its text."""
    if value is None:
        return ""
    if isinstance(value, (str, bool, int, float, list, dict)):
        return value if isinstance(value, str) else json_text(value)
    plain = plain_value(value)
    return plain if isinstance(plain, str) else json_text(plain)
