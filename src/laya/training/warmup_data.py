"""Synthetic warm-up questions drawn from the training states themselves.

A fresh decision head on a sentence-embedding encoder sits near chance for its first epochs: the
option markers do not yet read the state. Two choice questions with an unambiguous answer teach
exactly that: "which of these phrases occurs in the text?" and, when the data has several
domains, "which domain is this input from?" (docs/training.md, "Warm-up questions"). There is
deliberately no warm-up noul: a "the text contains 'X'" statement taught noul answers to follow
word overlap instead of meaning.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from ..lang.detect import text_leaves
from .evaluate import Example, example_from_row

__all__ = ["warmup_examples"]

WARMUP_SHARE = 0.35
MAX_DOMAIN_OPTIONS = 8
FOREIGN_TRIES = 50
WORD = re.compile(r"[A-Za-z][A-Za-z'\-]+|\d+")
QUOTE_INSTRUCTIONS = (
    "Which of these phrases appears word for word in the text?",
    "Pick the snippet that occurs in this record.",
    "Which quote is taken from the input?",
    "Select the words that the text actually contains.",
)


def warmup_examples(
    examples: Sequence[Example], rng: random.Random, share: float = WARMUP_SHARE
) -> list[Example]:
    """Warm-up rows for about ``share`` of the states in ``examples`` (one epoch's worth).

    Each row asks a quote choice (the state's own phrase among phrases of other states) and,
    when there are two or more domains, which domain the state comes from.
    """
    words = [_word_lists(ex.state) for ex in examples]
    domains = sorted({ex.domain for ex in examples})
    rows = []
    for i, ex in enumerate(examples):
        if rng.random() >= share or not words[i]:
            continue
        found = _quote_question(rng, words, i)
        if found is None:
            continue
        questions, answers = found
        if len(domains) >= 2:
            questions["domain"], answers["domain"] = _domain_question(rng, domains, ex.domain)
        row = {"domain": "warmup", "state": ex.state, "questions": questions, "answers": answers}
        rows.append(example_from_row(f"warm-up question for {ex.where}", row))
    return rows


def _word_lists(state: object) -> list[list[str]]:
    """The words of each string in the state that has at least three."""
    found = (WORD.findall(text) for _, text in text_leaves(state, []))
    return [w for w in found if len(w) >= 3]


def _phrase(rng: random.Random, word_lists: list[list[str]]) -> str:
    """Two to four consecutive words from one of the state's strings."""
    words = rng.choice(word_lists)
    n = rng.randint(2, min(4, len(words)))
    start = rng.randrange(len(words) - n + 1)
    return " ".join(words[start : start + n])


def _foreign_phrase(
    rng: random.Random, words: list[list[list[str]]], own: int, vocabulary: set[str]
) -> str | None:
    """A phrase of another state made of words not all in ``vocabulary`` (state ``own``'s), or
    None if no such phrase turns up in ``FOREIGN_TRIES`` draws."""
    for _ in range(FOREIGN_TRIES):
        other = rng.randrange(len(words))
        if other == own or not words[other]:
            continue
        phrase = _phrase(rng, words[other])
        if not {w.lower() for w in phrase.split()} <= vocabulary:
            return phrase
    return None


def _quote_question(
    rng: random.Random, words: list[list[list[str]]], i: int
) -> tuple[dict[str, dict[str, object]], dict[str, str]] | None:
    """The quote choice about state ``i`` with its answer, or None."""
    quote = _phrase(rng, words[i])
    vocabulary = {w.lower() for text in words[i] for w in text}
    others = rng.randint(2, 4)
    options = [quote, *(_foreign_phrase(rng, words, i, vocabulary) for _ in range(others))]
    if None in options:
        return None
    rng.shuffle(options)
    question: dict[str, object] = {
        "type": "choice",
        "instructions": rng.choice(QUOTE_INSTRUCTIONS),
        "criteria": list(dict.fromkeys(options)),
    }
    return {"quote": question}, {"quote": quote}


def _domain_question(
    rng: random.Random, domains: list[str], gold: str
) -> tuple[dict[str, object], str]:
    """A "which domain is this?" choice over at most eight domains, the gold one among them."""
    others = [d for d in domains if d != gold]
    picked = sorted([gold, *rng.sample(others, min(len(others), MAX_DOMAIN_OPTIONS - 1))])
    criteria = {d: d.replace("_", " ") for d in picked}
    question: dict[str, object] = {
        "type": "choice",
        "instructions": "What kind of input is this?",
        "criteria": criteria,
    }
    return question, gold
