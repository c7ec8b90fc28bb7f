"""Answer repeated calls from a cache instead of the model.

    python examples/hooks/cache.py [checkpoint]      (or set LAYA_CHECKPOINT)

The key covers everything the answer depends on (state, questions in their order, checkpoint,
token budgets), and the read hook answers only when every state of the call is cached.
"""

import hashlib
import json
import os
import sys

import laya

CACHE = {}


def key(ctx, index):
    # Not sort_keys=True: criteria order is positional, so two orders are two questions,
    # and the checkpoint and token budget change the answer too.
    payload = json.dumps(
        [ctx.states[index], ctx.questions, ctx.model, ctx.max_len, ctx.head_max_len],
        default=str,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def cache_read(ctx):
    hits = [CACHE.get(key(ctx, i)) for i in range(len(ctx.states))]
    if all(hit is not None for hit in hits):
        ctx.skip(hits)  # one entry per state, same shape as predict_batch's return


def cache_write(ctx):
    for i, result in enumerate(ctx.results or []):
        CACHE[key(ctx, i)] = result


STATES = [
    "Hi, we were billed twice for March. Please refund the duplicate today.",
    "The export button crashes the app every time.",
]
QUESTIONS = {
    "department": {
        "type": "choice",
        "instructions": "Which department should handle this?",
        "criteria": {"billing": "invoices, payments, refunds", "technical": "bugs, outages"},
    },
    "churn_risk": {"type": "noul", "instructions": "Does the user threaten to leave?"},
}


def main() -> None:
    checkpoint = (
        sys.argv[1]
        if len(sys.argv) > 1
        else os.environ.get("LAYA_CHECKPOINT", "convaiinnovations/laya")
    )
    answered_from_cache = []
    agent = laya.load(
        checkpoint,
        on_predict_start=[
            cache_read,
            lambda ctx: answered_from_cache.append(ctx.results is not None),
        ],
        on_predict_end=cache_write,
    )
    first = agent.predict_batch(STATES, QUESTIONS)
    again = agent.predict_batch(STATES, QUESTIONS)
    shorter = agent.predict_batch(STATES, QUESTIONS, max_len=64)  # another budget: another key
    assert again == first
    assert answered_from_cache == [False, True, False], answered_from_cache
    print(f"{len(CACHE)} cached results; calls answered from the cache: {answered_from_cache}")
    print(json.dumps(shorter[0]["answers"]["department"]["choice"]))


if __name__ == "__main__":
    main()
