"""Per-call Python overhead of a ``mini`` call: everything but the forward pass, as a share of it.

Run ``python benchmarks/overhead.py [--calls N] [--threads N]``. ``system_one`` and a
``predict_batch`` of 8 states answer the four questions of benchmarks/agent.py on ``mini``;
the backend's ``forward`` is timed inside each call, and what is left (validation,
tokenization, packing, decoding, usage, the hook lifecycle) is the overhead. Medians over
``--calls`` calls after a warm-up.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from pathlib import Path
from typing import Any

import torch

import laya

HERE = Path(__file__).resolve().parent


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("agent_benchmark", HERE / "agent.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed_forward(agent: Any) -> list[float]:
    """Wrap the agent's backend so every forward pass adds its seconds to the returned list."""
    spent: list[float] = []
    forward = agent.backend_object.forward

    def wrapped(batch: Any) -> Any:
        started = time.perf_counter()
        out = forward(batch)
        spent.append(time.perf_counter() - started)
        return out

    agent.backend_object.forward = wrapped
    return spent


def measure(agent: Any, call: Any, calls: int) -> tuple[float, float]:
    """Median call time and median overhead (call minus its forward passes), in ms."""
    spent = timed_forward(agent)
    call()
    totals, overheads = [], []
    for _ in range(calls):
        spent.clear()
        started = time.perf_counter()
        call()
        total = time.perf_counter() - started
        totals.append(total)
        overheads.append(total - sum(spent))
    return statistics.median(totals) * 1e3, statistics.median(overheads) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--threads", type=int)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    bench = _bench()
    agent = laya.load("mini", device="cpu")
    batch = bench.states(8)
    calls = {
        "system_one, 4 questions": lambda: agent.system_one(bench.EMAIL, bench.QUESTIONS),
        "predict_batch 8x4": lambda: agent.predict_batch(batch, bench.QUESTIONS),
    }
    print(f"mini on {torch.get_num_threads()} threads; medians of {args.calls} calls")
    for label, call in calls.items():
        total, overhead = measure(agent, call, args.calls)
        print(
            f"{label:<26} call {total:7.2f} ms   overhead {overhead:5.2f} ms ({overhead / total:.1%})"
        )


if __name__ == "__main__":
    main()
