"""The hook rules that need a model, on every runtime: order, payloads, skip, rewrites, failures."""

from __future__ import annotations

import copy
import threading
import warnings

import pytest
from conftest import QUESTIONS

from laya import BaseHook, PredictContext
from laya.hooks import clear_default_hooks, set_default_hooks

STATE = "We were billed twice for March, please refund the duplicate."
DOCUMENT = " ".join(
    f"line {i}: the customer asks about invoice {i} and a refund." for i in range(40)
)


class Recorder(BaseHook):
    """Records (event, snapshot of the context) for every event."""

    def __init__(self, name: str = "r", log: list | None = None) -> None:
        self.name = name
        self.log = [] if log is None else log

    def _see(self, event: str, ctx: PredictContext) -> None:
        self.log.append(
            (
                self.name,
                event,
                {
                    "states": copy.copy(ctx.states),
                    "results": ctx.results is not None,
                    "usage": ctx.usage,
                    "elapsed": ctx.elapsed_ms,
                    "error": ctx.error,
                    "model": ctx.model,
                    "agent": ctx.agent,
                    "run_id": ctx.run_id,
                    "max_len": ctx.max_len,
                },
            )
        )

    def on_predict_start(self, ctx):
        self._see("on_predict_start", ctx)

    def on_predict_end(self, ctx):
        self._see("on_predict_end", ctx)

    def on_error(self, ctx):
        self._see("on_error", ctx)


def events(log):
    return [(name, event) for name, event, _ in log]


@pytest.fixture(autouse=True)
def no_defaults():
    clear_default_hooks()
    yield
    clear_default_hooks()


def test_order_defaults_installed_per_call_then_callables(runtime):
    log: list = []
    set_default_hooks(hooks=[Recorder("default", log)])
    with runtime.hooks_installed(Recorder("installed", log)):
        runtime.predict(
            STATE,
            QUESTIONS,
            hooks=[Recorder("call", log)],
            on_predict_start=lambda ctx: log.append(("start-fn", "on_predict_start", None)),
            on_predict_end=lambda ctx: log.append(("end-fn", "on_predict_end", None)),
        )
    assert events(log) == [
        ("default", "on_predict_start"),
        ("installed", "on_predict_start"),
        ("call", "on_predict_start"),
        ("start-fn", "on_predict_start"),
        ("default", "on_predict_end"),
        ("installed", "on_predict_end"),
        ("call", "on_predict_end"),
        ("end-fn", "on_predict_end"),
    ]


def test_payloads_of_a_successful_call(runtime):
    recorder = Recorder()
    result = runtime.predict(STATE, QUESTIONS, hooks=recorder, max_len=150)
    (_, _, start), (_, _, end) = recorder.log
    assert start["states"] == [STATE] and start["model"] == runtime.model_id
    assert start["agent"] is runtime and start["max_len"] == 150
    assert not start["results"] and start["usage"] is None and start["elapsed"] is None
    assert end["results"] and end["elapsed"] > 0 and end["error"] is None
    assert end["usage"] == {"input_tokens": result["usage"]["input_tokens"], "output_tokens": 0}
    assert start["run_id"] == end["run_id"] and len(start["run_id"]) == 32


def test_predict_batch_is_one_context_for_all_states(runtime):
    recorder = Recorder()
    runtime.predict_batch([STATE, "the app crashes"], QUESTIONS, hooks=recorder)
    assert events(recorder.log) == [("r", "on_predict_start"), ("r", "on_predict_end")]
    assert recorder.log[0][2]["states"] == [STATE, "the app crashes"]


def test_skip_answers_without_inference_and_end_still_runs(runtime):
    cached = {"model": "cache", "answers": {}, "usage": {"input_tokens": 5, "output_tokens": 1}}
    seen = []
    result = runtime.predict(
        STATE,
        QUESTIONS,
        on_predict_start=lambda ctx: ctx.skip([cached]),
        on_predict_end=lambda ctx: seen.append(ctx.usage),
    )
    assert result is cached and seen == [{"input_tokens": 5, "output_tokens": 1}]
    one_for_all = runtime.predict_batch(
        ["a", "b", "c"], QUESTIONS, on_predict_start=lambda ctx: ctx.skip([cached])
    )
    assert one_for_all == [cached]


def test_skip_with_a_wrong_count_follows_the_raise_policy(runtime):
    def bad(ctx):
        ctx.skip([{}, {}])

    with pytest.raises(ValueError, match=r"one per state in ctx.states \(3\); got 2"):
        runtime.predict_batch(["a", "b", "c"], QUESTIONS, on_predict_start=bad)
    with pytest.warns(RuntimeWarning, match="ctx.skip"):
        results = runtime.predict_batch(
            ["a", "b", "c"], QUESTIONS, on_predict_start=bad, hooks_raise=False
        )
    assert len(results) == 3 and results[0]["answers"]


@pytest.mark.parametrize(
    ("results", "shape"), [({}, "dict"), ("ab", "str"), ([{}, "x"], "list holding a str")]
)
def test_skip_takes_a_list_of_result_dicts(runtime, results, shape):
    with pytest.raises(TypeError, match=f"takes a list of result dicts .*, got {shape}$"):
        runtime.predict(STATE, QUESTIONS, on_predict_start=lambda ctx: ctx.skip(results))


def _empty_states(ctx):
    ctx.states = []


@pytest.mark.parametrize(
    "hook",
    [
        {"on_predict_start": _empty_states},
        {"on_predict_end": lambda ctx: setattr(ctx, "results", [])},
        {"on_predict_end": lambda ctx: setattr(ctx, "results", None)},
    ],
    ids=["start hook empties states", "end hook empties results", "end hook sets None"],
)
def test_hooks_that_leave_no_result_for_a_one_state_call_are_named(runtime, hook):
    with pytest.raises(ValueError, match=r"the call's hooks left ctx.results=(\[\]|None)"):
        runtime.predict(STATE, QUESTIONS, **hook)


def test_start_hook_rewrites_states_questions_and_budgets(runtime):
    def rewrite(ctx):
        ctx.states = [s.replace("billed twice", "[redacted]") for s in ctx.states]
        ctx.questions = {"urgency": ctx.questions["urgency"]}
        ctx.max_len = 40

    result = runtime.predict(STATE, QUESTIONS, on_predict_start=rewrite)
    plain = runtime.predict(
        STATE.replace("billed twice", "[redacted]"), {"urgency": QUESTIONS["urgency"]}, max_len=40
    )
    assert result == plain and list(result["answers"]) == ["urgency"]
    assert result["usage"]["truncated"] is True


def test_end_hook_replaces_results(runtime):
    def replace(ctx):
        ctx.results = [{"replaced": True}]

    assert runtime.predict(STATE, QUESTIONS, on_predict_end=replace) == {"replaced": True}


def test_validation_error_fires_on_error_then_end(runtime):
    recorder = Recorder()
    with pytest.raises(ValueError, match="unknown type"):
        runtime.predict(STATE, {"q": {"type": "bool", "instructions": "x"}}, hooks=recorder)
    assert events(recorder.log) == [
        ("r", "on_predict_start"),
        ("r", "on_error"),
        ("r", "on_predict_end"),
    ]
    _, _, error = recorder.log[1]
    assert (
        isinstance(error["error"], ValueError)
        and error["elapsed"] is None
        and error["usage"] is None
    )
    _, _, end = recorder.log[2]
    assert end["elapsed"] is not None and not end["results"] and end["usage"] is None


def test_failing_start_hook_skips_inference(runtime):
    calls = []

    def boom(ctx):
        raise RuntimeError("start failed")

    recorder = Recorder()
    with pytest.raises(RuntimeError, match="start failed"):
        runtime.predict(STATE, QUESTIONS, hooks=recorder, on_predict_start=[boom, calls.append])
    assert calls == [] and events(recorder.log)[-2:] == [("r", "on_error"), ("r", "on_predict_end")]
    with pytest.warns(
        RuntimeWarning, match=r"laya: hook .*on_predict_start.* failed: start failed"
    ):
        result = runtime.predict(
            STATE, QUESTIONS, on_predict_start=[boom, calls.append], hooks_raise=False
        )
    assert result["answers"] and len(calls) == 1


def test_failing_end_hook_after_success_loses_the_result(runtime):
    def boom(ctx):
        raise KeyError("end failed")

    with pytest.raises(KeyError, match="end failed"):
        runtime.predict(STATE, QUESTIONS, on_predict_end=boom)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = runtime.predict(STATE, QUESTIONS, on_predict_end=boom, hooks_raise=False)
    assert result["answers"] and any("end failed" in str(w.message) for w in caught)


def test_hook_failing_on_the_failure_path_is_chained(runtime):
    class Broken(BaseHook):
        def on_error(self, ctx):
            raise OSError("audit down")

        def on_predict_end(self, ctx):
            raise OSError("metrics down")

    with pytest.raises(ValueError, match="unknown type") as info:
        runtime.predict(STATE, {"q": {"type": "bool", "instructions": "x"}}, hooks=Broken())
    assert isinstance(info.value.__context__, OSError)
    assert str(info.value.__context__) == "'metrics down'" or "metrics down" in str(
        info.value.__context__
    )


def test_installed_hooks_and_timeout_validated_at_construction_and_call(runtime):
    with pytest.raises(ValueError, match="not a bool"):
        runtime.predict(STATE, QUESTIONS, hooks_timeout=True)
    with pytest.raises(TypeError, match="instances, not classes"):
        runtime.predict(STATE, QUESTIONS, hooks=Recorder)


def test_hook_timeout_applies_per_call(runtime):
    release = threading.Event()

    def slow(ctx):
        release.wait(60)

    try:
        with pytest.raises(TimeoutError, match="exceeded 0.05s"):
            runtime.predict(STATE, QUESTIONS, on_predict_start=slow, hooks_timeout=0.05)
    finally:
        release.set()


# --------------------------------------------------------------------------- predict_long table


def test_predict_long_windows_seen_by_hooks(runtime):
    recorder = Recorder()
    result = runtime.predict_long(DOCUMENT, QUESTIONS, hooks=recorder)
    start = recorder.log[0][2]
    assert len(start["states"]) == result["usage"]["windows"] > 1
    assert all(isinstance(s, str) for s in start["states"])
    assert "window" in result["answers"]["department"]


def test_predict_long_fits_one_window(runtime):
    recorder = Recorder()
    result = runtime.predict_long("short note", QUESTIONS, hooks=recorder)
    assert recorder.log[0][2]["states"] == ["short note"]
    assert result["usage"]["windows"] == 1 and "window" not in result["answers"]["urgency"]


def test_predict_long_skip_reports_zero_windows(runtime):
    cached = {
        "model": "cache",
        "answers": {"x": {"type": "noul", "noul": 1.0}},
        "usage": {"input_tokens": 0},
    }
    with pytest.warns(RuntimeWarning, match="answered the state before it was scanned"):
        result = runtime.predict_long(
            DOCUMENT, QUESTIONS, on_predict_start=lambda ctx: ctx.skip([cached])
        )
    assert result["usage"]["windows"] == 0 and "window" not in result["answers"]["x"]
    short = runtime.predict_long(
        "short", QUESTIONS, on_predict_start=lambda ctx: ctx.skip([cached])
    )
    assert short["usage"]["windows"] == 0


def test_predict_long_skip_with_one_result_per_window_is_refused(runtime):
    def per_window(ctx):
        ctx.skip([{"answers": {}}] * len(ctx.states))

    with pytest.raises(ValueError, match="takes one result for the document"):
        runtime.predict_long(DOCUMENT, QUESTIONS, on_predict_start=per_window)


def test_predict_long_replaced_scan_counts_scored_states_without_offsets(runtime):
    def keep_two(ctx):
        ctx.states = ctx.states[:2]

    result = runtime.predict_long(DOCUMENT, QUESTIONS, on_predict_start=keep_two)
    assert result["usage"]["windows"] == 2
    assert all("window" not in answer for answer in result["answers"].values())


def test_predict_long_of_a_short_state_counts_the_states_a_hook_put_there(runtime):
    def add_one(ctx):
        ctx.states = [ctx.states[0], "I want my money back"]

    result = runtime.predict_long("short note", QUESTIONS, on_predict_start=add_one)
    assert result["usage"]["windows"] == 2
    assert all("window" not in answer for answer in result["answers"].values())
    with pytest.warns(RuntimeWarning, match="left no states to score"):
        empty = runtime.predict_long(
            "short note", QUESTIONS, on_predict_start=lambda ctx: setattr(ctx, "states", [])
        )
    assert empty["answers"] == {} and empty["usage"]["windows"] == 0


def test_predict_long_empty_scan_warns_and_answers_nothing(runtime):
    def drop_all(ctx):
        ctx.states = []

    with pytest.warns(RuntimeWarning, match="left no states to score"):
        result = runtime.predict_long(DOCUMENT, QUESTIONS, on_predict_start=drop_all)
    assert result["answers"] == {} and result["usage"]["windows"] == 0


def test_predict_long_narrowed_budget_is_refused_after_the_call(runtime):
    def narrow(ctx):
        ctx.max_len = 150

    with pytest.raises(ValueError, match="after the start hooks ran"):
        runtime.predict_long(DOCUMENT, QUESTIONS, on_predict_start=narrow)
