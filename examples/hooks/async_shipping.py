"""Ship results with an async client from a hook, from sync code and from inside an event loop.

python examples/hooks/async_shipping.py [checkpoint]      (or set LAYA_CHECKPOINT)
"""

import asyncio
import os
import sys

import laya
from laya import AsyncHook


class AsyncShipper:
    """An ``async def`` hook; ``AsyncHook`` runs it to completion inside the synchronous call."""

    def __init__(self):
        self.sent = []

    async def on_predict_end(self, ctx):
        await asyncio.sleep(0.01)  # stands in for `await client.post(url, json=...)`
        self.sent.append({"run_id": ctx.run_id, "usage": ctx.usage})


QUESTIONS = {"churn_risk": {"type": "noul", "instructions": "Does the user threaten to leave?"}}


async def serve(agent) -> dict:
    """An async request handler calling the synchronous runtime."""
    return agent.system_one("I will switch providers unless this is fixed.", QUESTIONS)


def main() -> None:
    checkpoint = (
        sys.argv[1]
        if len(sys.argv) > 1
        else os.environ.get("LAYA_CHECKPOINT", "convaiinnovations/laya")
    )
    shipper = AsyncShipper()
    agent = laya.load(checkpoint, hooks=[AsyncHook(shipper)])
    agent.system_one("Please cancel my subscription.", QUESTIONS)  # no loop: asyncio.run
    asyncio.run(serve(agent))  # inside a loop: a background loop thread
    for record in shipper.sent:
        print(record)
    assert len(shipper.sent) == 2


if __name__ == "__main__":
    main()
