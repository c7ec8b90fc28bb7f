"""The errors laya raises on purpose: one small hierarchy, so callers catch by meaning.

* :class:`LayaError` — the base of all of them.
* :class:`InvalidRequest` — a caller mistake (a bad name, field or argument); the message names
  it and the fix. A ``ValueError``, so ``except ValueError`` keeps working.
* :class:`UnknownName` — a checkpoint name (``model``, ``task``) that names no checkpoint; an
  ``InvalidRequest`` whose ``field`` says which argument (the MCP tools' ``invalid_model``).
* :class:`TooManyOptions` — a question whose options cannot all be read in one pass (their
  markers do not fit the row); an ``InvalidRequest``. A tournament or a shortlist answers it.
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
* :class:`BackendUnavailable` — a backend this machine or install cannot run (``set_backend``,
  ``accelerate`` with ``strict=True``). A ``RuntimeError``, as in the published runtime.
* :class:`MissingExtra` — an optional framework (LangChain, CrewAI...) is not installed; the
  message names the extra to install. An ``ImportError``.
* :class:`LayaLowConfidenceError` — a framework router's pick fell below the caller's
  ``confidence_threshold`` with no fallback; carries ``confidence``, ``threshold``, ``raw_decision``.
* :class:`LayaGuardrailError` — a guardrail flagged its input; carries ``violations`` and
  ``raw_decision``. Both are ``ValueError``s.

The errors the hooks contract names (``TypeError`` / ``ValueError`` for bad hook arguments) stay
those built-in types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib.util import find_spec
from typing import Any

__all__ = [
    "BackendUnavailable",
    "CheckpointError",
    "CheckpointUnavailable",
    "DeadlineExceeded",
    "InvalidRequest",
    "InvalidSchema",
    "LayaError",
    "LayaGuardrailError",
    "LayaLowConfidenceError",
    "MissingCheckpointFile",
    "MissingExtra",
    "Overloaded",
    "TooManyOptions",
    "UnknownName",
    "WorkBudgetExceeded",
    "one_line",
    "require_extra",
]


class LayaError(Exception):
    """Base class of every error laya raises on purpose."""


class InvalidRequest(LayaError, ValueError):
    """A caller mistake: the message names the field or argument and the fix."""


class UnknownName(InvalidRequest):
    """A checkpoint name that resolves nowhere; ``field`` is the argument that gave it."""

    def __init__(self, message: str, field: str = "model") -> None:
        super().__init__(message)
        self.field = field


class TooManyOptions(InvalidRequest):
    """A question's option markers do not fit in one row: too many options for one pass."""


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


class BackendUnavailable(LayaError, RuntimeError):
    """A backend that cannot run here (no GPU kernel package, no faster precision on this CPU)."""


class MissingExtra(LayaError, ImportError):
    """An optional dependency that is not installed: the message names ``pip install 'laya[X]'``."""


def require_extra(module: str, extra: str, package: str, who: str) -> None:
    """Nothing when ``module`` is installed; else MissingExtra: ``who needs package: pip install
    'laya[extra]'`` (found without importing it: CrewAI alone takes seconds to import)."""
    try:
        found = find_spec(module) is not None
    except ImportError:  # its parent package is missing
        found = False
    if not found:
        raise MissingExtra(f"{who} needs {package}: pip install 'laya[{extra}]'")


class LayaLowConfidenceError(LayaError, ValueError):
    """A router's best pick is less likely than the caller's threshold, and nothing falls back."""

    def __init__(self, confidence: float, threshold: float, raw_decision: dict[str, Any]) -> None:
        super().__init__(
            f"the best pick has confidence {confidence:.4f}, below confidence_threshold "
            f"{threshold}: lower the threshold or give a fallback"
        )
        self.confidence = confidence
        self.threshold = threshold
        self.raw_decision = raw_decision


class LayaGuardrailError(LayaError, ValueError):
    """A guardrail flagged its input: ``violations`` names each question and its probability."""

    def __init__(
        self, violations: Sequence[Mapping[str, Any]], raw_decision: dict[str, Any]
    ) -> None:
        names = ", ".join(f"{v['question']} ({v['probability']:.2f})" for v in violations)
        super().__init__(f"guardrail flagged the input: {names}")
        self.violations = list(violations)
        self.raw_decision = raw_decision


def one_line(exc: BaseException) -> str:
    """``exc``'s message on one line (the way every command, the server and the tools show it)."""
    return " ".join(str(exc).split()) or type(exc).__name__
