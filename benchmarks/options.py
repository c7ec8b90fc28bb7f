"""Choices with many options: one pass vs shortlist vs tournament, on our many-option set.

    PYTHONPATH=. python benchmarks/options.py accuracy   # accuracy, recall@k, ECE by size
    PYTHONPATH=. python benchmarks/options.py latency    # ms per state at 20, 100, 250 options

The set is ``data/options/``: three taxonomies (support intents, product categories, IT error
classes; 85-114 labels, each with a description) and 312 hand-written states with their gold
label. At size n each taxonomy's labels, shuffled by a generator seeded with n, are cut into
blocks of n (the last one topped up from the first), and each state is asked the choice over
the block that holds its label, all states of a block in one ``predict_batch``; ``all`` is the
whole taxonomy in file order, ``union`` all three at once (301 labels). Options are
``label: description``.

``accuracy`` answers every state with the bundled ``mini`` (``--model`` for another) four ways:
one pass (where its markers fit), ``shortlist=5``, ``shortlist=20`` (the default embedder) and
``tournament=True``. ECE uses ten equal-width bins of the answer's top probability; recall@k is
the share of states whose label is among the embedder's first k; ``finalists`` the share whose
label reached the tournament's last group; ``tokens`` input tokens per state.
``latency`` times single ``system_one`` calls on a fixed sample of states, the methods
alternating state by state, and reports the median and the ratio to one pass at 20 options.
Both run torch on one thread by default (``--threads``): on a shared machine a second thread
that waits for a busy core makes every pass many times slower.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

import laya

DATA = Path(__file__).resolve().parents[1] / "data" / "options"
SIZES = ("10", "20", "40", "60", "all", "union")


def taxonomies() -> dict[str, dict[str, Any]]:
    """Taxonomy name -> {"instructions", "labels": {label: description}}."""
    return json.loads((DATA / "taxonomies.json").read_text(encoding="utf-8"))


def cases() -> list[dict[str, Any]]:
    """The labelled states: {"id", "taxonomy", "state", "label"}."""
    lines = (DATA / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def blocks(size: str, tax: dict[str, dict], rows: list[dict]) -> list[tuple[dict, list[dict]]]:
    """(question, the cases it asks) at one size: see the module docstring."""
    if size == "union":
        labels = {k: v for t in tax.values() for k, v in t["labels"].items()}
        return [(_question("Which category is this?", labels, list(labels)), rows)]
    out = []
    for name, taxonomy in tax.items():
        mine = [case for case in rows if case["taxonomy"] == name]
        labels = list(taxonomy["labels"])
        if size == "all":
            out.append((_question(taxonomy["instructions"], taxonomy["labels"], labels), mine))
            continue
        n = int(size)
        order = [labels[i] for i in np.random.default_rng(n).permutation(len(labels))]
        order += order[: -len(order) % n]  # the last block topped up from the first
        for at in range(0, len(labels), n):
            block = order[at : at + n]
            asked = [c for c in mine if c["label"] in block and c["label"] not in order[:at]]
            if asked:
                question = _question(taxonomy["instructions"], taxonomy["labels"], block)
                out.append((question, asked))
    return out


def _question(instructions: str, descriptions: dict[str, str], labels: list[str]) -> dict:
    criteria = {label: descriptions[label] for label in labels}
    return {"type": "choice", "instructions": instructions, "criteria": criteria}


def ece(confidences: list[float], correct: list[bool], bins: int = 10) -> float:
    """Expected calibration error over equal-width confidence bins."""
    conf, hit = np.asarray(confidences), np.asarray(correct, dtype=float)
    edges = np.linspace(0.0, 1.0, bins + 1)
    total = 0.0
    for low, high in zip(edges[:-1], edges[1:]):
        inside = (conf > low) & (conf <= high) if low > 0 else (conf >= low) & (conf <= high)
        if inside.any():
            total += inside.mean() * abs(hit[inside].mean() - conf[inside].mean())
    return float(total)


METHODS = {
    "one pass": {},
    "shortlist 5": {"shortlist": 5},
    "shortlist 20": {"shortlist": 20},
    "tournament": {"tournament": True},
}


def accuracy(args: argparse.Namespace) -> None:
    agent = laya.load(args.model, device="cpu")
    digest = hashlib.sha256((agent.directory / "model.safetensors").read_bytes()).hexdigest()
    print(f"model {args.model}: model.safetensors sha256 {digest}")
    tax, rows = taxonomies(), cases()
    if args.limit:
        rows = rows[:: max(1, len(rows) // args.limit)][: args.limit]
    sizes = ", ".join(f"{name} {len(t['labels'])}" for name, t in tax.items())
    print(f"{len(rows)} states, {len(tax)} taxonomies ({sizes})")
    print(
        f"{'size':>6} {'method':>12} {'n':>4} {'accuracy':>9} {'ece':>6} {'recall@5':>9} "
        f"{'@10':>6} {'@20':>6} {'finalists':>9} {'tokens':>7} {'s':>6}"
    )
    for size in args.sizes:
        for method, mode in METHODS.items():
            report(agent, size, method, mode, blocks(size, tax, rows))


def report(agent: Any, size: str, method: str, mode: dict, asked: list) -> None:
    """Answer every block one way and print one line of figures."""
    stats: dict[str, list] = defaultdict(list)
    started = time.perf_counter()
    tokens = 0
    for question, group in asked:
        try:
            results = agent.predict_batch([c["state"] for c in group], {"label": question}, **mode)
        except ValueError:
            print(f"{size:>6} {method:>12}    - does not fit one pass", flush=True)
            return
        for case, result in zip(group, results):
            got, gold = result["answers"]["label"], case["label"]
            tokens += result["usage"]["input_tokens"]
            stats["correct"].append(got["choice"] == gold)
            stats["confidence"].append(max(got["probabilities"].values()))
            ranked = got.get("shortlist", {}).get("candidates")
            for k in (5, 10, 20):
                if ranked is not None and k <= len(ranked):
                    stats[k].append(gold in ranked[:k])
                elif ranked is None and k >= len(question["criteria"]):
                    stats[k].append(True)  # no shortlist: the model reads every option
            if "tournament" in got:
                stats["final"].append(gold in got["tournament"]["finalists"])
    n = len(stats["correct"])
    recalls = [
        f"{np.mean(stats[k]):.3f}" if method.startswith("shortlist") and stats[k] else "-"
        for k in (5, 10, 20)
    ]
    final = f"{np.mean(stats['final']):.3f}" if stats["final"] else "-"
    print(
        f"{size:>6} {method:>12} {n:>4} {np.mean(stats['correct']):>9.3f} "
        f"{ece(stats['confidence'], stats['correct']):>6.3f} {recalls[0]:>9} {recalls[1]:>6} "
        f"{recalls[2]:>6} {final:>9} {tokens / n:>7.0f} {time.perf_counter() - started:>6.0f}",
        flush=True,
    )


def latency(args: argparse.Namespace) -> None:
    agent = laya.load(args.model, device="cpu")
    tax, rows = taxonomies(), cases()
    union = {k: v for t in tax.values() for k, v in t["labels"].items()}
    sample = rows[:: len(rows) // args.states][: args.states]
    sizes = (20, 100, 250)
    labels = list(union)
    questions = {
        n: {
            "label": {
                "type": "choice",
                "instructions": "Which category is this?",
                "criteria": {label: union[label] for label in labels[:n]},
            }
        }
        for n in sizes
    }
    calls = {
        "one pass": lambda s, q: agent.system_one(s, q),
        "shortlist": lambda s, q: agent.predict_shortlist(s, q, k=args.k),
        "tournament": lambda s, q: agent.predict_tournament(s, q),
    }
    for n in sizes:  # warm-up: the embedder loads, option vectors enter its cache
        for call in calls.values():
            with contextlib.suppress(ValueError):
                call(sample[0]["state"], questions[n])
    times: dict[tuple[int, str], list[float]] = defaultdict(list)
    for case in sample:
        for n in sizes:
            for name, call in calls.items():
                started = time.perf_counter()
                try:
                    call(case["state"], questions[n])
                except ValueError:
                    continue
                times[n, name].append((time.perf_counter() - started) * 1000)
    base = statistics.median(times[20, "one pass"])
    print(f"{len(sample)} states, methods alternating per state; shortlist k={args.k}")
    print(f"{'options':>7} {'method':>11} {'median ms':>10} {'x one pass@20':>14}")
    for n in sizes:
        for name in calls:
            if not times[n, name]:
                print(f"{n:>7} {name:>11} {'does not fit':>10}")
                continue
            median = statistics.median(times[n, name])
            print(f"{n:>7} {name:>11} {median:>10.1f} {median / base:>14.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("accuracy", "latency"))
    parser.add_argument("--model", default="mini")
    parser.add_argument("--k", type=int, default=20, help="latency: shortlist size")
    parser.add_argument(
        "--sizes", nargs="+", default=list(SIZES), choices=SIZES, help="accuracy: sizes scored"
    )
    parser.add_argument("--limit", type=int, default=0, help="accuracy: about this many states")
    parser.add_argument("--states", type=int, default=20, help="latency: states timed")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    accuracy(args) if args.command == "accuracy" else latency(args)


if __name__ == "__main__":
    main()
