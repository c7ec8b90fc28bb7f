"""The request batcher: single requests grouped into shared passes, each with its own answer.

The :class:`~laya.server.batcher.Batcher` is driven directly with a recording ``answer``; the
server's ``predict_each`` and ``Router.predict_each`` run on the fixture checkpoints; a real
``laya serve`` app answers concurrent requests through the batcher, each as it answers alone.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from conftest import QUESTIONS
from golden import assert_close
from test_server import ENGLISH, FIXTURE_MODELS, FRENCH, served, without_jev

from laya.engine.strategies.tournament import OVERFLOW, ChoiceMode
from laya.errors import InvalidRequest, Overloaded
from laya.hooks import BaseHook
from laya.router import Router
from laya.server import (
    Settings,
    build_router,
    create_app,
    parse_single,
    predict_each,
    predict_single,
    refusal,
)
from laya.server.batcher import Batcher, Job

SETTINGS = Settings(models=FIXTURE_MODELS, default_model="english", route="auto")
STATES = [
    f"{ENGLISH} Ticket {i}: {'the app crashes' if i % 2 else 'cancel my plan'}." for i in range(200)
]
WAIT_S = 60


@pytest.fixture(scope="module")
def local() -> Router:
    return build_router(SETTINGS)


def job(item: Any, cost: int = 1, shareable: bool = True) -> Job:
    return Job(item, cost, due=float("inf"), shareable=shareable)


class Recorder:
    """An ``answer`` that records its groups; it fails for the item "bad", and the first call
    waits for ``release`` (so the tests can queue what the next group will hold)."""

    def __init__(self) -> None:
        self.groups: list[list[Any]] = []
        self.calls: list[tuple[Any, int, str]] = []  # first item, groups running, worker
        self.entered, self.release = threading.Event(), threading.Event()

    def __call__(self, items: Sequence[Any], running: int) -> list[Any]:
        self.calls.append((items[0], running, threading.current_thread().name))
        if len(self.calls) == 1:
            self.entered.set()
            assert self.release.wait(WAIT_S)
        self.groups.append(list(items))
        return [ValueError(item) if item == "bad" else f"answer {item}" for item in items]


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    yield Recorder()


def blocked(recorder: Recorder, window_s: float = 60.0, tokens: int = 100) -> Batcher:
    """A batcher whose first group ("first", alone) is held in ``answer`` until released."""
    batcher = Batcher(recorder, window_s, tokens)
    batcher.submit(job("first"))
    assert recorder.entered.wait(WAIT_S)
    return batcher


# --------------------------------------------------------------------------- the batcher


def test_queued_jobs_share_one_call_each_with_its_own_answer_or_error(recorder: Recorder) -> None:
    batcher = blocked(recorder)
    futures = [batcher.submit(job(item)) for item in ("a", "bad", "b")]
    recorder.release.set()
    assert futures[0].result(WAIT_S) == "answer a" and futures[2].result(WAIT_S) == "answer b"
    with pytest.raises(ValueError):
        futures[1].result(WAIT_S)
    batcher.close()
    assert recorder.groups == [["first"], ["a", "bad", "b"]]
    assert (batcher.groups, batcher.answered) == (2, 4)


def test_a_group_holds_at_most_the_token_budget(recorder: Recorder) -> None:
    batcher = blocked(recorder, tokens=10)
    futures = [batcher.submit(job(item, cost=4)) for item in "abcde"]
    recorder.release.set()
    assert [f.result(WAIT_S) for f in futures] == [f"answer {c}" for c in "abcde"]
    batcher.close()
    assert recorder.groups == [["first"], ["a", "b"], ["c", "d"], ["e"]]


def test_an_unshareable_job_is_a_group_of_its_own_after_the_others(recorder: Recorder) -> None:
    batcher = blocked(recorder)
    futures = [batcher.submit(job("a")), batcher.submit(job("alone", shareable=False))]
    futures.append(batcher.submit(job("b")))
    recorder.release.set()
    assert [f.result(WAIT_S) for f in futures] == ["answer a", "answer alone", "answer b"]
    batcher.close()
    assert recorder.groups == [["first"], ["a", "b"], ["alone"]]  # it does not split the queue


def test_a_group_holds_one_checkpoint_and_the_others_wait_their_turn(recorder: Recorder) -> None:
    batcher = blocked(recorder)
    keyed = [("a", "english"), ("x", "french"), ("b", "english"), ("y", "french"), ("c", None)]
    futures = [batcher.submit(Job(item, 1, float("inf"), key=key)) for item, key in keyed]
    recorder.release.set()
    assert [f.result(WAIT_S) for f in futures] == [f"answer {item}" for item, _ in keyed]
    batcher.close()
    assert recorder.groups == [["first"], ["a", "b"], ["x", "y"], ["c"]]


def test_a_group_waits_for_an_arriving_request_and_not_for_nobody(recorder: Recorder) -> None:
    recorder.release.set()
    batcher = Batcher(recorder, window_s=60.0, tokens=100)
    assert batcher.submit(job("alone")).result(WAIT_S) == "answer alone"  # nobody else coming
    with batcher.arriving() as submit_late:
        early = batcher.submit(job("early"))
        assert not early.done()  # held: a request is on its way
        late = submit_late(job("late"))
    assert (early.result(WAIT_S), late.result(WAIT_S)) == ("answer early", "answer late")
    with batcher.arriving():
        once = batcher.submit(job("once"))
    assert once.result(WAIT_S) == "answer once"  # the arriving one was refused
    batcher.close()
    assert recorder.groups == [["alone"], ["early", "late"], ["once"]]


def test_a_lone_request_runs_alone_and_the_next_waits_for_it(recorder: Recorder) -> None:
    batcher = Batcher(recorder, window_s=60.0, tokens=100, workers=2, name="t")
    first = batcher.submit(job("first"))
    assert recorder.entered.wait(WAIT_S)
    second = batcher.submit(job("second"))
    assert batcher.wait_queued(1, WAIT_S)  # not taken by the idle worker: "first" runs alone
    recorder.release.set()
    assert (first.result(WAIT_S), second.result(WAIT_S)) == ("answer first", "answer second")
    batcher.close()
    assert recorder.calls == [("first", 1, "t-batcher-0"), ("second", 1, "t-batcher-0")]


def test_queued_requests_are_shared_out_among_the_workers() -> None:
    calls: list[tuple[list[Any], int]] = []
    both = threading.Barrier(2, timeout=WAIT_S)  # each group waits until the other runs too

    def answer(items: Sequence[Any], sharing: int) -> list[Any]:
        calls.append((list(items), sharing))
        both.wait()
        return [f"answer {item}" for item in items]

    batcher = Batcher(answer, window_s=60.0, tokens=100, workers=2)
    with batcher.arriving() as submit_last:  # the group waits for the last one to arrive
        futures = [batcher.submit(job(item)) for item in "abc"]
        futures.append(submit_last(job("d")))
    assert [f.result(WAIT_S) for f in futures] == [f"answer {c}" for c in "abcd"]
    batcher.close()
    assert sorted(calls) == [(["a", "b"], 2), (["c", "d"], 2)]


def test_an_unshareable_request_first_in_the_queue_still_runs(recorder: Recorder) -> None:
    recorder.release.set()
    batcher = Batcher(recorder, window_s=60.0, tokens=100, workers=2)
    with batcher.arriving() as submit_last:
        futures = [batcher.submit(job("alone", shareable=False))]
        futures.append(submit_last(job("a")))
    assert [f.result(WAIT_S) for f in futures] == ["answer alone", "answer a"]
    batcher.close()
    assert sorted(recorder.groups) == [["a"], ["alone"]]


def test_a_closed_batcher_refuses_with_a_retryable_503(recorder: Recorder) -> None:
    batcher = Batcher(recorder, 0.001, 10)
    batcher.close()
    with pytest.raises(Overloaded) as raised:
        batcher.submit(job("late"))
    assert refusal(raised.value).status == 503


# --------------------------------------------------------------------------- predict_each


def test_predict_each_equals_each_request_alone(local: Router, monkeypatch) -> None:
    agent, calls = local.load("english"), []
    original = agent.answer

    def counted(states: list, *args: Any, **kwargs: Any) -> list:
        calls.append(len(states))
        return original(states, *args, **kwargs)

    monkeypatch.setattr(agent, "answer", counted)
    bodies = [{"state": s, "questions": QUESTIONS, "model": "english"} for s in STATES[:5]]
    bodies[4]["min_confidence"] = 0.7
    answers = predict_each(local, [parse_single(b, SETTINGS) for b in bodies], SETTINGS)
    assert calls == [4, 1]  # four share one pass; the 0.7 one has its own gate
    for body, answer in zip(bodies, answers):
        assert_close(answer, predict_single(local, parse_single(body, SETTINGS), SETTINGS))


def test_predict_each_keeps_each_error_its_own(local: Router) -> None:
    good = parse_single({"state": FRENCH, "questions": QUESTIONS}, SETTINGS)
    bad = parse_single({"state": ENGLISH, "questions": QUESTIONS, "model": "./nope"}, SETTINGS)
    answers = predict_each(local, [bad, good], SETTINGS)
    assert isinstance(answers[0], InvalidRequest) and refusal(answers[0]).status == 422
    assert_close(answers[1], predict_single(local, good, SETTINGS))


def test_predict_each_passes_tournaments_apart(local: Router, monkeypatch) -> None:
    agent, calls = local.load("english"), []
    original = agent.answer

    def counted(states: list, *args: Any, **kwargs: Any) -> list:
        calls.append((len(states), kwargs.get("mode")))
        return original(states, *args, **kwargs)

    monkeypatch.setattr(agent, "answer", counted)
    bodies = [{"state": s, "questions": QUESTIONS, "model": "english"} for s in STATES[:4]]
    bodies[3]["tournament"] = 2
    answers = predict_each(local, [parse_single(b, SETTINGS) for b in bodies], SETTINGS)
    # the three plain ones share a pass (rounds only for a choice that overflows it: none here)
    assert calls == [(3, OVERFLOW), (1, ChoiceMode(tournament=True, group=2))]
    assert answers[3]["answers"]["department"]["tournament"]["finalists"]
    for body, answer in zip(bodies, answers):
        assert_close(answer, predict_single(local, parse_single(body, SETTINGS), SETTINGS))


# --------------------------------------------------------------------------- over HTTP


class Gate(BaseHook):
    """Holds the first request's pass until ``release``; keeps each request's own context (the
    objects themselves: a finished context's id could be reused by a later one)."""

    def __init__(self) -> None:
        self.entered, self.release = threading.Event(), threading.Event()
        self.contexts: list[Any] = []
        self.lock = threading.Lock()

    def on_predict_start(self, ctx: Any) -> None:
        with self.lock:
            first = not self.contexts
            self.contexts.append(ctx)
        if first:
            self.entered.set()
            assert self.release.wait(WAIT_S)


def test_concurrent_requests_share_passes_and_answer_as_alone(local: Router) -> None:
    gate = Gate()
    router = Router(models=FIXTURE_MODELS, default="english", hooks=[gate]).preload(["english"])
    settings = Settings(
        models=FIXTURE_MODELS, default_model="english", batch_window_ms=1000, inference_workers=1
    )
    app = create_app(router, settings)
    batcher = app.state.service.batcher
    bodies = [{"state": s, "questions": QUESTIONS} for s in STATES[:8]]
    with served(app) as base, ThreadPoolExecutor(len(bodies)) as pool:
        first = pool.submit(httpx.post, base + "/v1/systemone", json=bodies[0], timeout=WAIT_S)
        assert gate.entered.wait(WAIT_S)
        rest = [
            pool.submit(httpx.post, base + "/v1/systemone", json=body, timeout=WAIT_S)
            for body in bodies[1:]
        ]
        assert batcher.wait_queued(len(rest), WAIT_S)
        gate.release.set()
        replies = [first.result(), *(f.result() for f in rest)]
        health = httpx.get(base + "/health").json()
    assert all(reply.status_code == 200 for reply in replies)
    assert health["batches"] == {"groups": 2, "requests": len(bodies)}
    assert len({id(ctx) for ctx in gate.contexts}) == len(bodies)  # each its own hook context
    for body, reply in zip(bodies, replies):
        alone = local.predict(body["state"], QUESTIONS, model="english")
        served_answer = without_jev(reply.json())
        assert_close(served_answer["answers"], alone["answers"])


def test_a_lone_request_runs_on_every_thread_and_shared_groups_on_their_share(
    local: Router,
) -> None:
    import torch

    class Threads(Gate):
        """The Gate, recording the torch threads each request's pass runs on; after the first,
        each request starts only beside one of the other group (so the two groups run at once)."""

        def __init__(self) -> None:
            super().__init__()
            self.threads: list[int] = []
            self.pair = threading.Barrier(2, timeout=WAIT_S)

        def on_predict_start(self, ctx: Any) -> None:
            with self.lock:
                self.threads.append(torch.get_num_threads())
                first = len(self.threads) == 1
            if first:
                super().on_predict_start(ctx)
            else:
                self.pair.wait()

    hook, before = Threads(), torch.get_num_threads()
    router = Router(models=FIXTURE_MODELS, default="english", hooks=[hook]).preload(["english"])
    settings = Settings(
        models=FIXTURE_MODELS, default_model="english", threads=2, inference_workers=2
    )
    app = create_app(router, settings)
    bodies = [{"state": s, "questions": QUESTIONS} for s in STATES[:5]]
    try:
        with served(app) as base, ThreadPoolExecutor(len(bodies)) as pool:
            post = lambda body: httpx.post(base + "/v1/systemone", json=body, timeout=WAIT_S)  # noqa: E731
            first = pool.submit(post, bodies[0])
            assert hook.entered.wait(WAIT_S)
            rest = [pool.submit(post, body) for body in bodies[1:]]
            assert app.state.service.batcher.wait_queued(len(rest), WAIT_S)
            hook.release.set()
            replies = [first.result(), *(f.result() for f in rest)]
    finally:
        torch.set_num_threads(before)  # what a new thread of this process starts with
    assert hook.threads == [2, 1, 1, 1, 1]  # alone on both threads, then two groups on one each
    for body, reply in zip(bodies, replies):
        alone = local.predict(body["state"], QUESTIONS, model="english")
        assert_close(without_jev(reply.json())["answers"], alone["answers"])


def test_window_zero_turns_the_batcher_off(local: Router) -> None:
    app = create_app(local, Settings(models=FIXTURE_MODELS, batch_window_ms=0))
    assert app.state.service.batcher is None
    with served(app) as base:
        reply = httpx.post(base + "/v1/systemone", json={"state": ENGLISH, "questions": QUESTIONS})
        assert reply.status_code == 200
        assert "batches" not in httpx.get(base + "/health").json()
