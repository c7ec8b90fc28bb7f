"""Write ``corruptions.jsonl``: minimal pairs that only reading one detail of a statement solves.

For a training state, one of its sentences is copied as a statement (true) beside the same
sentence with one detail changed (false): a number, a weekday or month, a first name, a negation
added or removed, or a word swapped for its opposite (before/after, passed/failed...). The second
row of the pair is the state with that sentence changed the same way, where both answers flip.
Both statements share almost every word with the text, so word overlap cannot answer them.
Deterministic: re-running rewrites the file byte-identically.

    python data/decisions/build_corruptions.py [--out data/decisions/corruptions.jsonl]
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from items_format import build_from_train, replace_once  # noqa: E402

STATES = 1200
SEED = 2026
SENTENCE = re.compile(r"[^.!?\n]*[A-Za-z][^.!?\n]*[.!?]?")
MIN_WORDS, MAX_WORDS = 5, 30

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
NAMES = [
    "Alice",
    "Amir",
    "Ana",
    "Ben",
    "Carlos",
    "Chen",
    "Chloe",
    "Daniel",
    "David",
    "Elena",
    "Emma",
    "Fatima",
    "Grace",
    "Hannah",
    "Hiro",
    "Ines",
    "Jack",
    "James",
    "Jordan",
    "Julia",
    "Kai",
    "Laura",
    "Leo",
    "Lucas",
    "Maria",
    "Maya",
    "Mei",
    "Mohammed",
    "Nadia",
    "Noah",
    "Olivia",
    "Omar",
    "Priya",
    "Raj",
    "Rosa",
    "Sam",
    "Sara",
    "Sofia",
    "Tom",
    "Yuki",
    "Zoe",
]
OPPOSITES = [
    ("before", "after"),
    ("higher", "lower"),
    ("more than", "less than"),
    ("increased", "decreased"),
    ("passed", "failed"),
    ("approved", "rejected"),
    ("accepted", "rejected"),
    ("enabled", "disabled"),
    ("added", "removed"),
    ("opened", "closed"),
    ("earlier", "later"),
    ("allowed", "blocked"),
    ("succeeded", "failed"),
    ("always", "never"),
    ("arrived", "did not arrive"),
]
AUXILIARY = r"(is|are|was|were|has|have|had|will|does|did|should|can|could|would)"
CONTRACTED = {"isn't": "is", "aren't": "are", "wasn't": "was", "weren't": "were",
              "hasn't": "has", "haven't": "have", "doesn't": "does", "didn't": "did",
              "can't": "can", "won't": "will", "shouldn't": "should", "couldn't": "could"}  # fmt: skip


def _swap_in(words: list[str], sentence: str, rng: random.Random) -> str | None:
    """Replace one of ``words`` found in the sentence by another of them."""
    found = [w for w in words if re.search(rf"\b{w}\b", sentence)]
    if not found:
        return None
    old = rng.choice(found)
    new = rng.choice([w for w in words if w != old])
    return re.sub(rf"\b{old}\b", new, sentence, count=1)


def change_number(sentence: str, rng: random.Random) -> str | None:
    """A different number in place of one written in digits."""
    numbers = list(re.finditer(r"(?<![\w.-])\d+(?![\w.])", sentence))
    if not numbers:
        return None
    match = rng.choice(numbers)
    value = int(match.group())
    new = str(rng.choice([value + 1, value + 3, value * 2 + 1, max(value - 2, 0) + 10]))
    return sentence[: match.start()] + new + sentence[match.end() :]


def change_day(sentence: str, rng: random.Random) -> str | None:
    """Another weekday or month in place of the one named."""
    return _swap_in(WEEKDAYS, sentence, rng) or _swap_in(MONTHS, sentence, rng)


def change_name(sentence: str, rng: random.Random) -> str | None:
    """Another first name in place of the one named."""
    return _swap_in(NAMES, sentence, rng)


def change_negation(sentence: str, rng: random.Random) -> str | None:
    """Remove a negation when there is one, else negate the first auxiliary verb."""
    for short, full in CONTRACTED.items():
        if re.search(rf"\b{short}", sentence, flags=re.I):
            return re.sub(rf"\b{short}", full, sentence, count=1, flags=re.I)
    removed = re.sub(rf"\b{AUXILIARY} not\b", r"\1", sentence, count=1)
    if removed != sentence:
        return removed
    added = re.sub(rf"\b{AUXILIARY} (?!not\b)", r"\1 not ", sentence, count=1)
    return added if added != sentence else None


def change_opposite(sentence: str, rng: random.Random) -> str | None:
    """A word swapped for its opposite (before -> after, passed -> failed...)."""
    found = [(a, b) for a, b in OPPOSITES if re.search(rf"\b{a}\b", sentence)]
    found += [(b, a) for a, b in OPPOSITES if re.search(rf"\b{b}\b", sentence)]
    if not found:
        return None
    old, new = rng.choice(found)
    return re.sub(rf"\b{old}\b", new, sentence, count=1)


CHANGES = [change_number, change_day, change_name, change_negation, change_opposite]


def text_leaves(state) -> list[str]:
    """Every string in a state (str, dict values, list items, message contents)."""
    if isinstance(state, str):
        return [state]
    if isinstance(state, dict):
        return [t for value in state.values() for t in text_leaves(value)]
    if isinstance(state, list):
        return [t for value in state for t in text_leaves(value)]
    return []


def candidates(state, rng: random.Random) -> list[tuple[str, str]]:
    """(sentence, changed sentence) for every sentence of the state that one change applies to."""
    found = []
    for leaf in text_leaves(state):
        for match in SENTENCE.finditer(leaf):
            sentence = match.group().strip()
            if not _statement_like(sentence):
                continue
            for change in rng.sample(CHANGES, len(CHANGES)):
                changed = change(sentence, rng)
                if changed and changed != sentence:
                    found.append((sentence, changed))
                    break
    return found


def _statement_like(sentence: str) -> bool:
    """A whole declarative sentence of a usable length (not a question, not a split number)."""
    return (
        MIN_WORDS <= len(sentence.split()) <= MAX_WORDS
        and sentence[0].isupper()
        and not sentence.endswith("?")
    )


def as_statement(sentence: str) -> str:
    """The sentence as a statement: a final full stop when it has no final punctuation."""
    return sentence if sentence[-1] in ".!?" else sentence + "."


def pair_rows(row: dict, rng: random.Random) -> list[dict]:
    """The state asked its copied and changed sentence, and the changed state asked both again."""
    options = candidates(row["state"], rng)
    rng.shuffle(options)
    for sentence, changed in options:
        try:
            edited = replace_once(row["state"], sentence, changed)
        except ValueError:
            continue
        questions = {
            "copy": {"type": "noul", "instructions": as_statement(sentence)},
            "changed": {"type": "noul", "instructions": as_statement(changed)},
        }
        pair = f"{row['id']}-cor"
        common = {"domain": row["domain"], "source": row["source"], "pair": pair,
                  "questions": questions}  # fmt: skip
        return [
            {"id": f"{pair}a", **common, "state": row["state"],
             "answers": {"copy": True, "changed": False}},
            {"id": f"{pair}b", **common, "state": edited,
             "answers": {"copy": False, "changed": True}},
        ]  # fmt: skip
    return []


def build(train_path: Path) -> list[dict]:
    """Pairs for up to ``STATES`` training states, drawn with a fixed seed."""
    rng = random.Random(SEED)
    rows = [json.loads(line) for line in train_path.read_text(encoding="utf-8").splitlines()]
    rng.shuffle(rows)
    built: list[dict] = []
    for row in rows:
        if len(built) >= 2 * STATES:
            break
        built += pair_rows(row, rng)
    return built


def main(argv=None):
    build_from_train(__doc__, HERE / "corruptions.jsonl", build, argv)


if __name__ == "__main__":
    main()
