"""Write ``contrast.jsonl``: minimal pairs and same-topic false statements, the data that
fine-tunes mini's first stage (docs/training.md).

Three parts: the ``ITEMS`` of ``contrast_items*.py`` (hand-written states in new voices, each
with a counterfactual edit; the state and its edit become one minimal pair), ``negations.NEGATIONS``
(the hand-written negation of a recurring generator statement, asked of a training state with the
flipped gold answer, beside ``paraphrases.PARAPHRASES``, the same statement in other words, with the
unchanged answer) and every third row of ``train.jsonl`` unchanged (replay, so the fine-tune
keeps what the first stage learnt). Deterministic: re-running rewrites the file byte-identically.

    python data/decisions/build_contrast.py [--out data/decisions/contrast.jsonl]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import contrast_items  # noqa: E402
import contrast_items_b  # noqa: E402
import contrast_items_c  # noqa: E402
import contrast_items_d  # noqa: E402
import contrast_items_e  # noqa: E402
from items_format import item_rows  # noqa: E402
from negations import NEGATIONS  # noqa: E402
from paraphrases import PARAPHRASES  # noqa: E402

ITEM_SETS = {
    "cx": contrast_items.ITEMS,
    "cxb": contrast_items_b.ITEMS,
    "cxc": contrast_items_c.ITEMS,
    "cxd": contrast_items_d.ITEMS,
    "cxe": contrast_items_e.ITEMS,
}

NEGATED_SHARE = 0.5
REPLAY_EVERY = 3
SEED = 26


def negated_rows(train_path, rng):
    """For about half the training states with a negatable noul question: that negation (the
    flipped answer) and its paraphrase (the same answer), asked together."""
    rows = []
    for line in train_path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        candidates = [
            qid
            for qid, q in row["questions"].items()
            if q["type"] == "noul" and q["instructions"] in NEGATIONS
        ]
        if not candidates or rng.random() >= NEGATED_SHARE:
            continue
        qid = rng.choice(candidates)
        statement = row["questions"][qid]["instructions"]
        gold = row["answers"][qid]
        asked = {f"{qid}_neg": (NEGATIONS[statement], not gold),
                 f"{qid}_para": (PARAPHRASES[statement], gold)}  # fmt: skip
        rows.append({"id": f"{row['id']}-neg", "domain": row["domain"], "source": row["source"],
                     "state": row["state"],
                     "questions": {q: {"type": "noul", "instructions": s} for q, (s, _) in asked.items()},
                     "answers": {q: a for q, (_, a) in asked.items()}})  # fmt: skip
    return rows


def replay_rows(train_path):
    """Every ``REPLAY_EVERY``-th training row, unchanged."""
    lines = train_path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[::REPLAY_EVERY]]


def build(train_path):
    """Every contrast row: the items' minimal pairs, the negated statements, the replay rows."""
    rows = [
        row
        for prefix, items in ITEM_SETS.items()
        for number, item in enumerate(items, start=1)
        for row in item_rows(prefix, number, item)
    ]
    return rows + negated_rows(train_path, random.Random(SEED)) + replay_rows(train_path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", default=str(HERE / "train.jsonl"))
    parser.add_argument("--out", default=str(HERE / "contrast.jsonl"))
    args = parser.parse_args(argv)
    rows = build(Path(args.train))
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    Path(args.out).write_text(text, encoding="utf-8")
    print(f"{args.out}: {len(rows)} rows")


if __name__ == "__main__":
    main()
