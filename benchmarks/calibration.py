"""Calibration of ``mini`` before and after: figures and a reliability plot (docs/calibration.md).

Run ``python benchmarks/calibration.py [--fit data/decisions/dev.jsonl] [--apply
data/decisions/test.jsonl] [--plot docs/img/calibration-mini.png]``. The raw logits of both files
are read once; then, on the ``--apply`` file, three versions of the same answers are scored:
no temperature (T = 1), the checkpoint's own temperatures, and a calibration fitted on ``--fit``
with ``laya calibrate``'s fitter (temperatures, and thresholds for precision 0.9).
``--halves`` also scores thresholds fitted on half of the ``--fit`` file on its other half, for
several bounds (how the fitter's one-sided 90 % bound was chosen).
Prints accuracy, ECE, Brier, AURC, accuracy at 80 % coverage and what the thresholds keep, and
draws the reliability diagrams side by side.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import laya
from laya.engine.decoding import Temperatures
from laya.training.evaluate import read_decisions, reliability
from laya.training.fit_calibration import (
    collect,
    decoded_records,
    figures,
    fit_scales,
    fit_thresholds,
    gate_inputs,
)

ROOT = Path(__file__).resolve().parents[1]


def fitted(samples) -> tuple[Temperatures, dict[str, float]]:
    """What ``laya calibrate --target-precision 0.9`` fits on ``samples``."""
    scales, _ = fit_scales(samples)
    conf, right, buckets = gate_inputs(samples, scales)
    return scales, fit_thresholds(conf, right, buckets, precision=0.9)


def halves(samples, temps: Temperatures, target: float = 0.9, rounds: int = 10) -> None:
    """Thresholds fitted on a random half of the states, scored on the other half, per bound."""
    import random

    import laya.training.fit_calibration as fitting

    conf, right, buckets = gate_inputs(samples, temps)
    index = list(range(len(samples)))
    print(f"thresholds for precision {target} fitted on half of the fit file, scored on the rest:")
    for z in (1.645, 1.2816, 1.0, 0.5, 0.0):
        kept = []
        for seed in range(rounds):
            half = set(random.Random(seed).sample(index, len(index) // 2))
            a = [i for i in index if i in half]
            b = [i for i in index if i not in half]
            fitting.wilson_lower.__defaults__ = (z,)
            cut = fit_thresholds(conf[a], right[a], [buckets[i] for i in a], precision=target)
            gate = figures([samples[i] for i in b], temps, cut)["gate"]
            kept.append((gate["precision"], gate["coverage"]))
        p, c = np.array(kept).T
        print(
            f"  z {z:<6} precision mean {p.mean():.3f} min {p.min():.3f}   coverage mean {c.mean():.3f}"
        )
    fitting.wilson_lower.__defaults__ = (fitting.WILSON_Z,)


def plot(panels: list[tuple[str, list]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4.2), sharey=True)
    for ax, (title, recs) in zip(axes, panels):
        table = [b for b in reliability(recs) if b["count"]]
        ax.plot([0, 1], [0, 1], "--", color="grey")
        ax.bar(
            [(b["low"] + b["high"]) / 2 for b in table],
            [b["accuracy"] for b in table],
            width=1 / 15,
            edgecolor="black",
            alpha=0.7,
        )
        ax.plot([b["confidence"] for b in table], [b["accuracy"] for b in table], "o-", color="C1")
        ax.set(title=title, xlabel="confidence (max probability)", xlim=(0, 1), ylim=(0, 1))
    axes[0].set_ylabel("accuracy")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="mini")
    parser.add_argument("--fit", default=str(ROOT / "data/decisions/dev.jsonl"))
    parser.add_argument("--apply", default=str(ROOT / "data/decisions/test.jsonl"))
    parser.add_argument("--plot", help="write the reliability diagrams here (PNG)")
    parser.add_argument("--halves", action="store_true", help="also choose the precision bound")
    args = parser.parse_args()
    agent = laya.load(args.model, device="cpu")
    fit = collect(agent, read_decisions(args.fit))
    held = collect(agent, read_decisions(args.apply))
    scales, thresholds = fitted(fit)
    versions = {
        "T = 1": (Temperatures((1.0, 1.0, 1.0), {}), None),
        "checkpoint's": (
            Temperatures(
                agent.checkpoint_config.temperature, agent.checkpoint_config.temperature_by_options
            ),
            None,
        ),
        "fitted": (scales, thresholds),
    }
    print(f"{args.model}: fitted on {Path(args.fit).name}, scored on {Path(args.apply).name}")
    print(
        f"{'temperatures':<14} {'answers':>7} {'accuracy':>8} {'ECE':>7} {'Brier':>7} {'AURC':>7} "
        f"{'acc@80%':>7} {'kept':>6} {'precision':>9}"
    )
    for name, (temps, gate) in versions.items():
        f = figures(held, temps, gate)
        g = f.get("gate") or {}
        print(
            f"{name:<14} {f['answers']:>7} {f['accuracy']:>8.4f} {f['ece']:>7.4f} {f['brier']:>7.4f} "
            f"{f['aurc']:>7.4f} {f['accuracy_at_80']:>7.4f} {g.get('coverage', float('nan')):>6.4f} "
            f"{g.get('precision', float('nan')):>9.4f}"
        )
    print("thresholds", thresholds)
    if args.halves:
        halves(fit, versions["fitted"][0])
    if args.plot:
        panels = [
            (f"{name} (ECE {figures(held, t)['ece']:.3f})", decoded_records(held, t))
            for name, (t, _) in versions.items()
        ]
        plot(panels, Path(args.plot))
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
