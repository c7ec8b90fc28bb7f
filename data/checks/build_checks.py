"""Write the out-of-distribution checks from the hand-written items in this folder.

- ``dev.jsonl``: the OOD dev split (``items_dev.py``, then ``items_dev_b.py`` and ``items_dev_c.py``):
  every item's state with all its questions and its counterfactual edit, for early stopping and
  fitting calibrations.
- ``challenge.jsonl``: the challenge file (``items_challenge_[a-l].py``): every item's state with all
  its questions. Never used for a training decision.
- ``pairs.jsonl``: the challenge items' minimal pairs: the state and its edit, each asked only
  the questions the edit flips, sharing a ``pair`` id (``laya eval`` reports pair accuracy).

    python data/checks/build_checks.py [--out DIR]
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "decisions")]

import items_dev  # noqa: E402
import items_dev_b  # noqa: E402
import items_dev_c  # noqa: E402
from items_format import item_rows, write_rows  # noqa: E402

PARTS = "abcdefghijkl"


def challenge_items():
    """Every challenge item, parts A to L in order."""
    modules = [importlib.import_module(f"items_challenge_{part}") for part in PARTS]
    return [item for module in modules for item in module.ITEMS]


def pair_rows(base, edited):
    """The base row asked only the questions its edit flips."""
    kept = {q: base["questions"][q] for q in edited["questions"]}
    base = {**base, "questions": kept, "answers": {q: base["answers"][q] for q in kept}}
    return [base, edited]


def without_pair(row):
    return {k: v for k, v in row.items() if k != "pair"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(HERE), help="folder to write into (default: here)")
    out = Path(parser.parse_args(argv).out)
    items = items_dev.ITEMS + items_dev_b.ITEMS + items_dev_c.ITEMS
    dev = [r for n, item in enumerate(items, 1) for r in item_rows("od", n, item)]
    write_rows(out / "dev.jsonl", dev)
    made = [item_rows("ch", n, item) for n, item in enumerate(challenge_items(), 1)]
    write_rows(out / "challenge.jsonl", [without_pair(base) for base, _ in made])
    write_rows(out / "pairs.jsonl", [r for base, edited in made for r in pair_rows(base, edited)])


if __name__ == "__main__":
    main()
