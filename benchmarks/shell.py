"""An answering command from the shell, end to end: ``laya TEXT --preset triage --model mini``.

Run ``python benchmarks/shell.py [--rounds N]``. Each round starts the command once as shipped
(``mini`` on its ONNX graph when ONNX Runtime is installed) and once on PyTorch (``--device
cpu``), in turn, so drifts in the machine's speed hit both alike; each start is timed from
launch to exit, output piped, with the CPU seconds (user + system) it used: on a busy machine the
wall time waits for a core, the CPU time does not. Prints the medians of each, the share of
starts under 2 s, and the ONNX/PyTorch ratio taken round by round (docs/cli.md, "Start-up").
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time

TEXT = "We were billed twice for March, please refund the duplicate"
COMMAND = [sys.executable, "-m", "laya", TEXT, "--preset", "triage", "--model", "mini"]
WAYS = {"as shipped": [], "PyTorch": ["--device", "cpu"]}
LIMIT_S = 2.0


def seconds(extra: list[str]) -> tuple[float, float]:
    """Wall time of one run of the command, from launch to exit, and the CPU time it used."""
    cpu = _children_cpu()
    began = time.perf_counter()
    subprocess.run([*COMMAND, *extra], capture_output=True, check=True)
    return time.perf_counter() - began, _children_cpu() - cpu


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="pairs of runs (default 7)")
    args = parser.parse_args()
    seconds([])  # the first run after a build also writes Python's bytecode caches
    rounds = [{way: seconds(extra) for way, extra in WAYS.items()} for _ in range(args.rounds)]
    print(f"{args.rounds} rounds of: laya {TEXT!r} --preset triage --model mini")
    print(f"{'how':<11} {'wall s':>7} {'CPU s':>6} {'under 2 s':>10}")
    for way in WAYS:
        wall = [r[way][0] for r in rounds]
        cpu = statistics.median(r[way][1] for r in rounds)
        under = sum(t < LIMIT_S for t in wall)
        print(f"{way:<11} {statistics.median(wall):>7.2f} {cpu:>6.2f} {under:>6}/{len(wall)}")
    ratio = statistics.median(r["as shipped"][0] / r["PyTorch"][0] for r in rounds)
    print(f"as shipped / PyTorch: {ratio:.2f}x")


if __name__ == "__main__":
    main()
