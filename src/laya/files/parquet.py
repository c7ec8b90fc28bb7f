"""Parquet through pyarrow (the ``parquet`` extra): the one module that imports it.

Without pyarrow, reading or writing a ``.parquet`` file is one error naming the extra
(``pip install 'laya[parquet]'``), raised before any work.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING

from ..errors import InvalidRequest
from .atomic import replacing
from .plain import json_text

if TYPE_CHECKING:
    import pyarrow

__all__ = ["arrow_type", "read_table", "require_pyarrow", "table_from_rows", "write_table"]

KINDS = ("text", "number")  # the kinds of answer column: a label, or a probability or level


def require_pyarrow(path: str) -> ModuleType:
    """The ``pyarrow`` module, or :class:`InvalidRequest` naming the extra that brings it."""
    try:
        pyarrow = import_module("pyarrow")
        import_module("pyarrow.parquet")  # the submodule the callers use
    except ImportError:
        raise InvalidRequest(
            f"{path}: Parquet files need pyarrow: pip install 'laya[parquet]'"
        ) from None
    return pyarrow


def read_table(path: str, what: str) -> pyarrow.Table:
    """A Parquet file as a pyarrow table; unreadable, an :class:`InvalidRequest` naming it."""
    pa = require_pyarrow(path)
    try:
        return pa.parquet.read_table(path)
    except (OSError, pa.ArrowException) as exc:
        raise InvalidRequest(f"cannot read {what} {path}: {exc}") from None


def table_from_rows(
    rows: Sequence[Mapping[str, object]],
    columns: Sequence[str],
    types: Mapping[str, pyarrow.DataType],
) -> pyarrow.Table:
    """A table of ``columns`` from plain rows: a column named in ``types`` gets that pyarrow
    type; any other the type pyarrow infers, or JSON text when its values mix kinds (a state
    that is a string in one row and an object in the next)."""
    pa = require_pyarrow("a Parquet output")
    arrays = []
    for name in columns:
        values = [row.get(name) for row in rows]
        if name in types:
            arrays.append(pa.array(values, type=types[name]))
            continue
        try:
            arrays.append(pa.array(values))
        except (pa.ArrowException, TypeError, ValueError):
            arrays.append(pa.array([_json_or_none(v) for v in values], type=pa.string()))
    return pa.Table.from_arrays(arrays, names=list(columns))


def _json_or_none(value: object) -> str | None:
    return None if value is None else json_text(value)


def arrow_type(kind: str) -> pyarrow.DataType:
    """The pyarrow type of an answer column of ``kind`` (:data:`KINDS`)."""
    pa = require_pyarrow("a Parquet output")
    return pa.string() if kind == "text" else pa.float64()


def write_table(
    table: pyarrow.Table, path: str | os.PathLike[str], mode: int | None = None
) -> None:
    """Write ``table`` as the Parquet file ``path``, atomically (:func:`replacing`)."""
    pa = require_pyarrow(str(path))
    with replacing(path, mode) as (fd, _), os.fdopen(fd, "wb", closefd=False) as out:
        pa.parquet.write_table(table, out)
