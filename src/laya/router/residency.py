"""Which runtimes a Router keeps in memory: an LRU of at most ``max_loaded``, built on demand.

* One build per name at a time: the first caller builds, later callers wait on its
  ``concurrent.futures.Future`` and share its runtime or its exception. Builds run one at a time
  per Router, so two cold checkpoints never double the peak memory.
* Beyond ``max_loaded`` the least recently used runtime is evicted and its ``close()`` called —
  at once, or when the last call that still uses it lets go (:meth:`Residency.use`).
* It fires nothing itself: ``load`` and ``free`` return the events (``on_evict`` per evicted
  name, then ``on_load``) for the Router to dispatch once every lock is released.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import Future, wait
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..runtime import RuntimeProtocol

__all__ = ["Event", "Residency"]

Event = tuple[str, str, "RuntimeProtocol | None"]  # (hook event, checkpoint name, runtime)


class Residency:
    """Resident runtimes by name, least recently used first."""

    def __init__(self, build: Callable[[str], RuntimeProtocol], max_loaded: int) -> None:
        self._build = build
        self.max_loaded = max_loaded
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()
        self._resident: OrderedDict[str, RuntimeProtocol] = OrderedDict()
        self._building: dict[str, Future[RuntimeProtocol]] = {}
        self._users: Counter[int] = Counter()
        self._retired: dict[int, RuntimeProtocol] = {}

    @property
    def loaded(self) -> list[str]:
        """Resident names, least recently used first."""
        with self._lock:
            return list(self._resident)

    def snapshot(self) -> dict[str, RuntimeProtocol]:
        """Resident name -> runtime, least recently used first; reorders nothing."""
        with self._lock:
            return dict(self._resident)

    def load(self, key: str) -> tuple[RuntimeProtocol, list[Event]]:
        """The resident runtime for ``key``, built on first use; and the events to fire."""
        return self._acquire(key, lease=False)

    @contextmanager
    def use(self, key: str, events: list[Event]) -> Iterator[RuntimeProtocol]:
        """The runtime for ``key``, kept open (even if evicted meanwhile) until the block ends."""
        runtime, fired = self._acquire(key, lease=True)
        events.extend(fired)
        try:
            yield runtime
        finally:
            self._release(runtime)

    def attach(self, key: str, runtime: RuntimeProtocol) -> None:
        """Make ``runtime`` resident under ``key``; ``max_loaded`` grows to keep it."""
        with self._lock:
            replaced = self._resident.get(key)
            self._resident[key] = runtime
            self._resident.move_to_end(key)
            self.max_loaded = max(self.max_loaded, len(self._resident))
            closing = [] if replaced in (None, runtime) else self._retire(replaced)
        _close_all(closing)

    def free(self, key: str | None) -> list[Event]:
        """Evict ``key`` (or everything) once its build in flight is done; the on_evict events."""
        with self._lock:
            builds = [f for k, f in self._building.items() if key is None or k == key]
        wait(builds)  # a failed build's error is its callers'; freeing goes on
        with self._lock:
            freed = [k for k in self._resident if key is None or k == key]
            closing = [rt for k in freed for rt in self._retire(self._resident.pop(k))]
        _close_all(closing)
        return [("on_evict", k, None) for k in freed]

    def raise_limit(self, keys: list[str]) -> None:
        """Grow ``max_loaded`` so ``keys`` and everything resident fit at once (preload)."""
        with self._lock:
            self.max_loaded = max(self.max_loaded, len(set(keys) | set(self._resident)))

    # ----------------------------------------------------------------------- internals

    def _acquire(self, key: str, lease: bool) -> tuple[RuntimeProtocol, list[Event]]:
        events: list[Event] = []
        while True:
            with self._lock:
                runtime = self._resident.get(key)
                if runtime is not None:
                    self._resident.move_to_end(key)
                    if lease:
                        self._users[id(runtime)] += 1
                    return runtime, events
                future = self._building.get(key)
                owner = future is None
                if future is None:
                    future = self._building[key] = Future()
            if owner:
                events += self._run_build(key, future)
            else:
                future.result()  # the build's exception, if it failed, is every waiter's

    def _run_build(self, key: str, future: Future[RuntimeProtocol]) -> list[Event]:
        """Build ``key`` (one build at a time), make it resident, settle the waiters' future."""
        closing: list[RuntimeProtocol] = []
        try:
            with self._build_lock:
                with self._lock:
                    attached = self._resident.get(key)
                runtime = attached if attached is not None else self._build(key)
                with self._lock:
                    self._resident[key] = runtime
                    self._resident.move_to_end(key)
                    over = range(len(self._resident) - self.max_loaded)  # LRU first; key is last
                    evicted = [self._resident.popitem(last=False) for _ in over]
                    closing = [rt for _, old in evicted for rt in self._retire(old)]
        except BaseException as exc:
            future.set_exception(exc)
            raise
        finally:
            with self._lock:
                self._building.pop(key, None)
        future.set_result(runtime)
        _close_all(closing)
        events: list[Event] = [("on_evict", k, None) for k, _ in evicted]
        return events if attached is not None else [*events, ("on_load", key, runtime)]

    def _retire(self, runtime: RuntimeProtocol) -> list[RuntimeProtocol]:
        """Under the lock: the runtimes to close now (``runtime``, unless a call still uses it)."""
        if self._users[id(runtime)] > 0:
            self._retired[id(runtime)] = runtime
            return []
        return [runtime]

    def _release(self, runtime: RuntimeProtocol) -> None:
        with self._lock:
            self._users[id(runtime)] -= 1
            if self._users[id(runtime)] > 0:
                return
            del self._users[id(runtime)]
            retired = self._retired.pop(id(runtime), None)
        if retired is not None:
            _close_all([retired])


def _close_all(runtimes: list[RuntimeProtocol]) -> None:
    """Close each runtime (a stand-in without ``close`` has nothing to free)."""
    for runtime in runtimes:
        close = getattr(runtime, "close", None)
        if close is not None:
            close()
