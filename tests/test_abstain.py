"""None of these (``"abstain": true`` on a choice): scored in the same pass as the caller's
options, its probability returned as ``abstain``, the labels' probabilities still summing to 1,
``choice`` null when it wins; off (the default), answers are byte-identical to a call without the
key. On the ModernBERT and BERT fixtures and on the bundled ``mini`` (docs/agent.md)."""

from __future__ import annotations

import json
from typing import Optional

import numpy as np
import pytest
from conftest import BERT

import laya
from laya.engine.decoding import decode_answer
from laya.engine.questions import parse_question, with_abstain
from laya.errors import InvalidRequest
from laya.server.settings import Settings
from laya.server.wire import parse_single

STATES = [
    "We were billed twice for March, please refund the duplicate",
    "The build on main fails since this morning; the deploy is blocked",
]
INTENT = {
    "type": "choice",
    "instructions": "What does the customer want?",
    "criteria": {"refund": "money back", "cancel": "end the plan", "question": "information"},
}
MIXED = {
    "intent": INTENT,
    "urgent": {"type": "noul", "instructions": "Is it urgent?"},
    "severity": {"type": "score", "instructions": "How severe?", "criteria": ["low", "high"]},
}


@pytest.fixture(scope="module")
def mini():
    return laya.load("mini", device="cpu")


@pytest.fixture(scope="module")
def bert():
    return laya.load(str(BERT), device="cpu")


@pytest.fixture(params=["fixture", "bert", "mini"])
def runtime(request, agent, bert):
    return {"fixture": agent, "bert": bert}.get(request.param) or request.getfixturevalue("mini")


def counted_passes(runtime, monkeypatch) -> list[int]:
    """The rows of every forward pass the runtime's backend runs from now on."""
    seen: list[int] = []
    forward = runtime.backend_object.forward

    def counting(batch):
        seen.append(len(batch.rows))
        return forward(batch)

    monkeypatch.setattr(runtime.backend_object, "forward", counting)
    return seen


def test_abstain_is_scored_in_the_same_pass_as_the_options(runtime, monkeypatch):
    passes = counted_passes(runtime, monkeypatch)
    result = runtime.predict(STATES[0], with_abstain(MIXED))
    assert passes == [3]  # one row per question, one pass: no second pass for "none of these"
    answer = result["answers"]["intent"]
    assert set(answer["probabilities"]) == set(INTENT["criteria"])
    assert sum(answer["probabilities"].values()) == pytest.approx(1.0, abs=2e-4)
    assert 0.0 <= answer["abstain"] <= 1.0
    assert "abstain" not in result["answers"]["urgent"]
    assert "abstain" not in result["answers"]["severity"]


def test_off_by_default_gives_byte_identical_answers(runtime):
    plain = runtime.predict_batch(STATES, MIXED)
    off = runtime.predict_batch(STATES, {**MIXED, "intent": {**INTENT, "abstain": False}})
    assert json.dumps(off, sort_keys=True) == json.dumps(plain, sort_keys=True)


def test_the_extra_option_costs_tokens_of_the_same_row(agent):
    plain = agent.predict(STATES[0], {"intent": INTENT})["usage"]["input_tokens"]
    asked = agent.predict(STATES[0], with_abstain({"intent": INTENT}))["usage"]["input_tokens"]
    assert asked > plain


def test_choice_is_null_when_none_of_these_wins():
    q = parse_question("intent", {**INTENT, "abstain": True, "option_order": [2, 0, 1]})
    logits = np.array([0.5, 1.0, -1.0, 3.0], dtype=np.float32)  # slot order; "none of these" last
    answer = decode_answer(q, logits, np.zeros(2, np.float32), 1.0)
    assert answer["choice"] is None
    assert answer["abstain"] == pytest.approx(np.exp(3) / np.exp(logits).sum(), abs=2e-4)
    assert sum(answer["probabilities"].values()) == pytest.approx(1.0, abs=2e-4)
    own = np.exp([1.0, -1.0, 0.5]) / np.exp([1.0, -1.0, 0.5]).sum()  # refund, cancel, question
    assert list(answer["probabilities"].values()) == pytest.approx(own.tolist(), abs=2e-4)
    logits[3] = -5.0
    assert decode_answer(q, logits, np.zeros(2, np.float32), 1.0)["choice"] == "refund"


@pytest.mark.parametrize(
    ("definition", "field"),
    [
        ({"type": "noul", "instructions": "x", "abstain": True}, "abstain"),
        (
            {"type": "score", "instructions": "x", "criteria": ["a", "b"], "abstain": True},
            "abstain",
        ),
        ({**INTENT, "abstain": "yes"}, "abstain"),
        ({**INTENT, "abstain": 1}, "abstain"),
    ],
)
def test_bad_abstain_is_refused_naming_the_question(agent, definition, field):
    with pytest.raises(InvalidRequest, match=f"question 'q'.*'{field}'"):
        agent.predict(STATES[0], {"q": definition})


def test_the_server_refuses_bad_abstain_as_the_question_checker_does():
    body = {"state": "x", "questions": {"q": {**INTENT, "abstain": "true"}}}
    with pytest.raises(InvalidRequest, match="question 'q'.*'abstain'"):
        parse_single(body)


def test_the_server_flag_turns_abstain_on_for_choices_only():
    body = {"state": "x", "questions": MIXED}
    asked = parse_single(body, Settings(abstain=True)).questions
    assert asked["intent"]["abstain"] is True
    assert "abstain" not in asked["urgent"] and "abstain" not in asked["severity"]
    assert "abstain" not in parse_single(body, Settings()).questions["intent"]
    own = {"state": "x", "questions": {"intent": {**INTENT, "abstain": False}}}
    assert parse_single(own, Settings(abstain=True)).questions["intent"]["abstain"] is False


def test_decide_maps_none_of_these_to_an_optional_field(agent):
    from typing import Literal

    from pydantic import BaseModel

    class Ticket(BaseModel):
        intent: Optional[Literal["refund", "cancel", "question"]]  # noqa: UP045
        kind: Literal["bug", "feature"]

    decision = agent.decision(STATES[0], Ticket, abstain=True)
    asked = decision.raw["answers"]
    assert "abstain" in asked["intent"] and "abstain" not in asked["kind"]
    forced = {**asked["intent"], "choice": None}
    from laya.typed.decisions import project
    from laya.typed.plans import plan_for

    gone = project(plan_for(Ticket), {"answers": {**asked, "intent": forced}}, {}, 0.5)
    assert gone.value.intent is None and gone.fields["intent"].abstained
    assert gone.fields["intent"].probability == pytest.approx(forced["abstain"], abs=2e-4)
