"""One focused test per rule of the hooks contract (spec/hooks.md §1-§8) that needs no model.

Everything here runs against ``laya.hooks`` and ``laya.hooks.lifecycle`` with plain Python callables
standing in for inference, so the whole file runs in a couple of seconds.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import laya
from laya import hooks as hooks_module
from laya.hooks import (
    HOOK_EVENTS,
    AsyncHook,
    BaseHook,
    HookRegistry,
    PredictContext,
    add_default_hook,
    aggregate_usage,
    clear_default_hooks,
    compose_hooks,
    default_hooks,
    dispatch,
    normalise_hooks,
    run_coroutine_sync,
    set_default_hooks,
    validate_timeout,
)
from laya.hooks.lifecycle import HookPolicy, policy_for, run_lifecycle

# --------------------------------------------------------------------------- helpers


@pytest.fixture(autouse=True)
def restore_default_hooks() -> Iterator[None]:
    """Every test leaves the process-wide defaults as it found them."""
    saved = default_hooks()
    yield
    set_default_hooks(hooks=saved)


class Owner(HookRegistry):
    """The smallest runtime: a HookRegistry with the constructor arguments every runtime takes."""


class Recorder(BaseHook):
    """Appends ``(name, event)`` for every event it sees, plus what it saw on the context."""

    def __init__(self, name: str, log: list[tuple[str, str]]) -> None:
        self.name = name
        self.log = log
        self.seen: dict[str, dict[str, Any]] = {}

    def _record(self, event: str, ctx: PredictContext) -> None:
        self.log.append((self.name, event))
        self.seen[event] = {
            "results": ctx.results,
            "usage": ctx.usage,
            "elapsed_ms": ctx.elapsed_ms,
            "error": ctx.error,
            "run_id": ctx.run_id,
        }

    def on_predict_start(self, ctx: PredictContext) -> None:
        self._record("on_predict_start", ctx)

    def on_predict_end(self, ctx: PredictContext) -> None:
        self._record("on_predict_end", ctx)

    def on_error(self, ctx: PredictContext) -> None:
        self._record("on_error", ctx)


class Raising(BaseHook):
    """Raises ``exc`` from the events named in ``on``."""

    def __init__(self, exc: BaseException, *on: str) -> None:
        self.exc = exc
        self.on = set(on)

    def _maybe(self, event: str) -> None:
        if event in self.on:
            raise self.exc

    def on_predict_start(self, ctx: PredictContext) -> None:
        self._maybe("on_predict_start")

    def on_predict_end(self, ctx: PredictContext) -> None:
        self._maybe("on_predict_end")

    def on_error(self, ctx: PredictContext) -> None:
        self._maybe("on_error")


def ctx_for(*states: Any) -> PredictContext:
    """A context over ``states`` with one trivial question."""
    return PredictContext(states=list(states), questions={"q": {"type": "noul"}})


def answer(state: Any, tokens: int = 2) -> dict[str, Any]:
    """A result dict shaped like the runtime's, with a usage block."""
    return {"answers": {"q": str(state)}, "usage": {"input_tokens": tokens, "output_tokens": 0}}


def echo_infer(calls: list[list[PredictContext]]) -> Callable[[list[PredictContext]], None]:
    """An infer step that answers every pending context and records what it was given."""

    def infer(pending: list[PredictContext]) -> None:
        calls.append(list(pending))
        for ctx in pending:
            ctx.results = [answer(s) for s in ctx.states]

    return infer


def run_one(owner: Owner, ctx: PredictContext, infer: Callable, **call: Any) -> None:
    """Run the single-context lifecycle the way Agent.predict_batch does."""
    run_lifecycle(policy_for(owner, **call), [ctx], infer)


# --------------------------------------------------------------------------- §1 PredictContext


def test_context_defaults() -> None:
    before = time.perf_counter()
    ctx = PredictContext(states=["s"], questions={"q": {}})
    assert (ctx.states, ctx.questions) == (["s"], {"q": {}})
    assert len(ctx.run_id) == 32 and int(ctx.run_id, 16) >= 0
    for name in ("results", "decision", "model", "agent", "router", "max_len", "head_max_len"):
        assert getattr(ctx, name) is None, name
    assert (ctx.usage, ctx.elapsed_ms, ctx.error) == (None, None, None)
    assert before <= ctx.started_at <= time.perf_counter()
    with pytest.raises(TypeError):
        PredictContext(states=["s"])  # type: ignore[call-arg]


def test_context_identity_equality_and_hash() -> None:
    a, b = ctx_for("s"), ctx_for("s")
    b.run_id = a.run_id
    b.started_at = a.started_at
    assert a == a and a != b
    assert len({a, b, a}) == 2
    assert {a: 1}[a] == 1


def test_run_id_unique_per_context() -> None:
    assert len({ctx_for("s").run_id for _ in range(2000)}) == 2000


@pytest.mark.parametrize("n_states, n_results", [(3, 3), (3, 1), (1, 1), (0, 0)])
def test_skip_accepts_one_or_one_per_state(n_states: int, n_results: int) -> None:
    ctx = ctx_for(*range(n_states))
    results = [answer(i) for i in range(n_results)]
    ctx.skip(results)
    assert ctx.results is results


@pytest.mark.parametrize("n_states, n_results", [(3, 2), (3, 0), (2, 3), (1, 2)])
def test_skip_rejects_other_counts(n_states: int, n_results: int) -> None:
    ctx = ctx_for(*range(n_states))
    with pytest.raises(
        ValueError, match=rf"one per state in ctx.states \({n_states}\); got {n_results}"
    ):
        ctx.skip([answer(i) for i in range(n_results)])
    assert ctx.results is None


# --------------------------------------------------------------------------- §2 protocol


def test_hook_events_order() -> None:
    assert HOOK_EVENTS == (
        "on_predict_start",
        "on_predict_end",
        "on_route",
        "on_load",
        "on_evict",
        "on_error",
    )
    assert laya.HOOK_EVENTS is HOOK_EVENTS


def test_base_hook_is_a_no_op_for_every_event() -> None:
    hook = BaseHook()
    for event in HOOK_EVENTS:
        assert getattr(hook, event)(ctx_for("s")) is None


def test_normalise_orders_objects_then_start_then_end() -> None:
    a, b = BaseHook(), BaseHook()
    seen: list[str] = []
    out = normalise_hooks(
        hooks=[a, b],
        on_predict_start=[lambda c: seen.append("s1"), lambda c: seen.append("s2")],
        on_predict_end=lambda c: seen.append("e1"),
    )
    assert out[:2] == [a, b] and len(out) == 5
    ctx = ctx_for("s")
    for hook in out[2:]:
        for event in ("on_predict_start", "on_predict_end"):
            method = getattr(hook, event, None)
            if method is not None:
                method(ctx)
    assert seen == ["s1", "s2", "e1"]
    assert not hasattr(out[2], "on_predict_end") and not hasattr(out[4], "on_predict_start")


def test_normalise_empty_and_single() -> None:
    hook = BaseHook()
    assert normalise_hooks() == normalise_hooks(hooks=[]) == normalise_hooks(hooks=()) == []
    assert normalise_hooks(hooks=hook) == [hook]
    assert normalise_hooks(hooks=(hook, hook)) == [hook, hook]


def test_normalise_rejects_a_class() -> None:
    with pytest.raises(TypeError, match=r"instances, not classes.*BaseHook.*Instantiate"):
        normalise_hooks(hooks=[BaseHook])


class _Nothing:
    pass


def _bare(ctx: PredictContext) -> None:
    pass


@pytest.mark.parametrize(
    "entry, type_name", [(_Nothing(), "_Nothing"), (_bare, "function"), ({BaseHook()}, "set")]
)
def test_normalise_rejects_an_object_without_events(entry: Any, type_name: str) -> None:
    with pytest.raises(TypeError) as info:
        normalise_hooks(hooks=[entry])
    message = str(info.value)
    assert "at least one of on_predict_start, on_predict_end" in message
    assert f"got {type_name}" in message
    assert "on_predict_start=" in message  # names the fix


def test_normalise_rejects_a_non_callable_event_attribute() -> None:
    class Broken:
        on_predict_end = 3

    with pytest.raises(TypeError, match=r"Broken\.on_predict_end must be callable, got int"):
        normalise_hooks(hooks=Broken())


def test_normalise_accepts_an_event_attribute_set_to_none() -> None:
    class Partial:
        on_predict_start = None

        def on_predict_end(self, ctx: PredictContext) -> None:
            pass

    hook = Partial()
    assert normalise_hooks(hooks=hook) == [hook]
    dispatch([hook], "on_predict_start", ctx_for("s"))  # skipped, no error


@pytest.mark.parametrize("arg", ["on_predict_start", "on_predict_end"])
@pytest.mark.parametrize("value, type_name", [(5, "int"), ("log", "str"), (BaseHook, "type")])
def test_normalise_rejects_non_callable_start_end(arg: str, value: Any, type_name: str) -> None:
    with pytest.raises(TypeError, match=rf"{arg} must be a callable.*got {type_name}.*hooks="):
        normalise_hooks(**{arg: [lambda c: None, value]})


# --------------------------------------------------------------------------- dispatch


def test_dispatch_calls_hooks_in_order_and_skips_missing_events() -> None:
    log: list[tuple[str, str]] = []

    class RouteOnly:
        def on_route(self, ctx: PredictContext) -> None:
            log.append(("route-only", "on_route"))

    hooks = [Recorder("a", log), RouteOnly(), Recorder("b", log)]
    dispatch(hooks, "on_predict_start", ctx_for("s"))
    assert log == [("a", "on_predict_start"), ("b", "on_predict_start")]


def test_dispatch_rejects_an_unknown_event() -> None:
    with pytest.raises(ValueError, match="unknown hook event 'on_finish'"):
        dispatch([BaseHook()], "on_finish", ctx_for("s"))


def test_dispatch_raise_policy_first_failure_propagates() -> None:
    log: list[tuple[str, str]] = []
    boom = RuntimeError("bad")
    with pytest.raises(RuntimeError) as info:
        dispatch(
            [Recorder("a", log), Raising(boom, "on_predict_start"), Recorder("c", log)],
            "on_predict_start",
            ctx_for("s"),
        )
    assert info.value is boom
    assert log == [("a", "on_predict_start")]


def test_dispatch_warn_policy_warns_and_continues() -> None:
    log: list[tuple[str, str]] = []
    hooks = [Raising(RuntimeError("bad"), "on_predict_start"), Recorder("c", log)]
    with pytest.warns(RuntimeWarning) as caught:
        dispatch(hooks, "on_predict_start", ctx_for("s"), raise_errors=False)
    assert [str(w.message) for w in caught] == ["laya: hook Raising.on_predict_start failed: bad"]
    assert log == [("c", "on_predict_start")]


@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit])
def test_non_exception_errors_always_propagate(exc_type: type[BaseException]) -> None:
    log: list[tuple[str, str]] = []
    hooks = [Raising(exc_type(), "on_predict_end"), Recorder("c", log)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(exc_type):
            dispatch(hooks, "on_predict_end", ctx_for("s"), raise_errors=False)
    assert log == []


def test_lock_is_reentrant_for_a_hook_that_calls_back() -> None:
    owner = Owner(hooks_concurrent=False)
    inner: list[str] = []

    class CallsBack:
        def on_predict_start(self, ctx: PredictContext) -> None:
            dispatch([Recorder("inner", [])], "on_predict_end", ctx, lock=owner.hooks_lock)
            inner.append("done")

    assert isinstance(owner.hooks_lock, type(threading.RLock()))
    assert Owner().hooks_lock is None
    dispatch([CallsBack()], "on_predict_start", ctx_for("s"), lock=owner.hooks_lock)
    assert inner == ["done"]


class AskedLock:
    """A lock that counts the threads that have asked for it (before they get it)."""

    def __init__(self, lock: Any) -> None:
        self.lock = lock
        self.asked = 0
        self.changed = threading.Condition()

    def __enter__(self) -> Any:
        with self.changed:
            self.asked += 1
            self.changed.notify_all()
        return self.lock.__enter__()

    def __exit__(self, *exc: Any) -> Any:
        return self.lock.__exit__(*exc)

    def wait_for_askers(self, count: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.asked >= count, timeout=60)


def _peak_concurrency(lock: Any, hold: Callable[[], None]) -> int:
    """Dispatch a hook from four threads at once (it calls ``hold`` while it runs); return how
    many ran at the same time."""
    active, peak = [0], [0]
    guard = threading.Lock()

    class Slow:
        def on_predict_start(self, ctx: PredictContext) -> None:
            with guard:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            hold()
            with guard:
                active[0] -= 1

    threads = [
        threading.Thread(
            target=dispatch, args=([Slow()], "on_predict_start", ctx_for(i)), kwargs={"lock": lock}
        )
        for i in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    return peak[0]


def test_lock_serialises_hooks_of_concurrent_calls() -> None:
    lock = AskedLock(Owner(hooks_concurrent=False).hooks_lock)
    # the first hook runs until all four calls have asked for the lock: the others wait for it
    assert _peak_concurrency(lock, hold=lambda: lock.wait_for_askers(4)) == 1
    together = threading.Barrier(4, timeout=60)  # broken (an error) unless all four meet in it
    assert _peak_concurrency(None, hold=together.wait) == 4


# --------------------------------------------------------------------------- timeouts


def test_timeout_raises_and_the_hook_keeps_running() -> None:
    release, finished = threading.Event(), threading.Event()

    class Slow:
        def on_predict_start(self, ctx: PredictContext) -> None:
            release.wait(60)
            ctx.model = "written late"
            finished.set()

    ctx = ctx_for("s")
    with pytest.raises(TimeoutError, match=r"Slow\.on_predict_start exceeded 0\.05s"):
        dispatch([Slow()], "on_predict_start", ctx, timeout=0.05)
    assert not finished.is_set()  # raised while the hook still runs
    release.set()
    assert finished.wait(60) and ctx.model == "written late"


def test_timeout_under_warn_policy_warns_and_continues() -> None:
    log: list[tuple[str, str]] = []
    release = threading.Event()

    class Slow:
        def on_predict_end(self, ctx: PredictContext) -> None:
            release.wait(60)

    try:
        with pytest.warns(RuntimeWarning, match=r"Slow\.on_predict_end failed: .*exceeded 0\.05s"):
            dispatch(
                [Slow(), Recorder("b", log)],
                "on_predict_end",
                ctx_for("s"),
                raise_errors=False,
                timeout=0.05,
            )
    finally:
        release.set()
    assert log == [("b", "on_predict_end")]


TENANT: contextvars.ContextVar[str] = contextvars.ContextVar("tenant", default="none")


def test_timed_hook_sees_caller_contextvars_and_changes_do_not_leak() -> None:
    seen: list[tuple[str, str]] = []

    class Tag:
        def on_predict_start(self, ctx: PredictContext) -> None:
            seen.append((TENANT.get(), threading.current_thread().name))
            TENANT.set("changed by the hook")

    token = TENANT.set("acme")
    try:
        dispatch([Tag()], "on_predict_start", ctx_for("s"), timeout=1)
        assert TENANT.get() == "acme"
    finally:
        TENANT.reset(token)
    assert seen == [("acme", "laya-hook-timeout")]


def test_timed_hook_exception_reaches_the_caller() -> None:
    boom = ValueError("from the worker")
    with pytest.raises(ValueError) as info:
        dispatch([Raising(boom, "on_error")], "on_error", ctx_for("s"), timeout=1)
    assert info.value is boom


# --------------------------------------------------------------------------- async


class AsyncRecorder:
    """A hook whose events are coroutines; records after an await so completion is visible."""

    def __init__(self) -> None:
        self.done: list[str] = []

    async def on_predict_end(self, ctx: PredictContext) -> None:
        await asyncio.sleep(0.001)
        self.done.append(threading.current_thread().name)


def test_dispatch_runs_awaitable_results_to_completion() -> None:
    hook = AsyncRecorder()
    finished: list[str] = []

    async def end(ctx: PredictContext) -> None:
        await asyncio.sleep(0.001)
        finished.append(ctx.run_id)

    ctx = ctx_for("s")
    dispatch([hook, *normalise_hooks(on_predict_end=end)], "on_predict_end", ctx)
    assert hook.done == [threading.current_thread().name] and finished == [ctx.run_id]


def test_dispatch_from_inside_a_running_loop() -> None:
    hook = AsyncRecorder()

    async def caller() -> None:
        dispatch([hook], "on_predict_end", ctx_for("s"))

    asyncio.run(caller())
    assert hook.done == ["laya-async-hooks"]


async def _where() -> tuple[str, asyncio.AbstractEventLoop]:
    await asyncio.sleep(0)
    return threading.current_thread().name, asyncio.get_running_loop()


def test_run_coroutine_sync_without_a_loop() -> None:
    name, _ = run_coroutine_sync(_where())
    assert name == threading.current_thread().name


def test_run_coroutine_sync_inside_a_running_loop() -> None:
    async def caller() -> tuple[str, bool]:
        name, loop = run_coroutine_sync(_where())
        return name, loop is asyncio.get_running_loop()

    assert asyncio.run(caller()) == ("laya-async-hooks", False)


@pytest.fixture
def loop_thread() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop running in its own thread, stopped and closed afterwards."""
    loop = asyncio.new_event_loop()
    running = threading.Event()
    loop.call_soon(running.set)  # the loop's first callback: it runs
    thread = threading.Thread(target=loop.run_forever, name="user-loop", daemon=True)
    thread.start()
    assert running.wait(60)
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(2)
    loop.close()


def test_run_coroutine_sync_on_an_explicit_loop(loop_thread: asyncio.AbstractEventLoop) -> None:
    name, loop = run_coroutine_sync(_where(), loop=loop_thread)
    assert (name, loop) == ("user-loop", loop_thread)


def test_run_coroutine_sync_rejects_a_stopped_loop_and_closes_the_coroutine() -> None:
    loop = asyncio.new_event_loop()
    coro = _where()
    try:
        with pytest.raises(ValueError, match="the loop passed is not running"):
            run_coroutine_sync(coro, loop=loop)
    finally:
        loop.close()
    assert inspect.getcoroutinestate(coro) == inspect.CORO_CLOSED


def test_run_coroutine_sync_rejects_the_callers_own_loop() -> None:
    coro = _where()

    async def caller() -> None:
        run_coroutine_sync(coro, loop=asyncio.get_running_loop())

    with pytest.raises(
        ValueError, match="running in the calling thread; blocking on it would deadlock"
    ):
        asyncio.run(caller())
    assert inspect.getcoroutinestate(coro) == inspect.CORO_CLOSED


def test_async_hook_rejects_a_class_and_an_object_without_events() -> None:
    with pytest.raises(TypeError, match=r"instance, not a class.*AsyncRecorder"):
        AsyncHook(AsyncRecorder)
    with pytest.raises(TypeError, match=r"at least one of on_predict_start.*got _Nothing"):
        AsyncHook(_Nothing())


def test_async_hook_in_sync_and_async_callers(loop_thread: asyncio.AbstractEventLoop) -> None:
    inner = AsyncRecorder()
    hook = AsyncHook(inner)
    assert repr(hook).startswith("AsyncHook(<") and normalise_hooks(hooks=hook) == [hook]
    dispatch([hook], "on_predict_end", ctx_for("s"))
    dispatch([hook], "on_predict_start", ctx_for("s"))  # not implemented by inner: no-op

    async def caller() -> None:
        dispatch([hook], "on_predict_end", ctx_for("s"))

    asyncio.run(caller())
    dispatch([AsyncHook(inner, loop=loop_thread)], "on_predict_end", ctx_for("s"))
    assert inner.done == [threading.current_thread().name, "laya-async-hooks", "user-loop"]


# --------------------------------------------------------------------------- §3 registry


def test_add_hook_returns_self_and_rejects_plain_callables() -> None:
    a, b, c = BaseHook(), BaseHook(), BaseHook()
    owner = Owner(hooks=[a])
    assert owner.add_hook(b).add_hook([c]) is owner
    assert list(owner.hooks) == [a, b, c]
    with pytest.raises(TypeError, match="on_predict_start="):
        owner.add_hook(_bare)
    assert list(owner.hooks) == [a, b, c]


def test_remove_hook_by_identity() -> None:
    class Same(BaseHook):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = object.__hash__

    a, twin = Same(), Same()
    owner = Owner(hooks=[a])
    assert owner.remove_hook(twin) is False and list(owner.hooks) == [a]
    assert owner.remove_hook(a) is True and list(owner.hooks) == []
    assert owner.remove_hook(a) is False


def test_hooks_installed_restore_rule() -> None:
    h1, h2, h3 = BaseHook(), BaseHook(), BaseHook()
    owner = Owner(hooks=[h1])
    with owner.hooks_installed(h1, [h2]) as yielded:
        assert yielded is owner
        with owner.hooks_installed(h2):
            owner.add_hook(h3)
            assert list(owner.hooks) == [h1, h1, h2, h2, h3]
        assert list(owner.hooks) == [h1, h1, h2, h3]
    assert list(owner.hooks) == [h1, h3]


def test_hooks_installed_restores_when_the_block_raises() -> None:
    h1, h2 = BaseHook(), BaseHook()
    owner = Owner(hooks=[h1])
    with pytest.raises(RuntimeError, match="inside"), owner.hooks_installed(h2):
        assert list(owner.hooks) == [h1, h2]
        raise RuntimeError("inside")
    assert list(owner.hooks) == [h1]


def test_add_hook_during_a_call_does_not_change_that_call() -> None:
    log: list[tuple[str, str]] = []
    owner = Owner(hooks=[Recorder("installed", log)])
    late = Recorder("late", log)

    def infer(pending: list[PredictContext]) -> None:
        owner.add_hook(late)
        for ctx in pending:
            ctx.results = [answer(s) for s in ctx.states]

    run_one(owner, ctx_for("s"), infer)
    assert log == [("installed", "on_predict_start"), ("installed", "on_predict_end")]
    log.clear()
    run_one(owner, ctx_for("s"), echo_infer([]))
    assert ("late", "on_predict_start") in log


# --------------------------------------------------------------------------- defaults


def test_defaults_set_add_clear_copy() -> None:
    a, b = BaseHook(), BaseHook()
    set_default_hooks(hooks=[a], on_predict_start=_bare)
    current = default_hooks()
    assert current[0] is a and len(current) == 2 and current[1].on_predict_start
    current.clear()
    assert len(default_hooks()) == 2  # a copy
    add_default_hook(b)
    assert default_hooks()[-1] is b and len(default_hooks()) == 3
    set_default_hooks(hooks=b)
    assert default_hooks() == [b]  # replaces
    with pytest.raises(TypeError):
        add_default_hook(_bare)
    clear_default_hooks()
    assert default_hooks() == []
    assert (
        laya.set_default_hooks is set_default_hooks and hooks_module.default_hooks is default_hooks
    )


def test_defaults_come_first_and_are_read_at_call_time() -> None:
    log: list[tuple[str, str]] = []
    owner = Owner(hooks=[Recorder("installed", log)])  # built before the default exists
    set_default_hooks(hooks=[Recorder("default", log)])
    run_one(
        owner,
        ctx_for("s"),
        echo_infer([]),
        hooks=Recorder("per-call", log),
        on_predict_start=lambda c: log.append(("callable", "on_predict_start")),
    )
    starts = [name for name, event in log if event == "on_predict_start"]
    assert starts == ["default", "installed", "per-call", "callable"]


def test_compose_hooks_order() -> None:
    d, i, p = BaseHook(), BaseHook(), BaseHook()
    add_default_hook(d)
    composed = compose_hooks((i,), hooks=[p], on_predict_start=_bare, on_predict_end=_bare)
    assert composed[:3] == [d, i, p]
    assert [type(h).__name__ for h in composed[3:]] == ["_StartAdapter", "_EndAdapter"]
    assert compose_hooks((i,), hooks=None) == compose_hooks((i,), hooks=[]) == [d, i]


# --------------------------------------------------------------------------- §8 helpers


def test_aggregate_usage() -> None:
    results = [
        {"usage": {"input_tokens": 3, "output_tokens": None}},
        {"usage": None},
        {},
        {"usage": {"input_tokens": "4"}},
        {"usage": [1]},
        {"usage": {"input_tokens": float("nan"), "output_tokens": "many"}},
        {"usage": {"input_tokens": float("inf"), "output_tokens": {}}},
    ]
    assert aggregate_usage(results) == {"input_tokens": 7, "output_tokens": 0}
    assert aggregate_usage([]) == aggregate_usage(None) == {"input_tokens": 0, "output_tokens": 0}


@pytest.mark.parametrize(
    "bad", [True, False, 0, -1, -0.5, float("nan"), float("inf"), float("-inf"), "abc"]
)
def test_validate_timeout_rejects(bad: Any) -> None:
    with pytest.raises(ValueError, match="hooks_timeout must be a positive finite number or None"):
        validate_timeout(bad)


def test_validate_timeout_accepts() -> None:
    assert validate_timeout(None) is None
    assert validate_timeout("2") == 2.0 and validate_timeout(0.05) == 0.05


def test_a_timeout_too_large_to_count_is_a_value_error_and_a_huge_one_means_no_limit() -> None:
    with pytest.raises(ValueError, match="hooks_timeout must be a positive finite number"):
        validate_timeout(10**400)
    seen: list[str] = []
    ctx = PredictContext(states=["a"], questions={})
    hooks = normalise_hooks(on_predict_start=lambda c: seen.append("ran"))
    dispatch(hooks, "on_predict_start", ctx, timeout=1e308)
    assert seen == ["ran"]


@pytest.mark.parametrize("bad", [0, -1, True, float("inf")])
def test_dispatch_checks_its_timeout_like_hooks_timeout(bad: Any) -> None:
    ctx = PredictContext(states=["a"], questions={})
    with pytest.raises(ValueError, match="hooks_timeout must be a positive finite number"):
        dispatch([], "on_predict_start", ctx, timeout=bad)


def test_policy_resolves_instance_values_and_validates_before_events() -> None:
    owner = Owner(hooks_raise=False, hooks_timeout=3)
    policy = policy_for(owner)
    assert (policy.raise_errors, policy.timeout, policy.lock) == (False, 3.0, None)
    assert policy_for(owner, hooks_raise=True, hooks_timeout="0.5").timeout == 0.5
    assert policy_for(owner, hooks_raise=True).raise_errors is True
    with pytest.raises(ValueError, match="hooks_timeout"):
        policy_for(owner, hooks_timeout=0)
    with pytest.raises(TypeError, match="instances, not classes"):
        policy_for(owner, hooks=[BaseHook])
    with pytest.raises(ValueError, match="hooks_timeout"):
        Owner(hooks_timeout=float("nan"))


# --------------------------------------------------------------------------- §6 lifecycle


def test_lifecycle_start_infer_end_order() -> None:
    log: list[tuple[str, str]] = []
    owner = Owner(hooks=[Recorder("h", log)])
    ctx = ctx_for("a", "b")

    def infer(pending: list[PredictContext]) -> None:
        log.append(("infer", ",".join(pending[0].states)))
        pending[0].results = [answer(s, 5) for s in pending[0].states]

    run_one(owner, ctx, infer)
    assert log == [("h", "on_predict_start"), ("infer", "a,b"), ("h", "on_predict_end")]
    assert ctx.usage == {"input_tokens": 10, "output_tokens": 0}
    assert ctx.elapsed_ms is not None and ctx.elapsed_ms >= 0 and ctx.error is None


def test_lifecycle_infer_sees_what_start_hooks_left() -> None:
    def rewrite(ctx: PredictContext) -> None:
        ctx.states = [s.upper() for s in ctx.states]
        ctx.max_len = 64

    calls: list[list[PredictContext]] = []
    ctx = ctx_for("a")
    run_one(Owner(), ctx, echo_infer(calls), on_predict_start=rewrite)
    assert calls[0][0].states == ["A"] and ctx.max_len == 64
    assert ctx.results == [answer("A")]


def test_lifecycle_skip_suppresses_inference_and_end_still_runs() -> None:
    log: list[tuple[str, str]] = []
    cached = [answer("cached", 0)]
    calls: list[list[PredictContext]] = []
    ctx = ctx_for("a")
    run_one(
        Owner(hooks=[Recorder("h", log)]),
        ctx,
        echo_infer(calls),
        on_predict_start=lambda c: c.skip(cached),
    )
    assert calls == []
    assert log == [("h", "on_predict_start"), ("h", "on_predict_end")]
    assert ctx.results is cached and ctx.usage == {"input_tokens": 0, "output_tokens": 0}


def test_lifecycle_end_hooks_may_replace_results() -> None:
    ctx = ctx_for("a")
    run_one(
        Owner(), ctx, echo_infer([]), on_predict_end=lambda c: setattr(c, "results", ["replaced"])
    )
    assert ctx.results == ["replaced"]


def test_lifecycle_start_hook_raising() -> None:
    log: list[tuple[str, str]] = []
    boom = RuntimeError("start failed")
    recorder = Recorder("h", log)
    calls: list[list[PredictContext]] = []
    owner = Owner(hooks=[Raising(boom, "on_predict_start"), recorder])
    ctx = ctx_for("a")
    with pytest.raises(RuntimeError) as info:
        run_one(owner, ctx, echo_infer(calls))
    assert info.value is boom and ctx.error is boom and calls == []
    assert log == [("h", "on_error"), ("h", "on_predict_end")]  # its own start was skipped
    assert recorder.seen["on_predict_end"]["error"] is boom


def test_lifecycle_start_hook_raising_under_warn_policy_runs_inference() -> None:
    calls: list[list[PredictContext]] = []
    owner = Owner(
        hooks=[Raising(RuntimeError("start failed"), "on_predict_start")], hooks_raise=False
    )
    ctx = ctx_for("a")
    with pytest.warns(
        RuntimeWarning, match="laya: hook Raising.on_predict_start failed: start failed"
    ):
        run_one(owner, ctx, echo_infer(calls))
    assert len(calls) == 1 and ctx.results == [answer("a")] and ctx.error is None


def test_lifecycle_bad_skip_count_is_a_hook_error() -> None:
    owner = Owner()
    with pytest.raises(ValueError, match="ctx.skip"):
        run_one(
            owner,
            ctx_for("a", "b", "c"),
            echo_infer([]),
            on_predict_start=lambda c: c.skip([{}, {}]),
        )
    calls: list[list[PredictContext]] = []
    with pytest.warns(RuntimeWarning, match="ctx.skip"):
        run_one(
            owner,
            ctx_for("a", "b", "c"),
            echo_infer(calls),
            on_predict_start=lambda c: c.skip([{}, {}]),
            hooks_raise=False,
        )
    assert len(calls) == 1


def test_lifecycle_end_hook_raising_after_success() -> None:
    boom = KeyError("end failed")
    log: list[tuple[str, str]] = []
    owner = Owner(hooks=[Raising(boom, "on_predict_end"), Recorder("later", log)])
    with pytest.raises(KeyError) as info:
        run_one(owner, ctx_for("a"), echo_infer([]))
    assert info.value is boom
    assert log == [("later", "on_predict_start")]  # later end hook skipped, no on_error
    owner.hooks_raise = False
    ctx = ctx_for("a")
    with pytest.warns(RuntimeWarning, match="Raising.on_predict_end failed"):
        run_one(owner, ctx, echo_infer([]))
    assert ctx.results == [answer("a")]


@pytest.mark.parametrize("event", ["on_error", "on_predict_end"])
def test_lifecycle_hook_failing_on_the_failure_path_is_chained(event: str) -> None:
    original = ValueError("inference failed")
    hook_exc = RuntimeError(f"{event} hook failed")
    log: list[tuple[str, str]] = []

    def infer(pending: list[PredictContext]) -> None:
        raise original

    owner = Owner(hooks=[Raising(hook_exc, event), Recorder("later", log)])
    with pytest.raises(ValueError) as info:
        run_one(owner, ctx_for("a"), infer)
    assert info.value is original and info.value.__context__ is hook_exc
    assert info.value.__cause__ is None
    if event == "on_error":  # remaining on_error hooks skipped, end still runs for everyone
        assert log == [("later", "on_predict_start"), ("later", "on_predict_end")]
    owner.hooks_raise = False
    fresh = ValueError("again")

    def infer_again(pending: list[PredictContext]) -> None:
        raise fresh

    with (
        pytest.warns(RuntimeWarning, match=f"Raising.{event} failed"),
        pytest.raises(ValueError) as info,
    ):
        run_one(owner, ctx_for("a"), infer_again)
    assert info.value is fresh and info.value.__context__ is None


def test_lifecycle_inference_error_with_non_exception() -> None:
    log: list[tuple[str, str]] = []

    def infer(pending: list[PredictContext]) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_one(Owner(hooks=[Recorder("h", log)]), ctx_for("a"), infer)
    assert log == [("h", "on_predict_start"), ("h", "on_error"), ("h", "on_predict_end")]


def test_lifecycle_timing_and_usage_on_each_path() -> None:
    log: list[tuple[str, str]] = []
    recorder = Recorder("h", log)

    def infer(pending: list[PredictContext]) -> None:
        raise ValueError("no")

    with pytest.raises(ValueError):
        run_one(Owner(hooks=[recorder]), ctx_for("a"), infer)
    assert recorder.seen["on_error"]["elapsed_ms"] is None
    assert recorder.seen["on_error"]["usage"] is None
    assert recorder.seen["on_predict_end"]["elapsed_ms"] is not None
    assert recorder.seen["on_predict_end"]["usage"] is None
    assert recorder.seen["on_predict_end"]["results"] is None

    run_one(Owner(hooks=[recorder]), ctx_for("a"), echo_infer([]))
    assert recorder.seen["on_predict_end"]["usage"] == {"input_tokens": 2, "output_tokens": 0}
    assert recorder.seen["on_predict_end"]["elapsed_ms"] >= 0
    assert recorder.seen["on_predict_start"]["run_id"] == recorder.seen["on_predict_end"]["run_id"]


def test_lifecycle_skipped_then_failed_start_keeps_results() -> None:
    recorder = Recorder("h", [])
    cached = [answer("a", 4)]
    hook_exc = RuntimeError("later start hook")
    skipper = normalise_hooks(on_predict_start=lambda c: c.skip(cached))[0]
    owner = Owner(hooks=[skipper, recorder])
    with pytest.raises(RuntimeError) as info:
        run_one(owner, ctx_for("a"), echo_infer([]), hooks=Raising(hook_exc, "on_predict_start"))
    assert info.value is hook_exc
    assert recorder.seen["on_error"]["results"] is cached
    assert recorder.seen["on_error"]["usage"] is None
    assert recorder.seen["on_predict_end"]["usage"] == {"input_tokens": 4, "output_tokens": 0}


def test_lifecycle_many_contexts_share_one_inference_and_end_in_reverse() -> None:
    log: list[tuple[str, str]] = []
    contexts = [ctx_for(s) for s in "abc"]
    names = {id(c): c.states[0] for c in contexts}

    class Tracer:
        def on_predict_start(self, ctx: PredictContext) -> None:
            log.append(("start", names[id(ctx)]))
            if ctx.states == ["b"]:
                ctx.skip([answer("cached")])

        def on_predict_end(self, ctx: PredictContext) -> None:
            log.append(("end", names[id(ctx)]))

    calls: list[list[PredictContext]] = []
    run_lifecycle(policy_for(Owner(hooks=[Tracer()])), contexts, echo_infer(calls))
    assert log == [
        ("start", "a"),
        ("start", "b"),
        ("start", "c"),
        ("end", "c"),
        ("end", "b"),
        ("end", "a"),
    ]
    assert calls == [[contexts[0], contexts[2]]]
    assert contexts[1].results == [answer("cached")]
    assert len({c.run_id for c in contexts}) == 3


def test_lifecycle_many_contexts_failing_start_ends_every_started_context() -> None:
    log: list[tuple[str, str]] = []
    contexts = [ctx_for(s) for s in "abcd"]
    names = {id(c): c.states[0] for c in contexts}
    boom = RuntimeError("start of c failed")

    class Tracer:
        def on_predict_start(self, ctx: PredictContext) -> None:
            log.append(("start", names[id(ctx)]))
            if ctx.states == ["c"]:
                raise boom

        def on_error(self, ctx: PredictContext) -> None:
            log.append(("error", names[id(ctx)]))

        def on_predict_end(self, ctx: PredictContext) -> None:
            log.append(("end", names[id(ctx)]))

    calls: list[list[PredictContext]] = []
    with pytest.raises(RuntimeError) as info:
        run_lifecycle(policy_for(Owner(hooks=[Tracer()])), contexts, echo_infer(calls))
    assert info.value is boom and calls == []
    assert log == [
        ("start", "a"), ("start", "b"), ("start", "c"),
        ("error", "c"), ("end", "c"), ("error", "b"), ("end", "b"), ("error", "a"), ("end", "a"),
    ]  # fmt: skip
    assert [c.error for c in contexts] == [boom, boom, boom, None]
    assert contexts[3].elapsed_ms is None


def test_lifecycle_policy_fire_uses_its_own_settings() -> None:
    log: list[tuple[str, str]] = []
    policy = HookPolicy(
        hooks=(Raising(RuntimeError("x"), "on_predict_start"), Recorder("r", log)),
        raise_errors=False,
    )
    with pytest.warns(RuntimeWarning):
        policy.fire("on_predict_start", ctx_for("a"))
    assert log == [("r", "on_predict_start")]


# --------------------------------------------------------------------------- import weight


def assert_runs_in_a_fresh_interpreter(code: str) -> None:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_import_laya_stays_light() -> None:
    code = (
        "import sys, laya; "
        "from laya import PredictContext, PredictHook, Hook, BaseHook, AsyncHook; "
        "from laya.hooks import HOOK_EVENTS, normalise_hooks, dispatch, aggregate_usage, "
        "run_coroutine_sync, set_default_hooks, add_default_hook, clear_default_hooks, "
        "default_hooks, compose_hooks; import laya.hooks.lifecycle; "
        "heavy = {'torch','transformers','onnxruntime','fastapi'} & set(sys.modules); "
        "assert not heavy, heavy"
    )
    assert_runs_in_a_fresh_interpreter(code)


def test_submodules_are_attributes_of_laya_on_first_use() -> None:
    code = (
        "import sys, laya; assert 'laya.testing' not in sys.modules; "
        "assert callable(laya.testing.random_checkpoint); "
        "assert issubclass(laya.errors.InvalidRequest, ValueError); "
        "assert not hasattr(laya, 'no_such_module') and not hasattr(laya, '_private')"
    )
    assert_runs_in_a_fresh_interpreter(code)
