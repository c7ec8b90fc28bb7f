"""The errors laya raises on purpose: one small hierarchy, so callers catch by meaning.

* :class:`LayaError` — the base of all of them.
* :class:`InvalidRequest` — a caller mistake (a bad name, field or argument); the message names
  it and the fix. A ``ValueError``, so ``except ValueError`` keeps working.
* :class:`WorkBudgetExceeded` — a call asked the model to read more row tokens than the budget its
  caller set (``laya.engine.work``); an ``InvalidRequest``.
* :class:`InvalidSchema` — a type or JSON schema that ``decide`` cannot map to questions; an
  ``InvalidRequest`` and a ``TypeError`` (it is about a type), naming the field and the forms.
* :class:`CheckpointUnavailable` — the checkpoint is not on disk or in the Hub cache and cannot be
  fetched now (offline, no network, refused). A ``FileNotFoundError`` (so an ``OSError``).
* :class:`CheckpointError` — the checkpoint is there but cannot be used: corrupt, incompatible,
  or its weights do not match the expected digest. A ``ValueError``.
* :class:`Overloaded` — a service is at capacity now; retry after ``retry_after`` seconds.
* :class:`DeadlineExceeded` — a call ran past its deadline and was stopped. A ``TimeoutError``.

The errors the hooks contract names (``TypeError`` / ``ValueError`` for bad hook arguments) stay
those built-in types.
"""

from __future__ import annotations

import _thread
import functools
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FunctionType
from typing import Any, TypeVar, cast

__all__ = [
    "EXIT_FAILED",
    "EXIT_USAGE",
    "CheckpointError",
    "CheckpointUnavailable",
    "DeadlineExceeded",
    "InvalidRequest",
    "InvalidSchema",
    "LayaError",
    "MissingCheckpointFile",
    "Overloaded",
    "WorkBudgetExceeded",
    "check_output_file",
    "command_failed",
    "exit_status",
    "failure_message",
    "one_line",
    "read_input_text",
    "redeliver_interrupt",
    "short_traceback",
]

EXIT_FAILED, EXIT_USAGE = 1, 2


class LayaError(Exception):
    """Base class of every error laya raises on purpose."""


class InvalidRequest(LayaError, ValueError):
    """A caller mistake: the message names the field or argument and the fix."""


class WorkBudgetExceeded(InvalidRequest):
    """A call's rows hold more tokens than its caller's work budget (``laya.engine.work``) allows."""


class InvalidSchema(InvalidRequest, TypeError):
    """A schema ``decide`` cannot map: the message names the field and the supported forms."""


class CheckpointUnavailable(LayaError, FileNotFoundError):
    """A checkpoint that is neither on disk nor in the cache, and cannot be downloaded now.

    ``reason`` is the message without the checkpoint's name, for callers that name it their way
    (the Router and the CLI say ``english`` where the runtime only saw the repo id).
    ``retry_after`` is a hint in seconds when waiting may help (a download under way), else None.
    """

    def __init__(
        self, message: str, reason: str | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.reason = reason or message
        self.retry_after = retry_after

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class CheckpointError(LayaError, ValueError):
    """A checkpoint that is present but unusable: corrupt, incompatible, or the wrong digest."""


class MissingCheckpointFile(CheckpointError, FileNotFoundError):
    """A checkpoint directory without ``rl_agent_config.json`` or ``model.safetensors``: a
    broken checkpoint, and the ``FileNotFoundError`` the published runtime raises for it."""


class Overloaded(LayaError):
    """A service at capacity: the work was refused, not queued; retry after ``retry_after`` s."""

    def __init__(self, message: str, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class DeadlineExceeded(LayaError, TimeoutError):
    """A call that ran past its deadline; the work stopped at the next forward pass."""


def one_line(exc: BaseException) -> str:
    """``exc``'s message on one line (the way every command, the server and the tools show it)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def exit_status(exc: BaseException) -> int:
    """How every ``laya`` command exits on ``exc``: 2 for a caller mistake, 1 for a failure."""
    return EXIT_USAGE if isinstance(exc, InvalidRequest) else EXIT_FAILED


def failure_message(exc: BaseException) -> str:
    """One line saying what failed and, where there is one, the fix."""
    text = one_line(exc)
    if isinstance(exc, ModuleNotFoundError):
        return f"missing dependency {exc.name!r}; install laya with its dependencies ({text})"
    return text


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


def command_failed(prog: str, exc: BaseException) -> int:
    """Report why command ``prog`` stopped as one line on stderr (never a traceback); return
    the exit status every ``laya`` command gives it (:func:`exit_status`)."""
    print(f"{prog}: error: {failure_message(exc)}", file=sys.stderr)
    return exit_status(exc)


def redeliver_interrupt(unraisable: Any) -> None:
    """``sys.unraisablehook`` of the ``laya`` commands: a Ctrl-C that lands in a finalizer
    (``__del__``: Python prints "Exception ignored" and goes on) is delivered to the main thread
    again, so the command still stops, with ``laya: interrupted``. Anything else as Python shows it."""
    if issubclass(unraisable.exc_type, KeyboardInterrupt):
        later = threading.Timer(0.05, _thread.interrupt_main)  # now, it would land in this hook
        later.daemon = True
        later.start()
    else:
        sys.__unraisablehook__(unraisable)


F = TypeVar("F", bound=Callable[..., Any])

# The wrapper is compiled under a file name that has no source, so its frame prints as one line
# (``File "<laya load>", line 5, in load``) instead of a line of laya's own code: the trick
# dataclasses uses for the methods it generates.
_ENTRY = """
def entry(*args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except (CheckpointUnavailable, InvalidRequest) as exc:
        raise exc.with_traceback(None) from exc.__cause__
"""


def short_traceback(fn: F) -> F:
    """Mark a public entry point: an expected failure surfaces as one frame, not twenty.

    An unavailable checkpoint or a name that resolves nowhere is not a bug: its message says
    everything (which checkpoint, where laya looked, the fixes), so the library frames between
    the caller and the place it was found are dropped. Every other error keeps its traceback.
    """
    namespace: dict[str, Any] = {  # exec's globals: whatever the compiled code defines
        "fn": fn,
        "CheckpointUnavailable": CheckpointUnavailable,
        "InvalidRequest": InvalidRequest,
    }
    exec(compile(_ENTRY, f"<laya {fn.__qualname__}>", "exec"), namespace)
    entry: FunctionType = namespace["entry"]
    entry.__code__ = entry.__code__.replace(co_name=fn.__name__)
    return cast(F, functools.wraps(fn)(entry))  # entry passes fn its arguments, returns its result
