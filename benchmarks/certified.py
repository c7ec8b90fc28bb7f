"""Does certified automation keep its promise on ``mini``, and what does it automate
(docs/calibration.md, "How the thresholds are certified")?

Run ``python benchmarks/certified.py [--rounds 150] [--cache DIR]``. The raw logits of
``data/decisions/dev.jsonl`` and ``test.jsonl`` are read once with ``mini`` (``--cache`` keeps
them between runs). Then, per bucket of the two files together (the population), a half is drawn
with replacement ``--rounds`` times and certified at risk 0.1 and delta 0.1; a certified row
*violates* its promise when the error among the population's answers at or above its threshold
exceeds 0.1. Printed per choice of the test sequence: laya's (the 0.01 grid from the top), the
finest grid answers allow (0.0001), and sequences that start where a quarter or a half of the
bucket is kept; the violation rate must stay under delta (0.1). Last, each sequence fitted on the
dev file alone and applied to the test file: the share of test answers automated and their error.
"""

from __future__ import annotations

import argparse
import math
import pickle
from pathlib import Path

import numpy as np

import laya
from laya.engine.decoding import Temperatures
from laya.engine.fitting import gate_inputs
from laya.engine.risk import GRID, learn_then_test, min_labels
from laya.training.evaluate import read_decisions
from laya.training.fit_calibration import collect

ROOT = Path(__file__).resolve().parents[1]
RISK = DELTA = 0.1
FINE = tuple(range(10_000, -1, -1))


def samples(cache: Path | None) -> tuple[list, int]:
    """The labelled answers of dev and test, read with mini (or from ``cache``), and how many of
    them are dev's."""
    stored = cache / "mini-dev-test.pkl" if cache else None
    if stored is not None and stored.is_file():
        return pickle.loads(stored.read_bytes())
    agent = laya.load("mini", device="cpu")
    found = [
        s
        for name in ("dev", "test")
        for s in collect(agent, read_decisions(ROOT / "data" / "decisions" / f"{name}.jsonl"))
    ]
    if stored is not None:
        stored.parent.mkdir(parents=True, exist_ok=True)
        stored.write_bytes(pickle.dumps(found))
    return found


def violations(conf, wrong, buckets, rounds: int, grid, start_share: float | None) -> str:
    rng = np.random.default_rng(5)
    failed, shares, tried = [], [], 0
    for _ in range(rounds):
        for bucket in sorted(set(buckets)):
            members = np.flatnonzero(buckets == bucket)
            if len(members) < 2 * min_labels(RISK, DELTA):
                continue
            tried += 1
            drawn = rng.choice(members, size=len(members) // 2, replace=True)
            start = (
                None
                if start_share is None
                else max(min_labels(RISK, DELTA), math.ceil(start_share * len(drawn)))
            )
            found = learn_then_test(conf[drawn], wrong[drawn], RISK, DELTA, grid=grid, start=start)
            if found.threshold is None:
                continue
            kept = members[conf[members] >= found.threshold]
            failed.append(wrong[kept].mean() > RISK)
            shares.append(len(kept) / len(members))
    return (
        f"certified {len(failed)} of {tried} rows, violated {np.mean(failed):.3f}, "
        f"mean share of the bucket automated {np.sum(shares) / tried:.3f}"
    )


def dev_to_test(conf, wrong, buckets, dev: int, grid, start_share: float | None) -> str:
    """Certified on the dev answers, applied to the test answers."""
    automated = np.zeros(len(conf), dtype=bool)
    for bucket in sorted(set(buckets)):
        fit = np.flatnonzero(buckets[:dev] == bucket)
        if len(fit) < min_labels(RISK, DELTA):
            continue
        start = (
            None
            if start_share is None
            else max(min_labels(RISK, DELTA), math.ceil(start_share * len(fit)))
        )
        found = learn_then_test(conf[fit], wrong[fit], RISK, DELTA, grid=grid, start=start)
        if found.threshold is not None:
            automated[dev:] |= (buckets[dev:] == bucket) & (conf[dev:] >= found.threshold)
    n = int(automated.sum())
    error = wrong[automated].mean() if n else float("nan")
    return f"automated {n / (len(conf) - dev):.3f} of the test answers, error {error:.4f} ({n})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument("--cache", type=Path, help="keep the raw logits here between runs")
    args = parser.parse_args()
    found, dev = samples(args.cache)
    config = laya.load("mini", device="cpu").cfg
    temperatures = Temperatures(config.temperature, config.temperature_by_options)
    conf, right, buckets = gate_inputs(found, temperatures)
    buckets = np.array(buckets)
    sequences = (
        ("0.01 grid from the top (laya)", GRID, None),
        ("0.0001 grid from the top", FINE, None),
        ("0.01 grid from a quarter kept", GRID, 0.25),
        ("0.01 grid from a half kept", GRID, 0.5),
    )
    print(f"mini, dev + test ({len(found)} answers), risk {RISK}, delta {DELTA}, resampled:")
    for name, grid, share in sequences:
        print(f"  {name:<32} {violations(conf, ~right, buckets, args.rounds, grid, share)}")
    print("fitted on dev, applied to test:")
    for name, grid, share in sequences:
        print(f"  {name:<32} {dev_to_test(conf, ~right, buckets, dev, grid, share)}")


if __name__ == "__main__":
    main()
