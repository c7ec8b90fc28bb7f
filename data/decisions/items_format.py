"""The notation of the hand-written items (training contrast items and the checks in
``data/checks``): N (noul), K (choice), S (score), E (a counterfactual edit), the rows an item makes, and
the JSON Lines writer and command line the build scripts share."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def N(qid, statement, gold):
    """A noul question: a statement about the state and whether it holds."""
    return (qid, {"type": "noul", "instructions": statement}, gold)


def K(qid, instructions, criteria, gold):
    """A choice question: instructions, criteria (labels or label -> description) and the gold."""
    return (qid, {"type": "choice", "instructions": instructions, "criteria": criteria}, gold)


def S(qid, instructions, levels, gold):
    """A score question: instructions, its levels from lowest to highest and the gold level index."""
    return (qid, {"type": "score", "instructions": instructions, "criteria": levels}, gold)


def E(old, new, **golds):
    """A counterfactual edit of the state (old text -> new text) and the answers it changes."""
    return (old, new, golds)


def replace_once(state, old, new):
    """``state`` with ``old`` replaced by ``new`` in its string leaves; ``old`` must occur once."""
    found = []

    def walk(value):
        if isinstance(value, str):
            found.append(value.count(old))
            return value.replace(old, new)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    edited = walk(state)
    if sum(found) != 1:
        raise ValueError(f"edit {old!r} occurs {sum(found)} times in the state, not once")
    return edited


def apply_edit(state, old, new):
    """One edit; a tuple of olds and news is applied pairwise."""
    if isinstance(old, tuple):
        for o, n in zip(old, new, strict=True):
            state = replace_once(state, o, n)
        return state
    return replace_once(state, old, new)


def _edited(pair, state, old, new):
    try:
        return apply_edit(state, old, new)
    except ValueError as exc:
        raise ValueError(f"{pair}: {exc}") from exc


def item_rows(prefix, number, item):
    """Two rows sharing a ``pair`` id: the state with every question, and its edit with the
    questions the edit flips (with their new answers); one row for an item without an edit."""
    domain, state, questions, *edit = item
    asked = {qid: definition for qid, definition, _ in questions}
    gold = {qid: answer for qid, _, answer in questions}
    pair = f"{prefix}-{number}"
    if not edit:
        return [{"id": f"{pair}a", "domain": domain, "source": pair, "state": state,
                 "questions": asked, "answers": gold}]  # fmt: skip
    old, new, flipped = edit[0]
    for qid, answer in flipped.items():
        if qid not in asked:
            raise ValueError(f"{pair}: the edit answers {qid!r}, which is not asked")
        if answer == gold[qid]:
            raise ValueError(f"{pair}: the edit does not flip {qid!r}")
    base = {"id": f"{pair}a", "domain": domain, "source": pair, "pair": pair, "state": state,
            "questions": asked, "answers": gold}  # fmt: skip
    edited = {"id": f"{pair}b", "domain": domain, "source": pair, "pair": pair,
              "state": _edited(pair, state, old, new),
              "questions": {q: asked[q] for q in flipped}, "answers": dict(flipped)}  # fmt: skip
    return [base, edited]


def write_rows(path, rows):
    """Write ``rows`` as JSON Lines (UTF-8, one object a line) and say how many."""
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    Path(path).write_text(text, encoding="utf-8")
    print(f"{path}: {len(rows)} rows")


def build_from_train(doc, default_out, build, argv=None):
    """The command line of a script that builds one file from ``train.jsonl``: --train, --out."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--train", default=str(Path(default_out).parent / "train.jsonl"))
    parser.add_argument("--out", default=str(default_out))
    args = parser.parse_args(argv)
    write_rows(Path(args.out), build(Path(args.train)))
