"""Whole files written atomically: a reader sees the old file or the new one, never half of one.

The new content goes to a temporary file that :func:`tempfile.mkstemp` makes in the target's
folder (a random name, created exclusively, so a symbolic link planted there is never followed),
takes the mode the target should have (the replaced file's own, else what the umask allows), and
is renamed over the target; on any way out before that (an error, Ctrl-C, ``SIGTERM`` through
:func:`laya.commands.run_command`) it is removed.
"""

from __future__ import annotations

import os
import stat
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

__all__ = ["current_umask", "file_mode", "replacing", "write_all", "write_atomically"]

_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process's umask (read from /proc where there is one, so it is never changed)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o077)
        os.umask(mask)
    return mask


def file_mode(path: str | os.PathLike[str]) -> int:
    """The permission bits a file written at ``path`` gets: those of the file already there,
    else what the umask leaves of 0o666 (as ``open(path, "w")`` would create it)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~current_umask()


@contextmanager
def replacing(path: str | os.PathLike[str], mode: int | None = None) -> Iterator[tuple[int, Path]]:
    """A temporary file beside ``path`` as ``(open descriptor, its path)``: write it, and when the
    block ends without an error it replaces ``path``; on any error or interruption it is removed.

    ``mode`` defaults to :func:`file_mode` of ``path``. The descriptor is closed here (write
    through it with :func:`write_all` or ``os.fdopen(fd, closefd=False)``, or by the path).
    """
    target = Path(path)
    mode = file_mode(target) if mode is None else mode
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    temporary, placed = Path(name), False
    try:
        os.fchmod(fd, mode)
        yield fd, temporary
        os.fsync(fd)
        os.replace(temporary, target)
        placed = True
    finally:
        os.close(fd)
        if not placed:
            with suppress(FileNotFoundError):
                temporary.unlink()


def write_atomically(
    path: str | os.PathLike[str], data: str | bytes, mode: int | None = None
) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` through :func:`replacing`; return the path."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with replacing(path, mode) as (fd, _):
        write_all(fd, raw)
    return Path(path)


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is written (one call for anything a line holds)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
