"""Per-call Python overhead of a ``mini`` call: everything but the forward pass, as a share of it;
and the cost of the hook lifecycle itself, without a model.

Run ``python benchmarks/overhead.py [--calls N] [--threads N]``. ``system_one`` (bare, and with
four hooks installed) and a ``predict_batch`` of 8 states answer the four questions of
benchmarks/agent.py on ``mini``; the backend's ``forward`` is timed inside each call, and what is
left (validation, tokenization, packing, decoding, usage, the hook lifecycle) is the overhead.
Medians over ``--calls`` calls after a warm-up.

``--hooks`` times the hook lifecycle alone (``policy_for`` + a context + ``run_lifecycle`` around
an inference step that does nothing), in microseconds per call: no hooks, four hooks, a Router
batch of 8 requests, and four hooks under ``hooks_timeout``.

``--against SRC`` runs the chosen figures alternately with this checkout's ``laya`` and with the
one under ``SRC`` (e.g. ``git archive <commit> src | tar -x -C /tmp/before`` then
``--against /tmp/before/src``), a fresh process each, ``--rounds`` times, and prints each figure's
medians and the median of the per-round ratios (this / SRC; below 1 is faster).
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
SRC = HERE.parent / "src"


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


def four_hooks() -> dict[str, Any]:
    """A tracer, a metrics hook, a plain start function and an error-only hook: a typical mix."""
    from laya.hooks import BaseHook

    class Tracer(BaseHook):
        def on_predict_start(self, ctx: Any) -> None:
            ctx.span = time.perf_counter()

        def on_predict_end(self, ctx: Any) -> None:
            ctx.span = time.perf_counter() - ctx.span

    class Metrics(BaseHook):
        def __init__(self) -> None:
            self.calls = 0

        def on_predict_end(self, ctx: Any) -> None:
            self.calls += 1

    class Alerts:
        def on_error(self, ctx: Any) -> None:
            raise AssertionError("no call fails here")

    return {"hooks": [Tracer(), Metrics(), Alerts()], "on_predict_start": lambda ctx: None}


def model_figures(calls: int) -> dict[str, float]:
    """Median call and overhead (ms) of ``mini`` calls."""
    import torch

    import laya

    bench = _bench()
    agent = laya.load("mini", device="cpu")
    hooked = laya.load("mini", device="cpu", **four_hooks())
    batch = bench.states(8)
    runs = {
        "system_one, 4 questions": lambda: agent.system_one(bench.EMAIL, bench.QUESTIONS),
        "system_one, 4 hooks": lambda: hooked.system_one(bench.EMAIL, bench.QUESTIONS),
        "predict_batch 8x4": lambda: agent.predict_batch(batch, bench.QUESTIONS),
    }
    figures = {"threads": float(torch.get_num_threads())}
    for label, call in runs.items():
        runner = hooked if "hooks" in label else agent
        total, overhead = measure(runner, call, calls)
        figures[f"{label}: call ms"] = total
        figures[f"{label}: overhead ms"] = overhead
    return figures


def hook_figures(calls: int, repeats: int = 7) -> dict[str, float]:
    """Microseconds per call of the hook lifecycle alone, medians of ``repeats`` runs."""
    from laya.hooks import HookRegistry, PredictContext
    from laya.hooks.lifecycle import policy_for, run_lifecycle

    class Owner(HookRegistry):
        pass

    def infer(pending: list[Any]) -> None:
        for ctx in pending:
            ctx.results = [{"answers": {}, "usage": {"input_tokens": 1}} for _ in ctx.states]

    def lifecycle(owner: Any, n_contexts: int) -> Any:
        def call() -> None:
            contexts = [PredictContext(states=["s"], questions={}) for _ in range(n_contexts)]
            run_lifecycle(policy_for(owner), contexts, infer)

        return call

    hooks = four_hooks()
    scenarios = {
        "lifecycle, no hooks": (lifecycle(Owner(), 1), calls),
        "lifecycle, 4 hooks": (lifecycle(Owner(**hooks), 1), calls),
        "lifecycle, 4 hooks, 8 contexts": (lifecycle(Owner(**hooks), 8), max(1, calls // 8)),
        "lifecycle, 4 hooks, hooks_timeout": (
            lifecycle(Owner(**hooks, hooks_timeout=5), 1),
            max(1, calls // 20),
        ),
    }
    figures = {}
    for label, (call, n) in scenarios.items():
        runs = []
        for _ in range(repeats):
            started = time.perf_counter()
            for _ in range(n):
                call()
            runs.append((time.perf_counter() - started) / n)
        figures[f"{label}: us/call"] = statistics.median(runs) * 1e6
    return figures


def figures(args: argparse.Namespace) -> dict[str, float]:
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    return hook_figures(args.calls * 40) if args.hooks else model_figures(args.calls)


def print_figures(found: dict[str, float], args: argparse.Namespace) -> None:
    if not args.hooks:
        print(f"mini on {found.pop('threads'):.0f} threads; medians of {args.calls} calls")
    for label, value in found.items():
        print(f"{label:<44} {value:9.3f}")


def against(args: argparse.Namespace) -> None:
    """Alternate this checkout and ``args.against``, one fresh process per run."""
    forwarded = [a for a in sys.argv[1:] if a not in ("--against", args.against)]
    per_tree: dict[str, list[dict[str, float]]] = {"this": [], "other": []}
    trees = {"this": str(SRC), "other": args.against}
    for round_ in range(args.rounds):
        order = ["this", "other"] if round_ % 2 == 0 else ["other", "this"]
        for tree in order:
            env = {**os.environ, "PYTHONPATH": trees[tree]}
            done = subprocess.run(
                [sys.executable, __file__, *forwarded, "--json"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            per_tree[tree].append(json.loads(done.stdout.splitlines()[-1]))
    print(f"{args.rounds} rounds, alternating; this = {SRC}, other = {args.against}")
    print(f"{'figure':<44} {'this':>9} {'other':>9} {'this/other':>10}")
    for label in per_tree["this"][0]:
        mine = [run[label] for run in per_tree["this"]]
        theirs = [run[label] for run in per_tree["other"]]
        ratio = statistics.median(a / b for a, b in zip(mine, theirs))
        row = f"{label:<44} {statistics.median(mine):9.3f} {statistics.median(theirs):9.3f}"
        print(f"{row} {ratio:10.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--hooks", action="store_true", help="time the hook lifecycle alone")
    parser.add_argument("--against", metavar="SRC", help="alternate with the laya under SRC")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.against:
        against(args)
    elif args.json:
        print(json.dumps(figures(args)))
    else:
        print_figures(figures(args), args)


if __name__ == "__main__":
    main()
