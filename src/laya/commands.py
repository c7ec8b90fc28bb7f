"""How every ``laya`` command runs: its arguments parsed (laya's ``--help``, one-line usage
errors), its work done, and any failure said in one line with one exit code (docs/cli.md).

:func:`run_command` is the one wrapper of the subcommands (``laya batch``, ``train``, ``eval``,
``calibrate``, ``export-onnx``, ``serve``, ``mcp``): 0 when the work is done, 2 for a caller's
mistake (argparse's, or an :class:`~laya.errors.InvalidRequest`), 1 for any other failure, 130
on Ctrl-C, 143 on ``SIGTERM`` (raised as :class:`Terminated`, so every ``finally`` runs: an
output is left whole and temporary files are removed, as on Ctrl-C). The files a command reads and writes are checked here too, before any work, and a
command that works through rows shows its progress here (:func:`progress`). Every
front end (the ``laya`` command, the server, MCP, Ray) and the tools' commands share it.
"""

from __future__ import annotations

import _thread
import argparse
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import NoReturn, TextIO, TypeVar

from .errors import InvalidRequest, one_line

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "PROGRESS_STEP",
    "Advance",
    "CommandParser",
    "HelpFormatter",
    "RawHelpFormatter",
    "Terminated",
    "check_output_file",
    "chunk_rows",
    "command_failed",
    "command_parser",
    "command_output",
    "exit_status",
    "failure_message",
    "on_terminal",
    "progress",
    "read_input_text",
    "run_command",
    "stopped_by_sigterm",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C
EXIT_TERMINATED = 143  # 128 + SIGTERM
T = TypeVar("T")
PROGRESS_STEP = 8  # rows per chunk while a progress bar is shown: it moves at least this often
Advance = Callable[[int], None]  # progress(...) yields it: advance(n) counts n more rows done


class Terminated(BaseException):
    """``SIGTERM`` arrived while a command ran: raised where the main thread is, like Ctrl-C's
    ``KeyboardInterrupt`` (no ``except Exception`` swallows it), so the command stops cleanly."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


@contextmanager
def stopped_by_sigterm() -> Iterator[None]:
    """While a command runs in the main thread, ``SIGTERM`` raises :class:`Terminated` there."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, saved)


def exit_status(exc: BaseException) -> int:
    """How every ``laya`` command exits on ``exc``: 2 for a caller mistake, 1 for a failure."""
    return EXIT_USAGE if isinstance(exc, InvalidRequest) else EXIT_FAILED


def failure_message(exc: BaseException) -> str:
    """One line saying what failed and, where there is one, the fix."""
    text = one_line(exc)
    if isinstance(exc, ModuleNotFoundError):
        return f"missing dependency {exc.name!r}; install laya with its dependencies ({text})"
    return text


def command_failed(prog: str, exc: BaseException) -> int:
    """Report why command ``prog`` stopped as one line on stderr (never a traceback); return
    the exit status every ``laya`` command gives it (:func:`exit_status`)."""
    print(f"{prog}: error: {failure_message(exc)}", file=sys.stderr)
    return exit_status(exc)


def run_command(
    prog: str,
    argv: Sequence[str] | None,
    parse: Callable[[list[str]], T],
    work: Callable[[T], int | None],
) -> int:
    """Parse ``argv`` (None: the process's) with ``parse``, then do ``work``; every failure is one
    line on stderr and an exit code (0 done, 1 failed, 2 usage, 130 interrupted, 143 ``SIGTERM``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    with command_output(), stopped_by_sigterm():
        try:
            parsed = parse(args)
        except SystemExit as exc:  # argparse: --help (0), or a usage error it printed (2)
            return exc.code if isinstance(exc.code, int) else EXIT_USAGE
        except Exception as exc:  # noqa: BLE001 - a setting refused: one line, exit 2
            return command_failed(prog, exc)
        try:
            return work(parsed) or EXIT_OK
        except KeyboardInterrupt:
            print("laya: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except Terminated:
            print("laya: terminated", file=sys.stderr)
            return EXIT_TERMINATED
        except Exception as exc:  # noqa: BLE001 - one line for the shell, never a traceback
            return command_failed(prog, exc)


@contextmanager
def command_output() -> Iterator[None]:
    """While a command runs: warnings on one line each, and a Ctrl-C that lands in a finalizer
    (``__del__``: Python prints "Exception ignored" and goes on) still stops it."""
    saved = warnings.showwarning, sys.unraisablehook
    warnings.showwarning = _warn_on_one_line
    sys.unraisablehook = _redeliver_interrupt
    try:
        yield
    finally:
        warnings.showwarning, sys.unraisablehook = saved


def _warn_on_one_line(
    message: Warning | str, category: type[Warning], *_args: object, **_kwargs: object
) -> None:
    """A warning as one line on stderr (no file name, no source line): a user reads it."""
    text = " ".join(str(message).split())
    print(text if text.startswith("laya") else f"laya: warning: {text}", file=sys.stderr)


def _redeliver_interrupt(unraisable: sys.UnraisableHookArgs) -> None:
    """A KeyboardInterrupt raised in a finalizer is delivered to the main thread again, a moment
    later (now, it would land in this hook); anything else is shown as Python shows it."""
    if issubclass(unraisable.exc_type, KeyboardInterrupt):
        later = threading.Timer(0.05, _thread.interrupt_main)
        later.daemon = True
        later.start()
    else:
        sys.__unraisablehook__(unraisable)


# --------------------------------------------------------------------------- parsing


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` for a user: each option's default appended when it has a real one (not None,
    not a switch's False, not one the help text already names)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if default is None or default is False or default is argparse.SUPPRESS:
            return text
        if "%(default)" in text or "default:" in text:
            return text
        return super()._get_help_string(action) or text


class RawHelpFormatter(HelpFormatter, argparse.RawDescriptionHelpFormatter):
    """:class:`HelpFormatter` keeping the description and epilog as written (command lists)."""


class CommandParser(argparse.ArgumentParser):
    """argparse whose usage errors are one line on stderr, pointing at ``--help`` (exit 2)."""

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: error: MESSAGE (see PROG --help)`` and exit 2, without the usage block."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def command_parser(prog: str, description: str, epilog: str | None = None) -> CommandParser:
    """The parser of a ``laya`` command: ``--help`` by :class:`HelpFormatter`, one-line errors."""
    return CommandParser(
        prog=prog, description=description, epilog=epilog, formatter_class=HelpFormatter
    )


# --------------------------------------------------------------------------- files


def read_input_text(path: str | Path, what: str) -> str:
    """A caller's UTF-8 input file as text (a leading byte-order mark, as Windows editors write,
    is dropped); unreadable or not UTF-8, an InvalidRequest naming it."""
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InvalidRequest(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InvalidRequest(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None


def check_output_file(path: str | Path, what: str) -> None:
    """Refuse, before any work, an output file that cannot be written there: a directory, or a
    file in a folder that does not exist (the counterpart of :func:`read_input_text`)."""
    target = Path(path)
    if target.is_dir():
        raise InvalidRequest(f"{what} {str(path)!r} is a directory; name a file to write")
    if not target.parent.is_dir():
        raise InvalidRequest(
            f"{what} {str(path)!r}: there is no folder {str(target.parent)!r} to write it in"
        )


# --------------------------------------------------------------------------- progress


def on_terminal(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (default: stderr) is a terminal, where a progress bar belongs."""
    stream = sys.stderr if stream is None else stream
    return bool(getattr(stream, "isatty", lambda: False)())


def chunk_rows(quiet: int, shown: bool) -> int:
    """Rows per chunk of a command that answers in chunks: ``quiet`` (its throughput size) when no
    bar is shown, at most :data:`PROGRESS_STEP` while one is, so the bar moves that often."""
    return min(quiet, PROGRESS_STEP) if shown else quiet


@contextmanager
def progress(total: int, unit: str = "row", shown: bool | None = None) -> Iterator[Advance]:
    """A bar on stderr that a command moves with ``advance(n)`` as rows are done: tqdm, only when
    stderr is a terminal (``shown`` decides otherwise), so a pipe or a log gets nothing
    (docs/cli.md, "Progress")."""
    if not (on_terminal() if shown is None else shown):
        yield _no_progress
        return
    from tqdm import tqdm

    with tqdm(
        total=total, unit=unit, file=sys.stderr, leave=False, mininterval=0, miniters=1
    ) as bar:
        yield bar.update


def _no_progress(n: int = 1) -> None:
    """Progress nobody sees."""
