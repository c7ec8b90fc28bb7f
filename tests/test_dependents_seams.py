"""Where packages built on laya reach past the Router (docs/migrating.md, "Packages built on
laya"): ``laya.serve.create_app`` around a router of their own (deciflow's), and ``python -m
laya.mcp.server`` (how layaeval starts laya-mcp-server). tests/test_dependents.py runs the
packages themselves."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import pytest
from conftest import QUESTIONS, load_cases
from golden import assert_close

import laya

CASE = load_cases("tiny-modernbert")[0]


class Checked:
    """A caller's router as deciflow writes one: answers one checkpoint, refuses the rest."""

    def __init__(self, router: laya.Router) -> None:
        self.router = router
        self.asked: list[dict[str, Any]] = []

    @property
    def loaded(self) -> list[str]:
        return self.router.loaded

    def predict(self, state: Any, questions: dict[str, Any], model: str | None = None) -> Any:
        self.asked.append({"model": model})
        if model != "english":
            raise ValueError("this server answers with the english model only")
        return self.router.predict(state, questions, model=model)


@pytest.fixture(scope="module")
def served() -> Any:
    pytest.importorskip("fastapi")
    import laya.serve
    from fastapi.testclient import TestClient

    checked = Checked(laya.Router(preload=False))
    with TestClient(laya.serve.create_app(checked)) as client:
        yield client, checked


def test_a_callers_router_answers_with_only_the_controls_a_request_sets(served):
    client, checked = served
    body = {"state": CASE["state"], "questions": QUESTIONS, "model": "en"}
    reply = client.post("/v1/systemone", json=body)
    assert reply.status_code == 200, reply.text
    answers = reply.json()["answers"]
    assert_close(CASE["expected"]["answers"]["churn_risk"], answers["churn_risk"])
    assert checked.asked[-1] == {"model": "english"}  # the alias named from the built-in table
    batch = {"states": [CASE["state"]] * 2, "questions": QUESTIONS, "model": "english"}
    replies = client.post("/v1/systemone/batch", json=batch).json()["results"]
    assert [r["answers"]["department"]["choice"] for r in replies] == ["billing", "billing"]


def test_a_callers_refusal_is_a_422_with_its_message(served):
    client, _ = served
    reply = client.post("/v1/systemone", json={"state": CASE["state"], "questions": QUESTIONS})
    assert reply.status_code == 422 and "english model only" in reply.json()["detail"]
    health = client.get("/health").json()
    assert health["status"] == "ok" and "english" in health["loaded"]


def test_python_m_laya_mcp_server_serves_stdio(tmp_path):
    mcp = pytest.importorskip("mcp")
    from mcp.client.stdio import StdioServerParameters

    env = {k: v for k, v in os.environ.items() if k.startswith(("HF_", "LAYA_", "PYTHON", "PATH"))}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "laya.mcp.server", "--model", "english"],
        env={**env, "HOME": str(tmp_path)},
    )

    async def session() -> Any:
        async with mcp.Client(params, mode="legacy", read_timeout_seconds=300) as client:
            assert client.server_info.name == "laya"
            churn = {"churn_risk": QUESTIONS["churn_risk"]}
            return await client.call_tool(
                "laya_predict", {"state": CASE["state"], "questions": churn}
            )

    reply = asyncio.run(session())
    assert not reply.is_error, reply.content
    expected = CASE["expected"]["answers"]["churn_risk"]
    assert_close(
        expected, {k: reply.structured_content["answers"]["churn_risk"][k] for k in expected}
    )


@pytest.mark.numbers
@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_switching_the_encoders_attention_keeps_the_answers(modernbert_dir, attention):
    """laya-finetune sets ``agent.model.encoder``'s attention implementation (sdpa, "as Laya
    ships"); the passes laya packs then run padded, and answer as before."""
    agent = laya.Agent(str(modernbert_dir), device="cpu")
    agent.model.encoder.set_attn_implementation(attention)
    assert_close(CASE["expected"], agent.predict(CASE["state"], CASE["questions"]))
