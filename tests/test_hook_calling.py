"""How hooks are called (docs/hooks/errors.md#timeouts, laya.hooks.dispatch): implementations
resolved once per policy, a timed-out hook kept away from the call it timed out of, and the
bounded pool of workers timed hooks run on."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conftest import QUESTIONS

from laya import Router
from laya.hooks import (
    HOOK_EVENTS,
    AsyncHook,
    BaseHook,
    HookRegistry,
    PredictContext,
    default_hooks,
    dispatch,
    normalise_hooks,
    set_default_hooks,
)
from laya.hooks.dispatch import resolve
from laya.hooks.lifecycle import policy_for, run_lifecycle
from laya.hooks.views import ContextView
from laya.hooks.workers import HOOK_WORKERS, WorkerPool

STATE = "We were billed twice for March, please refund the duplicate."
WAIT = 60  # a last guard only: every wait below is released by an event


@pytest.fixture(autouse=True)
def no_default_hooks() -> Iterator[None]:
    saved = default_hooks()
    set_default_hooks()
    yield
    set_default_hooks(hooks=saved)


class Owner(HookRegistry):
    """The smallest runtime: a HookRegistry."""


def answer(state: Any) -> dict[str, Any]:
    return {"answers": {"q": str(state)}, "usage": {"input_tokens": 1, "output_tokens": 0}}


def infer(pending: list[PredictContext]) -> None:
    for ctx in pending:
        ctx.results = [answer(s) for s in ctx.states]


def contexts(*states: str) -> list[PredictContext]:
    return [PredictContext(states=[s], questions={"q": {"type": "noul"}}) for s in states]


# --------------------------------------------------------------------------- resolution


class Counted:
    """A hook that counts how often each event name is looked up on it."""

    def __init__(self) -> None:
        self.lookups: dict[str, int] = {}
        self.calls: list[str] = []

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("on_"):
            lookups = object.__getattribute__(self, "lookups")
            lookups[name] = lookups.get(name, 0) + 1
        return object.__getattribute__(self, name)

    def on_predict_start(self, ctx: PredictContext) -> None:
        self.calls.append("start")

    def on_predict_end(self, ctx: PredictContext) -> None:
        self.calls.append("end")


def test_a_policy_looks_each_event_up_once_however_often_it_fires() -> None:
    hook = Counted()
    owner = Owner(hooks=[hook])
    hook.lookups.clear()  # what validation looked at when the hook was installed
    run_lifecycle(policy_for(owner), contexts("a", "b", "c"), infer)
    assert hook.calls == ["start"] * 3 + ["end"] * 3
    # each event fired, looked up once for the call (on first use), not once per context
    assert hook.lookups == {"on_predict_start": 1, "on_predict_end": 1}


def test_a_router_batch_looks_hooks_up_per_call_not_per_request(agent: Any) -> None:
    router = Router()
    router.attach("english", agent)
    lookups = []
    for n in (1, 4):
        hook = Counted()
        requests = [{"state": STATE, "questions": QUESTIONS, "model": "english"}] * n
        assert len(router.predict_batch(requests, hooks=[hook])) == n
        assert hook.calls == ["start"] * n + ["end"] * n
        lookups.append(hook.lookups)
    assert lookups[0] == lookups[1]


def test_resolution_skips_what_would_do_nothing_and_keeps_the_order() -> None:
    log: list[str] = []

    class EndOnly(BaseHook):
        def on_predict_end(self, ctx: PredictContext) -> None:
            log.append("end-only")

    class Partial:  # a plain object implementing one event
        def on_error(self, ctx: PredictContext) -> None:
            log.append("partial")

    class AsyncEnd:
        async def on_predict_end(self, ctx: PredictContext) -> None:
            await asyncio.sleep(0)
            log.append("async")

    patched = BaseHook()
    patched.on_route = lambda ctx: log.append("instance attribute")  # type: ignore[method-assign]
    hooks = [
        EndOnly(),
        Partial(),
        AsyncHook(AsyncEnd()),
        patched,
        *normalise_hooks(on_predict_start=lambda c: log.append("start fn")),
    ]
    kinds = {event: [type(i.hook).__name__ for i in resolve(hooks, event)] for event in HOOK_EVENTS}
    assert kinds == {
        "on_predict_start": ["_StartAdapter"],
        "on_predict_end": ["EndOnly", "AsyncHook"],  # BaseHook's no-ops are not called at all
        "on_route": ["BaseHook"],
        "on_load": [],
        "on_evict": [],
        "on_error": ["Partial"],
    }
    ctx = contexts("a")[0]
    for event in HOOK_EVENTS:
        dispatch(hooks, event, ctx)
    assert log == ["start fn", "end-only", "async", "instance attribute", "partial"]


def test_an_async_hook_subclass_that_overrides_an_event_keeps_its_override() -> None:
    seen: list[str] = []

    class Inner:
        def on_predict_start(self, ctx: PredictContext) -> None:
            seen.append("inner")

    class Wrapped(AsyncHook):
        def on_predict_start(self, ctx: PredictContext) -> None:
            seen.append("override")

    run_lifecycle(policy_for(Owner(hooks=[Wrapped(Inner())])), contexts("a"), infer)
    assert seen == ["override"]


def test_names_in_warnings_and_timeouts_are_those_of_the_hook() -> None:
    release = threading.Event()

    def slow(ctx: PredictContext) -> None:
        release.wait(WAIT)

    class Broken(BaseHook):
        def on_predict_start(self, ctx: PredictContext) -> None:
            raise RuntimeError("down")

    owner = Owner(hooks=[Broken()], on_predict_start=slow, hooks_raise=False, hooks_timeout=0.05)
    try:
        with pytest.warns(RuntimeWarning) as caught:
            run_lifecycle(policy_for(owner), contexts("a"), infer)
    finally:
        release.set()
    messages = [str(w.message) for w in caught]
    assert messages[0] == "laya: hook Broken.on_predict_start failed: down"
    assert messages[1].startswith("laya: hook _StartAdapter.on_predict_start (on_predict_start=")
    assert messages[1].endswith("failed: laya: hook _StartAdapter.on_predict_start exceeded 0.05s")


# --------------------------------------------------------------------------- timed-out hooks


class LateWriter(BaseHook):
    """An end hook that writes to the context before and after blocking until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.finished = threading.Event()
        self.blocked = threading.Event()

    def on_predict_end(self, ctx: PredictContext) -> None:
        ctx.model = "written before the timeout"
        self.blocked.set()
        self.release.wait(WAIT)
        assert ctx.results is not None
        ctx.results[0]["answers"]["q"] = "changed late"
        ctx.results.append(answer("appended late"))
        ctx.states.append("late state")
        ctx.questions["late"] = {"type": "noul"}
        ctx.error = RuntimeError("late")
        ctx.late = True  # type: ignore[attr-defined]
        ctx.results = [answer("replaced late")]
        self.finished.set()


def test_a_timed_out_hook_never_reaches_the_context_or_the_result() -> None:
    hook = LateWriter()
    owner = Owner(hooks=[hook], hooks_raise=False, hooks_timeout=0.05)
    (ctx,) = contexts("a")
    with pytest.warns(RuntimeWarning, match=r"LateWriter\.on_predict_end exceeded 0\.05s"):
        run_lifecycle(policy_for(owner), [ctx], infer)
    returned = ctx.results
    assert hook.blocked.is_set() and not hook.finished.is_set()
    hook.release.set()
    assert hook.finished.wait(WAIT)
    assert returned is ctx.results and returned == [answer("a")]
    assert (ctx.states, ctx.questions) == (["a"], {"q": {"type": "noul"}})
    assert ctx.model is None and ctx.error is None and not hasattr(ctx, "late")


def test_a_timed_out_start_hook_cannot_skip_the_call_late() -> None:
    release, finished = threading.Event(), threading.Event()

    def late_skip(ctx: PredictContext) -> None:
        release.wait(WAIT)
        ctx.skip([answer("from the late hook")])
        finished.set()

    owner = Owner(on_predict_start=late_skip, hooks_raise=False, hooks_timeout=0.05)
    (ctx,) = contexts("a")
    with pytest.warns(RuntimeWarning, match="exceeded 0.05s"):
        run_lifecycle(policy_for(owner), [ctx], infer)
    release.set()
    assert finished.wait(WAIT)
    assert ctx.results == [answer("a")]


def test_the_model_answer_is_safe_from_a_hook_that_timed_out(agent: Any) -> None:
    hook = LateWriter()
    with pytest.warns(RuntimeWarning, match="exceeded 0.05s"):
        result = agent.system_one(
            STATE, QUESTIONS, hooks=[hook], hooks_timeout=0.05, hooks_raise=False
        )
    before = repr(result)
    hook.release.set()
    assert hook.finished.wait(WAIT)
    assert repr(result) == before and "late" not in result


def test_a_route_hook_reroutes_in_time_and_cannot_once_timed_out() -> None:
    release, finished = threading.Event(), threading.Event()

    class Reroute:
        def __init__(self, wait: bool) -> None:
            self.wait = wait

        def on_route(self, ctx: PredictContext) -> None:
            if self.wait:
                release.wait(WAIT)
            ctx.decision = {**(ctx.decision or {}), "model": "multilingual"}
            finished.set()

    in_time = Router(hooks=[Reroute(wait=False)], hooks_timeout=WAIT)
    assert in_time.route(STATE, model="english")["model"] == "multilingual"
    finished.clear()
    late = Router(hooks=[Reroute(wait=True)], hooks_raise=False, hooks_timeout=0.05)
    with pytest.warns(RuntimeWarning, match=r"Reroute\.on_route exceeded 0\.05s"):
        decision = late.route(STATE, model="english")
    release.set()
    assert finished.wait(WAIT) and decision["model"] == "english"


def test_a_timed_hook_that_returns_in_time_changes_the_context_as_any_hook() -> None:
    spans: dict[PredictContext, str] = {}

    class Tracer(BaseHook):
        def on_predict_start(self, ctx: PredictContext) -> None:
            assert isinstance(ctx, ContextView)
            spans[ctx] = ctx.run_id
            ctx.started_by = "tracer"  # type: ignore[attr-defined]
            ctx.states = [s.upper() for s in ctx.states]

        def on_predict_end(self, ctx: PredictContext) -> None:
            assert ctx.started_by == "tracer"  # type: ignore[attr-defined]
            assert spans.pop(ctx) == ctx.run_id  # the views of one context are one dict key
            assert ctx.results is not None
            ctx.results[0]["traced"] = True

    (ctx,) = contexts("a")
    run_lifecycle(policy_for(Owner(hooks=[Tracer()], hooks_timeout=WAIT)), [ctx], infer)
    assert ctx.states == ["A"] and ctx.results == [{**answer("A"), "traced": True}]
    assert ctx.started_by == "tracer" and spans == {}  # type: ignore[attr-defined]


def test_a_timed_hook_that_raises_in_time_keeps_what_it_wrote() -> None:
    def half_done(ctx: PredictContext) -> None:
        ctx.model = "set before raising"
        raise RuntimeError("half done")

    (ctx,) = contexts("a")
    owner = Owner(on_predict_start=half_done, hooks_raise=False, hooks_timeout=WAIT)
    with pytest.warns(RuntimeWarning, match="half done"):
        run_lifecycle(policy_for(owner), [ctx], infer)
    assert ctx.model == "set before raising" and ctx.results == [answer("a")]


def test_a_view_shares_the_runtimes_and_the_error_and_copies_the_data() -> None:
    agent, error = object(), ValueError("boom")
    ctx = PredictContext(states=[{"text": "a"}], questions={"q": {}}, agent=agent, error=error)
    ctx.span = span = object()  # type: ignore[attr-defined]
    view = ContextView(ctx)
    assert view == ctx and ctx == view and hash(view) == hash(ctx) and view.run_id == ctx.run_id
    assert view.agent is agent and view.error is error and view.span is span  # type: ignore[attr-defined]
    assert view.states == ctx.states and view.states[0] is not ctx.states[0]
    assert view.questions == ctx.questions and view.questions["q"] is not ctx.questions["q"]
    lock = threading.Lock()
    ctx.states = [lock]
    assert ContextView(ctx).states[0] is lock  # what cannot be copied is shared as it is


def test_dispatch_itself_still_hands_a_timed_hook_the_context_it_was_given() -> None:
    seen: list[PredictContext] = []
    (ctx,) = contexts("a")
    dispatch(normalise_hooks(on_predict_start=seen.append), "on_predict_start", ctx, timeout=WAIT)
    assert seen == [ctx] and seen[0] is ctx


# --------------------------------------------------------------------------- the worker pool


def blocked(release: threading.Event) -> Callable[[], None]:
    return lambda: release.wait(WAIT)


def test_the_pool_stays_bounded_when_hooks_keep_timing_out() -> None:
    pool, release = WorkerPool(size=2), threading.Event()
    try:
        for _ in range(2):
            assert not pool.wait(pool.submit(blocked(release)), 0.01)
        assert pool.stats() == {"size": 2, "threads": 2, "idle": 0, "running": 2, "stuck": 2}
        with pytest.warns(RuntimeWarning, match="all 2 hook workers are held by hooks still"):
            third = pool.submit(blocked(release))
        assert not pool.wait(third, 0.01)
        ran = threading.Event()
        with pytest.warns(RuntimeWarning, match="hook workers"):
            quick = pool.submit(ran.set)
        assert pool.wait(quick, WAIT) and ran.is_set()  # later calls still run, on time
        assert pool.stats()["stuck"] == 3
    finally:
        release.set()
    assert pool.join(WAIT)
    assert pool.stats() == {"size": 2, "threads": 2, "idle": 2, "running": 0, "stuck": 0}


def test_the_pool_reuses_its_threads() -> None:
    pool = WorkerPool(size=1)
    idents: list[int] = []
    for _ in range(5):
        job = pool.submit(lambda: idents.append(threading.get_ident()))
        assert pool.wait(job, WAIT)
        job.reraise()
    assert len(set(idents)) == 1 and pool.stats()["threads"] == 1


def test_concurrent_timed_hooks_never_wait_for_a_worker() -> None:
    pool = WorkerPool(size=1)
    together = threading.Barrier(3, timeout=WAIT)  # broken unless all three run at once
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # busy is not stuck: no warning
        jobs = [pool.submit(together.wait) for _ in range(3)]
        assert all(pool.wait(job, WAIT) for job in jobs)
    for job in jobs:
        job.reraise()
    assert pool.join(WAIT) and pool.stats()["threads"] == 1


def test_a_job_hands_back_what_it_raised() -> None:
    pool = WorkerPool(size=1)
    job = pool.submit(lambda: [][0])
    assert pool.wait(job, WAIT)
    with pytest.raises(IndexError):
        job.reraise()


@pytest.mark.parametrize("size", [0, -1, True, 1.5])
def test_a_pool_needs_a_whole_positive_size(size: Any) -> None:
    with pytest.raises(ValueError, match="size of at least 1"):
        WorkerPool(size=size)


def test_timed_hooks_of_the_process_share_the_bounded_pool() -> None:
    hooks = normalise_hooks(on_predict_start=lambda ctx: None)
    for ctx in contexts(*"abcdefghij"):
        dispatch(hooks, "on_predict_start", ctx, timeout=WAIT)
    assert HOOK_WORKERS.stats()["threads"] <= HOOK_WORKERS.size


def test_timed_and_async_hooks_work_in_a_forked_child() -> None:
    """After fork the parent's workers and loop thread are gone: the child starts its own."""
    code = """
import asyncio, os
from laya.hooks import PredictContext, dispatch, normalise_hooks

async def noop(ctx):
    await asyncio.sleep(0)

hooks = normalise_hooks(on_predict_start=noop)
ctx = PredictContext(states=["a"], questions={})

async def inside_a_loop():
    dispatch(hooks, "on_predict_start", ctx, timeout=30)  # on a worker thread
    dispatch(hooks, "on_predict_start", ctx)  # on the background loop thread

asyncio.run(inside_a_loop())  # the parent now has a parked worker and a loop thread
pid = os.fork()
if pid == 0:
    code = 1
    try:
        asyncio.run(inside_a_loop())
        code = 0
    finally:
        os._exit(code)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=WAIT
    )
    assert done.returncode == 0, done.stderr
