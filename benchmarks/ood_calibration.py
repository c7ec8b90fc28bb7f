"""How far a calibration fitted out of distribution takes ``mini`` (issue 48; docs/models/mini.md).

Run ``python benchmarks/ood_calibration.py [--model mini]``. The raw logits of the OOD dev split
(``data/checks/dev.jsonl``, the only file anything is fitted on), the challenge file and the
in-distribution test split are read once. Three calibrations are then scored on the dev split
itself (the two fitted ones in sample), the challenge file and the test split:

* the checkpoint's own temperatures;
* fitted on the OOD dev split as ``laya calibrate --binning`` fits (temperatures on the grid
  [0.5, 5], the range every temperature is clamped to, and a binning map), after a noul bias: a
  logit added to "true" so that dev's statements are called true as often as they are true;
* the same with the temperatures fitted on a grid up to 60 instead, beyond the clamp: a
  measurement of what the temperatures would have to be, not a file the runtime can apply;
* fitted on the OOD dev split without the bias (temperatures on [0.5, 5] and a binning map): all
  a calibration file can hold, so the only one of these that could ship as ``mini``'s.

Prints accuracy, ECE, noul accuracy, the share of noul statements called true against the true
share, and for ``min_confidence`` 0.5, 0.7 and 0.9 the accuracy of the kept answers and the share
kept. Last, under the checkpoint's own temperatures, the kept accuracy and share on a finer grid of
thresholds: the recommended threshold is read off the dev and test rows, never the challenge's.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import laya
from laya.engine.decoding import Temperatures
from laya.training.evaluate import read_decisions
from laya.training.fit_calibration import (
    Sample,
    collect,
    figures,
    fit_binning,
    fit_scales,
    records,
)

ROOT = Path(__file__).resolve().parents[1]
FILES = {
    "dev": ROOT / "data" / "checks" / "dev.jsonl",
    "challenge": ROOT / "data" / "checks" / "challenge.jsonl",
    "test": ROOT / "data" / "decisions" / "test.jsonl",
}
THRESHOLDS = (0.5, 0.7, 0.9)
FINE = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.97, 0.99)
WIDE_GRID = np.round(np.arange(0.5, 60.0001, 0.1), 1)
UNIT = Temperatures((1.0, 1.0, 1.0), {})


def noul_margins(samples: Sequence[Sample]) -> tuple[np.ndarray, np.ndarray]:
    """Per noul answer: the raw logit of "true" minus that of "false", and the gold (1: true)."""
    noul = [s for s in samples if s.question.type == "noul"]
    return np.array([s.logits[1] - s.logits[0] for s in noul]), np.array([s.gold for s in noul])


def share_bias(samples: Sequence[Sample]) -> float:
    """The logit added to "true" that calls as many noul statements true as are true."""
    margins, gold = noul_margins(samples)
    return float(-np.quantile(margins, 1.0 - gold.mean()))


def with_bias(samples: Sequence[Sample], bias: float) -> list[Sample]:
    """The samples with ``bias`` added to every noul answer's "true" logit."""
    shift = np.array([0.0, bias], dtype=np.float32)
    return [
        Sample(s.question, s.domain, s.logits + shift, s.gold) if s.question.type == "noul" else s
        for s in samples
    ]


def wide_temperatures(samples: Sequence[Sample]) -> dict[str, float]:
    """Per question type, the temperature on ``WIDE_GRID`` with the least NLL of the gold."""
    out = {}
    for qtype in sorted({s.question.type for s in samples}):
        rows = [s for s in samples if s.question.type == qtype]
        nll = np.zeros_like(WIDE_GRID)
        for s in rows:
            z = s.logits.astype(np.float64)[None, :] / WIDE_GRID[:, None]
            top = z.max(1)
            nll += top + np.log(np.exp(z - top[:, None]).sum(1)) - z[:, s.gold]
        out[qtype] = float(WIDE_GRID[int(np.argmin(nll))])
    return out


def scaled(samples: Sequence[Sample], temperatures: dict[str, float]) -> list[Sample]:
    """The samples' logits divided by their type's temperature (read with temperature 1)."""
    return [
        Sample(s.question, s.domain, s.logits / np.float32(temperatures[s.question.type]), s.gold)
        for s in samples
    ]


def row(name: str, samples: Sequence[Sample], temperatures: Temperatures) -> str:
    """One line of figures for one calibration on one file."""
    overall = figures(samples, temperatures)
    noul = [(r.probs[1] >= 0.5, r.gold) for r in records(samples, temperatures) if r.type == "noul"]
    said, truth = np.array(noul, dtype=float).T
    right = float((said == truth).mean())
    kept = []
    for threshold in THRESHOLDS:
        gate = figures(samples, temperatures, {"default": threshold})["gate"]
        kept.append(f"{gate['precision']:>8.3f} {gate['coverage']:>6.3f}")
    return (
        f"{name:<26} {overall['answers']:>7} {overall['accuracy']:>8.3f} {overall['ece']:>6.3f} "
        f"{right:>8.3f} {said.mean():>9.3f} {truth.mean():>10.3f} " + " ".join(kept)
    )


def kept_grid(name: str, samples: Sequence[Sample], temperatures: Temperatures) -> str:
    """Kept accuracy / kept share at every threshold of ``FINE``."""
    cells = []
    for threshold in FINE:
        gate = figures(samples, temperatures, {"default": threshold})["gate"]
        cells.append(f"{gate['precision']:.3f}/{gate['coverage']:.3f}")
    return f"{name:<10} " + " ".join(f"{c:>11}" for c in cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="mini", help="checkpoint name or directory")
    args = parser.parse_args()
    agent = laya.load(args.model, device="cpu")
    data = {name: collect(agent, read_decisions(path)) for name, path in FILES.items()}
    bias = share_bias(data["dev"])
    biased = {name: with_bias(samples, bias) for name, samples in data.items()}
    own = Temperatures(
        agent.checkpoint_config.temperature, agent.checkpoint_config.temperature_by_options
    )
    clamped, _ = fit_scales(biased["dev"], binning=True, base=own)
    wide = wide_temperatures(biased["dev"])
    wide_dev = scaled(biased["dev"], wide)
    bins = fit_binning(records(wide_dev, UNIT), [s.question.bucket for s in wide_dev])
    beyond = Temperatures(UNIT.by_type, {}, {}, bins)
    unbiased, _ = fit_scales(data["dev"], binning=True, base=own)
    plain = Temperatures(unbiased.by_type, unbiased.by_bucket)
    print(f"{args.model}: fitted on dev.jsonl ({len(data['dev'])} answers), noul bias {bias:+.2f}")
    print(f"  temperatures [0.5, 5]: {clamped.by_type} {clamped.by_bucket}")
    print(f"  temperatures [0.5, 60]: {wide}")
    print(f"  binning map [0.5, 5]: {clamped.bins}")
    print(f"  without the bias: {unbiased.by_type} {unbiased.by_bucket} {unbiased.bins}")
    for name, samples in data.items():
        spread = np.percentile(noul_margins(samples)[0], (5, 25, 50, 75, 95))
        print(f"  {name} noul margins, 5/25/50/75/95th percentiles: {np.round(spread, 1).tolist()}")
    print()
    header = " ".join(f"{f'acc@{t}':>8} {f'kept@{t}':>6}" for t in THRESHOLDS)
    print(f"{'file and calibration':<26} {'answers':>7} {'accuracy':>8} {'ECE':>6} "
          f"{'noul acc':>8} {'said true':>9} {'true share':>10} {header}")  # fmt: skip
    for name in ("dev", "challenge", "test"):
        print(row(f"{name}: checkpoint's", data[name], own))
        print(row(f"{name}: dev, T <= 5", biased[name], clamped))
        print(row(f"{name}: dev, T <= 60", scaled(biased[name], wide), beyond))
        print(row(f"{name}: dev, no bias, T", data[name], plain))
        print(row(f"{name}: dev, no bias, T+map", data[name], unbiased))
    print()
    print("checkpoint's temperatures: kept accuracy/kept share at min_confidence")
    print(f"{'file':<10} " + " ".join(f"{t:>11}" for t in FINE))
    for name, samples in data.items():
        print(kept_grid(name, samples, own))


if __name__ == "__main__":
    main()
