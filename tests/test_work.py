"""The work budget (laya.engine.work): the tokens of the rows the model reads, counted where the rows are
built, so the figure that admits a call is the usage it reports."""

from __future__ import annotations

import pytest
from conftest import BERT, QUESTIONS

from laya import Agent
from laya.engine.work import work_budget
from laya.errors import InvalidRequest, WorkBudgetExceeded

CJK = ["我们三月份被重复扣款了，请退还重复的费用。", "应用在登录时崩溃了。"]
CHOICE = {
    "q": {"type": "choice", "instructions": "Which?", "criteria": [f"o{i}" for i in range(9)]}
}


@pytest.fixture(scope="module")
def agent() -> Agent:
    return Agent(BERT, device="cpu")


def usage(results: list[dict]) -> int:
    return sum(result["usage"]["input_tokens"] for result in results)


def test_a_call_costing_the_budget_is_answered_and_one_token_less_refused(agent: Agent) -> None:
    cost = usage(agent.predict_batch(CJK, QUESTIONS))
    with work_budget(cost):
        assert usage(agent.predict_batch(CJK, QUESTIONS)) == cost
    with work_budget(cost - 1), pytest.raises(WorkBudgetExceeded) as refused:
        agent.predict_batch(CJK, QUESTIONS)
    assert f"asks for {cost} tokens of work ({2 * len(QUESTIONS)} rows" in str(refused.value)
    assert isinstance(refused.value, InvalidRequest)


def test_the_budget_holds_for_the_calls_of_its_block_together(agent: Agent) -> None:
    one = usage([agent.predict(CJK[0], QUESTIONS)])
    with work_budget(2 * one):
        agent.predict(CJK[0], QUESTIONS)
        agent.predict(CJK[0], QUESTIONS)
        with pytest.raises(WorkBudgetExceeded):
            agent.predict(CJK[0], QUESTIONS)
    agent.predict(CJK[0], QUESTIONS)  # outside a block: no budget


def test_a_tournament_is_counted_round_by_round(agent: Agent) -> None:
    result = agent.predict(CJK[0], CHOICE, tournament=3)
    rounds = result["answers"]["q"]["tournament"]["rounds"]
    assert rounds >= 2
    with work_budget(result["usage"]["input_tokens"]):
        assert agent.predict(CJK[0], CHOICE, tournament=3)["usage"] == result["usage"]
    with work_budget(result["usage"]["input_tokens"] - 1), pytest.raises(WorkBudgetExceeded):
        agent.predict(CJK[0], CHOICE, tournament=3)
