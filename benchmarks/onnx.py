"""ONNXAgent (fp32 and int8) against the PyTorch Agent on CPU, and what int8 changes in answers.

Run ``python benchmarks/onnx.py [--repeats N]``. Speed: the random ModernBERT-base-width checkpoint
of ``benchmarks/agent.py`` and its calls (system_one, predict_batch 32x3, predict_long), the three
runtimes interleaved call by call so load drifts hit them alike; medians of --repeats, and
each ONNX median as a speed-up over the Agent's. Fidelity: every fixture case answered by the fp32
and the int8 graph, counting answers whose decision flips and the largest probability change.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# This file is named onnx.py: keep its folder off sys.path so ``import onnx`` finds the package.
sys.path[:] = [p for p in sys.path if Path(p or os.curdir).resolve() != HERE]

import laya  # noqa: E402
import laya.onnx  # noqa: E402


def _load_agent_benchmark() -> Any:
    spec = importlib.util.spec_from_file_location("agent_benchmark", HERE / "agent.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _load_agent_benchmark()
FIXTURES = HERE.parent / "tests" / "fixtures"
EXPORTS = bench.CACHE.with_name(bench.CACHE.name + "-onnx")
BASE_CASES = [
    {"call": "system_one", "state": bench.EMAIL, "questions": bench.QUESTIONS},
    {"call": "predict_batch", "states": bench.states(32), "questions": bench.BATCH_QUESTIONS},
]


def exported(checkpoint: Path, directory: Path, quantize: str | None) -> Path:
    """The checkpoint's graph under ``directory``, exported when missing or older than weights."""
    path = directory / ("laya.int8.onnx" if quantize else "laya.onnx")
    weights = checkpoint / "model.safetensors"
    if not path.is_file() or path.stat().st_mtime < weights.stat().st_mtime:
        laya.onnx.export(checkpoint, path, quantize=quantize)
    return path


def scenarios() -> dict[str, Callable[[Any], Any]]:
    """The calls of benchmarks/agent.py, by label."""
    batch, doc = bench.states(32), bench.document()
    long_questions = {k: bench.QUESTIONS[k] for k in ("angry", "refund")}
    return {
        "system_one, 4 questions": lambda r: r.system_one(bench.EMAIL, bench.QUESTIONS),
        "predict_batch 32x3": lambda r: r.predict_batch(batch, bench.BATCH_QUESTIONS),
        f"predict_long, {bench.doc_tokens(doc)} tokens, 2 q": lambda r: r.predict_long(
            doc, long_questions
        ),
    }


def interleaved(runtimes: dict[str, Any], repeats: int) -> dict[tuple[str, str], float]:
    """Median seconds per (scenario, runtime), alternating runtimes within every repeat.

    Each runtime is warmed up by one ``system_one`` call (first-call costs: allocators, caches);
    the long scenarios are not repeated for warm-up, which keeps the run to a few minutes.
    """
    calls = scenarios()
    times: dict[tuple[str, str], list[float]] = {}
    for runtime in runtimes.values():
        runtime.system_one(bench.EMAIL, bench.QUESTIONS)
    for label, call in calls.items():
        for _ in range(repeats):
            for name, runtime in runtimes.items():
                start = time.perf_counter()
                call(runtime)
                times.setdefault((label, name), []).append(time.perf_counter() - start)
    return {key: statistics.median(values) for key, values in times.items()}


def speed_table(medians: dict[tuple[str, str], float], names: list[str]) -> str:
    """Milliseconds per call, and each ONNX runtime's speed-up over the first (PyTorch) one."""
    labels = list(dict.fromkeys(label for label, _ in medians))
    width = max(map(len, labels))
    header = f"{'scenario':<{width}}" + "".join(f"  {n + ' ms':>14}" for n in names)
    header += "".join(f"  {n + ' speed-up':>20}" for n in names[1:])
    lines = [header, "-" * len(header)]
    for label in labels:
        ms = [medians[label, n] * 1e3 for n in names]
        line = f"{label:<{width}}" + "".join(f"  {t:>14,.1f}" for t in ms)
        lines.append(line + "".join(f"  {ms[0] / t:>19.2f}x" for t in ms[1:]))
    return "\n".join(lines)


def decisions(result: dict) -> Iterator[tuple[Any, list[float]]]:
    """(decision, probabilities) of every answer: the choice, likeliest level, or noul >= 0.5."""
    for answer in result["answers"].values():
        if answer["type"] == "noul":
            yield answer["noul"] >= 0.5, [answer["noul"]]
        else:
            probs = answer["probabilities"]
            yield max(probs, key=probs.get), list(probs.values())


def fidelity(label: str, fp32: Any, int8: Any, cases: list[dict]) -> str:
    """One line: answers, flipped decisions and the max probability difference, int8 vs fp32."""
    answers = flipped = 0
    worst = 0.0
    for case in cases:
        options = {k: v for k, v in case.items() if k not in {"call", "expected"}}
        pair = [getattr(r, case["call"])(**options) for r in (fp32, int8)]
        for a, b in zip(*(p if isinstance(p, list) else [p] for p in pair)):
            for (da, pa), (db, pb) in zip(decisions(a), decisions(b)):
                answers += 1
                flipped += da != db
                worst = max([worst, *(abs(x - y) for x, y in zip(pa, pb))])
    return (
        f"{label:<16} {answers:>4} answers, {flipped} decisions flipped ({flipped / answers:.1%}), "
        f"max |probability difference| {worst:.4f}"
    )


def fixture_fidelity(workdir: Path) -> list[str]:
    """One line per fixture: how int8 answers its cases compared with fp32."""
    lines = []
    for name in ("tiny-modernbert", "tiny-bert"):
        checkpoint = FIXTURES / name / "checkpoint"
        graphs = [exported(checkpoint, workdir / name, q) for q in (None, "int8")]
        fp32, int8 = (laya.ONNXAgent(checkpoint, onnx_path=g) for g in graphs)
        cases = json.loads((FIXTURES / name / "cases.json").read_text())
        lines.append(fidelity(name, fp32, int8, cases))
    return lines


def main(argv: list[str] | None = None) -> None:
    """Export (or reuse) the graphs, time the three runtimes, then compare int8 with fp32."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per scenario (median)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    import onnxruntime
    import torch

    checkpoint = bench.checkpoint()
    graphs = {q: exported(checkpoint, EXPORTS, q) for q in (None, "int8")}
    runtimes = {
        "torch": laya.load(str(checkpoint), device="cpu"),
        "onnx fp32": laya.ONNXAgent(checkpoint, onnx_path=graphs[None]),
        "onnx int8": laya.ONNXAgent(checkpoint, onnx_path=graphs["int8"]),
    }
    print(f"command: {' '.join([sys.executable, *sys.argv])}")
    print(
        f"torch {torch.__version__} ({torch.get_num_threads()} threads), onnxruntime "
        f"{onnxruntime.__version__} ({laya.engine.backends.onnx.physical_cores()} intra-op threads)"
    )
    print(f"checkpoint: {checkpoint} (d=768, 8+2 layers); graphs in {EXPORTS}")
    print(f"repeats: {args.repeats} (median), runtimes interleaved call by call\n")
    print(speed_table(interleaved(runtimes, args.repeats), list(runtimes)))
    print("\nint8 against fp32:")
    with tempfile.TemporaryDirectory(prefix="laya-onnx-fidelity-") as tmp:
        print("\n".join(fixture_fidelity(Path(tmp))))
    print(fidelity("base checkpoint", runtimes["onnx fp32"], runtimes["onnx int8"], BASE_CASES))
    sizes = {q or "fp32": graphs[q].stat().st_size / 2**20 for q in graphs}
    print(f"\ngraph sizes: fp32 {sizes['fp32']:.0f} MiB, int8 {sizes['int8']:.0f} MiB")
    print(f"total wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
