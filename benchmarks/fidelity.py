"""What each fast precision changes in a trained model's decisions, against fp32.

Run ``python benchmarks/fidelity.py [--model mini] [--precisions P...] [--threads N] [--limit N]
[FILES...]`` (default: data/decisions/test.jsonl and every data/checks/*.jsonl). Every labelled
state is answered by the fp32 Agent (the exact path, the reference) and, of ``--precisions``
(default: all), the bf16 Agent (``bf16``: ``precision="bf16"``, where this CPU runs it natively),
the int8 Agent (``int8``: ``precision="int8"``, where this CPU has VNNI or AMX) and the int8 ONNX
graph (``onnx-int8``: ``laya.onnx.export(model, quantize="int8")``, exported afresh each run).
Per file and precision it prints how many decisions flip against fp32 (a choice changed, a
score level changed, a noul crossing 0.5), the largest change of any option probability, and the
accuracy against the gold labels.

``--sensitivity`` finds the linears that matter: the fp32 Agent with one group of its linears at
a time in int8 (each role of a transformer layer across the encoder, then across the head; each
layer), everything else fp32; then all of them at once; then the int8 recipe itself
(``precision="int8"``). ``--sensitivity onnx`` does the same for the int8 ONNX graph: an fp32
graph quantized with one group of matmuls at a time, then with the graph's recipe. ``--record`` writes the checkpoint's fidelity record
(``fidelity.json`` beside its weights, ``laya.checkpoint.fidelity``) from the run, which
``fast=True`` reads to decide whether int8 keeps this checkpoint's decisions; it needs whole files.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# This folder has a file named onnx.py: keep it off sys.path so ``import onnx`` finds the package.
sys.path[:] = [p for p in sys.path if Path(p or os.curdir).resolve() != HERE]

import numpy as np  # noqa: E402

import laya  # noqa: E402
from laya.checkpoint.fidelity import (  # noqa: E402
    FIDELITY_FILE,
    MAX_FLIP_RATE,
    RECORD_FORMAT,
)
from laya.engine.precision import cpu_flags, native_bf16, native_int8  # noqa: E402
from laya.training.evaluate import answer_probs, read_decisions  # noqa: E402

ROOT = HERE.parent
DEFAULT_FILES = [
    ROOT / "data/decisions/test.jsonl",
    *sorted((ROOT / "data/checks").glob("*.jsonl")),
]
SENSITIVITY_FILES = [ROOT / "data/decisions/test.jsonl", ROOT / "data/checks/challenge.jsonl"]
Answers = list[tuple[np.ndarray, int]]
PRECISIONS = ["bf16", "int8", "onnx-int8"]


def int8_graph_agent(model: str) -> Any:
    """An ONNXAgent on the model's int8 graph, exported afresh (the graph this laya writes, not
    one left over from another version) into a folder removed once the session has read it."""
    import laya.onnx

    with tempfile.TemporaryDirectory(prefix="laya-fidelity-") as folder:
        graph = laya.onnx.export(model, Path(folder) / "laya.int8.onnx", quantize="int8")
        return laya.load(model, backend="onnx", onnx_path=str(graph))


def runtimes(model: str, wanted: list[str]) -> dict[str, Any]:
    """fp32 (the reference) and, of the ``wanted`` ones, bf16 (where native), int8 (where VNNI or
    AMX) and int8 ONNX runtimes of ``model``."""
    found = {"fp32": laya.load(model, device="cpu", precision="fp32")}
    if "bf16" in wanted and native_bf16(cpu_flags()):
        found["bf16"] = laya.load(model, device="cpu", precision="bf16")
    if "int8" in wanted and native_int8(cpu_flags()):
        found["int8"] = laya.load(model, device="cpu", precision="int8")
    if "onnx-int8" in wanted:
        found["int8 (ONNX)"] = int8_graph_agent(model)
    return found


def answer(runtime: Any, examples: list) -> Answers:
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


def compare(reference: Answers, other: Answers) -> dict[str, float]:
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


def label(path: Path) -> str:
    """A data file as the tables and the record name it: relative to the repository."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def row(file: str, name: str, figures: dict[str, float]) -> str:
    flipped = f"{figures['flips']} ({figures['flips'] / figures['decisions']:.1%})"
    return (
        f"{file:<34} {name:<28} {figures['decisions']:>9} {flipped:>14} "
        f"{figures['change']:>9.4f} {figures['accuracy']:>9.1%}"
    )


HEADER = (
    f"{'file':<34} {'precision':<28} {'decisions':>9} {'flipped':>14} {'max |dp|':>9} "
    f"{'accuracy':>9}"
)


def precisions(args: argparse.Namespace, data: dict[Path, list]) -> dict[str, dict[str, Any]]:
    """Every precision against fp32 on every file: the table, and its figures by precision."""
    wanted = [p for p in args.precisions if not (args.no_onnx and p == "onnx-int8")]
    found = runtimes(args.model, wanted)
    print(HEADER)
    figures: dict[str, dict[str, Any]] = {name: {} for name in found}
    for path, examples in data.items():
        answers = {name: answer(runtime, examples) for name, runtime in found.items()}
        for name, got in answers.items():
            figures[name][label(path)] = compare(answers["fp32"], got)
            print(row(label(path), name, figures[name][label(path)]), flush=True)
    return figures


# --------------------------------------------------------------------------- sensitivity


def groups(model: Any, by: str = "both") -> dict[str, Callable[[str], bool]]:
    """Groups of linears, each as the predicate "stays fp32" for every linear outside it: each
    role across the encoder and across the head (``by`` role), each encoder and head layer
    (``by`` layer), or both."""
    from laya.engine.backends.int8 import ROLES, role

    def only(test: Callable[[str], bool]) -> Callable[[str], bool]:
        return lambda name: not test(name)

    found: dict[str, Callable[[str], bool]] = {}
    for part in ("encoder", "head") if by != "layer" else ():
        for key in ROLES:
            found[f"{part}: {key}"] = only(
                lambda n, part=part, key=key: n.startswith(part + ".") and role(n) == key
            )
    names = [n for n, m in model.named_modules() if type(m).__name__.endswith("Linear")]
    layers = sorted(
        {m.group(0) for n in names if (m := re.match(r"(encoder|head)\..*?layers?\.\d+\.", n))},
        key=lambda prefix: (prefix.startswith("head"), int(prefix.rstrip(".").split(".")[-1])),
    )
    for prefix in layers if by != "role" else ():
        found[prefix.rstrip(".")] = only(lambda n, prefix=prefix: n.startswith(prefix))
    return found


def sensitivity(args: argparse.Namespace, data: dict[Path, list]) -> None:
    """int8 on one group of linears at a time, against fp32."""
    import torch

    from laya.engine.backends import int8, kernels
    from laya.engine.backends.torch import load_weights

    agent = laya.load(args.model, device="cpu", precision="fp32")
    backend = agent.torch_backend
    reference = {path: answer(agent, examples) for path, examples in data.items()}
    print(HEADER.replace("precision", "int8 on", 1))
    candidates = groups(agent.model, args.groups)
    candidates["everything (encoder and head)"] = lambda name: False
    recipe = "the int8 recipe (precision='int8')"
    candidates[recipe] = int8.kept
    for group, kept in candidates.items():
        # the recipe's kept linears run bf16 where native, as precision="int8" runs them
        lowered = torch.bfloat16 if group == recipe and native_bf16(cpu_flags()) else None
        int8.quantize(agent.model, head=backend.packed, keep=kept, lowered=lowered)
        for path, examples in data.items():
            print(row(label(path), group, compare(reference[path], answer(agent, examples))))
        int8.dequantize(agent.model)
        kernels.use_onednn(agent.model)
        load_weights(agent.model, backend.weights, backend.model_id)
        sys.stdout.flush()


def onnx_sensitivity(args: argparse.Namespace, data: dict[Path, list]) -> None:
    """The int8 ONNX graph with one group of matmuls at a time in int8 (how many in brackets),
    everything else fp32, against fp32 PyTorch; then the graph's own recipe."""
    import laya.onnx
    from laya.engine.backends import int8
    from laya.onnx.int8_graph import quantize_graph

    agent = laya.load(args.model, device="cpu", precision="fp32")
    reference = {path: answer(agent, examples) for path, examples in data.items()}
    print(HEADER.replace("precision", "int8 (ONNX) on", 1))
    candidates = groups(agent.model, args.groups)
    candidates["the graph's recipe (laya export-onnx --quantize int8)"] = int8.kept
    with tempfile.TemporaryDirectory(prefix="laya-fidelity-") as folder:
        traced = laya.onnx.export(args.model, Path(folder) / "fp32.onnx")
        for group, kept in candidates.items():
            target = Path(folder) / "laya.int8.onnx"
            products = quantize_graph(agent.model, traced, target, keep=kept)
            graph = laya.load(args.model, backend="onnx", onnx_path=str(target))
            for path, examples in data.items():
                got = compare(reference[path], answer(graph, examples))
                print(row(label(path), f"{group} ({products})", got), flush=True)


# --------------------------------------------------------------------------- the record


def record(model: str, figures: dict[str, dict[str, Any]]) -> Path:
    """Write ``fidelity.json`` for ``model`` from this run's bf16 and int8 figures."""
    from laya.checkpoint import file_sha256
    from laya.engine.backends.int8 import RECIPE

    agent = laya.load(model, device="cpu")
    directory = Path(agent.torch_backend.weights).parent
    recipes = {"int8": RECIPE, "bf16": "autocast"}
    entries = {
        name: {
            "recipe": recipes[name],
            "files": {
                file: {
                    "decisions": f["decisions"],
                    "flipped": f["flips"],
                    "max_abs_dp": round(f["change"], 4),
                    "accuracy": round(f["accuracy"], 4),
                }
                for file, f in figures[name].items()
            },
        }
        for name in recipes
        if name in figures
    }
    document = {
        "format": RECORD_FORMAT,
        "reference": "fp32",
        "weights_sha256": file_sha256(directory / "model.safetensors"),
        "max_flip_rate": MAX_FLIP_RATE,
        "command": f"python benchmarks/fidelity.py --record --model {model}",
        "precisions": entries,
    }
    target = directory / FIDELITY_FILE
    staged = target.with_name(f".{target.name}.tmp")
    staged.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    os.replace(staged, target)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--model", default="mini")
    parser.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's)")
    parser.add_argument("--limit", type=int, help="the first N labelled rows of each file")
    parser.add_argument(
        "--precisions",
        nargs="+",
        choices=PRECISIONS,
        default=PRECISIONS,
        help="what to compare with fp32 (default: all of them)",
    )
    parser.add_argument("--no-onnx", action="store_true", help="leave the int8 ONNX graph out")
    parser.add_argument(
        "--sensitivity",
        nargs="?",
        const="torch",
        choices=["torch", "onnx"],
        help="int8 on one group of linears at a time, on PyTorch (the default) or in the ONNX graph",
    )
    parser.add_argument(
        "--groups",
        choices=["role", "layer", "both"],
        default="both",
        help="with --sensitivity: groups by role, by layer, or both",
    )
    parser.add_argument(
        "--record", action="store_true", help=f"write the checkpoint's {FIDELITY_FILE}"
    )
    args = parser.parse_args()
    if args.record and (args.limit or args.sensitivity):
        parser.error("--record needs whole files: no --limit, no --sensitivity")
    if args.record and not {"bf16", "int8"} <= set(args.precisions):
        parser.error("--record records bf16 and int8: keep both in --precisions")
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    started = time.perf_counter()
    files = args.files or (SENSITIVITY_FILES if args.sensitivity else DEFAULT_FILES)
    data = {path: read_decisions(path)[: args.limit] for path in files}
    flags = sorted(f for f in cpu_flags() if f.startswith(("avx512", "amx", "avx_vnni")))
    print(f"model: {args.model}; CPU flags: {' '.join(flags) or 'none of AVX-512/AMX'}")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    if args.sensitivity == "onnx":
        onnx_sensitivity(args, data)
    elif args.sensitivity:
        sensitivity(args, data)
    else:
        figures = precisions(args, data)
        if args.record:
            print(f"wrote {record(args.model, figures)}")
    print(f"load average at end: {os.getloadavg()[0]:.1f}; {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
