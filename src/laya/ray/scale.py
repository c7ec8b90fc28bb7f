"""Laya beyond one machine: ``laya serve`` as a Ray Serve application, and Ray Data scoring.

* :func:`serve_app` deploys the server of :mod:`laya.server` on Ray Serve: each replica builds
  its own Router and serves the very app ``laya serve`` runs (same routes, validation, errors and
  replies), its batcher included: concurrent ``/v1/systemone`` requests share forward passes
  (:mod:`laya.server.batcher`). ``laya serve --ray [--replicas N]`` runs it on this machine.
* :func:`score_dataset` answers questions for every row of a Ray Data dataset on a pool of actors,
  one Router each; ``laya batch IN.jsonl --out OUT.jsonl --ray`` does it for a file
  (:mod:`laya.cli.batch`).

Hooks reach replicas and actors only through ``hooks_factory``, called once in each of them.
Ray is an optional extra (``pip install 'laya[ray]'``), imported only when these functions run.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from ..checkpoint import (
    BUILTIN,
    BUNDLED,
    read_config,
)
from ..commands import CommandParser, run_command
from ..engine.result import answer_columns
from ..errors import InvalidRequest, LayaError, one_line
from ..router.pins import pin
from ..server.inference import build_router
from ..server.settings import Settings, SettingsError, settings_from

if TYPE_CHECKING:
    import pyarrow as pa
    from fastapi import FastAPI
    from ray.data import Dataset
    from ray.serve import Application
    from typing_extensions import Unpack

    from ..checkpoint.sources import Source
    from ..engine.gate import MinConfidence

__all__ = ["build_app", "score_dataset", "serve_app", "serve_main"]

HooksFactory = Callable[[], Sequence[object]]  # the hooks each replica or actor installs


# --------------------------------------------------------------------------- online


def serve_app(
    models: Mapping[str, str] | None = None,
    max_loaded: int | None = None,
    default: str | None = None,
    num_replicas: int = 1,
    ray_actor_options: Mapping[str, object] | None = None,
    hooks_factory: HooksFactory | None = None,
    settings: Settings | None = None,
    name: str = "laya",
) -> Application:
    """A Ray Serve application speaking ``laya serve``'s wire format, one Router per replica;
    ``settings.batch_window_ms`` and ``batch_tokens`` tune each replica's batcher."""
    from ray import serve

    settings = _settings_for(settings or Settings(), models, max_loaded, default)
    # A bad model name or device fails here, in the driver, not once per replica.
    build_router(replace(settings, preload=False, threads=None))
    deployment = serve.deployment(
        name=name,
        num_replicas=num_replicas,
        ray_actor_options=dict(ray_actor_options or {}),
        max_ongoing_requests=settings.max_concurrent,
    )(_deployment_class())
    return deployment.bind(settings, hooks_factory)


def build_app(args: Mapping[str, Any]) -> Application:
    """The application builder for ``serve deploy`` (``import_path: laya.ray:build_app``)."""
    args = dict(args)
    settings = Settings(**args.pop("settings", {}))
    hooks_path = args.pop("hooks_factory", None)
    return serve_app(settings=settings, hooks_factory=_import(hooks_path), **args)


def _import(path: str | None) -> HooksFactory | None:
    """``module:attribute`` imported (None stays None)."""
    if path is None:
        return None
    from importlib import import_module

    module, _, attribute = path.partition(":")
    factory: HooksFactory = getattr(import_module(module), attribute)
    return factory


def _settings_for(
    settings: Settings,
    models: Mapping[str, str] | None,
    max_loaded: int | None,
    default: str | None,
) -> Settings:
    """``settings`` with the keyword arguments of :func:`serve_app` applied."""
    return replace(
        settings,
        models={**settings.models, **(models or {})},
        max_loaded=max_loaded or settings.max_loaded,
        default_model=default or settings.default_model,
    )


@functools.cache
def _deployment_class() -> type:
    """The replica class (built once, when Ray is first needed)."""
    from ray import serve

    class LayaReplica:
        """One replica: its own Router, and the ``laya serve`` app (batcher included) on it."""

        def __init__(self, settings: Settings, hooks_factory: HooksFactory | None) -> None:
            hooks = list(hooks_factory()) if hooks_factory else None
            self.settings, self.router = settings, build_router(settings, hooks)

        def __serve_build_asgi_app__(self) -> FastAPI:
            """Serve calls this after ``__init__``: the app ``laya serve`` runs, on this Router."""
            from ..server.app import create_app  # the replica's front end; built once, here

            return create_app(self.router, self.settings)

    replica: type = serve.ingress()(LayaReplica)
    return replica


def serve_main(argv: Sequence[str] | None = None) -> int:
    """``laya serve --ray [--replicas N]``: ``laya serve``'s settings, served by Ray Serve here."""
    return run_command("laya serve", argv, _serve_settings, _serve_on_ray)


def _serve_settings(argv: list[str]) -> tuple[Settings, int]:
    launch = CommandParser(prog="laya serve", add_help=False)
    launch.add_argument("--ray", action="store_true")
    launch.add_argument("--replicas", type=int, default=1)
    flags, rest = launch.parse_known_args(argv)
    if flags.replicas < 1:
        raise SettingsError(f"--replicas={flags.replicas}: must be a positive integer")
    return settings_from(rest, os.environ), flags.replicas


def _serve_on_ray(launch: tuple[Settings, int]) -> None:
    settings, replicas = launch
    app = serve_app(settings=settings, num_replicas=replicas)
    import ray
    from ray import serve

    ray.init(include_dashboard=False, ignore_reinit_error=True)
    serve.start(http_options={"host": settings.host, "port": settings.port})
    try:
        serve.run(app, name="laya", route_prefix="/", blocking=True)
    except KeyboardInterrupt:
        serve.shutdown()


# --------------------------------------------------------------------------- offline


class RayRemoteArgs(TypedDict, total=False):
    """Ray's resources and scheduling for each actor, handed to ``map_batches`` (any other of
    Ray's remote arguments is handed on too)."""

    num_cpus: float
    num_gpus: float
    memory: float
    resources: dict[str, float]
    accelerator_type: str
    runtime_env: dict[str, object]
    scheduling_strategy: object
    max_restarts: int
    max_task_retries: int


class ScoreOptions(RayRemoteArgs, total=False):
    """:func:`score_dataset`'s keywords (docs/scaling.md): which checkpoint, which column holds
    the states and how, how many rows per call on how many actors, the answer columns' prefix,
    the confidence gate, the hooks each actor installs, the actors' torch device; beside them,
    Ray's arguments for each actor (:class:`RayRemoteArgs`)."""

    model: str | None
    state_column: str
    batch_size: int
    concurrency: int
    output_prefix: str
    min_confidence: MinConfidence | None
    state_key: str | None
    hooks_factory: HooksFactory | None
    device: str | None
    state_json: bool


def score_dataset(
    dataset: Dataset,
    questions: Mapping[str, Mapping[str, object]],
    **options: Unpack[ScoreOptions],
) -> Dataset:
    """Answer ``questions`` for every row on a pool of ``concurrency`` actors (one Router each).

    Other columns are carried through; each question ``q`` adds ``<prefix>q`` (the choice label,
    the score or P(true)) and ``<prefix>q_confidence``, and ``<prefix>result`` holds the whole
    result as JSON. A string state becomes ``{state_key: text}`` when ``state_key`` is given.
    With ``state_json=True`` the state column holds each state as JSON text, decoded in the actor
    (Arrow gives a column one type, so states of mixed kinds or keys travel as text).
    Bad questions, a missing column or an unknown model raise InvalidRequest (a ValueError)
    before any work starts. The keywords of :class:`RayRemoteArgs` (and any other) are Ray's.
    """
    from ..engine.gate import check_min_confidence

    # what is left once laya's own options are taken out is Ray's, for map_batches
    state_column = options.pop("state_column", "state")
    output_prefix = options.pop("output_prefix", "")
    min_confidence = options.pop("min_confidence", None)
    columns = (
        state_column,
        options.pop("state_key", None),
        output_prefix,
        options.pop("state_json", False),
    )
    hooks_factory, device = options.pop("hooks_factory", None), options.pop("device", None)
    concurrency, model = options.pop("concurrency", 1), options.pop("model", None)
    options.setdefault("batch_size", 64)  # rows per call: map_batches' own batch_size
    _check_questions(questions)
    check_min_confidence(min_confidence)
    added = [output_prefix + c for q in questions for c in (q, f"{q}_confidence")]
    _check_columns(dataset, state_column, [*added, output_prefix + "result"])
    models, pinned = checkpoint_for(model)
    from ray.data import ActorPoolStrategy

    scorer = (models, pinned, questions, columns, min_confidence, hooks_factory, device)
    return dataset.map_batches(
        _Scorer,
        fn_constructor_args=scorer,
        batch_format="pyarrow",
        compute=ActorPoolStrategy(size=concurrency),
        **options,
    )


def _check_questions(questions: object) -> None:
    """The question checker's rules, as a ValueError naming the question."""
    from ..engine.questions import parse_questions

    if not isinstance(questions, dict) or not questions:
        raise InvalidRequest("questions must be a non-empty dict of question id -> definition")
    try:
        parse_questions(questions)
    except (TypeError, ValueError) as exc:
        raise InvalidRequest(f"bad questions: {exc}") from None


def _check_columns(dataset: Dataset, state_column: str, added: list[str]) -> None:
    """The state column must exist and the answer columns must not (names them if not)."""
    names = list(dataset.schema().names)
    if state_column not in names:
        raise InvalidRequest(
            f"dataset has no state column {state_column!r} (columns: {', '.join(names)}); "
            "pass state_column="
        )
    taken = [c for c in added if c in names]
    if taken:
        raise InvalidRequest(
            f"dataset already has column {taken[0]!r}; pass output_prefix= to keep both"
        )


def checkpoint_for(model: str | None) -> tuple[dict[str, Source], dict[str, str]]:
    """The checkpoints to register and the request's ``model`` pin (laya.router.pins, as on the
    command line), checked on the driver before any actor starts."""
    pinned = pin(model, BUILTIN, local=True)
    if pinned.name is None:
        return {}, {}
    if pinned.name in BUNDLED and not BUNDLED[pinned.name].is_dir():
        raise InvalidRequest(
            f"model {model!r} is not installed ({BUNDLED[pinned.name]} is missing)"
        )
    if pinned.source is None:
        return {}, {"model": pinned.name}
    repo, subfolder = pinned.source
    if Path(repo).is_dir():
        try:
            read_config(Path(repo, subfolder or ""), str(model))
        except (LayaError, OSError, ValueError) as exc:
            raise InvalidRequest(f"cannot load model {model!r}: {one_line(exc)}") from None
    return {pinned.name: pinned.source}, {"model": pinned.name}


class _Scorer:
    """A Ray Data actor: builds its Router once, then answers one batch of rows per call."""

    def __init__(
        self,
        models: dict[str, Source],
        pinned: dict[str, str],
        questions: Mapping[str, Mapping[str, object]],
        columns: tuple[str, str | None, str, bool],
        min_confidence: MinConfidence | None,
        hooks_factory: HooksFactory | None,
        device: str | None,
    ) -> None:
        """``columns`` is (state column, state key, output prefix, states as JSON text)."""
        from ..router import Router

        hooks = list(hooks_factory()) if hooks_factory else None
        self.router = Router(models=models, device=device, hooks=hooks)
        self.pinned, self.questions, self.min_confidence = pinned, questions, min_confidence
        self.state_column, self.state_key, self.prefix, self.state_json = columns

    def __call__(self, batch: pa.Table) -> pa.Table:
        states = batch.column(self.state_column).to_pylist()
        requests = [
            {"state": self._state(s), "questions": self.questions, **self.pinned} for s in states
        ]
        results = self.router.predict_batch(requests, min_confidence=self.min_confidence)
        for name, values in answer_columns(results, self.questions, self.prefix).items():
            batch = batch.append_column(name, _arrow(values))
        return batch

    def _state(self, value: Any) -> Any:
        if self.state_json:
            value = json.loads(value)
        return {self.state_key: value} if self.state_key and isinstance(value, str) else value


def _arrow(values: list[object]) -> pa.Array:
    import pyarrow as pa

    return pa.array(values)
