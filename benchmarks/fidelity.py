"""What each fast precision changes in a trained model's decisions, against fp32.

Run ``python benchmarks/fidelity.py [--model mini] [--threads N] [FILES...]`` (default: data/decisions/test.jsonl
and every data/checks/*.jsonl). Every labelled state is answered by the fp32 Agent (the exact
path), the bf16 Agent (``precision="bf16"``, where this CPU runs it) and the int8 ONNX graph
(exported once under ``<tempdir>/laya-bench/<model>-onnx``). Per file and precision it prints
how many decisions flip against fp32 (a choice changed, a score level changed, a noul crossing
0.5), the largest change of any option probability, and the accuracy against the gold labels.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# This folder has a file named onnx.py: keep it off sys.path so ``import onnx`` finds the package.
sys.path[:] = [p for p in sys.path if Path(p or os.curdir).resolve() != HERE]

import numpy as np  # noqa: E402

import laya  # noqa: E402
from laya.engine.precision import cpu_flags, native_bf16  # noqa: E402
from laya.training.evaluate import answer_probs, read_decisions  # noqa: E402

ROOT = HERE.parent
DEFAULT_FILES = [
    ROOT / "data/decisions/test.jsonl",
    *sorted((ROOT / "data/checks").glob("*.jsonl")),
]


def int8_graph(model: str) -> Path:
    """The model's int8 ONNX graph, exported when missing."""
    import laya.onnx

    path = (
        Path(tempfile.gettempdir()) / "laya-bench" / f"{Path(model).name}-onnx" / "laya.int8.onnx"
    )
    if not path.is_file():
        laya.onnx.export(model, path, quantize="int8")
    return path


def runtimes(model: str) -> dict[str, Any]:
    """fp32, bf16 (where native) and int8 runtimes of ``model``."""
    found = {"fp32": laya.load(model, device="cpu", precision="fp32")}
    if native_bf16(cpu_flags()):
        found["bf16"] = laya.load(model, device="cpu", precision="bf16")
    graph = int8_graph(model)
    found["int8 (ONNX)"] = laya.load(model, backend="onnx", onnx_path=str(graph))
    return found


def answer(runtime: Any, examples: list) -> list[tuple[np.ndarray, int]]:
    """(option probabilities, gold index) of every question of every example, in file order.

    Examples asking the same questions share one ``predict_batch`` call.
    """
    groups: dict[str, list[int]] = {}
    for i, ex in enumerate(examples):
        groups.setdefault(json.dumps(ex.raw_questions, sort_keys=True), []).append(i)
    results: dict[int, dict] = {}
    for members in groups.values():
        states = [examples[i].state for i in members]
        for i, result in zip(
            members, runtime.predict_batch(states, examples[members[0]].raw_questions)
        ):
            results[i] = result
    out = []
    for i, ex in enumerate(examples):
        for q, gold in zip(ex.questions, ex.gold):
            out.append((answer_probs(q, results[i]["answers"][q.qid]), gold))
    return out


def compare(reference: list, other: list) -> dict[str, float]:
    """Flips, largest probability change and accuracy of ``other`` against ``reference``."""
    flips = sum(int(np.argmax(a) != np.argmax(b)) for (a, _), (b, _) in zip(reference, other))
    change = max(float(np.abs(a - b).max()) for (a, _), (b, _) in zip(reference, other))
    correct = sum(int(np.argmax(p) == gold) for p, gold in other)
    return {
        "decisions": len(other),
        "flips": flips,
        "change": change,
        "accuracy": correct / len(other),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    parser.add_argument("--model", default="mini")
    parser.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's)")
    args = parser.parse_args()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    found = runtimes(args.model)
    flags = sorted(f for f in cpu_flags() if f.startswith(("avx512", "amx", "avx_vnni")))
    print(f"model: {args.model}; CPU flags: {' '.join(flags) or 'none of AVX-512/AMX'}")
    print(
        f"{'file':<34} {'precision':<12} {'decisions':>9} {'flipped':>14} {'max |dp|':>9} {'accuracy':>9}"
    )
    for path in args.files:
        examples = read_decisions(path)
        answers = {name: answer(runtime, examples) for name, runtime in found.items()}
        for name, got in answers.items():
            row = compare(answers["fp32"], got)
            flipped = f"{row['flips']} ({row['flips'] / row['decisions']:.1%})"
            print(
                f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path!s:<34} {name:<12} "
                f"{row['decisions']:>9} {flipped:>14} {row['change']:>9.4f} {row['accuracy']:>9.1%}"
            )


if __name__ == "__main__":
    main()
