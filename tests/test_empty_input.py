"""One rule for empty input (laya.engine.states): the same refusal from the Agent, the Router and the CLI.

The server and the playground are checked in test_server.py and test_playground.py.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import BERT, QUESTIONS

from laya import Agent
from laya.engine.states import EMPTY_STATE, has_text
from laya.errors import InvalidRequest
from laya.router import Router

EMPTY = [
    "",
    "   ",
    "\n\t",
    "\u200b",
    "\ufeff \u2060\x00",
    {},
    [],
    {"message": ""},
    {"a": [" ", {"b": None}]},
    [None, "", "\u200b"],
]
NOT_EMPTY = ["x", 0, False, {"amount": 30}, [" ", "hi"], {"": "text"}, "\u200bhi", "日本", "😀"]


@pytest.mark.parametrize("state", EMPTY, ids=repr)
def test_has_text_is_false_for_empty_states(state) -> None:
    assert not has_text(state)


@pytest.mark.parametrize("state", NOT_EMPTY, ids=repr)
def test_numbers_booleans_and_strings_count_as_text(state) -> None:
    assert has_text(state)


def test_deep_json_cannot_overflow_the_check() -> None:
    state: object = ""
    for _ in range(100_000):
        state = [state]
    assert not has_text(state)


@pytest.fixture(scope="module")
def agent() -> Agent:
    return Agent(BERT)


@pytest.mark.parametrize("state", EMPTY, ids=repr)
def test_agent_and_router_refuse_empty_states_alike(agent: Agent, state) -> None:
    message = f"state {EMPTY_STATE}"
    with pytest.raises(InvalidRequest) as raised:
        agent.predict(state, QUESTIONS)
    assert str(raised.value) == message
    with pytest.raises(InvalidRequest, match="states\\[1\\] is empty"):
        agent.predict_batch(["fine", state], QUESTIONS)
    with pytest.raises(InvalidRequest, match="state is empty"):
        agent.predict_long(state, QUESTIONS)
    router = Router(models={"english": str(BERT)}, default="english")
    with pytest.raises(InvalidRequest) as raised:
        router.predict(state, QUESTIONS)
    assert str(raised.value) == message
    assert (
        router.route(state).model == "english"
    )  # routing reads no text: the default, as published
    with pytest.raises(InvalidRequest, match="request 0 state is empty"):
        router.predict_batch([{"state": state, "questions": QUESTIONS}])
    assert router.loaded == []  # refused before anything loaded


def test_an_agent_refuses_an_empty_state_inside_its_lifecycle(agent: Agent) -> None:
    events = []
    hooks = {
        "on_predict_start": lambda ctx: events.append("start"),
        "on_predict_end": lambda ctx: events.append(("end", type(ctx.error).__name__)),
    }
    with pytest.raises(InvalidRequest, match="state is empty"):
        agent.predict("", QUESTIONS, **hooks)
    assert events == ["start", ("end", "InvalidRequest")]  # hooks.md §6: states checked after start


def test_the_command_refuses_an_empty_text_with_exit_2() -> None:
    for extra in ([], ["--preset", "triage", "--model", "mini"]):
        proc = subprocess.run(
            [sys.executable, "-m", "laya", "  ", *extra],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 2, proc.stderr
        assert "state is empty: there is no text in it to decide on" in proc.stderr
        assert "Traceback" not in proc.stderr
