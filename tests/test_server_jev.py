"""A Jev client, unchanged, against ``laya serve``: ``ai-parrot-client-jev`` (the test extra).

The client lists the models (``GET /v1/models``), asks a ``Noul()`` without instructions, reads
strict mode's ``confidence`` as Jev's own formula, and does not retry a checkpoint this server
does not have (a 422, not a 503). Servers run in this process on the fixture checkpoints.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

jev = pytest.importorskip("parrot.clients.jev", reason="ai-parrot-client-jev is not installed")

from golden import assert_close  # noqa: E402
from test_server import ENGLISH, FIXTURE_MODELS, served  # noqa: E402

from laya.router import Router  # noqa: E402
from laya.server import Settings, create_app  # noqa: E402

KEY = "jev-key"
TICKET = f"{ENGLISH} I want my money back."


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


def call(base: str, method: str, *args: Any, **kwargs: Any) -> Any:
    """One client call on a fresh client (its own event loop), closed afterwards."""

    async def run() -> Any:
        client = jev.JevClient(api_key=KEY, base_url=base, max_retries=2)
        try:
            return await getattr(client, method)(*args, **kwargs)
        finally:
            await client.close()

    return asyncio.run(run())


def test_list_models_names_every_checkpoint(base: str, router: Router) -> None:
    models = call(base, "list_models")
    assert {m.name for m in models} == set(router.models)
    assert all(m.description for m in models)


def test_a_noul_without_instructions_is_asked_with_its_id(base: str, router: Router) -> None:
    criteria = {"refund": "asks for money back", "bug": "reports a defect"}
    questions = {"refund_requested": jev.Noul(), "topic": jev.Choice(criteria=criteria)}
    reply = call(base, "system_one", TICKET, questions)
    assert 0.0 <= reply.answers["refund_requested"].noul <= 1.0
    expected = router.predict(
        TICKET,
        {
            "refund_requested": {"type": "noul", "instructions": "refund requested"},
            "topic": {"type": "choice", "instructions": "topic", "criteria": criteria},
        },
        model="english",
    )
    assert_close(
        reply.answers["refund_requested"].noul, expected["answers"]["refund_requested"]["noul"]
    )
    assert reply.answers["topic"].choice == expected["answers"]["topic"]["choice"]


def test_strict_confidence_is_jevs_formula(strict_base: str) -> None:
    criteria = {"refund": "money back", "bug": "a defect", "question": None, "praise": None}
    questions = {
        "topic": jev.Choice(instructions="What is this about?", criteria=criteria),
        "anger": jev.Score(instructions="How angry?", criteria=["calm", "annoyed", "furious"]),
    }
    reply = call(strict_base, "system_one", TICKET, questions)
    topic = reply.answers["topic"]
    p = list(topic.probabilities.values())
    assert_close(topic.confidence, (max(p) - 1 / len(p)) / (1 - 1 / len(p)))
    anger = reply.answers["anger"]
    levels = [anger.probabilities[i] for i in sorted(anger.probabilities)]
    mode = max(range(len(levels)), key=levels.__getitem__)
    uniform = sum(abs(i - mode) for i in range(len(levels))) / len(levels)
    spread = sum(q * abs(i - mode) for i, q in enumerate(levels))
    assert_close(anger.confidence, max(0.0, 1 - spread / uniform))


def test_an_unavailable_checkpoint_is_not_retried(caplog: pytest.LogCaptureFixture) -> None:
    missing = Router(
        models={**FIXTURE_MODELS, "support": "laya-tests/never-cached"},
        default="english",
        downloads="never",
    )
    settings = Settings(api_key=KEY, default_model="english")
    with (
        served(create_app(missing, settings)) as url,
        caplog.at_level(logging.INFO, "laya.server"),
        pytest.raises(jev.JevAPIError) as raised,
    ):
        call(url, "system_one", TICKET, {"q": jev.Noul()}, model="support")
    assert raised.value.status == 422 and raised.value.retry_after is None
    detail = json.dumps(raised.value.body)
    assert "'support'" in detail and "--allow-downloads" in detail
    posts = [r for r in caplog.records if '"path": "/v1/systemone"' in r.getMessage()]
    assert len(posts) == 1
