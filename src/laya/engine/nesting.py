"""One limit on how deeply JSON may nest in what laya serialises: states and questions' fields.

Every later reader of such a value recurses once or more per level: ``json.dumps`` (a state's
text, a criterion's, the server's checks), ``repr`` and ``copy.deepcopy`` (a batch's grouping, a
long document's scan). :data:`MAX_DEPTH` keeps them all far below Python's recursion limit
(1,000 frames), from any thread, so a value that is accepted is always serialised. A deeper value
is refused where it enters, naming the field (docs/server.md), never later as a RecursionError.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import InvalidRequest

__all__ = ["MAX_DEPTH", "TOO_DEEP", "check_depth", "deeper_than"]

MAX_DEPTH = 100
TOO_DEEP = (
    f"nests JSON more than {MAX_DEPTH} levels deep; flatten it, or send it as one string "
    "(laya reads at most that many levels of arrays and objects)"
)


def deeper_than(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` holds more than ``limit`` levels of lists, tuples and dicts (``["x"]`` is
    one). Walks iteratively and stops one level past the limit, so a cyclic value is deep too."""
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Iterable[object] = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth == limit:
            return True
        pending.extend((child, depth + 1) for child in children)
    return False


def check_depth(value: object, where: str) -> None:
    """Refuse a value nested more than :data:`MAX_DEPTH` levels, naming ``where`` it was given."""
    if deeper_than(value):
        raise InvalidRequest(f"{where} {TOO_DEEP}")
