"""How often a model answers "true" to noul statements, and its accuracy on true and false ones.

Run ``python benchmarks/noul_bias.py [--data data/checks/challenge.jsonl] MODEL [MODEL ...]``
(``mini`` or a checkpoint directory). A model that recognises the topic rather than reading the
statement says "true" to most statements about its text, false ones included: a high share said
true with a low accuracy on false statements is that failure (docs/models/mini.md, tenth round).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import laya
from laya.training.evaluate import Example, read_decisions

ROOT = Path(__file__).resolve().parents[1]


def bias(model: str, examples: list[Example]) -> dict[str, float]:
    """Share of statements answered true (p >= 0.5), and accuracy on true and on false ones."""
    agent = laya.load(model)
    said, right = [], {True: [], False: []}
    for ex in examples:
        asked = [(q, gold) for q, gold in zip(ex.questions, ex.gold) if q.type == "noul"]
        if not asked:
            continue
        questions = {q.qid: ex.raw_questions[q.qid] for q, _ in asked}
        answers = agent.predict_batch([ex.state], questions)[0]["answers"]
        for q, gold in asked:
            yes, truth = answers[q.qid]["noul"] >= 0.5, gold == 1
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
    examples = read_decisions(args.data)
    print(f"{'model':<24} {'statements':>10} {'said true':>10} {'acc true':>9} {'acc false':>10}")
    for model in args.models:
        b = bias(model, examples)
        print(
            f"{model:<24} {b['statements']:>10} {b['said_true']:>10.3f} "
            f"{b['accuracy_on_true']:>9.3f} {b['accuracy_on_false']:>10.3f}"
        )


if __name__ == "__main__":
    main()
