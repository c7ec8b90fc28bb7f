"""Ray throughput: the Serve app with 1 and 2 replicas, Ray Data with 1 and 2 actors, vs one process.

Runs a local Ray instance (loopback only, no dashboard) on ``mini`` — or, until
``laya/models/mini`` exists, the tiny ModernBERT fixture, with a printed note — and prints
requests/s (each request: one state, 3 questions) for:

* ``Router.predict_batch`` in this process, all states in one call (the baseline);
* the Serve app (``laya.ray.serve_app``), ``--concurrency`` clients posting ``/v1/systemone``
  singles, 1 then 2 replicas of 1 CPU each (after a warm-up);
* ``laya.ray.score_dataset`` over ``--rows`` rows, 1 then 2 actors (actor start-up included).

    .venv/bin/python benchmarks/ray.py [--requests 256] [--rows 512] [--concurrency 32] [--cpus 2]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

# This file is named ray.py: keep its folder off the import path, so `import ray` finds Ray.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # every Ray server on 127.0.0.1
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # local checkpoints only

import httpx  # noqa: E402

from laya.router import Router  # noqa: E402
from laya.server import Settings  # noqa: E402


def _server_benchmark():
    """benchmarks/server.py, loaded by path (this folder is off the import path, see above)."""
    spec = importlib.util.spec_from_file_location(
        "server_benchmark", Path(__file__).with_name("server.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The same checkpoint choice, questions and state as the HTTP benchmark, so figures compare.
_shared = _server_benchmark()
QUESTIONS, STATE, checkpoint, free_port = (
    _shared.QUESTIONS,
    _shared.STATE,
    _shared.checkpoint,
    _shared.free_port,
)


def rate(label: str, n: int, run: Callable[[], object]) -> None:
    """Time ``run`` once and print requests/s for ``n`` requests."""
    started = time.perf_counter()
    run()
    seconds = time.perf_counter() - started
    print(f"{label:<44} {n / seconds:8.1f} requests/s  ({n} in {seconds:.2f} s)")


def baseline(path: Path, n: int) -> None:
    router = Router(models={"bench": str(path)}, default="bench").preload(["bench"])
    requests = [
        {"state": STATE.format(i=i), "questions": QUESTIONS, "model": "bench"} for i in range(n)
    ]
    router.predict_batch(requests[:16])  # warm-up
    rate("Router.predict_batch, this process", n, lambda: router.predict_batch(requests))


async def post_all(base: str, n: int, concurrency: int) -> None:
    """``n`` singles, ``concurrency`` in flight at a time; every reply must be 200."""
    limit = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=base, timeout=300) as client:

        async def one(i: int) -> None:
            async with limit:
                body = {"state": STATE.format(i=i), "questions": QUESTIONS}
                reply = await client.post("/v1/systemone", json=body)
                reply.raise_for_status()

        await asyncio.gather(*(one(i) for i in range(n)))


def online(path: Path, n: int, concurrency: int) -> None:
    from ray import serve

    from laya.ray import serve_app

    port = free_port()
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    base = f"http://127.0.0.1:{port}"
    settings = Settings(models={"bench": str(path)}, default_model="bench", threads=1)
    for replicas in (1, 2):
        app = serve_app(settings=settings, num_replicas=replicas, ray_actor_options={"num_cpus": 1})
        serve.run(app, name="laya", route_prefix="/")
        asyncio.run(post_all(base, 32, concurrency))  # warm-up
        label = f"Serve, {replicas} replica(s), {concurrency} clients"
        rate(label, n, lambda: asyncio.run(post_all(base, n, concurrency)))
        serve.delete("laya")
    serve.shutdown()


def offline(path: Path, n: int) -> None:
    import ray

    from laya.ray import score_dataset

    rows = ray.data.from_items([{"state": STATE.format(i=i)} for i in range(n)]).materialize()
    for actors in (1, 2):
        scored = score_dataset(rows, QUESTIONS, model=str(path), concurrency=actors)
        rate(f"Ray Data, {actors} actor(s), start-up included", n, scored.materialize)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=256, help="singles per Serve run")
    parser.add_argument("--rows", type=int, default=512, help="rows per Ray Data run")
    parser.add_argument("--concurrency", type=int, default=32, help="clients in flight")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs the local Ray instance gets")
    args = parser.parse_args()
    import ray

    path = checkpoint()
    print(f"checkpoint: {path}; {len(QUESTIONS)} questions per request; {os.cpu_count()} cores")
    baseline(path, args.rows)
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    try:
        online(path, args.requests, args.concurrency)
        offline(path, args.rows)
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
