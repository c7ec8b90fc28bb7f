"""The one rule for empty input: a state with no text in it is refused, everywhere.

An empty string, whitespace (or zero-width and control characters) only, or JSON holding nothing
but empty containers, blank strings and nulls (``{}``, ``[]``, ``{"message": ""}``) gives the model nothing to decide on: its answer
would be the checkpoint's prior, which looks like an answer and is not one. The Agent, the Router,
the command line, the HTTP server and the playground all refuse it with the same
:class:`~laya.errors.InvalidRequest` before any model loads (an Agent checks what its start
hooks leave, after them, as the hooks contract orders its checks). The same check applies the
one nesting limit (:mod:`laya.engine.nesting`), so every state that enters can be serialised.
"""

from __future__ import annotations

import unicodedata

from ..errors import InvalidRequest
from .nesting import check_depth

__all__ = ["EMPTY_STATE", "check_state", "has_text"]

_INVISIBLE = frozenset({"Cc", "Cf"})  # control and format characters (U+200B, U+FEFF, U+2060)

EMPTY_STATE = (
    "is empty: there is no text in it to decide on; send the text, document or JSON to read "
    "(a blank string, whitespace, or JSON holding only empty values is refused)"
)


def has_text(state: object) -> bool:
    """Whether ``state`` holds anything to read: a non-blank string, a number or a bool.

    Object keys are structure, not content. Walks iteratively, so deep JSON cannot overflow.
    """
    pending = [state]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            if _visible(value):
                return True
        elif isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, (list, tuple)):
            pending.extend(value)
        elif value is not None:
            return True
    return False


def _visible(text: str) -> bool:
    """Whether ``text`` has a character that shows: not whitespace, not a control or format
    character (a zero-width space or a byte-order mark alone is as blank as a space)."""
    return any(
        not char.isspace() and unicodedata.category(char) not in _INVISIBLE for char in text.strip()
    )


def check_state(state: object, where: str = "state") -> None:
    """Refuse a state nested too deeply to serialise (:mod:`laya.engine.nesting`) or with no text in it
    (``None`` is left to the caller's own check)."""
    check_depth(state, where)
    if state is not None and not has_text(state):
        raise InvalidRequest(f"{where} {EMPTY_STATE}")
