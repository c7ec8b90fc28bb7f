"""A request batcher: admitted single requests answered together, in shared forward passes.

``laya serve`` and its Ray replicas answer each ``/v1/systemone`` request through one
:class:`Batcher`. Its worker threads take the queue in groups: while a group is answered the next
requests queue up, and the next group takes every shareable request waiting for the same
checkpoint (a job's ``key``), in arrival order, up to :attr:`Batcher.tokens` tokens (an upper
bound, counted before any tokenizer runs). A group closes when it is full, when the window has
passed since its first request, or at once when no other admitted request is on its way (so one
client waits for nobody). A lone request with nothing else running runs alone, on every core;
under load the ``workers`` share the cores, a group each (``Batcher._next_group``). A group
is answered by one call of ``answer`` (``laya.server.inference.predict_each``: each request in its
own hook context, with its own result or error), told how many groups share the cores (the server
divides its torch threads by it), under the latest deadline of its members; every request still
waits for its answer only until its own deadline (the app's ``asyncio.wait_for``). A request that
may not share (``shareable=False``: a tournament, or one that could exceed its own work budget)
is a group of its own, after the group the requests queued before it form.

The queue is also where long requests (tournaments, shortlists, batches) take turns with the
small ones: the passes of each of their runs (a tournament's round, a batch) are one job
(:meth:`Batcher.take_turns`, from the long request's own thread) that runs one pass per turn and
goes back to the end of the queue, so a small request waits for at most the pass that is
running, never for a whole tournament, and the long request's thread waits once per run. After a
long pass, the oldest small request goes next; after a small group, the oldest job. A job whose
client has gone (``Job.gone``) is dropped before its next turn, and a group all of whose clients
have gone stops at its next pass. Threads only: the event loop never blocks on a group; and only
the workers run passes (docs/server.md#fair-turns).
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..engine.deadline import deadline
from ..engine.pacing import Steps, paced
from ..errors import DeadlineExceeded, Overloaded
from .statuses import ClientGone

__all__ = ["Batcher", "Job", "Pace"]

Answer = Callable[[Sequence[Any], int], Sequence[Any]]  # a group's items, groups sharing the cores
RunPass = Callable[[Steps, int], object]  # the next step of a long run, groups sharing the cores


def _at_once(steps: Steps, _sharing: int) -> object:
    return next(steps)[1]


@dataclass(eq=False)
class Job:
    """One request waiting for its group: what to answer, what it costs, when it is due, and
    which jobs it may share a group with (those of the same ``key``: the checkpoint it names)."""

    item: Any
    cost: int
    due: float  # time.monotonic() by which the request must be answered
    shareable: bool = True
    key: object = None
    future: Future[Any] = field(default_factory=Future)
    queued: float = field(default_factory=time.monotonic)  # when it joined the queue
    gone: threading.Event = field(default_factory=threading.Event)  # its client hung up
    steps: Steps | None = None  # a long request's run: a pass per turn, instead of ``answer``
    outputs: list[object] = field(default_factory=list)  # the passes run so far
    started: bool = False  # its future runs (a run's job comes back to the queue between turns)


class Batcher:
    """Groups jobs for ``answer`` on ``workers`` threads (started on first use)."""

    def __init__(
        self,
        answer: Answer,
        window_s: float,
        tokens: int,
        workers: int = 1,
        name: str = "laya",
        run_pass: RunPass = _at_once,
    ) -> None:
        self.answer, self.window_s, self.tokens = answer, window_s, tokens
        self.workers, self.name, self.run_pass = workers, name, run_pass
        self._jobs: deque[Job] = deque()
        self._arriving = 0  # admitted requests not yet submitted (still being read or parsed)
        self._changed = threading.Condition()
        self._threads: list[threading.Thread] = []
        self._busy = [False] * workers  # which workers answer a group now
        self._alone = False  # a group runs on every core: no other starts until it ends
        self._small_next = False  # a long pass just ran: the oldest small request goes next
        self._closed = False
        self.groups = 0  # groups answered (what /health and the tests read)
        self.answered = 0  # jobs answered in them

    @contextmanager
    def arriving(self) -> Iterator[Callable[[Job], Future[Any]]]:
        """Around an admitted request until its job is submitted (with the function this yields)
        or it is refused: while any request is arriving, a group waits up to the window for it."""
        with self._changed:
            self._arriving += 1
        waiting = [True]  # until submitted

        def submit(job: Job) -> Future[Any]:
            with self._changed:
                self._queue(job)
                if waiting:
                    waiting.clear()
                    self._arriving -= 1
            return job.future

        try:
            yield submit
        finally:
            if waiting:
                with self._changed:
                    self._arriving -= 1
                    self._changed.notify_all()

    def submit(self, job: Job) -> Future[Any]:
        """Queue ``job``; its future holds the answer, or the request's own exception."""
        with self._changed:
            self._queue(job)
        return job.future

    def take_turns(self, steps: Steps, due: float, gone: threading.Event) -> list[object]:
        """Run each step of ``steps`` (a long request's passes, :mod:`laya.engine.pacing`) on a
        worker, one per turn, and return their outputs in order; called from the long request's
        own thread, which waits meanwhile. ClientGone once ``gone`` is set, DeadlineExceeded past
        ``due``, checked before each pass."""
        if gone.is_set():
            raise ClientGone("the client hung up; its request was dropped")
        outputs: list[object] = self.submit(
            Job(None, 0, due, False, gone=gone, steps=steps)
        ).result()
        return outputs

    def small_waiting(self) -> bool:
        """Whether a small request waits for a group or is still being read: a long request's
        next pass is then cut to a slice (:class:`Pace`), else it may fill the budget."""
        with self._changed:
            return self._arriving > 0 or any(job.shareable for job in self._jobs)

    def wait_queued(self, count: int, timeout: float) -> bool:
        """Block until ``count`` jobs wait for a group (or ``timeout`` passes): how a test or a
        benchmark knows the next group is ready to form."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self._jobs) >= count, timeout)

    def _queue(self, job: Job) -> None:
        """Under the lock: ``job`` joins the queue and the workers are woken."""
        if self._closed:
            raise Overloaded("the server is shutting down; retry on another", retry_after=1)
        self._start()
        self._jobs.append(job)
        self._changed.notify_all()

    def close(self) -> None:
        """Answer what is queued, then stop the threads."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()
        for thread in self._threads:
            thread.join()
        self._threads.clear()

    @property
    def queued(self) -> int:
        """Jobs waiting for a group."""
        return len(self._jobs)

    def _start(self) -> None:
        while len(self._threads) < self.workers:
            index = len(self._threads)
            thread = threading.Thread(
                target=self._work, args=(index,), name=f"{self.name}-batcher-{index}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def _work(self, index: int) -> None:
        while True:
            taken = self._next_group(index)
            if taken is None:
                return
            group, sharing = taken
            try:
                self._run(group, sharing)
            finally:
                with self._changed:
                    self._busy[index] = self._alone = False
                    self._changed.notify_all()

    def _next_group(self, index: int) -> tuple[list[Job], int] | None:
        """Worker ``index``'s next group and how many groups share the cores with it, once the
        group is full, its window (from its first job's arrival) has passed, or nothing more is
        coming; ``None`` once closed and drained.

        A worker starts a group only while every worker before it is busy (one client is always
        served by the first) and no group runs alone. A lone request with nothing else running
        runs alone, on every core; otherwise the cores are shared by ``workers`` groups, and a
        worker that finds several requests and nothing running takes its share of them, leaving
        the rest to the next worker (under load every worker runs a group on its share).
        """
        with self._changed:
            while True:
                if not self._jobs:
                    if self._closed:
                        return None
                    self._changed.wait()
                    continue
                if self._alone or not all(self._busy[:index]):
                    self._changed.wait()
                    continue
                self._drop_gone()
                if not self._jobs:
                    continue
                group, full = self._fits()
                left = group[0].queued + self.window_s - time.monotonic()
                if full or left <= 0 or self._arriving == 0 or self._closed:
                    return self._take(index, group)
                self._changed.wait(left)

    def _take(self, index: int, group: list[Job]) -> tuple[list[Job], int]:
        """Under the lock: worker ``index`` takes ``group`` (or, starting on idle cores, its
        share of it) off the queue; and how many groups share the cores with it."""
        idle = not any(self._busy)
        self._alone = idle and len(self._jobs) == 1
        if idle and not self._alone and group[0].shareable:  # its share of all that could join
            key = group[0].key
            alike = sum(1 for job in self._jobs if job.shareable and job.key == key)
            group = group[: -(-alike // self.workers)]
        taken = set(group)
        self._jobs = deque(job for job in self._jobs if job not in taken)
        self._busy[index] = True
        self._small_next = not group[0].shareable
        self._changed.notify_all()  # the next worker may take what is left
        return group, 1 if self._alone else self.workers

    def _drop_gone(self) -> None:
        """Under the lock: the queued jobs whose clients hung up leave the queue, unanswered (a
        long request's thread, waiting for its pass, gets ClientGone)."""
        gone = [job for job in self._jobs if job.gone.is_set()]
        if not gone:
            return
        self._jobs = deque(job for job in self._jobs if not job.gone.is_set())
        for job in gone:
            if job.started or job.future.set_running_or_notify_cancel():
                job.future.set_exception(ClientGone("the client hung up; its request was dropped"))

    def _first(self) -> Job:
        """The job the next group starts from: the oldest, except that right after a long pass
        the oldest small (shareable) job goes first, so small requests wait for one pass at most."""
        oldest = self._jobs[0]
        if oldest.shareable or not self._small_next:
            return oldest
        return next((job for job in self._jobs if job.shareable), oldest)

    def _fits(self) -> tuple[list[Job], bool]:
        """The queued jobs a group takes, and whether it can take no more: the first job
        (:meth:`_first`) alone when it may not share, else every shareable job of its key, in
        arrival order, while the token budget holds (the others wait for a group of their own)."""
        first = self._first()
        if not first.shareable:
            return [first], True
        group: list[Job] = []
        total = 0
        for job in self._jobs:
            if not job.shareable or job.key != first.key:
                continue
            if group and total + job.cost > self.tokens:
                return group, True
            group.append(job)
            total += job.cost
        return group, False

    def _run(self, group: list[Job], sharing: int) -> None:
        """Answer the jobs whose requests still wait, under their latest deadline, as one of
        ``sharing`` groups sharing the cores: a long request's pass (``run``) alone, or a group
        of small requests, which stops at its next pass once every one of their clients has gone."""
        if group[0].steps is not None:
            self._step(group[0], sharing)
            return
        live = [job for job in group if job.future.set_running_or_notify_cancel()]
        if not live:
            return
        due = max(job.due for job in live)

        def unless_all_gone(steps: Steps) -> list[object]:
            outputs: list[object] = []
            while not all(job.gone.is_set() for job in live):
                step = next(steps, None)
                if step is None:
                    return outputs
                outputs.append(step[1])
            raise ClientGone("every client of this group hung up; its work was dropped")

        try:
            with deadline(max(due - time.monotonic(), 0.0)), paced(unless_all_gone):
                outcomes = list(self.answer([job.item for job in live], sharing))
        except Exception as exc:  # noqa: BLE001 - a failure of the whole call: every member's
            outcomes = [exc] * len(live)
        self.groups, self.answered = self.groups + 1, self.answered + len(live)
        for job, outcome in zip(live, outcomes, strict=True):
            if isinstance(outcome, Exception):
                job.future.set_exception(outcome)
            else:
                job.future.set_result(outcome)

    def _step(self, job: Job, sharing: int) -> None:
        """One pass of a long run (``job.steps``), unless its client has gone or its deadline
        has passed; then back to the end of the queue, or its outputs to its future."""
        if not job.started:
            if not job.future.set_running_or_notify_cancel():
                return
            job.started = True
        assert job.steps is not None
        try:
            if job.gone.is_set():
                raise ClientGone("the client hung up; its request was dropped")
            if time.monotonic() > job.due:
                raise DeadlineExceeded("the request ran past its deadline waiting for its turn")
            job.outputs.append(self.run_pass(job.steps, sharing))
        except StopIteration:
            job.future.set_result(job.outputs)
            return
        except Exception as exc:  # noqa: BLE001 - the long request's own failure
            job.future.set_exception(exc)
            return
        with self._changed:  # its next pass waits its turn again, behind what came meanwhile
            job.queued = time.monotonic()
            self._jobs.append(job)
            self._changed.notify_all()


class Pace:
    """How many tokens a long request's pass may hold: as many as run in the time a small
    request's own group takes, and at least ``floor_s`` (so passes stay large enough to run
    efficiently). Both are measured here: the small groups' time as the median of the last
    ``window`` (a median, so a cold first group does not swell the slices for long), the slice
    from how long the last long pass took (as many tokens as take the target time at its pace,
    at most twice as many as before), so the slices fit the model and the machine (a tiny
    model's passes stay large, a busy CPU's get small). A small request then waits for about
    one of its own times."""

    def __init__(self, floor_s: float = 0.01, window: int = 16, recent_s: float = 1.0) -> None:
        self.floor_s, self.recent_s = floor_s, recent_s
        self.smalls: deque[float] = deque(maxlen=window)  # seconds the last small groups took
        self.small_at = float("-inf")  # time.monotonic() when the last small group ended
        self.slice: int | None = None  # tokens of the next long pass

    @property
    def small_s(self) -> float | None:
        """Seconds a small group takes: the median of the last ones (None before the first)."""
        return statistics.median(self.smalls) if self.smalls else None

    def grouped(self, seconds: float) -> None:
        """A small group took ``seconds``."""
        self.smalls.append(seconds)
        self.small_at = time.monotonic()

    def small_lately(self) -> bool:
        """Whether a small group ended within ``recent_s``: small traffic is about (its next
        request may be on its way), so long passes stay cut to slices."""
        return time.monotonic() - self.small_at < self.recent_s

    def passed(self, tokens: int, seconds: float) -> None:
        """A long pass of ``tokens`` padded tokens took ``seconds``: the next slice is as many
        tokens as would take the target time at that pace (at most twice as many as now)."""
        target = max(self.small_s or 0.0, self.floor_s)
        fitting = int(tokens * target / max(seconds, 1e-6))
        if seconds > target or fitting > (self.slice or 0):
            self.slice = max(1, min(fitting, 2 * max(tokens, self.slice or 0)))

    def tokens(self, budget: int) -> int:
        """The tokens of the next long pass, within the checkpoint's ``budget`` (a sixteenth of
        it until a pass has been measured)."""
        return max(1, min(budget, self.slice or budget // 16))
