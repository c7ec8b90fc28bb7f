"""The parallel option layout (docs/agent.md#option-layouts): the tiny-parallel fixture answers
as the contract's independent reading (tests/parallel_reference.py) does, on PyTorch (packed and
padded) and on ONNX Runtime, whatever the option order."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import FIXTURES, MODERNBERT, load_cases, writable_copy
from golden import as_agent_result, assert_close, assert_matches, run_case
from parallel_reference import BILLING, CASES, CHECKPOINT, ROUTING, Reference, run

import laya
from laya.checkpoint.testing import random_checkpoint
from laya.engine.backends import onnx as onnx_backend
from laya.engine.encoding import parallel_layout
from laya.errors import CheckpointError
from laya.onnx.graph import export_main
from laya.training.train import train

PARALLEL = FIXTURES / "tiny-parallel" / "checkpoint"
GOLDEN = load_cases("tiny-parallel")
MANY = {
    "topic": {
        "type": "choice",
        "instructions": "Which topic is this about?",
        "criteria": {f"t{i}": f"plan {i}" for i in range(9)},
    },
    "urgent": {"type": "noul", "instructions": "The user needs an answer today."},
}
LONG = "We were billed twice for March and nobody answers the refund request. " * 12


def exported(source, target):
    """A writable copy of checkpoint ``source`` holding its ``laya.onnx``."""
    directory = writable_copy(source, target)
    assert export_main([str(directory)]) == 0
    return directory


@pytest.fixture(scope="module")
def agent():
    return laya.Agent(str(PARALLEL), device="cpu")


@pytest.fixture(scope="module")
def padded_agent():
    """The fixture on the padded forward: transformers given position_ids and 4-D masks."""
    padded = laya.Agent(str(PARALLEL), device="cpu")
    padded.backend_object.packed = False
    return padded


@pytest.fixture(scope="module")
def onnx_dir(tmp_path_factory):
    return exported(PARALLEL, tmp_path_factory.mktemp("onnx") / "tiny-parallel")


@pytest.fixture(scope="module")
def onnx_agent(onnx_dir):
    return laya.ONNXAgent(str(onnx_dir))


@pytest.fixture(params=["packed", "padded", "onnx"])
def runtime(request):
    names = {"packed": "agent", "padded": "padded_agent", "onnx": "onnx_agent"}
    return request.getfixturevalue(names[request.param])


@pytest.fixture(scope="module")
def reference():
    return Reference(PARALLEL)


# --------------------------------------------------------------------------- golden values


def test_the_fixture_is_read_as_parallel(agent, onnx_agent):
    assert (
        agent.checkpoint_config.option_layout
        == onnx_agent.checkpoint_config.option_layout
        == "parallel"
    )
    assert agent.backend_object.packed  # the exact packed path expresses the slot masks itself
    assert set(onnx_backend.PARALLEL_INPUTS) <= {
        i.name for i in onnx_agent.backend_object.session.get_inputs()
    }


@pytest.mark.parametrize("index", range(len(GOLDEN)))
def test_golden_cases(runtime, index):
    case = GOLDEN[index]
    assert_matches(case["expected"], as_agent_result(run_case(runtime, case)))


def test_the_golden_cases_are_the_references(reference):
    """cases.json is what tests/parallel_reference.py computes (its calls are the fixture's)."""
    assert [{k: v for k, v in c.items() if k != "expected"} for c in GOLDEN] == json.loads(
        json.dumps(CASES)
    )
    for case in GOLDEN:
        assert_matches(case["expected"], json.loads(json.dumps(run(reference, case))))


def test_the_layout_is_the_contracts_token_by_token():
    rng = np.random.default_rng(0)
    for _ in range(50):
        start = int(rng.integers(1, 6))
        spans = rng.integers(1, 7, int(rng.integers(1, 6)))
        markers = [start + int(s) for s in np.concatenate([[0], np.cumsum(spans)[:-1]])]
        head_length = start + int(spans.sum()) + 1
        length = head_length + int(rng.integers(0, 9))
        ids = [0] * length
        assert parallel_layout(markers, head_length, length) == tuple(
            map(list, Reference.layout(ids, markers, head_length))
        )


# --------------------------------------------------------------------------- the stated effect


def test_answers_do_not_depend_on_option_order(runtime):
    """Every slot starts at the same position and sees no other slot: order is invisible."""
    states = [BILLING, "thanks, all good now"]
    plain = runtime.predict_batch(states, ROUTING)
    for department, urgency in [([3, 2, 1, 0], [2, 1, 0]), ([1, 3, 0, 2], [1, 2, 0])]:
        questions = {
            **ROUTING,
            "department": {**ROUTING["department"], "option_order": department},
            "urgency": {**ROUTING["urgency"], "option_order": urgency},
        }
        assert_close(plain, runtime.predict_batch(states, questions))


def test_a_sequential_reading_of_the_same_weights_answers_otherwise(tmp_path, agent):
    """The layout is what the golden values test: the same checkpoint read sequentially differs."""
    sequential = writable_copy(PARALLEL, tmp_path / "sequential")
    config = json.loads((sequential / "rl_agent_config.json").read_text())
    config["option_layout"] = "sequential"
    (sequential / "rl_agent_config.json").write_text(json.dumps(config))
    got = laya.Agent(str(sequential), device="cpu").system_one(BILLING, ROUTING)["answers"]
    want = agent.system_one(BILLING, ROUTING)["answers"]
    gap = max(abs(got[q]["answer_confidence"] - want[q]["answer_confidence"]) for q in want)
    assert gap > 0.01


# --------------------------------------------------------------------------- BERT


def test_a_bert_encoder_answers_as_the_reference_on_every_path(tmp_path):
    """BERT takes one prepared 4-D mask (it has no sliding window) and learned positions."""
    path = random_checkpoint(
        tmp_path / "bert", encoder="bert", hidden_size=32, **{**CHECKPOINT, "encoder_config": {}}
    )
    reference = Reference(path)
    torch_agent = laya.Agent(str(path), device="cpu")
    assert torch_agent.backend_object.packed
    padded = laya.Agent(str(path), device="cpu")
    padded.backend_object.packed = False
    onnx_agent = laya.ONNXAgent(str(exported(path, tmp_path / "bert-onnx")))
    for case in CASES[:3]:
        want = json.loads(json.dumps(run(reference, case)))
        for runtime in (torch_agent, padded, onnx_agent):
            assert_matches(want, as_agent_result(run_case(runtime, case)))


# --------------------------------------------------------------------------- calls


def test_strategies_answer_alike_on_pytorch_and_onnx_runtime(agent, onnx_agent):
    calls = [
        lambda r: r.predict_batch([BILLING, LONG, "hello"], ROUTING, batch_size=2),
        lambda r: r.predict_long(LONG, ROUTING, window=40),
        lambda r: r.predict_tournament(BILLING, MANY, group=3),
        lambda r: r.predict_shortlist(BILLING, MANY, k=4),
        lambda r: r.predict_shortlist(BILLING, MANY, k=6, tournament=3),
    ]
    for call in calls:
        assert_close(call(agent), as_agent_result(call(onnx_agent)))


def test_predict_long_answers_from_its_windows_as_the_reference_does(agent, reference):
    result = agent.predict_long(LONG, ROUTING, window=40)
    assert result["usage"]["windows"] > 1
    ids = reference.encode(LONG)
    for qid, answer in result["answers"].items():
        window = answer.pop("window")
        text = reference.tok.decode(ids[window["token_start"] : window["token_end"]])
        want = reference.system_one(text, {qid: ROUTING[qid]})["answers"][qid]
        assert_matches(json.loads(json.dumps(want)), json.loads(json.dumps(answer)))


def test_a_tournament_names_a_winner_among_all_options(agent):
    answer = agent.predict_tournament(BILLING, MANY, group=3)["answers"]["topic"]
    assert answer["choice"] in MANY["topic"]["criteria"]


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("value", ["diagonal", "Parallel", None, ["parallel"]])
@pytest.mark.parametrize("runtime_class", [laya.Agent, laya.ONNXAgent])
def test_a_bad_option_layout_is_a_value_error_naming_the_key_and_values(
    tmp_path, runtime_class, value
):
    directory = writable_copy(PARALLEL, tmp_path / "bad")
    config = json.loads((directory / "rl_agent_config.json").read_text())
    config["option_layout"] = value
    (directory / "rl_agent_config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError) as info:
        runtime_class(str(directory))
    assert isinstance(info.value, ValueError)
    assert "option_layout must be one of sequential, parallel" in str(info.value)


def test_a_parallel_graph_is_refused_for_a_sequential_checkpoint(onnx_dir, tmp_path):
    directory = writable_copy(MODERNBERT, tmp_path / "sequential")
    (directory / "laya.onnx").write_bytes((onnx_dir / "laya.onnx").read_bytes())
    with pytest.raises(ValueError, match="graph for the parallel option layout") as info:
        laya.ONNXAgent(str(directory))
    assert "option_layout='sequential'" in str(info.value)
    assert "laya export-onnx" in str(info.value)


def test_training_refuses_a_parallel_base_and_writes_nothing(tmp_path):
    """``laya train`` builds sequential rows: a parallel base would be trained on the wrong layout."""
    row = {
        "state": BILLING,
        "questions": {"department": ROUTING["department"]},
        "answers": {"department": "billing"},
    }
    data = tmp_path / "train.jsonl"
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(CheckpointError, match="option_layout='parallel'"):
        train(data, PARALLEL, tmp_path / "out", epochs=1, progress=False)
    assert not (tmp_path / "out").exists()
