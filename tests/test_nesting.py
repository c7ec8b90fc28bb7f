"""One nesting limit (laya.engine.nesting) for everything laya serialises: refused past it where it enters,
naming the field, by the Agent, the Router and the question checker alike; and at the limit every
later reader (json, repr, deepcopy, the language detector) finishes, with most of the stack spent.

The server's side (the body read before parsing, the depth sweep over HTTP) is in
test_server_fuzz.py.
"""

from __future__ import annotations

import copy
import json
import threading
from typing import Any

import pytest
from conftest import BERT

from laya import Agent
from laya.engine.encoding import serialise_state
from laya.engine.nesting import MAX_DEPTH, check_depth, deeper_than
from laya.engine.questions import parse_questions, render_criterion
from laya.engine.states import check_state
from laya.errors import InvalidRequest
from laya.lang import state_text
from laya.router import Router

NOUL = {"q": {"type": "noul", "instructions": "Is it a refund request?"}}


def nested(levels: int, leaf: Any = "please refund me") -> Any:
    value = leaf
    for _ in range(levels):
        value = [value]
    return value


@pytest.fixture(scope="module")
def agent() -> Agent:
    return Agent(BERT, device="cpu")


def test_depth_is_counted_in_containers_and_cycles_are_deep() -> None:
    assert not deeper_than("text") and not deeper_than(nested(MAX_DEPTH))
    assert deeper_than(nested(MAX_DEPTH + 1)) and deeper_than(nested(100_000))
    assert deeper_than({"a": nested(MAX_DEPTH)}) and not deeper_than({"a": nested(MAX_DEPTH - 1)})
    cyclic: list[Any] = ["x"]
    cyclic.append(cyclic)
    with pytest.raises(InvalidRequest, match="^state nests JSON more than 100 levels deep"):
        check_state(cyclic)


def test_the_agent_answers_at_the_limit_and_refuses_past_it_naming_the_state(agent: Agent) -> None:
    assert agent.predict(nested(MAX_DEPTH), NOUL)["answers"]["q"]["type"] == "noul"
    with pytest.raises(InvalidRequest, match="^state nests JSON more than 100 levels deep"):
        agent.predict(nested(MAX_DEPTH + 1), NOUL)
    with pytest.raises(InvalidRequest, match=r"^states\[1\] nests JSON"):
        agent.predict_batch(["fine", nested(5_000)], NOUL)
    with pytest.raises(InvalidRequest, match="^state nests JSON"):
        agent.predict_long(nested(MAX_DEPTH + 1), NOUL)


def test_the_router_refuses_before_any_load() -> None:
    router = Router(models={"english": str(BERT)}, default="english")
    deep = nested(MAX_DEPTH + 1)
    for call in (lambda: router.predict(deep, NOUL), lambda: router.route(deep)):
        with pytest.raises(InvalidRequest, match="^state nests JSON"):
            call()
    with pytest.raises(InvalidRequest, match="^request 0 state nests JSON"):
        router.predict_batch([{"state": deep, "questions": NOUL}])
    noted = {"q": {**NOUL["q"], "note": nested(5_000)}}  # the Router walks questions first
    with pytest.raises(InvalidRequest, match="^question 'q': note nests JSON"):
        router.predict("refund me", noted)
    with pytest.raises(InvalidRequest, match="^request 0 question 'q': definition nests JSON"):
        router.predict_batch([{"state": "refund me", "questions": {"q": nested(5_000)}}])
    assert router.loaded == []


@pytest.mark.parametrize("field", ["instructions", "criteria", "note"])
def test_questions_nested_past_the_limit_are_refused_naming_the_field(field: str) -> None:
    question = {"type": "score", "instructions": "How urgent?", "criteria": ["low", "high"]}
    parse_questions({"q": {**question, field: nested(MAX_DEPTH, "x")}})
    with pytest.raises(InvalidRequest, match=f"^question 'q': {field} nests JSON more than 100"):
        parse_questions({"q": {**question, field: nested(MAX_DEPTH + 1, "x")}})


def test_every_later_reader_finishes_at_the_limit_with_the_stack_mostly_spent() -> None:
    """json.dumps and repr recurse a frame a level, deepcopy two: at MAX_DEPTH they fit beside
    700 frames of callers, on a fresh thread as on this one."""
    state = {"ticket": nested(MAX_DEPTH - 1)}
    check_depth(state, "state")
    readers = {
        "serialise_state": lambda: serialise_state(state),
        "render_criterion": lambda: render_criterion(state),
        "json round trip": lambda: json.loads(json.dumps(state)),
        "repr": lambda: repr(state),
        "deepcopy": lambda: copy.deepcopy(state),
        "state_text": lambda: state_text(state),
    }
    done: dict[str, Any] = {}

    def read_at(frames: int) -> None:
        if frames:
            read_at(frames - 1)
            return
        for name, read in readers.items():
            done[name] = read()

    read_at(700)
    assert set(done) == set(readers)
    done.clear()
    reader = threading.Thread(target=read_at, args=(700,))
    reader.start()
    reader.join()
    assert set(done) == set(readers)
