"""What the decision routes run: the Router the settings describe, and a request answered on it.

No web framework here (``laya serve`` and its Ray replicas share it): :func:`build_router`,
the ``model`` field's resolution (:func:`resolve_model`, :func:`routed_controls`), and
:func:`predict_single` / :func:`predict_batch`, which call the Router under the request's work
budget (``LAYA_MAX_WORK_TOKENS``, counted on the rows the model reads: :mod:`laya.engine.work`) and say
truthfully how an unpinned request was routed. Errors are the package's own;
:mod:`laya.server.statuses` maps them.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..checkpoint import (
    BUNDLED,
    cached_checkpoint,
    canonical_name,
    check_path,
)
from ..checkpoint.sources import Source
from ..engine.result import Result
from ..engine.strategies.tournament import OVERFLOW
from ..engine.work import work_budget
from ..errors import InvalidRequest, one_line
from ..router import Router
from ..router.pins import pin
from .settings import Settings, SettingsError
from .wire import BatchRequest, SingleRequest

__all__ = [
    "MINI_DIR",
    "answering",
    "SERVABLE",
    "STANDINGS",
    "build_router",
    "checkpoint_listing",
    "intra_op_threads",
    "predict_batch",
    "predict_each",
    "predict_single",
    "resolve_model",
    "routed_controls",
    "router_mode",
    "standing",
    "use_threads",
    "work_bound",
]

MINI_DIR = BUNDLED["mini"]


def build_router(settings: Settings, hooks: object = None) -> Router:
    """The Router the settings describe (``mini`` plus ``models``, ``hooks`` installed), preloaded if asked."""
    if settings.threads:
        import torch

        torch.set_num_threads(settings.threads)
    if settings.device:
        from ..engine.backends.torch import resolve_device

        resolve_device(settings.device)  # a misspelt device fails here, not at first request
    for name, path in settings.models.items():
        check_path(path, f"--models {name}")
    check_default_name(settings.default_model)
    models: dict[str, str | Source] = {
        **settings.models,
        **settings.extra_models,
    }  # and the built-ins
    mini_missing = not MINI_DIR.is_dir() and "mini" not in map(canonical_name, models)
    if canonical_name(settings.default_model) == "mini" and mini_missing:
        raise SettingsError(
            f"the bundled model 'mini' is not installed ({MINI_DIR} is missing); "
            "serve another checkpoint with --models NAME=PATH --model NAME"
        )
    agent_kwargs: dict[str, bool | int | str] = {"fast": True} if settings.fast else {}
    if settings.precision:
        agent_kwargs["precision"] = settings.precision
    if settings.max_batch_tokens:
        agent_kwargs["max_batch_tokens"] = settings.max_batch_tokens
    router = Router(
        models=models,
        default=settings.default_model,
        device=settings.device,
        max_loaded=settings.max_loaded or 2,
        hooks=hooks,
        agent_kwargs=agent_kwargs,
        downloads="background" if settings.allow_downloads else "never",
        calibration=settings.calibration,
        auto_task_detection=settings.auto_task,
    )
    for name in settings.preload_models:  # a misspelt name fails at start-up, preloading or not
        try:
            router.resolve(name)
        except InvalidRequest as exc:
            raise SettingsError(f"--models {name}: {one_line(exc)}") from None
    if settings.preload:
        named = [*answering(settings), *models, *settings.preload_models]
        # on a thread of its own: the torch threads a load starts end with it, so only the
        # threads that answer requests ever hold any (docs/server.md#workers-and-threads)
        with ThreadPoolExecutor(1, "laya-preload") as loader:
            loader.submit(router.preload, list(dict.fromkeys(named))).result()
    return router


def answering(settings: Settings) -> list[str]:
    """The checkpoints that answer requests naming no model: the default model under ``--route
    default``; routed by language, ``english`` and ``multilingual`` (and the default, which
    answers states whose language cannot be told; ``typed-decisions`` with ``--auto-task``)."""
    if settings.route == "default":
        return [settings.default_model]
    routed = ["english", "multilingual", settings.default_model]
    return list(dict.fromkeys(routed + (["typed-decisions"] if settings.auto_task else [])))


def intra_op_threads(settings: Settings) -> int:
    """The torch threads one inference may use: ``--threads``, else torch's own count (the
    cores), else (torch not loaded) the machine's CPUs."""
    if settings.threads:
        return settings.threads
    torch = sys.modules.get("torch")
    return torch.get_num_threads() if torch is not None else os.cpu_count() or 1


def use_threads(count: int) -> None:
    """Run this thread's torch work on ``count`` intra-op threads (torch keeps the count per
    thread). Two passes at once, each on every core, fight over the cores: the batcher's
    groups share them instead (docs/server.md#the-batcher). A no-op until torch is loaded."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != count:
        torch.set_num_threads(count)


# Where a checkpoint the server knows stands (:func:`standing`), and the start-up line for it.
STANDINGS = {
    "loaded": "loaded",
    "on disk": "on disk, loads on first use",
    "cached": "in the Hugging Face cache, loads on first use",
    "downloads": "downloads on first use",
    "attached": "attached earlier; not loadable again",
    "not here": "not here (needs --allow-downloads)",
}
SERVABLE = frozenset({"loaded", "on disk", "cached", "downloads"})


def standing(router: Router, name: str) -> str:
    """Where checkpoint ``name`` stands, a key of :data:`STANDINGS`: one in :data:`SERVABLE`
    can answer a request (``downloads``: once its background download lands), the others
    cannot. Reads the disk and the local cache only, never the network. A caller's own router
    (laya.server.caller_router) says nothing of its downloads: as the published Router, it is
    taken to download what it lacks."""
    source = router.models.get(name)
    if name in router.loaded:
        return "loaded"
    if source is None:
        return "attached"
    if Path(source[0]).expanduser().is_dir():
        return "on disk"
    revision = getattr(router, "revisions", {}).get(name)
    if cached_checkpoint(*source, revision) is not None:
        return "cached"
    downloads = getattr(getattr(router, "fetch", None), "mode", "inline")
    return "downloads" if downloads != "never" else "not here"


def checkpoint_listing(router: Router) -> list[str]:
    """One line per checkpoint the server knows: resident, on disk, cached, or not here."""
    return [f"{name:<16} {STANDINGS[standing(router, name)]}" for name in router.models]


def check_default_name(value: str, flag: str = "--default-model") -> None:
    """``flag`` names a checkpoint; a directory is served with ``--models NAME=PATH flag NAME``."""
    check_path(value, flag)
    if Path(value).expanduser().is_dir():
        raise SettingsError(
            f"{flag} takes a checkpoint name, got the directory {value!r}; serve it with "
            f"--models NAME=PATH {flag} NAME"
        )


def resolve_model(router: Router, model: str | None) -> str | None:
    """The checkpoint a ``model`` field pins, or None for no pin (laya.router.pins); 422 on
    paths."""
    return pin(model, router.models, local=False).name


def routed_controls(router: Router, controls: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """Controls with ``model`` resolved; route=default pins requests naming no model or task."""
    return _routing(router, controls, settings)[0]


def _routing(
    router: Router, controls: dict[str, Any], settings: Settings
) -> tuple[dict[str, Any], bool]:
    """:func:`routed_controls`, and whether the server (not the caller) pinned the model."""
    routed = dict(controls)
    model = resolve_model(router, routed.pop("model", None))
    pinned = model is None and settings.route == "default" and "task" not in routed
    if pinned:
        model = router.default
    if model is not None:
        routed["model"] = model
    return routed, pinned


def _say_default(result: Result, name: str) -> Result:
    """The routing reason of a request the server pinned to its default model."""
    routing = result.get("routing") if isinstance(result, dict) else None
    if isinstance(routing, dict) and routing.get("model") == name:
        routing["reason"] = (
            f"server default model {name!r}: the request named no model (laya serve --model "
            f"{name} / --route default; without them requests are routed by language)"
        )
    return result


def predict_single(
    router: Router, request: SingleRequest, settings: Settings | None = None
) -> Result:
    """Answer one validated request with ``Router.predict`` (blocking: call it off the event loop)."""
    settings = settings or Settings()
    controls, pinned = _routing(router, request.controls, settings)
    with work_budget(settings.max_work_tokens):
        result = router.predict(
            request.state,
            request.questions,
            min_confidence=request.min_confidence,
            **controls,
            **router_mode(request),
        )
    return _say_default(result, controls["model"]) if pinned else result


def predict_batch(
    router: Router, request: BatchRequest, settings: Settings | None = None
) -> list[Result]:
    """Answer a validated batch with ``Router.predict_batch`` (its Agents pack the passes)."""
    settings = settings or Settings()
    controls, pinned = _routing(router, request.controls, settings)
    requests = [
        {"state": state, "questions": request.questions, **controls} for state in request.states
    ]
    with work_budget(settings.max_work_tokens):
        results = router.predict_batch(
            requests,
            batch_size=request.batch_size,
            min_confidence=request.min_confidence,
            sort_by_length=request.sort_by_length,
            **router_mode(request),
        )
    return [_say_default(r, controls["model"]) for r in results] if pinned else results


def router_mode(request: SingleRequest | BatchRequest) -> dict[str, Any]:
    """The Router's ``tournament`` / ``shortlist`` for a request: what it asked for, else a
    tournament for exactly the choices that overflow one pass (``OVERFLOW``: a request whose
    choices all fit is a plain call), unless it sent ``"tournament": false``."""
    if request.choice_mode or not request.overflow:
        return request.choice_mode
    return {"tournament": OVERFLOW}


def work_bound(request: SingleRequest) -> int:
    """At least the tokens of work ``request`` asks for, counted before any tokenizer runs.

    A token is at least one UTF-8 byte (byte-level BPE; WordPiece at least one character), so
    each row holds at most its state's and its question's bytes, twice the question's JSON (for
    the option texts built from it) and a few special tokens: what the batcher fills a group with,
    and why a request whose bound passes its own work budget is answered alone.
    """
    state = request.state
    text = state if isinstance(state, str) else json.dumps(state, ensure_ascii=False)
    questions = request.questions
    heads = sum(
        2 * len(json.dumps(q, ensure_ascii=False).encode()) + 32 for q in questions.values()
    )
    state_bytes = len(text.encode())
    return len(questions) * (state_bytes + 4) + heads


def predict_each(
    router: Router, requests: Sequence[SingleRequest], settings: Settings
) -> list[Result | Exception]:
    """Validated single requests answered together (laya.server.batcher): one
    ``Router.predict_each`` per ``min_confidence`` and choice mode, so requests share passes
    wherever the engine can pack them; each gets its own result or its own error, as
    :func:`predict_single` would give it alone."""
    outcome: dict[int, Result | Exception] = {}
    groups: dict[str, list[tuple[int, dict[str, Any], bool]]] = {}
    for i, request in enumerate(requests):
        try:
            controls, pinned = _routing(router, request.controls, settings)
        except Exception as exc:  # noqa: BLE001 - this request's own refusal
            outcome[i] = exc
            continue
        mode = [request.min_confidence, request.choice_mode, request.overflow]
        groups.setdefault(json.dumps(mode, sort_keys=True), []).append((i, controls, pinned))
    for members in groups.values():
        first = requests[members[0][0]]
        batch = [
            {"state": requests[i].state, "questions": requests[i].questions, **controls}
            for i, controls, _ in members
        ]
        with work_budget(settings.max_work_tokens * len(members)):
            answers = router.predict_each(batch, first.min_confidence, **router_mode(first))
        for (i, controls, pinned), answer in zip(members, answers, strict=True):
            outcome[i] = (
                answer
                if isinstance(answer, Exception) or not pinned
                else (_say_default(answer, controls["model"]))
            )
    return [outcome[i] for i in range(len(requests))]
