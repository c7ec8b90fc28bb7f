"""A router the caller built, served as it is: ``laya.serve.create_app(router)`` takes any object
with the published Router's ``predict(state, questions, **controls)`` (a wrapper that checks or
logs each request, say) and the server reads it through the Router surface it uses.

Only the controls a request sets reach the caller's ``predict``, as the published server forwards
them, so a ``predict(state, questions, model=None)`` answers every request that names no other. A
``ValueError`` it raises refuses the request (422 with its message), as one from laya's Router does.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..checkpoint import Source
from ..errors import InvalidRequest, LayaError
from ..router.names import DEFAULT_MODELS

# What the published server hands its router: a request's controls, and a batch's call options.
_CONTROLS = ("model", "max_len", "head_max_len", "task", "lang", "lang_guess", "min_confidence")
_BATCH_OPTIONS = ("batch_size", "min_confidence", "sort_by_length")


def _set(options: Mapping[str, object], names: Sequence[str] = _CONTROLS) -> dict[str, object]:
    """The published ``names`` among ``options`` that are set (None is unset; so is
    ``sort_by_length=False``); laya's own modes (tournaments...) are not the caller's to read."""
    return {k: v for k, v in options.items() if k in names and v is not None and v is not False}


@contextmanager
def _refusals() -> Iterator[None]:
    """A caller's ``ValueError`` as the request's refusal (laya's own errors pass unchanged)."""
    try:
        yield
    except LayaError:
        raise
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from exc


class CallerRouter:
    """The server's view of a caller's router: its ``predict`` (and ``predict_batch``,
    ``loaded``, ``unload``, ``models``, ``default`` where it has them)."""

    def __init__(self, router: Any) -> None:
        self.wrapped = router

    @property
    def models(self) -> dict[str, Source | None]:
        """Its checkpoint table, else the built-in one (what ``model`` names resolve against)."""
        table = getattr(self.wrapped, "models", None)
        return dict(table) if isinstance(table, Mapping) else dict(DEFAULT_MODELS)

    @property
    def default(self) -> str | None:
        """Its default checkpoint; None leaves a request without ``model`` to its ``predict``."""
        value = getattr(self.wrapped, "default", None)
        return value if isinstance(value, str) else None

    @property
    def loaded(self) -> list[str]:
        return [str(name) for name in getattr(self.wrapped, "loaded", ())]

    @property
    def resident(self) -> dict[str, None]:
        """Resident names; the runtimes behind them are the caller's own."""
        return dict.fromkeys(self.loaded)

    def unload(self, name: str | None = None) -> None:
        unload = getattr(self.wrapped, "unload", None)
        if unload is not None:
            unload() if name is None else unload(name)

    def predict(self, state: Any, questions: dict[str, Any], **controls: Any) -> Any:
        with _refusals():
            return self.wrapped.predict(state, questions, **_set(controls))

    def predict_batch(self, requests: Sequence[dict[str, Any]], **options: Any) -> list[Any]:
        """Its own ``predict_batch`` where it has one, else one ``predict`` per request."""
        if hasattr(self.wrapped, "predict_batch"):
            with _refusals():
                return list(self.wrapped.predict_batch(requests, **_set(options, _BATCH_OPTIONS)))
        call = _set({"min_confidence": options.get("min_confidence")})
        return [self._one(request, call) for request in requests]

    def predict_each(
        self, requests: Sequence[dict[str, Any]], min_confidence: Any = None, **mode: Any
    ) -> list[Any]:
        """One ``predict`` per request; each gets its own result or its own exception."""
        call = _set({"min_confidence": min_confidence})
        outcome: list[Any] = []
        for request in requests:
            try:
                outcome.append(self._one(request, call))
            except Exception as exc:  # noqa: BLE001 - this request's own failure
                outcome.append(exc)
        return outcome

    def _one(self, request: dict[str, Any], call: dict[str, object]) -> Any:
        controls = {k: v for k, v in request.items() if k not in ("state", "questions")}
        return self.predict(request["state"], request["questions"], **controls, **call)
