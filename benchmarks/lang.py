"""CPU microseconds per ``laya.lang.analyse`` call for short, 500-char and 4000-char states.

Run ``PYTHONPATH=. python benchmarks/lang.py``. CPU time (``time.process_time``) rather than wall
time, so that other processes on a busy machine do not inflate the figures.
"""

from __future__ import annotations

import time
from typing import Any

from laya.lang import analyse

SENTENCE = "I was charged twice for my order and the package never arrived, please help. "
STATES: dict[str, Any] = {
    "short": "Where is my package?",
    "500 chars": (SENTENCE * 8)[:500],
    "500-char dict": {"subject": "Refund request", "body": "\n".join([SENTENCE] * 6)[:480]},
    "4000 chars": (SENTENCE * 60)[:4000],
}


def fresh_copy(state: Any, i: int) -> Any:
    """The state with a counter before every text, so no cached verdict or line is reused."""
    if isinstance(state, dict):
        return {key: fresh_copy(value, i) for key, value in state.items()}
    return "\n".join(f"#{i} {line}" for line in state.split("\n"))


def microseconds_per_call(state: Any, calls: int, *, fresh: bool) -> float:
    """Mean CPU time of ``analyse``; ``fresh`` prefixes a counter so no cached result is reused."""
    analyse(state)
    started = time.process_time()
    for i in range(calls):
        analyse(fresh_copy(state, i) if fresh else state)
    return (time.process_time() - started) / calls * 1e6


def main() -> None:
    """Print uncached and cached timings for each state."""
    started = time.perf_counter()
    analyse("warm up: first call loads the identifier model")
    print(f"first call (model load, wall): {(time.perf_counter() - started) * 1e3:.0f} ms")
    for name, state in STATES.items():
        fresh = microseconds_per_call(state, 1000, fresh=True)
        cached = microseconds_per_call(state, 3000, fresh=False)
        print(f"{name:>14}: {fresh:8.1f} us/call uncached, {cached:8.1f} us/call repeated")


if __name__ == "__main__":
    main()
