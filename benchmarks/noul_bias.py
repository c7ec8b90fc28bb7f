"""How often a model answers "true" to noul statements, and its accuracy on true and false ones.

Run ``python benchmarks/noul_bias.py [--data data/checks/challenge.jsonl] MODEL [MODEL ...]``
(``mini`` or a checkpoint directory). A model that recognises the topic rather than reading the
statement says "true" to most statements about its text, false ones included: a high share said
true with a low accuracy on false statements is that failure (docs/models/mini.md, tenth round).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import laya

ROOT = Path(__file__).resolve().parents[1]


def noul_rows(path: Path) -> list[tuple[object, dict, dict]]:
    """(state, noul questions, their gold answers) for every row that asks a noul question."""
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        asked = {q: d for q, d in row["questions"].items() if d["type"] == "noul"}
        if asked:
            found.append((row["state"], asked, {q: row["answers"][q] for q in asked}))
    return found


def bias(model: str, rows: list[tuple[object, dict, dict]]) -> dict[str, float]:
    """Share of statements answered true (p >= 0.5), and accuracy on true and on false ones."""
    agent = laya.load(model)
    said, right = [], {True: [], False: []}
    for state, asked, gold in rows:
        answers = agent.predict(state, asked)["answers"]
        for qid, truth in gold.items():
            yes = answers[qid]["noul"] >= 0.5
            said.append(yes)
            right[truth].append(yes == truth)
    return {
        "statements": len(said),
        "said_true": sum(said) / len(said),
        "accuracy_on_true": sum(right[True]) / max(len(right[True]), 1),
        "accuracy_on_false": sum(right[False]) / max(len(right[False]), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--data", type=Path, default=ROOT / "data" / "checks" / "challenge.jsonl")
    args = parser.parse_args()
    rows = noul_rows(args.data)
    print(f"{'model':<24} {'statements':>10} {'said true':>10} {'acc true':>9} {'acc false':>10}")
    for model in args.models:
        b = bias(model, rows)
        print(
            f"{model:<24} {b['statements']:>10} {b['said_true']:>10.3f} "
            f"{b['accuracy_on_true']:>9.3f} {b['accuracy_on_false']:>10.3f}"
        )


if __name__ == "__main__":
    main()
