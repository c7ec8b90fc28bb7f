"""Shared test setup: fixture checkpoints, and an offline Hugging Face cache laid out from them.

The cache is built before anything imports huggingface_hub (which reads HF_HUB_CACHE and
HF_HUB_OFFLINE once, at import), so every test runs offline against real hub code. Each
pytest-xdist worker lays out its own. The run is parallel by default (README.md#test): the hooks
below choose the workers, the files' order and each worker's share of the cores.
"""

from __future__ import annotations

import atexit
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MODERNBERT = FIXTURES / "tiny-modernbert" / "checkpoint"
BERT = FIXTURES / "tiny-bert" / "checkpoint"
BUNDLE_REPO = "convaiinnovations/laya"
SNAPSHOT_COMMIT = "0" * 39 + "1"


def verify_fixtures(root: Path = FIXTURES) -> None:
    """Fail, naming the file, when a golden fixture is missing or differs from SHA256SUMS.

    The fixtures are byte-identical copies of the published runtime's checkpoints and results;
    an altered file would make the golden comparison mean nothing, so it stops the run.
    """
    for line in (root / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        path = root / name
        if not path.is_file():
            raise pytest.UsageError(f"golden fixture missing: {path}")
        if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            raise pytest.UsageError(f"golden fixture altered: {path} (its SHA-256 is not {digest})")


verify_fixtures()


def _lay_out_hub_cache(root: Path) -> Path:
    """Write the bundle repo as a Hub cache snapshot: root = ModernBERT fixture, subfolders = BERT."""
    repo_dir = root / ("models--" + BUNDLE_REPO.replace("/", "--"))
    snapshot = repo_dir / "snapshots" / SNAPSHOT_COMMIT
    shutil.copytree(MODERNBERT, snapshot)
    shutil.copytree(BERT, snapshot / "multilingual")
    shutil.copytree(MODERNBERT, snapshot / "typed-decisions")
    (repo_dir / "refs").mkdir(parents=True)
    (repo_dir / "refs" / "main").write_text(SNAPSHOT_COMMIT)
    return snapshot


HUB_CACHE = Path(tempfile.mkdtemp(prefix="laya-hub-cache-"))
HUB_SNAPSHOT = _lay_out_hub_cache(HUB_CACHE)
atexit.register(shutil.rmtree, HUB_CACHE, ignore_errors=True)
os.environ["HF_HUB_CACHE"] = str(HUB_CACHE)
os.environ["LAYA_CACHE_DIR"] = str(HUB_CACHE / "laya")  # the language model cache, not ~/.cache
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.pop("HF_TOKEN", None)
# The agent frameworks report usage over the network unless told not to (CrewAI at any time in the
# session, from its event threads): off for the whole run.
os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"
os.environ["OTEL_SDK_DISABLED"] = "true"
os.environ["AGNO_TELEMETRY"] = "false"
# Torch's OpenMP threads spin while they wait for work: on a busy machine they spin on cores other
# processes need (30 raw_logits calls on mini: 161 s beside a load of 15, 9-16 s passive, 38-47 s
# on one thread). Passive waiting keeps both cores for a pass; read when torch loads, so set here,
# before any test imports it, and inherited by the laya processes the tests start.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def usable_cores() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _share_the_cores() -> None:
    """In each of N pytest-xdist workers, torch's threads (and those of the laya processes a test
    starts, which inherit the variables) take 1/N of the cores, so N workers never run more
    threads than there are cores. Set before any test imports torch; a value you set is kept."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        share = str(max(1, usable_cores() // workers))
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ.setdefault(name, share)


_share_the_cores()
# Each worker holds torch, its own fixtures and the models its tests load (one reached 5 GB).
MAX_WORKERS = 4


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """``python -m pytest`` runs the files on one pytest-xdist worker per core (at most
    MAX_WORKERS), a file's tests on one worker, so module fixtures are built once. ``-n 0`` or
    ``-p no:xdist`` runs serially; ``-n N`` / ``--dist`` choose for themselves."""
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return
    if config.option.numprocesses is None and config.option.dist == "no":
        config.option.numprocesses = "auto"
        config.option.dist = "loadfile"
        config.option.loadscopereorder = False  # files in the order below, not by test count


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a pytest-xdist worker, the files holding ``slow`` tests come first: the workers start
    on the long files, and the short ones fill in the end instead of one long file running
    alone (serial runs keep the files' order)."""
    if not hasattr(config, "workerinput"):
        return
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, absent under -p no:xdist
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: one worker per usable core, at most MAX_WORKERS (pytest-xdist's
    PYTEST_XDIST_AUTO_NUM_WORKERS, when set, decides instead)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return min(usable_cores(), MAX_WORKERS)


def load_cases(name: str) -> list[dict]:
    """The golden calls of one fixture with the published runtime's results."""
    return json.loads((FIXTURES / name / "cases.json").read_text())


@pytest.fixture(scope="session")
def modernbert_dir() -> Path:
    return MODERNBERT


@pytest.fixture(scope="session")
def bert_dir() -> Path:
    return BERT


@pytest.fixture(scope="session")
def agent():
    """The ModernBERT fixture on the CPU (shared: runtimes hold no per-call state)."""
    from laya import Agent

    return Agent(str(MODERNBERT), device="cpu")


@pytest.fixture(scope="session")
def bert_agent():
    """The BERT fixture on the CPU."""
    from laya import Agent

    return Agent(str(BERT), device="cpu")


QUESTIONS = {
    "department": {
        "type": "choice",
        "instructions": "Which department should handle this?",
        "criteria": {
            "billing": "invoices, payments, refunds",
            "technical": "bugs, outages, system errors",
            "sales": "pricing, new contracts",
            "other": "everything else",
        },
    },
    "urgency": {
        "type": "score",
        "instructions": "How urgent is this?",
        "criteria": ["not urgent", "soon", "blocking"],
    },
    "churn_risk": {"type": "noul", "instructions": "Does the user threaten to cancel or leave?"},
}


FIXTURE_DIRS = {"tiny-modernbert": MODERNBERT, "tiny-bert": BERT}
_EXPORTED: dict[str, Path] = {}


def writable_copy(source: Path, target: Path) -> Path:
    """A writable copy of a (read-only) fixture checkpoint."""
    shutil.copytree(source, target, copy_function=shutil.copyfile)
    return target


def exported_fixture(name: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of fixture ``name`` holding ``laya.onnx``, exported once per process."""
    if name not in _EXPORTED:
        from laya.onnx import export_main

        directory = writable_copy(FIXTURE_DIRS[name], tmp_path_factory.mktemp("onnx") / name)
        assert export_main([str(directory)]) == 0
        _EXPORTED[name] = directory
    return _EXPORTED[name]


@pytest.fixture(scope="session")
def onnx_modernbert_dir(tmp_path_factory) -> Path:
    """The ModernBERT fixture exported to ONNX (``ONNXAgent(onnx_modernbert_dir)`` loads it)."""
    return exported_fixture("tiny-modernbert", tmp_path_factory)


@pytest.fixture(scope="session")
def onnx_agent(onnx_modernbert_dir):
    """The exported ModernBERT fixture on ONNX Runtime."""
    from laya import ONNXAgent

    return ONNXAgent(str(onnx_modernbert_dir))


@dataclass
class Ran:
    """What a run of ``laya`` left: its exit code and what it wrote."""

    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def run_laya(monkeypatch, capsys):
    """``laya ARGS`` (with ``stdin`` as its standard input) in this process, as a :class:`Ran`:
    ``laya.cli.command.main`` as ``python -m laya`` runs it, its process-wide hooks undone after."""
    from laya.cli import command

    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)  # main() sets its own
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)

    def run(*args: str, stdin: str | None = None) -> Ran:
        capsys.readouterr()
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
        try:
            code = command.main(list(args))
        except SystemExit as exc:  # argparse after --help
            code = exc.code
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    return run


@pytest.fixture(params=["torch", "onnx"])
def runtime(request):
    """Every runtime the predict-level hook rules must hold on: PyTorch and ONNX Runtime."""
    return request.getfixturevalue("agent" if request.param == "torch" else "onnx_agent")
