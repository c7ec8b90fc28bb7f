"""A JSON body's shape read from its bytes before it is parsed: how many values, how deep, where.

Every function here is linear in the body, whatever it holds, and none backtracks (a regex that
retried a string from every quote inside it once took minutes on a 2 MiB run of ``\\"``).
:func:`neutral` overwrites every escaped backslash and quote, so each ``"`` left opens or closes
a string; :func:`measure` then finds what lies outside the strings with NumPy, a pass over the
bytes at a time, mostly without the GIL. Inside a valid prefix of the body that is exactly the
parser's structure (it stops at the first error), so the depth measured here bounds the
parser's recursion and every later walk. Only a body found too deep is walked token by token,
to name where (docs/server.md).
"""

from __future__ import annotations

import json
import re
from itertools import islice
from typing import NamedTuple

__all__ = ["Shape", "deepest_field", "measure", "neutral"]

_TOKEN = re.compile(rb'"[^"]*"?|[\[\]{},]')  # on a neutral body: a string, or a structural byte
_QUOTE, _COMMA, _OPENS, _CLOSES = 0x22, 0x2C, (0x5B, 0x7B), (0x5D, 0x7D)
_NAMING_TOKENS = 100_000  # past this many tokens the walk names the whole body (under 0.25 s)
_NAME_CHARS = 64


class Shape(NamedTuple):
    """What a body holds outside its strings."""

    values: int  # one, plus one per separator and container: the values of a valid body
    depth: int  # the deepest nesting of arrays and objects


def neutral(raw: bytes) -> bytes:
    """``raw`` with each ``\\\\`` and ``\\"`` overwritten by ``__``: the same length, and every
    quote left is a string's edge (escapes pair up from the left, as the parser reads them)."""
    return raw.replace(b"\\\\", b"__").replace(b'\\"', b"__")


def measure(clean: bytes) -> Shape:
    """The values and depth of a :func:`neutral` body, counting only what lies outside strings."""
    import numpy as np

    data = np.frombuffer(clean, dtype=np.uint8)
    outside = np.bitwise_xor.accumulate((data == _QUOTE).view(np.uint8)) == 0
    opens = outside & ((data == _OPENS[0]) | (data == _OPENS[1]))
    closes = outside & ((data == _CLOSES[0]) | (data == _CLOSES[1]))
    separators = np.count_nonzero(outside & (data == _COMMA))
    steps = opens.view(np.int8) - closes.view(np.int8)
    levels = np.cumsum(steps[opens | closes], dtype=np.int32)
    return Shape(int(np.count_nonzero(opens) + separators) + 1, int(levels.max(initial=0)))


def deepest_field(raw: bytes, limit: int) -> str:
    """The field where ``raw`` first nests deeper than ``limit``: ``state``, ``states[3]``,
    ``question 'q': criteria``; ``request body`` when no member of the body holds it (or when
    the walk to it would read more than :data:`_NAMING_TOKENS` tokens)."""
    path: list[
        str | int | None
    ] = []  # per open container: the current key (object) or index (array)
    expect_key = False
    for match in islice(_TOKEN.finditer(neutral(raw)), _NAMING_TOKENS):
        token = match.group()
        if token[0] == _QUOTE:  # a string: the member's key when an object awaits one
            if expect_key:
                path[-1], expect_key = _text(raw[match.start() : match.end()]), False
        elif token == b",":
            if path and isinstance(path[-1], int):
                path[-1] += 1
            else:
                expect_key = bool(path)
        elif token in (b"[", b"{"):
            if len(path) == limit:
                return _field(path)
            path.append(0 if token == b"[" else None)
            expect_key = token == b"{"
        elif path:
            path.pop()
            expect_key = False
    return "request body"


def _text(token: bytes) -> str:
    try:
        text = json.loads(token)
    except ValueError:
        text = token[1:].decode("utf-8", "replace")
    return str(text)[:_NAME_CHARS]


def _field(path: list[str | int | None]) -> str:
    """A wire field from the positions of the containers around a point (the body's first)."""
    top = path[0]
    if not isinstance(top, str):
        return "request body"
    if top == "states" and len(path) > 1:
        return f"states[{path[1]}]"
    if top == "questions" and len(path) > 2:
        return f"question {path[1]!r}: {path[2]}"
    return top
