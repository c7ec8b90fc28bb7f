"""Write ``contrast.jsonl``: minimal pairs and same-topic false statements, the data that
fine-tunes mini's first stage (docs/training.md).

Three parts: ``contrast_items.ITEMS`` (hand-written states in new voices, each with a
counterfactual edit; the state and its edit become one minimal pair), ``negations.NEGATIONS``
(the hand-written negation of a recurring generator statement, asked of a training state with the
flipped gold answer) and every third row of ``train.jsonl`` unchanged (replay, so the fine-tune
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

from contrast_items import ITEMS  # noqa: E402
from items_format import item_rows  # noqa: E402
from negations import NEGATIONS  # noqa: E402

NEGATED_SHARE = 0.5
REPLAY_EVERY = 3
SEED = 26


def negated_rows(train_path, rng):
    """For about half the training states with a negatable noul question: that negation."""
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
        statement = NEGATIONS[row["questions"][qid]["instructions"]]
        rows.append({"id": f"{row['id']}-neg", "domain": row["domain"], "source": row["source"],
                     "state": row["state"],
                     "questions": {f"{qid}_neg": {"type": "noul", "instructions": statement}},
                     "answers": {f"{qid}_neg": not row["answers"][qid]}})  # fmt: skip
    return rows


def replay_rows(train_path):
    """Every ``REPLAY_EVERY``-th training row, unchanged."""
    lines = train_path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[::REPLAY_EVERY]]


def build(train_path):
    """Every contrast row: the items' minimal pairs, the negated statements, the replay rows."""
    rows = [r for number, item in enumerate(ITEMS, start=1) for r in item_rows("cx", number, item)]
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
