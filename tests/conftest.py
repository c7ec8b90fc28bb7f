"""Shared test setup: fixture checkpoints, and an offline Hugging Face cache laid out from them.

The cache is built before anything imports huggingface_hub (which reads HF_HUB_CACHE and
HF_HUB_OFFLINE once, at import), so every test runs offline against real hub code.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
FIXTURES = SHARED / "fixtures"
MODERNBERT = FIXTURES / "tiny-modernbert" / "checkpoint"
BERT = FIXTURES / "tiny-bert" / "checkpoint"
BUNDLE_REPO = "convaiinnovations/laya"
SNAPSHOT_COMMIT = "0" * 39 + "1"


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
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.pop("HF_TOKEN", None)


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


RUNTIME_KINDS = ["torch"]


@pytest.fixture(params=RUNTIME_KINDS)
def runtime(request, agent):
    """Every runtime the hook rules must hold on (parametrised: PyTorch, ONNX Runtime)."""
    return agent
