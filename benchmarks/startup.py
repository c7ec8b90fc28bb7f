"""Starting ``mini``: ``laya.load("mini")`` (PyTorch) against ``laya.load("mini", backend="onnx")``.

Run ``python benchmarks/startup.py [--rounds N]``. Each round starts one fresh Python process per
backend, in turn (so drifts in the machine's speed hit both alike), and each process reports how
long ``import laya``, the load, its first ``system_one`` and the median of five more took, and
whether torch or transformers were imported. Prints the medians over rounds and the ONNX/PyTorch
ratio of each, taken round by round.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

STATE = "We were billed twice for March and nobody answers. Refund the duplicate or we cancel."
QUESTIONS = {
    "department": {
        "type": "choice",
        "instructions": "Which department should handle this?",
        "criteria": ["billing", "technical", "sales", "other"],
    },
    "urgency": {"type": "score", "instructions": "How urgent is it?", "criteria": ["low", "high"]},
    "churn": {"type": "noul", "instructions": "Does the customer threaten to leave?"},
}
FIGURES = ("import", "load", "first call", "warm call")
BACKENDS = {"torch": {}, "onnx": {"backend": "onnx"}}


def child(backend: str) -> None:
    """In a fresh process: time import, load and calls; print them as one JSON line."""
    start = time.perf_counter()
    import laya

    imported = time.perf_counter()
    runtime = laya.load("mini", **BACKENDS[backend])
    loaded = time.perf_counter()
    runtime.system_one(STATE, QUESTIONS)
    first = time.perf_counter()
    warm = []
    for _ in range(5):
        began = time.perf_counter()
        runtime.system_one(STATE, QUESTIONS)
        warm.append(time.perf_counter() - began)
    seconds = [imported - start, loaded - imported, first - loaded, statistics.median(warm)]
    heavy = sorted({"torch", "transformers"} & set(sys.modules))
    print(json.dumps({"seconds": dict(zip(FIGURES, seconds)), "imported": heavy}))


def run(backend: str) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--child", backend], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="process pairs (default 5)")
    parser.add_argument("--child", choices=sorted(BACKENDS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    rounds = [{backend: run(backend) for backend in BACKENDS} for _ in range(args.rounds)]
    print(f"{args.rounds} rounds; medians in ms")
    print(f"{'figure':<12} {'PyTorch':>9} {'ONNX':>9} {'ONNX/PyTorch':>13}")
    for figure in FIGURES:
        torch_s = [r["torch"]["seconds"][figure] for r in rounds]
        onnx_s = [r["onnx"]["seconds"][figure] for r in rounds]
        ratio = statistics.median(o / t for o, t in zip(onnx_s, torch_s))
        print(
            f"{figure:<12} {1000 * statistics.median(torch_s):>9.0f} "
            f"{1000 * statistics.median(onnx_s):>9.0f} {ratio:>12.2f}x"
        )
    for backend in BACKENDS:
        print(
            f"{backend}: imported {rounds[-1][backend]['imported'] or 'neither torch nor transformers'}"
        )


if __name__ == "__main__":
    main()
