"""Language detection: routing accuracy on the labelled set, start-up cost, and per-call speed.

    PYTHONPATH=. python benchmarks/lang.py accuracy   # routed right, by length bucket and language
    PYTHONPATH=. python benchmarks/lang.py startup    # first route() of a fresh process, in ms
    PYTHONPATH=. python benchmarks/lang.py speed      # CPU microseconds per analyse() call

Accuracy reads ``tests/data/lang_labelled.jsonl`` and routes every state with ``Router()`` (default
``english``): English states must go to ``english``, other languages to ``multilingual``, states
without a language (digits, emoji, bare names) to the default. Speed uses CPU time
(``time.process_time``), so other processes on a busy machine do not inflate the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from laya.lang import analyse, state_text
from laya.router import Router

LABELLED = Path(__file__).resolve().parents[1] / "tests" / "data" / "lang_labelled.jsonl"
BUCKETS = ((1, 2), (3, 4), (5, 6), (7, 8), (9, 10**9))
SENTENCE = "I was charged twice for my order and the package never arrived, please help. "
STATES: dict[str, Any] = {
    "short": "Where is my package?",
    "500 chars": (SENTENCE * 8)[:500],
    "500-char dict": {"subject": "Refund request", "body": "\n".join([SENTENCE] * 6)[:480]},
    "4000 chars": (SENTENCE * 60)[:4000],
}


def labelled() -> list[dict[str, Any]]:
    """The hand-labelled rows; a ``None`` state is left out (``Router.route`` refuses it)."""
    rows = [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]
    return [row for row in rows if row["state"] is not None]


def bucket(state: Any) -> str:
    """Length bucket of a state by its number of words: '1-2', '3-4', ..., '9+'."""
    words = len(state_text(state).split())
    for low, high in BUCKETS:
        if words <= high:
            return f"{low}-{high}" if high < 10**9 else f"{low}+"
    raise AssertionError(words)


def kind(row: dict[str, Any]) -> str:
    """'English', 'other' (another language) or 'none' (no language: digits, emoji, names)."""
    if row["language"] is None:
        return "none"
    return "English" if row["is_english"] else "other"


def expected_model(row: dict[str, Any], default: str) -> str:
    """The checkpoint a row should be routed to."""
    return {"English": "english", "other": "multilingual", "none": default}[kind(row)]


def accuracy() -> None:
    """Print the share routed right per kind and length bucket, and the misses per language."""
    router = Router()
    table: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    per_language: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses: list[str] = []
    for row in labelled():
        decision = router.route(row["state"])
        right = decision.model == expected_model(row, router.default)
        for key in ((kind(row), bucket(row["state"])), (kind(row), "all")):
            table[key][0] += right
            table[key][1] += 1
        if row["language"]:
            per_language[row["language"]][0] += right
            per_language[row["language"]][1] += 1
        if not right:
            misses.append(f"  {row['language']}: {row['state']!r} -> {decision.reason}")
    short = Counter()
    for (k, b), (ok, n) in table.items():
        if b in ("1-2", "3-4", "5-6"):
            short[k, "ok"] += ok
            short[k, "n"] += n
    print("routed right (share, count) by kind and length in words:")
    for k in ("English", "other", "none"):
        cells = [
            f"{b}: {table[k, b][0] / table[k, b][1]:.3f} ({table[k, b][0]}/{table[k, b][1]})"
            for b in (*(bucket_name(lo, hi) for lo, hi in BUCKETS), "all")
            if table[k, b][1]
        ]
        print(f"  {k:>7}  " + "  ".join(cells))
        if short[k, "n"]:
            print(f"  {'':>7}  short (<= 6 words): {short[k, 'ok'] / short[k, 'n']:.3f}")
    print("per language (routed right / rows):")
    print("  " + "  ".join(f"{lang} {ok}/{n}" for lang, (ok, n) in sorted(per_language.items())))
    print(f"misses ({len(misses)}):")
    print("\n".join(misses))


def bucket_name(low: int, high: int) -> str:
    return f"{low}-{high}" if high < 10**9 else f"{low}+"


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


def speed() -> None:
    """Print uncached and cached timings for each state."""
    started = time.perf_counter()
    analyse("warm up: first call loads the identifier model")
    print(f"first call (model load, wall): {(time.perf_counter() - started) * 1e3:.0f} ms")
    for name, state in STATES.items():
        fresh = microseconds_per_call(state, 1000, fresh=True)
        cached = microseconds_per_call(state, 3000, fresh=False)
        print(f"{name:>14}: {fresh:8.1f} us/call uncached, {cached:8.1f} us/call repeated")


FIRST_ROUTE = """
import sys, time
{preimport}
from laya.router import Router
router = Router()
started = time.perf_counter()
router.route({text!r})
first = time.perf_counter() - started
later = []
for i in range(200):
    text = f"{{i}} " + {text!r}
    started = time.perf_counter()
    router.route(text)
    later.append(time.perf_counter() - started)
later.sort()
print(first * 1e3, later[100] * 1e6)
"""
STARTUP_TEXTS = {
    "short English": "thanks a lot",
    "short Spanish": "muchas gracias",
    "no listed word": "Xyzzy plugh",
    "500-char English": (SENTENCE * 8)[:500],
}


def first_route(text: str, cache: str, preimport: str = "") -> tuple[float, float]:
    """(first route() in ms, median of 200 later route() calls on new texts in us), fresh process."""
    code = FIRST_ROUTE.format(text=text, preimport=preimport)
    env = {**os.environ, "LAYA_CACHE_DIR": cache}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr)
    first, later = map(float, out.stdout.split())
    return first, later


def startup(repeat: int) -> None:
    """Median first-route time per text, cases alternated, with the model cache cold and warm."""
    with tempfile.TemporaryDirectory() as cache:
        cold = first_route(STARTUP_TEXTS["500-char English"], cache)[0]
        print(f"cold cache (decompress py3langid's model and write the cache): {cold:.0f} ms")
        cases = [(name, text, pre) for name, text in STARTUP_TEXTS.items() for pre in ("", "np")]
        times: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
        for _ in range(repeat):
            for name, text, pre in cases:
                preimport = "import numpy" if pre else ""
                times[name, pre].append(first_route(text, cache, preimport))
    print(f"warm cache, median of {repeat} fresh processes (first route ms / later route us):")
    for name in STARTUP_TEXTS:
        bare, pre = (times[name, p] for p in ("", "np"))
        print(
            f"  {name:>16}: first {statistics.median(t[0] for t in bare):6.1f} ms "
            f"(numpy already imported: {statistics.median(t[0] for t in pre):6.1f} ms), "
            f"later median {statistics.median(t[1] for t in bare):6.1f} us"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["accuracy", "startup", "speed"])
    parser.add_argument("--repeat", type=int, default=7, help="fresh processes per start-up case")
    args = parser.parse_args()
    if args.what == "startup":
        startup(args.repeat)
    else:
        {"accuracy": accuracy, "speed": speed}[args.what]()


if __name__ == "__main__":
    main()
