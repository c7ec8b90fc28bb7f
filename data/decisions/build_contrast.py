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

import importlib
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from items_format import build_from_train, item_rows  # noqa: E402
from negations import NEGATIONS  # noqa: E402
from paraphrases import PARAPHRASES  # noqa: E402

# contrast_items.py (ids cx-N), then contrast_items_b.py (ids cxb-N) to contrast_items_e.py
PARTS = ("", "b", "c", "d", "e")

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


def _items(part):
    """The ITEMS of one hand-written part (``contrast_items.py``, ``contrast_items_b.py``...)."""
    return importlib.import_module("contrast_items" + (f"_{part}" if part else "")).ITEMS


def build(train_path):
    """Every contrast row: the items' minimal pairs, the negated statements, the replay rows."""
    rows = [
        row
        for part in PARTS
        for number, item in enumerate(_items(part), start=1)
        for row in item_rows(f"cx{part}", number, item)
    ]
    return rows + negated_rows(train_path, random.Random(SEED)) + replay_rows(train_path)


def main(argv=None):
    build_from_train(__doc__, HERE / "contrast.jsonl", build, argv)


if __name__ == "__main__":
    main()
