"""Redact personal data before the model (or any later hook) sees it.

python examples/hooks/redaction.py [checkpoint]      (or set LAYA_CHECKPOINT)
"""

import os
import re
import sys

import laya

PATTERNS = [
    (re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+"), "[email]"),
    (re.compile(r"\b(?:\d[ -]?){13,16}\b"), "[card]"),
    (re.compile(r"\+?\d[\d ().-]{7,}\d"), "[phone]"),
]


def scrub(value):
    """Redact strings, recursing into the dicts and lists of a structured state."""
    if isinstance(value, str):
        for pattern, replacement in PATTERNS:
            value = pattern.sub(replacement, value)
        return value
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def redact(ctx):
    """Start hook: every state of the call, whatever its shape."""
    ctx.states = [scrub(s) for s in ctx.states]


QUESTIONS = {"churn_risk": {"type": "noul", "instructions": "Does the user threaten to leave?"}}


def main() -> None:
    checkpoint = (
        sys.argv[1]
        if len(sys.argv) > 1
        else os.environ.get("LAYA_CHECKPOINT", "convaiinnovations/laya")
    )
    seen = []
    agent = laya.load(checkpoint, on_predict_start=[redact, lambda ctx: seen.extend(ctx.states)])
    agent.predict_batch(
        [
            "Reach me at jo@example.com or +44 20 7946 0958.",
            {"customer": "card 4111-1111-1111-1111", "message": "refund please"},
        ],
        QUESTIONS,
    )
    for state in seen:
        print(state)
    assert seen == [
        "Reach me at [email] or [phone].",
        {"customer": "card [card]", "message": "refund please"},
    ]


if __name__ == "__main__":
    main()
