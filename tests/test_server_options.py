"""A choice of more options than one pass reads, asked of ``laya serve`` as Jev allows (up to 255).

On a checkpoint of 256 tokens (``laya.testing`` builds one: mini's budgets, random weights) a
choice of 64 options does not fit one row: the Router refuses it in a plain call. The server
answers it by tournament, for that choice only, and says so (``x_strategy``, ``x_tournament``);
the other questions of the request are answered as a plain call answers them. A request that
sends ``"tournament": false`` keeps the refusal; over 255 options is a 413.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from golden import assert_close
from test_server import served, without_jev

from laya.checkpoint.testing import random_checkpoint
from laya.engine.gate import jev_confidence
from laya.errors import TooManyOptions
from laya.router import Router
from laya.server import Settings, create_app

STATE = "Hi, I was charged twice for my March invoice and the refund has not arrived."
SCORE = {"type": "score", "instructions": "How angry?", "criteria": ["calm", "annoyed", "furious"]}


def queues(n: int) -> dict[str, Any]:
    """jevcompat's many-option choice: Billing and n - 1 numbered queues."""
    criteria = {"Billing": "Payments, invoices, refunds"}
    criteria |= {f"Queue {i:03d}": f"Tickets routed to queue {i}" for i in range(1, n)}
    return {
        "type": "choice",
        "instructions": "Which queue should this go to?",
        "criteria": criteria,
    }


@pytest.fixture(scope="module")
def router(tmp_path_factory: pytest.TempPathFactory) -> Router:
    path = random_checkpoint(tmp_path_factory.mktemp("tiny") / "ckpt", max_len=256, head_max_len=96)
    return Router(models={"tiny": str(path)}, default="tiny").preload(["tiny"])


@pytest.fixture(scope="module")
def servers(router: Router) -> Iterator[tuple[str, str]]:
    """The same router behind a plain server and a strict (``LAYA_JEV_STRICT=1``) one."""
    with (
        served(create_app(router, Settings(default_model="tiny", route="default"))) as plain,
        served(
            create_app(router, Settings(default_model="tiny", route="default", jev_strict=True))
        ) as strict,
    ):
        yield plain, strict


def ask(base: str, questions: dict[str, Any], **controls: Any) -> httpx.Response:
    body = {"state": STATE, "questions": questions, **controls}
    return httpx.post(base + "/v1/systemone", json=body, timeout=300)


def test_64_options_do_not_fit_one_pass_of_a_256_token_checkpoint(router: Router) -> None:
    with pytest.raises(TooManyOptions, match="option markers fit in max_len=256"):
        router.predict(STATE, {"queue": queues(64)}, model="tiny")


@pytest.mark.parametrize("n", [64, 255])
def test_a_choice_that_does_not_fit_is_answered_by_tournament_and_says_so(
    servers: tuple[str, str], router: Router, n: int
) -> None:
    reply = ask(servers[0], {"queue": queues(n), "anger": SCORE})
    assert reply.status_code == 200, reply.text
    answer = reply.json()["answers"]["queue"]
    labels = list(queues(n)["criteria"])
    assert list(answer["probabilities"]) == labels  # every label, the eliminated at 0.0
    assert abs(sum(answer["probabilities"].values()) - 1) < 2e-3
    assert answer["choice"] == max(labels, key=answer["probabilities"].__getitem__)
    assert answer["x_strategy"] == "tournament"
    finalists = answer["x_tournament"]["finalists"]
    assert answer["choice"] in finalists and set(finalists) < set(labels)
    assert answer["x_tournament"]["rounds"] >= 2
    assert_close(answer["x_jev_confidence"], round(jev_confidence(answer) or 0.0, 4))
    alone = router.predict(STATE, {"anger": SCORE}, model="tiny")["answers"]["anger"]
    assert_close(without_jev(reply.json())["answers"]["anger"], alone)  # a plain call's answer


def test_strict_replies_keep_the_strategy_and_jevs_confidence(servers: tuple[str, str]) -> None:
    answer = ask(servers[1], {"queue": queues(64)}).json()["answers"]["queue"]
    assert set(answer) == {
        *("type", "choice", "confidence", "probabilities", "x_tournament", "x_strategy")
    }
    p = list(answer["probabilities"].values())
    assert_close(answer["confidence"], (max(p) - 1 / 64) / (1 - 1 / 64))


def test_a_choice_that_fits_is_a_plain_call(servers: tuple[str, str], router: Router) -> None:
    reply = ask(servers[0], {"queue": queues(26), "anger": SCORE})
    assert reply.status_code == 200, reply.text
    assert "x_strategy" not in reply.json()["answers"]["queue"]
    expected = router.predict(STATE, {"queue": queues(26), "anger": SCORE}, model="tiny")
    assert_close(without_jev(reply.json())["answers"], expected["answers"])


def test_the_batch_route_answers_many_options_too(servers: tuple[str, str]) -> None:
    body = {"states": [STATE, "The app crashes on login."], "questions": {"queue": queues(64)}}
    reply = httpx.post(servers[0] + "/v1/systemone/batch", json=body, timeout=300)
    assert reply.status_code == 200, reply.text
    for result in reply.json()["results"]:
        assert result["answers"]["queue"]["x_strategy"] == "tournament"


def test_tournament_false_keeps_the_refusal_and_255_is_the_cap(servers: tuple[str, str]) -> None:
    refused = ask(servers[0], {"queue": queues(64)}, tournament=False)
    assert refused.status_code == 422
    assert "question 'queue'" in refused.json()["detail"]
    assert "option markers fit" in refused.json()["detail"]
    over = ask(servers[0], {"queue": queues(256)})
    assert over.status_code == 413
    assert "question 'queue' has 256 options" in over.json()["detail"]
    assert "at most 255" in over.json()["detail"]
