"""What a moving progress bar costs: a batch answered in one ``predict_batch`` call against the
same batch in calls of ``laya.commands.PROGRESS_STEP`` rows (what ``laya batch`` does on a
terminal, so its bar moves that often).

Run ``python benchmarks/progress_chunks.py [--rows N] [--rounds R]``. ``mini`` on ONNX Runtime
answers the triage preset; each round times both ways, in turn, and the figure printed is the
median of the per-round ratios (docs/cli.md, "Progress").
"""

from __future__ import annotations

import argparse
import statistics
import time

import laya
from laya.commands import PROGRESS_STEP
from laya.typed.presets import triage_questions


def seconds(agent: laya.ONNXAgent, states: list[dict], step: int) -> float:
    """Wall time of answering ``states`` in calls of ``step`` rows."""
    questions = triage_questions()
    began = time.perf_counter()
    for start in range(0, len(states), step):
        agent.predict_batch(states[start : start + step], questions)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=64, help="rows per batch (default 64)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    args = parser.parse_args()
    agent = laya.load("mini", backend="onnx")
    states = [{"message": f"ticket {i}: please refund order {i}"} for i in range(args.rows)]
    seconds(agent, states[:PROGRESS_STEP], PROGRESS_STEP)  # warm-up
    rounds = [
        (seconds(agent, states, args.rows), seconds(agent, states, PROGRESS_STEP))
        for _ in range(args.rounds)
    ]
    whole = statistics.median(w for w, _ in rounds)
    chunked = statistics.median(c for _, c in rounds)
    print(f"{args.rows} rows, {args.rounds} rounds, mini on ONNX Runtime, triage preset")
    print(f"one call           {whole:7.2f} s  ({1000 * whole / args.rows:.0f} ms a row)")
    print(f"calls of {PROGRESS_STEP:<3} rows   {chunked:7.2f} s")
    print(f"chunked / whole: {statistics.median(c / w for w, c in rounds):.2f}x")


if __name__ == "__main__":
    main()
