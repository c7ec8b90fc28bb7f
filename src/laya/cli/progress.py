"""Progress on a terminal: a bar on stderr that moves as rows are done, nothing when piped.

Every command that works through rows (``laya --batch``, ``laya batch``, ``laya eval``, ``laya
calibrate``, ``laya train``) shows its work the same way (docs/cli.md, "Progress"): tqdm when it
is installed, else a plain bar of block characters, and only when stderr is a terminal, so a
log file or a pipe gets no carriage returns. A command that answers rows in chunks takes them
:data:`STEP` at a time while the bar is shown, so the bar moves at least every ``STEP`` rows.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from .render import bar

__all__ = ["STEP", "Progress", "chunk_rows", "on_terminal"]

STEP = 8  # rows per chunk while a bar is shown: the bar moves at least this often
_PLAIN_WIDTH = 30


def on_terminal(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (default: stderr) is a terminal, where a progress bar belongs."""
    stream = sys.stderr if stream is None else stream
    return bool(getattr(stream, "isatty", lambda: False)())


def chunk_rows(quiet: int, shown: bool) -> int:
    """Rows per chunk of a command that answers in chunks: ``quiet`` (the throughput size) when
    no bar is shown, :data:`STEP` while one is."""
    return min(quiet, STEP) if shown else quiet


class Progress:
    """A context manager yielding ``advance(n)``: tqdm on stderr if installed, else a plain bar;
    nothing at all unless ``enabled``."""

    def __init__(self, total: int, enabled: bool, unit: str = "row") -> None:
        self.total, self.enabled, self.unit = total, enabled, unit
        self.done = 0
        self.bar: Any = None

    def __enter__(self) -> Callable[[int], None]:
        if self.enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(
                    total=self.total,
                    unit=self.unit,
                    file=sys.stderr,
                    leave=False,
                    mininterval=0,
                    miniters=1,
                )
            except ImportError:
                self._draw()
        return self.advance

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more rows as done."""
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.enabled:
            self._draw()

    def _draw(self) -> None:
        share = self.done / self.total if self.total else 1.0
        sys.stderr.write(f"\r{bar(share, _PLAIN_WIDTH)} {self.done}/{self.total}")
        sys.stderr.flush()

    def __exit__(self, *exc_info: Any) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.enabled:
            sys.stderr.write("\r" + " " * (_PLAIN_WIDTH + 24) + "\r")
            sys.stderr.flush()
