"""CPU throughput of the Agent on a random checkpoint of ModernBERT-base width (8 layers).

Run ``python benchmarks/agent.py [--repeats N] [--threads N] [--only SCENARIO...]
[--int8-everywhere]``. The checkpoint is built once with ``laya.testing.random_checkpoint`` and cached under
``<tempdir>/laya-bench/base-modernbert``. It is loaded in fp32 (the exact path), with
``fast=True`` (whatever precision that picks on this CPU, fp32 included, so "fast is never
slower" is timed too) and, on a CPU with VNNI or AMX, with ``precision="int8"`` (a random
checkpoint has no fidelity record, so fast does not pick int8 for it), and with
``--int8-everywhere`` every linear of the encoder and head in int8; they take turns call by
call, and each is reported with its speed-up over fp32 (the median of the per-round ratios, and
their range) and its useful GFLOP/s against this machine's dense matmul peaks measured in the
run.

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
from laya.testing import random_checkpoint  # the public path (versus.py runs older checkouts too)
from safetensors import safe_open
from tokenizers import Tokenizer

import laya

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


def seconds(call: Callable[[], Any]) -> tuple[float, Any]:
    """Wall time of one call, and its output."""
    start = time.perf_counter()
    out = call()
    return time.perf_counter() - start, out


def interleaved(
    agents: dict[str, Any], call: Callable[[Any], Any], repeats: int
) -> dict[str, tuple[list[float], Any]]:
    """Seconds of every round and the last output per agent, the agents taking turns call by
    call."""
    for agent in agents.values():
        call(agent)  # warm-up
    times: dict[str, list[float]] = {name: [] for name in agents}
    outputs: dict[str, Any] = {}
    for _ in range(repeats):
        for name, agent in agents.items():
            took, outputs[name] = seconds(lambda agent=agent: call(agent))
            times[name].append(took)
    return {name: (times[name], outputs[name]) for name in agents}


def peaks(n: int = 1024, repeats: int = 20) -> dict[str, float]:
    """Dense n x n matmul GFLOP/s (int8: GOP/s): fp32 ``torch.mm`` (MKL), fp32 on oneDNN (laya's
    fp32 linears), bf16 ``torch.mm`` (oneDNN), int8 on oneDNN (laya's int8 linears: uint8
    activations, int8 weights, fp32 out); medians after warm-up."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    a16, b16 = a.bfloat16(), b.bfloat16()
    kernels = {
        "fp32 torch.mm": lambda: torch.mm(a, b),
        "fp32 oneDNN": lambda: torch.ops.mkldnn._linear_pointwise(a, b, None, "none", [], ""),
        "bf16 torch.mm": lambda: torch.mm(a16, b16),
    }
    if hasattr(torch.ops.onednn, "qlinear_pointwise"):
        codes = torch.randint(0, 256, (n, n), dtype=torch.uint8)
        packed = torch.ops.onednn.qlinear_prepack(
            torch.randint(-127, 128, (n, n)).to(torch.int8), None
        )
        scales, zeros = torch.ones(n), torch.zeros(n, dtype=torch.int64)
        kernels["int8 oneDNN"] = lambda: torch.ops.onednn.qlinear_pointwise(
            codes, 1.0, 128, packed, scales, zeros, None, 1.0, 0, torch.float32, "none", [], ""
        )
    found = {}
    with torch.inference_mode():
        for name, kernel in kernels.items():
            kernel()
            found[name] = (
                2 * n**3 / statistics.median(seconds(kernel)[0] for _ in range(repeats)) / 1e9
            )
    return found


def scenarios(params: int) -> list[tuple[str, Callable[[Any], Any], Callable[[Any], float]]]:
    """(label, call, FLOPs of its result) for every scenario."""
    batch, doc = states(32), document()
    long_questions = {k: QUESTIONS[k] for k in ("angry", "refund")}

    def long_flops(r: dict) -> float:
        usage = r["usage"]
        return flops(usage["input_tokens"], usage["windows"] * len(long_questions), params)

    return [
        (
            "system_one, 4 questions",
            lambda a: a.system_one(EMAIL, QUESTIONS),
            lambda r: batch_flops([r], len(QUESTIONS), params),
        ),
        (
            "predict_batch 32x3",
            lambda a: a.predict_batch(batch, BATCH_QUESTIONS),
            lambda r: batch_flops(r, len(BATCH_QUESTIONS), params),
        ),
        (
            "predict_batch 32x3, bs=8 sorted",
            lambda a: a.predict_batch(batch, BATCH_QUESTIONS, batch_size=8, sort_by_length=True),
            lambda r: batch_flops(r, len(BATCH_QUESTIONS), params),
        ),
        (
            f"predict_long, {doc_tokens(doc)}-token doc, 2 q",
            lambda a: a.predict_long(doc, long_questions),
            long_flops,
        ),
    ]


PEAK_OF = {"fp32": "fp32 oneDNN", "bf16": "bf16 torch.mm", "int8": "int8 oneDNN"}


def measure(
    agents: dict[str, Any], repeats: int, params: int, only: list[str] | None = None
) -> list[list[str]]:
    """One row per scenario: each precision's median ms, its speed-up over fp32 (median of the
    rounds' ratios, and their range) and its GFLOP/s."""
    peak = peaks()
    rows = []
    for label, call, count in scenarios(params):
        if only and not any(label.startswith(name) for name in only):
            continue
        timed = interleaved(agents, call, repeats)
        base = timed["fp32"][0]
        row = [label]
        for name, (times, out) in timed.items():
            took = statistics.median(times)
            ratios = [b / t for b, t in zip(base, times)]
            rate = count(out) / took / 1e9
            kind = "int8" if name.startswith("int8") else agents[name].precision
            of = peak.get(PEAK_OF.get(kind, ""), peak["fp32 oneDNN"])
            speed = f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
            row += [f"{took * 1e3:,.0f}", speed, f"{rate:,.1f} ({rate / of:.0%})"]
        rows.append(row)
    rows += [[f"peak: {name} 1024x1024", "", "", f"{rate:,.1f}"] for name, rate in peak.items()]
    return rows


def table(header: list[str], rows: list[list[str]]) -> str:
    """Rows as a plain-text table, first column left-aligned."""
    widths = [
        max(len(r[i]) if i < len(r) else 0 for r in [header, *rows]) for i in range(len(header))
    ]
    lines = []
    for row in [header, *rows]:
        cells = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells))
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Build or reuse the checkpoint, load it on CPU in each precision, and print the table."""
    # not at the top: versus.py imports this file under main
    from laya.engine.backends import int8
    from laya.engine.precision import cpu_flags, native_int8

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per scenario (median)")
    parser.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's)")
    parser.add_argument(
        "--only", nargs="*", help="scenarios whose label starts with one of these (system_one...)"
    )
    parser.add_argument(
        "--int8-everywhere",
        action="store_true",
        help="also time every linear of the encoder and head in int8 (not a precision laya "
        "offers: it moves decisions, docs/performance.md#int8)",
    )
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    started = time.perf_counter()
    path = checkpoint()
    agents = {"fp32": laya.load(str(path), device="cpu")}
    fast = laya.load(str(path), device="cpu", fast=True)
    agents[f"fast={fast.precision}"] = fast
    if native_int8(cpu_flags()) and fast.precision != "int8":
        agents["int8"] = laya.load(str(path), device="cpu", precision="int8")
    if args.int8_everywhere:
        agents["int8 everywhere"] = everywhere = laya.load(str(path), device="cpu")
        int8.quantize(everywhere.model, keep=lambda name: False)
    params = matmul_params(path)
    flags = sorted(f for f in cpu_flags() if f.startswith(("avx512", "amx", "avx_vnni")))
    print(f"command: {' '.join([sys.executable, *sys.argv])}")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, laya {laya.__version__}")
    print(f"CPU flags: {' '.join(flags) or 'no AVX-512 or AMX'}; fast=True runs {fast.precision}")
    layers = f"{SHAPE['layers']}+{SHAPE['head_layers']} layers"
    print(
        f"checkpoint: {path} (d={SHAPE['hidden_size']}, {layers}, {params / 1e6:.1f}M matmul weights)"
    )
    print(f"repeats: {args.repeats} (median, precisions alternating, after one warm-up)")
    print(f"load average at start: {os.getloadavg()[0]:.1f}\n")
    header = ["scenario"]
    for name in agents:
        header += [f"{name} ms", "vs fp32", "GFLOP/s (of peak)"]
    print(table(header, measure(agents, args.repeats, params, args.only)))
    print(
        "\n(GFLOP/s of an fp32 run are of the fp32 oneDNN peak, of a bf16 run of the bf16 peak, "
        "of an int8 run of the int8 peak; vs fp32: median of the rounds' ratios (range))"
    )
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    print(f"total wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
