"""This checkout against another one (e.g. main), call by call, on the checkpoint of agent.py.

Run ``python benchmarks/versus.py OTHER_SRC [--rounds N] [--fast] [--threads N]`` where ``OTHER_SRC`` is the
``src`` folder of another checkout (``git worktree add /tmp/base main`` gives
``/tmp/base/src``). Each checkout loads the benchmark checkpoint in a worker process of its own
(``PYTHONPATH`` set to its ``src``); the parent asks them in turn, A B A B ..., to time one call
of each scenario, so load on the machine hits both alike. Printed per scenario: each side's
median and the range of the pair-by-pair ratios other / this (above 1: this checkout is faster).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
THIS_SRC = HERE.parent / "src"


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("agent_benchmark", HERE / "agent.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scenarios(bench: Any) -> dict[str, Any]:
    """The calls of benchmarks/agent.py, by name."""
    batch = bench.states(32)
    return {
        "system_one": lambda a: a.system_one(bench.EMAIL, bench.QUESTIONS),
        "predict_batch": lambda a: a.predict_batch(batch, bench.BATCH_QUESTIONS),
        "predict_batch bs=8": lambda a: a.predict_batch(
            batch, bench.BATCH_QUESTIONS, batch_size=8, sort_by_length=True
        ),
    }


def worker(fast: bool, threads: int | None) -> None:
    """Load the checkpoint, then answer ``name`` lines on stdin with one call's seconds."""
    import torch

    import laya

    if threads:
        torch.set_num_threads(threads)

    bench = _bench()
    calls = scenarios(bench)
    agent = laya.load(str(bench.checkpoint()), device="cpu", fast=fast)
    for call in calls.values():
        call(agent)
    print(json.dumps({"laya": str(Path(laya.__file__).parent)}), flush=True)
    for line in sys.stdin:
        call = calls[line.strip()]
        started = time.perf_counter()
        result = call(agent)
        seconds = time.perf_counter() - started
        print(json.dumps({"seconds": seconds, "result": result}), flush=True)


def start(src: Path, fast: bool, threads: int | None) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = [sys.executable, __file__, "--worker", *(["--fast"] if fast else [])]
    argv += ["--threads", str(threads)] if threads else []
    process = subprocess.Popen(
        argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    ready = json.loads(process.stdout.readline())
    if Path(ready["laya"]) != src / "laya":
        raise SystemExit(f"{src}: the worker imported laya from {ready['laya']}")
    return process


def ask(process: subprocess.Popen, name: str) -> dict[str, Any]:
    process.stdin.write(name + "\n")
    process.stdin.flush()
    return json.loads(process.stdout.readline())


def largest_difference(a: Any, b: Any) -> float:
    """The largest difference between two results' numbers (their other leaves must be equal)."""
    if isinstance(a, dict):
        return max((largest_difference(a[k], b[k]) for k in a), default=0.0)
    if isinstance(a, list):
        return max((largest_difference(x, y) for x, y in zip(a, b)), default=0.0)
    if isinstance(a, float):
        return abs(a - b)
    return 0.0 if a == b else float("inf")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", nargs="?", type=Path, help="the other checkout's src folder")
    parser.add_argument("--rounds", type=int, default=5, help="calls of each scenario per side")
    parser.add_argument("--fast", action="store_true", help="load both with fast=True")
    parser.add_argument("--threads", type=int, help="torch threads per side (default: torch's)")
    parser.add_argument("--only", nargs="*", help="scenario names to run (default: all)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.fast, args.threads)
    _bench().checkpoint()
    this = start(THIS_SRC, args.fast, args.threads)
    other = start(args.other.resolve(), args.fast, args.threads)
    print(
        f"this: {THIS_SRC}\nother: {args.other.resolve()}\nload average at start: {os.getloadavg()[0]:.1f}"
    )
    try:
        for name in args.only or scenarios(_bench()):
            mine, theirs, ratios, differs = [], [], [], 0.0
            for _ in range(args.rounds):
                a, b = ask(this, name), ask(other, name)
                mine.append(a["seconds"])
                theirs.append(b["seconds"])
                ratios.append(b["seconds"] / a["seconds"])
                differs = max(differs, largest_difference(a["result"], b["result"]))
            print(
                f"{name:<20} this {statistics.median(mine) * 1e3:8.1f} ms   other "
                f"{statistics.median(theirs) * 1e3:8.1f} ms   other/this median "
                f"{statistics.median(ratios):.2f}x (range {min(ratios):.2f}-{max(ratios):.2f})"
                f"   answers differ by <= {differs:.1e}"
            )
    finally:
        for process in (this, other):
            process.stdin.close()
            process.wait(30)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
