"""A Jev client, unchanged, against ``laya serve``: ``ai-parrot-client-jev`` from the package index.

The client lists the models (``GET /v1/models``), asks a ``Noul()`` without instructions, reads
strict mode's ``confidence`` as Jev's own formula, and does not retry a checkpoint this server
does not have (a 422, not a 503). Servers run in this process on the fixture checkpoints; the
client runs in its own environment (its pins clash with laya's: README, "Test"), found at
``$LAYA_JEV_PYTHON`` or ``.jev/bin/python``, as a Jev user's program would.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from golden import assert_close
from test_server import ENGLISH, FIXTURE_MODELS, served

from laya.router import Router
from laya.server import Settings, create_app

ROOT = Path(__file__).resolve().parents[1]
JEV_PYTHON = Path(os.environ.get("LAYA_JEV_PYTHON") or ROOT / ".jev" / "bin" / "python")
pytestmark = pytest.mark.skipif(
    not JEV_PYTHON.exists(),
    reason="no Jev client environment: python -m venv .jev && "
    ".jev/bin/pip install 'ai-parrot-client-jev>=0.4.4,<0.5' (README, Test)",
)

KEY = "jev-key"
TICKET = f"{ENGLISH} I want my money back."

# What the client process runs: one JevClient call from a JSON order on stdin; the reply (or the
# client's error) as JSON on stdout.
CLIENT = """
import asyncio, json, sys
from parrot.clients import jev

order = json.load(sys.stdin)

async def run():
    client = jev.JevClient(api_key=order["key"], base_url=order["base"], max_retries=2)
    try:
        if order["method"] == "list_models":
            return [m.model_dump(mode="json") for m in await client.list_models()]
        questions = {q: getattr(jev, kind)(**args) for q, (kind, args) in order["questions"].items()}
        reply = await client.system_one(order["state"], questions, model=order.get("model"))
        return reply.model_dump(mode="json")
    finally:
        await client.close()

try:
    print(json.dumps({"reply": asyncio.run(run())}))
except jev.JevAPIError as exc:
    error = {"type": type(exc).__name__, "status": exc.status, "retry_after": exc.retry_after}
    print(json.dumps({"error": error | {"body": exc.body}}, default=str))
"""


def call(base: str, method: str, tmp: Path, **order: Any) -> dict[str, Any]:
    """One client call in the Jev environment: ``{"reply": ...}`` or ``{"error": ...}``."""
    (tmp / "env" / "dev").mkdir(parents=True, exist_ok=True)  # the client's config wants a site
    (tmp / "env" / "dev" / ".env").touch()
    done = subprocess.run(
        [str(JEV_PYTHON), "-c", CLIENT],
        input=json.dumps({"base": base, "key": KEY, "method": method, **order}),
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "SITE_ROOT": str(tmp)},
        cwd=tmp,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def router() -> Router:
    return Router(models=FIXTURE_MODELS, default="english").preload(["english"])


@pytest.fixture(scope="module")
def base(router: Router) -> Iterator[str]:
    with served(create_app(router, Settings(api_key=KEY, default_model="english"))) as url:
        yield url


@pytest.fixture(scope="module")
def strict_base(router: Router) -> Iterator[str]:
    settings = Settings(api_key=KEY, default_model="english", jev_strict=True)
    with served(create_app(router, settings)) as url:
        yield url


def test_list_models_names_every_checkpoint(base: str, router: Router, tmp_path: Path) -> None:
    models = call(base, "list_models", tmp_path)["reply"]
    assert {m["name"] for m in models} == set(router.models)
    assert all(m["description"] for m in models)


def test_a_noul_without_instructions_is_asked_with_its_id(
    base: str, router: Router, tmp_path: Path
) -> None:
    criteria = {"refund": "asks for money back", "bug": "reports a defect"}
    questions = {"refund_requested": ["Noul", {}], "topic": ["Choice", {"criteria": criteria}]}
    answers = call(base, "system_one", tmp_path, state=TICKET, questions=questions)["reply"]
    answers = answers["answers"]
    assert 0.0 <= answers["refund_requested"]["noul"] <= 1.0
    expected = router.predict(
        TICKET,
        {
            "refund_requested": {"type": "noul", "instructions": "refund requested"},
            "topic": {"type": "choice", "instructions": "topic", "criteria": criteria},
        },
        model="english",
    )
    assert_close(
        answers["refund_requested"]["noul"], expected["answers"]["refund_requested"]["noul"]
    )
    assert answers["topic"]["choice"] == expected["answers"]["topic"]["choice"]


def test_strict_confidence_is_jevs_formula(strict_base: str, tmp_path: Path) -> None:
    criteria = {"refund": "money back", "bug": "a defect", "question": None, "praise": None}
    questions = {
        "topic": ["Choice", {"instructions": "What is this about?", "criteria": criteria}],
        "anger": [
            "Score",
            {"instructions": "How angry?", "criteria": ["calm", "annoyed", "furious"]},
        ],
    }
    reply = call(strict_base, "system_one", tmp_path, state=TICKET, questions=questions)["reply"]
    topic = reply["answers"]["topic"]
    p = list(topic["probabilities"].values())
    assert_close(topic["confidence"], (max(p) - 1 / len(p)) / (1 - 1 / len(p)))
    anger = reply["answers"]["anger"]
    levels = [anger["probabilities"][i] for i in sorted(anger["probabilities"])]
    mode = max(range(len(levels)), key=levels.__getitem__)
    uniform = sum(abs(i - 1) for i in range(3)) / 3  # a uniform answer's spread around the centre
    spread = sum(q * abs(i - mode) for i, q in enumerate(levels))
    assert_close(anger["confidence"], max(0.0, 1 - spread / uniform))


def test_an_unavailable_checkpoint_is_not_retried(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    missing = Router(
        models={**FIXTURE_MODELS, "support": "laya-tests/never-cached"},
        default="english",
        downloads="never",
    )
    settings = Settings(api_key=KEY, default_model="english")
    questions = {"q": ["Noul", {}]}
    with served(create_app(missing, settings)) as url, caplog.at_level(logging.INFO, "laya.server"):
        error = call(
            url, "system_one", tmp_path, state=TICKET, questions=questions, model="support"
        )
    error = error["error"]
    assert error["status"] == 422 and error["retry_after"] is None
    detail = json.dumps(error["body"])
    assert "'support'" in detail and "--allow-downloads" in detail
    posts = [r for r in caplog.records if '"path": "/v1/systemone"' in r.getMessage()]
    assert len(posts) == 1
