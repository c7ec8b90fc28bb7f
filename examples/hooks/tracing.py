"""Trace and time every call: one span per call, closed on every path (failures included).

python examples/hooks/tracing.py [checkpoint]      (or set LAYA_CHECKPOINT)
"""

import contextlib
import os
import sys
import threading

import laya
from laya import BaseHook, hooks


class Tracer(BaseHook):
    """Collects one span per context; thread-safe, keyed by run_id."""

    def __init__(self):
        self.lock = threading.Lock()
        self.open = {}
        self.spans = []

    def on_predict_start(self, ctx):
        with self.lock:
            self.open[ctx.run_id] = {"model": ctx.model, "states": len(ctx.states)}

    def on_error(self, ctx):
        with self.lock:
            self.open.get(ctx.run_id, {})["error"] = repr(ctx.error)

    def on_predict_end(self, ctx):
        with self.lock:
            span = self.open.pop(ctx.run_id, {})
            span.update(run_id=ctx.run_id, ms=round(ctx.elapsed_ms, 2), usage=ctx.usage)
            self.spans.append(span)


QUESTIONS = {"churn_risk": {"type": "noul", "instructions": "Does the user threaten to leave?"}}


def main() -> None:
    checkpoint = (
        sys.argv[1]
        if len(sys.argv) > 1
        else os.environ.get("LAYA_CHECKPOINT", "convaiinnovations/laya")
    )
    tracer = Tracer()
    hooks.add_default_hook(tracer)  # every runtime in the process reports to it
    try:
        agent = laya.load(checkpoint)
        agent.system_one("Cancel my plan now.", QUESTIONS)
        agent.predict_batch(["Where is my invoice?", "Thanks, all good."], QUESTIONS)
        with contextlib.suppress(ValueError):  # a failing call is traced too
            agent.system_one("hello", {"bad": {"type": "nope", "instructions": "?"}})
    finally:
        hooks.clear_default_hooks()
    for span in tracer.spans:
        print(span)
    assert [s["states"] for s in tracer.spans] == [1, 2, 1]
    assert "error" in tracer.spans[-1] and tracer.spans[-1]["usage"] is None
    assert tracer.open == {}


if __name__ == "__main__":
    main()
