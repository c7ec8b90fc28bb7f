"""Split the decision dataset by domain for a leave-domains-out run (docs/models/mini.md).

Writes, for each of train/dev/test, ``PREFIX-SPLIT.jsonl`` (the rows of every other domain, to
train and early-stop on) and ``PREFIX-held-SPLIT.jsonl`` (the held-out domains' rows, to report
on). The held-out domains are named, or drawn with a seed so that nobody picks them after
seeing results: ``random.Random(seed).sample(sorted(domains), n)``. Rows are copied byte for
byte, in their order.

    python data/decisions/hold_out.py --draw 2 --seed 0 --out runs/lodo
    python data/decisions/hold_out.py scheduling_hr support_triage --out runs/lodo
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPLITS = ("train", "dev", "test")


def domains_of(lines: list[str]) -> list[str]:
    """The ``domain`` of each JSON Lines row, in order."""
    return [json.loads(line)["domain"] for line in lines]


def draw(domains: set[str], count: int, seed: int) -> list[str]:
    """``count`` domains drawn with ``seed``; the same call always draws the same ones."""
    return random.Random(seed).sample(sorted(domains), count)


def split_lines(lines: list[str], held: set[str]) -> tuple[list[str], list[str]]:
    """The lines of the kept domains and those of the held-out ones, each in file order."""
    kept, out = [], []
    for line, domain in zip(lines, domains_of(lines), strict=True):
        (out if domain in held else kept).append(line)
    return kept, out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domains", nargs="*", help="the domains to hold out (or use --draw)")
    parser.add_argument("--draw", type=int, help="draw this many domains instead of naming them")
    parser.add_argument("--seed", type=int, default=0, help="the seed of --draw (default 0)")
    parser.add_argument("--data", type=Path, default=HERE, help="folder of train/dev/test.jsonl")
    parser.add_argument("--out", required=True, help="path prefix of the six files written")
    args = parser.parse_args(argv)
    if bool(args.domains) == (args.draw is not None):
        parser.error("name the domains to hold out, or give --draw N, not both")
    files = {s: (args.data / f"{s}.jsonl").read_text(encoding="utf-8") for s in SPLITS}
    lines = {s: text.splitlines(keepends=True) for s, text in files.items()}
    known = set(domains_of(lines["train"]))
    if args.draw is not None and not 0 < args.draw < len(known):
        parser.error(f"--draw must be between 1 and {len(known) - 1}, got {args.draw}")
    held = draw(known, args.draw, args.seed) if args.draw is not None else args.domains
    unknown = sorted(set(held) - known)
    if unknown:
        parser.error(f"unknown domain(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    print("held out:", " ".join(held))
    for split in SPLITS:
        kept, out = split_lines(lines[split], set(held))
        for path, chosen in (
            (f"{args.out}-{split}.jsonl", kept),
            (f"{args.out}-held-{split}.jsonl", out),
        ):
            Path(path).write_text("".join(chosen), encoding="utf-8", newline="")
            print(f"{path}: {len(chosen)} rows")


if __name__ == "__main__":
    main()
