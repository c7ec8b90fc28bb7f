"""What "none of these" does to ``mini``'s choices off its distribution (issue 48; docs/models/mini.md).

Run ``python benchmarks/abstain.py [--model mini] [--data data/checks/challenge.jsonl]``. Every
choice question of the file is answered twice, as it is and with ``"abstain": true`` (the other
questions are left out). Every gold label there is one of the options, so an abstention is never
the right answer: the figures say how often "none of these" wins, how many of those choices were
wrong anyway, and how accurate the choices it leaves are.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import laya
from laya.engine.questions import with_abstain
from laya.training.evaluate import Example, read_decisions

ROOT = Path(__file__).resolve().parents[1]


def choice_answers(agent: laya.Agent, examples: list[Example], abstain: bool) -> list[tuple]:
    """Per choice question: (the label picked or None, the gold label, P(none of these))."""
    out = []
    for ex in examples:
        asked = {qid: d for qid, d in ex.raw_questions.items() if d.get("type") == "choice"}
        if not asked:
            continue
        result = agent.predict(ex.state, with_abstain(asked) if abstain else asked)
        for q, gold in zip(ex.questions, ex.gold):
            if q.qid in asked:
                answer = result["answers"][q.qid]
                out.append((answer["choice"], q.keys[gold], answer.get("abstain", 0.0)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="mini", help="checkpoint name or directory")
    parser.add_argument("--data", default=str(ROOT / "data" / "checks" / "challenge.jsonl"))
    args = parser.parse_args()
    agent = laya.load(args.model, device="cpu")
    examples = read_decisions(args.data)
    off = choice_answers(agent, examples, abstain=False)
    on = choice_answers(agent, examples, abstain=True)
    n = len(off)
    right_off = [choice == gold for choice, gold, _ in off]
    abstained = [choice is None for choice, _, _ in on]
    kept = [choice == gold for choice, gold, _ in on if choice is not None]
    wrong_anyway = sum(a and not r for a, r in zip(abstained, right_off))
    mean_abstain = sum(p for _, _, p in on) / n
    print(f"{args.model} on {Path(args.data).name}: {n} choice questions")
    print(f"  abstain off: accuracy {sum(right_off) / n:.3f}")
    print(
        f"  abstain on:  'none of these' wins {sum(abstained)} ({sum(abstained) / n:.3f}), "
        f"{wrong_anyway} of them wrong without it; mean P(none of these) {mean_abstain:.3f}"
    )
    kept_accuracy = sum(kept) / len(kept) if kept else float("nan")
    print(
        f"  abstain on:  accuracy of the {len(kept)} choices made {kept_accuracy:.3f}, "
        f"of all {sum(kept) / n:.3f}"
    )


if __name__ == "__main__":
    main()
