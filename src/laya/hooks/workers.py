"""The threads that run timed hooks: a bounded pool of reused workers that never makes a hook
wait for one (docs/hooks/errors.md#timeouts).

A timed hook starts at once on a parked worker, or on a new one while the pool holds fewer than
``size`` threads. When every thread of the pool is busy, the hook gets a thread of its own that
ends with it, so concurrent calls never queue behind each other. Python cannot stop a hook that
runs past its timeout: its worker stays *stuck* until the hook returns, then parks again. When
every pooled worker is stuck, each timed hook starts a thread of its own and a ``RuntimeWarning``
says why; parked threads never exceed ``size``.
"""

from __future__ import annotations

import os
import queue
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import TypedDict

__all__ = ["DEFAULT_SIZE", "HOOK_WORKERS", "Job", "PoolStats", "WorkerPool"]

# As many workers as concurrent.futures gives an I/O-bound pool by default.
DEFAULT_SIZE = min(32, (os.cpu_count() or 1) + 4)


class PoolStats(TypedDict):
    """A snapshot of a pool: its bound, its threads, and what they are doing."""

    size: int  # the most threads the pool keeps
    threads: int  # threads alive for the pool: pooled ones and single-use ones still running
    idle: int  # pooled threads parked, waiting for a hook
    running: int  # hooks running now, stuck ones included
    stuck: int  # hooks still running after their caller gave up on them


class Job:
    """One hook call handed to a worker: what to run, and how it ended."""

    __slots__ = ("abandoned", "args", "done", "error", "finished", "function", "pooled")

    def __init__(self, function: Callable[..., object], args: tuple[object, ...]) -> None:
        self.function = function
        self.args = args
        self.done = threading.Event()
        self.error: BaseException | None = None
        self.pooled = True  # runs on a pooled thread (False: on a thread of its own)
        self.finished = False  # set under the pool's lock, with the bookkeeping
        self.abandoned = False  # its caller stopped waiting (a timeout)

    def run(self) -> None:
        """Run the call, keeping whatever it raised for the caller (never for this thread)."""
        try:
            self.function(*self.args)
        except BaseException as exc:  # handed back to the caller thread by reraise()
            self.error = exc

    def reraise(self) -> None:
        """Raise what the call raised, in the caller's thread."""
        if self.error is not None:
            raise self.error


class WorkerPool:
    """Daemon threads named ``name`` that run hook calls for callers who wait with a timeout."""

    def __init__(self, size: int = DEFAULT_SIZE, name: str = "laya-hook-timeout") -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"a worker pool needs a size of at least 1, got {size!r}")
        self.size = size
        self.name = name
        self.reset_after_fork()
        ref = weakref.ref(self)
        os.register_at_fork(after_in_child=lambda: _reset_after_fork(ref))

    def reset_after_fork(self) -> None:
        """Empty bookkeeping: at construction, and in a forked child (its threads are gone)."""
        self._changed = threading.Condition(threading.Lock())
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._pooled = 0  # threads that park after their job (at most size)
        self._single = 0  # threads that end with their job
        self._idle = 0
        self._running = 0
        self._stuck = 0
        self._stuck_pooled = 0

    def submit(self, function: Callable[..., object], *args: object) -> Job:
        """Start ``function(*args)`` now, on a parked worker or a new thread."""
        job = Job(function, args)
        with self._changed:
            self._running += 1
            if self._idle:
                self._idle -= 1
                self._jobs.put(job)
                return job
            job.pooled = self._pooled < self.size
            if job.pooled:
                self._pooled += 1
            else:
                self._single += 1
            all_stuck = not job.pooled and self._stuck_pooled >= self.size
        self._start(job)
        if all_stuck:
            warnings.warn(
                f"laya: all {self.size} hook workers are held by hooks still running past "
                "their hooks_timeout, so each timed hook now starts a thread of its own until "
                "one of them returns; a hook that never returns keeps its thread forever "
                "(the TimeoutError names it)",
                RuntimeWarning,
                stacklevel=2,
            )
        return job

    def _start(self, job: Job) -> None:
        target = self._serve if job.pooled else self._serve_once
        try:
            threading.Thread(target=target, args=(job,), name=self.name, daemon=True).start()
        except BaseException:
            with self._changed:
                self._running -= 1
                if job.pooled:
                    self._pooled -= 1
                else:
                    self._single -= 1
            raise

    def wait(self, job: Job, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for ``job``; False (the job now counts as stuck) if
        it is still running, also when the wait itself is interrupted."""
        finished = False
        try:
            finished = job.done.wait(min(timeout, threading.TIMEOUT_MAX))
        finally:
            if not finished:
                self._abandon(job)
        return finished

    def _abandon(self, job: Job) -> None:
        with self._changed:
            if job.finished or job.abandoned:
                return
            job.abandoned = True
            self._stuck += 1
            self._stuck_pooled += int(job.pooled)

    def _finish(self, job: Job, park: bool) -> None:
        """Book a finished job (and a thread about to park) before its caller hears of it."""
        with self._changed:
            job.finished = True
            self._running -= 1
            if job.abandoned:
                self._stuck -= 1
                self._stuck_pooled -= int(job.pooled)
            if park:
                self._idle += 1
            else:
                self._single -= 1
            self._changed.notify_all()
        job.done.set()

    def _serve(self, job: Job) -> None:
        while True:
            job.run()
            self._finish(job, park=True)
            job = self._jobs.get()

    def _serve_once(self, job: Job) -> None:
        job.run()
        self._finish(job, park=False)

    def join(self, timeout: float | None = None) -> bool:
        """Wait until no hook is running on the pool (stuck ones included); False on timeout."""
        with self._changed:
            return self._changed.wait_for(lambda: self._running == 0, timeout)

    def stats(self) -> PoolStats:
        """What the pool holds and does right now."""
        with self._changed:
            return PoolStats(
                size=self.size,
                threads=self._pooled + self._single,
                idle=self._idle,
                running=self._running,
                stuck=self._stuck,
            )


def _reset_after_fork(ref: weakref.ref[WorkerPool]) -> None:
    pool = ref()
    if pool is not None:
        pool.reset_after_fork()


# The pool every timed hook of the process runs on.
HOOK_WORKERS = WorkerPool()
