"""CPU throughput of the Agent on a random checkpoint of ModernBERT-base width (8 layers).

Run ``python benchmarks/agent.py [--repeats N] [--threads N]``. The checkpoint is built once with
``laya.testing.random_checkpoint`` and cached under ``<tempdir>/laya-bench/base-modernbert``.

FLOP estimate per forward row of L real tokens (padding is not counted, so padding shows up as
lost efficiency):  2 * P * L  +  4 * (encoder layers + head layers) * d * L^2,  where P is the number
of weights in the per-token matmuls of the encoder and head layers (embeddings, scorer and act head
left out) and the second term is QK^T plus attention-times-V. A state's rows are taken to be of equal
length, ``usage["input_tokens"] / questions``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open
from tokenizers import Tokenizer

import laya
from laya.testing import random_checkpoint

Row = tuple[str, str, float]
CACHE = Path(tempfile.gettempdir()) / "laya-bench" / "base-modernbert"
SHAPE = {
    "encoder": "modernbert",
    "hidden_size": 768,
    "layers": 8,
    "heads": 12,
    "intermediate_size": 1152,
    "vocab_size": 50_000,
    "head_layers": 2,
    "max_len": 512,
    "head_max_len": 192,
}
EMAIL = (
    "Subject: charged twice for order 4471\n\nHello, I was charged twice for my order last week and "
    "I still have not received the refund you promised on the phone. Please fix this today or I will "
    "cancel my account and report the payment to my bank. Thanks, Sam"
)
QUESTIONS = {
    "angry": {"type": "noul", "instructions": "Is the customer angry?"},
    "department": {
        "type": "choice",
        "instructions": "Which department should handle this email?",
        "criteria": ["billing", "technical support", "sales", "shipping"],
    },
    "urgency": {
        "type": "score",
        "instructions": "How urgent is this email?",
        "criteria": ["not urgent", "can wait a day", "today", "right now"],
    },
    "refund": {"type": "noul", "instructions": "Does the customer ask for a refund?"},
}
BATCH_QUESTIONS = {k: QUESTIONS[k] for k in ("angry", "department", "urgency")}
SENTENCES = (
    "My parcel arrived damaged and the box was open.",
    "Could you send me a copy of last month's invoice?",
    "The app crashes every time I try to log in from my phone.",
    "I would like to upgrade my plan to the premium version.",
    "Thank you for the quick help yesterday, everything works now.",
    "Why was my card declined when the balance is fine?",
    "Please cancel my subscription at the end of this month.",
    "The delivery driver left the package at the wrong address.",
)


def states(n: int) -> list[str]:
    """``n`` support messages of 1 to 8 sentences (about 12 to 100 tokens)."""
    return [
        " ".join(SENTENCES[(i + j) % len(SENTENCES)] for j in range(1 + i % 8)) for i in range(n)
    ]


def document(sentences: int = 93) -> str:
    """A long support thread of about 1,200 tokens."""
    return " ".join(SENTENCES[i % len(SENTENCES)] for i in range(sentences))


def doc_tokens(text: str) -> int:
    """Length of ``text`` in the checkpoint's tokenizer, special tokens left out."""
    tokenizer = Tokenizer.from_file(str(CACHE / "tokenizer" / "tokenizer.json"))
    return len(tokenizer.encode(text, add_special_tokens=False).ids)


def checkpoint() -> Path:
    """The cached benchmark checkpoint, built (atomically) when missing."""
    if (CACHE / "model.safetensors").is_file() and (CACHE / "rl_agent_config.json").is_file():
        return CACHE
    staging = CACHE.with_name(CACHE.name + ".building")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.rmtree(CACHE, ignore_errors=True)
    random_checkpoint(staging, **SHAPE)
    staging.rename(CACHE)
    return CACHE


def matmul_params(path: Path) -> int:
    """Weights of the per-token matmuls: 2-D tensors of the encoder and head layers."""
    with safe_open(str(path / "model.safetensors"), "pt") as f:
        names = [n for n in list(f.keys()) if n.startswith(("encoder.layers.", "head.layers."))]
        shapes = [f.get_slice(n).get_shape() for n in names]
    return sum(rows * cols for rows, cols in (s for s in shapes if len(s) == 2))


def flops(tokens: float, rows: int, params: int) -> float:
    """Estimated forward FLOPs for ``rows`` rows holding ``tokens`` real tokens (module docstring)."""
    row = tokens / rows
    layers = SHAPE["layers"] + SHAPE["head_layers"]
    return 2 * params * tokens + rows * 4 * layers * SHAPE["hidden_size"] * row * row


def batch_flops(results: list[dict], questions: int, params: int) -> float:
    """Estimated FLOPs of the forwards behind these results, one row per state and question."""
    return sum(flops(r["usage"]["input_tokens"], questions, params) for r in results)


def median_time(call: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Median wall time of ``call`` over ``repeats`` runs after one warm-up, and its last output."""
    out = call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def peak_gflops(n: int = 1024, repeats: int = 20) -> float:
    """Dense fp32 ``torch.mm`` GFLOP/s on n x n matrices, median after warm-up."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    seconds, _ = median_time(lambda: torch.mm(a, b), repeats)
    return 2 * n**3 / seconds / 1e9


def bench_system_one(agent: Any, repeats: int, params: int) -> tuple[str, list[Row], float]:
    """``system_one`` on the email with four questions."""
    label = "system_one, 4 questions"
    t, r = median_time(lambda: agent.system_one(EMAIL, QUESTIONS), repeats)
    rows = [
        (label, "ms / call", t * 1e3),
        (label, "ms / question", t * 1e3 / len(QUESTIONS)),
        (label, "input tokens / call", r["usage"]["input_tokens"]),
    ]
    return label, rows, batch_flops([r], len(QUESTIONS), params) / t / 1e9


def bench_batch(
    agent: Any, repeats: int, params: int, **kwargs: Any
) -> tuple[str, list[Row], float]:
    """``predict_batch`` of 32 states x 3 questions, with ``kwargs`` passed through."""
    label = "predict_batch 32x3" + (", bs=8 sorted" if kwargs else "")
    batch = states(32)
    t, r = median_time(lambda: agent.predict_batch(batch, BATCH_QUESTIONS, **kwargs), repeats)
    rows = [
        (label, "ms / call", t * 1e3),
        (label, "rows / s", len(batch) * len(BATCH_QUESTIONS) / t),
        (label, "tokens / s", sum(x["usage"]["input_tokens"] for x in r) / t),
    ]
    return label, rows, batch_flops(r, len(BATCH_QUESTIONS), params) / t / 1e9


def bench_long(agent: Any, repeats: int, params: int) -> tuple[str, list[Row], float]:
    """``predict_long`` over the ~1,200-token document with two questions."""
    doc = document()
    questions = {k: QUESTIONS[k] for k in ("angry", "refund")}
    label = f"predict_long, {doc_tokens(doc)}-token doc, 2 q"
    t, r = median_time(lambda: agent.predict_long(doc, questions), repeats)
    tokens, windows = r["usage"]["input_tokens"], r["usage"]["windows"]
    rows = [
        (label, "ms / call", t * 1e3),
        (label, "windows", windows),
        (label, "tokens / s", tokens / t),
    ]
    return label, rows, flops(tokens, windows * len(questions), params) / t / 1e9


def measure(agent: Any, repeats: int, params: int) -> list[Row]:
    """Run every scenario, then the matmul peak, and return (scenario, metric, value) rows."""
    runs = [
        bench_system_one(agent, repeats, params),
        bench_batch(agent, repeats, params),
        bench_batch(agent, repeats, params, batch_size=8, sort_by_length=True),
        bench_long(agent, repeats, params),
    ]
    peak = peak_gflops()
    rows = [row for _, scenario_rows, _ in runs for row in scenario_rows]
    rows.append(("torch.mm 1024x1024 fp32", "GFLOP/s", peak))
    for label, _, achieved in runs:
        rows += [(label, "GFLOP/s", achieved), (label, "of torch.mm peak", achieved / peak)]
    return rows


def shown(metric: str, value: float) -> str:
    """A value as printed: fractions as percentages, counts as integers, the rest to 0.1."""
    if metric.startswith("of "):
        return f"{value:.1%}"
    return f"{value:,}" if isinstance(value, int) else f"{value:,.1f}"


def table(rows: list[Row]) -> str:
    """Format the rows as a plain-text table."""
    width = max(len(s) for s, _, _ in rows)
    lines = [f"{'scenario':<{width}}  {'metric':<20} {'value':>10}", "-" * (width + 33)]
    for scenario, metric, value in rows:
        lines.append(f"{scenario:<{width}}  {metric:<20} {shown(metric, value):>10}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Build or reuse the checkpoint, load it on CPU, and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per scenario (median)")
    parser.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    started = time.perf_counter()
    path = checkpoint()
    agent = laya.load(str(path), device="cpu")
    params = matmul_params(path)
    print(f"command: {' '.join([sys.executable, *sys.argv])}")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, laya {laya.__version__}")
    layers = f"{SHAPE['layers']}+{SHAPE['head_layers']} layers"
    print(
        f"checkpoint: {path} (d={SHAPE['hidden_size']}, {layers}, {params / 1e6:.1f}M matmul weights)"
    )
    print(f"repeats: {args.repeats} (median, after one warm-up)")
    print(f"load average at start: {os.getloadavg()[0]:.1f}\n")
    print(table(measure(agent, args.repeats, params)))
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")
    print(f"total wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
