"""Which fp32 linear kernels make the exact path faster on this CPU: oneDNN's or PyTorch's own.

Run ``python benchmarks/linear_kernels.py [--repeats N] [--threads N]``. One fp32 Agent on the benchmark
checkpoint of ``benchmarks/agent.py`` answers its scenarios twice per repeat, once with the linear
layers on oneDNN (``laya.engine.backends.kernels``) and once on PyTorch's own ``F.linear`` (MKL's sgemm),
the two taking turns call by call. It prints the CPU's vector flags, what laya chooses on this CPU
(``kernels.ONEDNN``), each kernel's median time and PyTorch's speed-up over oneDNN (above 1:
PyTorch's kernel is faster), and the dense 1024 x 1024 matmul rate of each kernel in the same run.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

import agent as bench  # noqa: E402  (benchmarks/agent.py: checkpoint, scenarios, timing)

import laya  # noqa: E402
from laya.engine.backends import kernels  # noqa: E402
from laya.engine.precision import cpu_flags  # noqa: E402


class OnKernel:
    """The Agent's calls with the linear layers on one kernel (oneDNN or PyTorch's own)."""

    def __init__(self, agent: Any, onednn: bool) -> None:
        self.agent, self.onednn = agent, onednn

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.agent, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            kernels.ONEDNN = self.onednn
            return method(*args, **kwargs)

        return call


def main(argv: list[str] | None = None) -> None:
    """Time the scenarios on both kernels, alternating, and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per scenario (median)")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    if not kernels.AVAILABLE:
        raise SystemExit("this torch build has no oneDNN linear: nothing to compare")
    chosen = "oneDNN" if kernels.ONEDNN else "PyTorch"
    path = bench.checkpoint()
    agent = laya.load(str(path), device="cpu")
    kernels.ONEDNN = True  # swap the layers even where laya keeps PyTorch's kernel
    kernels.use_onednn(agent.model)
    views = {"oneDNN": OnKernel(agent, True), "PyTorch": OnKernel(agent, False)}
    flags = sorted(f for f in cpu_flags() if f.startswith(("avx", "amx", "fma")))
    print(f"command: {' '.join([sys.executable, *sys.argv])}")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"CPU vector flags: {' '.join(flags)}")
    print(f"laya runs fp32 linears on: {chosen}")
    print(f"load average at start: {os.getloadavg()[0]:.1f}\n")
    rows = []
    for label, call, _ in bench.scenarios(bench.matmul_params(path)):
        timed = bench.interleaved(views, call, args.repeats)
        one, own = timed["oneDNN"][0], timed["PyTorch"][0]
        rows.append([label, f"{one * 1e3:,.0f}", f"{own * 1e3:,.0f}", f"{one / own:.2f}x"])
    print(bench.table(["scenario", "oneDNN ms", "PyTorch ms", "PyTorch speed-up"], rows))
    peak = bench.peaks()
    print(f"\n1024 x 1024 fp32: oneDNN {peak['fp32 oneDNN']:.1f} GFLOP/s, ", end="")
    print(f"PyTorch (MKL) {peak['fp32 torch.mm']:.1f} GFLOP/s")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
