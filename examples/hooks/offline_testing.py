"""Unit-test your hooks without a model: build a PredictContext and dispatch events yourself.

    python examples/hooks/offline_testing.py

Nothing here imports torch; the same helpers the runtimes use drive the hooks.
"""

from laya import BaseHook, PredictContext
from laya.hooks import aggregate_usage, dispatch, normalise_hooks


class Truncate(BaseHook):
    """Start hook under test: caps every state at ``limit`` characters."""

    def __init__(self, limit):
        self.limit = limit

    def on_predict_start(self, ctx):
        ctx.states = [s[: self.limit] if isinstance(s, str) else s for s in ctx.states]


def tag(ctx):
    """End hook under test: labels each result with the run id."""
    for result in ctx.results or []:
        result["run_id"] = ctx.run_id


def main() -> None:
    hooks = normalise_hooks(hooks=[Truncate(10)], on_predict_end=tag)
    ctx = PredictContext(states=["a very long message", "short"], questions={})
    dispatch(hooks, "on_predict_start", ctx)
    assert ctx.states == ["a very lon", "short"]

    ctx.results = [
        {"answers": {}, "usage": {"input_tokens": 12, "output_tokens": 0}},
        {"answers": {}},
    ]
    ctx.usage = aggregate_usage(ctx.results)
    dispatch(hooks, "on_predict_end", ctx)
    assert all(r["run_id"] == ctx.run_id for r in ctx.results)
    print("hooks behave:", ctx.states, ctx.usage)


if __name__ == "__main__":
    main()
