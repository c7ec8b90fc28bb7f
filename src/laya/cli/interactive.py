"""``laya`` with no TEXT on a terminal: a prompt that routes or answers one request per line.

The model stays loaded between lines, so every answer after the first comes at once. ``quit``,
``exit``, an empty line, end of input (Ctrl-D) or Ctrl-C at the prompt end the session; a line
that fails prints its one error line and the session goes on (docs/cli.md, "The prompt").
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["PROMPT", "prompt_loop"]

PROMPT = "laya> "
_ENDS = frozenset({"quit", "exit"})


def prompt_loop(
    answer: Callable[[str], int], banner: str, ask: Callable[[str], str] = input
) -> int:
    """Read lines with ``ask`` until the session ends, handing each to ``answer`` (which prints
    the result or one error line and returns its exit status); returns the last failure's status,
    0 when every line succeeded."""
    print(f"{banner}; quit, exit, an empty line or Ctrl-D ends.")
    status = 0
    while True:
        try:
            text = ask(PROMPT).strip()
        except (EOFError, KeyboardInterrupt):
            print()
            return status
        if not text or text.lower() in _ENDS:
            return status
        status = answer(text) or status
