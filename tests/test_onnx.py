"""ONNX export and ONNXAgent: golden cases, int8, graphs reading the checkpoint's weights, the
bundled mini's graph, no torch at run time, refusals, the command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import (
    BERT,
    FIXTURE_DIRS,
    MODERNBERT,
    QUESTIONS,
    exported_fixture,
    load_cases,
    writable_copy,
)
from golden import as_agent_result, assert_close, assert_matches, run_case

import laya
import laya.onnx
import laya.onnx.graph
from laya.cli import command as cli
from laya.engine.backends import onnx as backend
from laya.errors import CheckpointError, InvalidRequest
from laya.runtime import ONNXAgent


@pytest.fixture(scope="session")
def onnx_agents(tmp_path_factory) -> dict[str, ONNXAgent]:
    """One ONNXAgent per fixture."""
    return {name: ONNXAgent(exported_fixture(name, tmp_path_factory)) for name in FIXTURE_DIRS}


CASES = [(name, i) for name in FIXTURE_DIRS for i in range(len(load_cases(name)))]


@pytest.mark.numbers
@pytest.mark.parametrize(("name", "index"), CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_golden_cases(onnx_agents, name, index):
    case = load_cases(name)[index]
    got = run_case(onnx_agents[name], case)
    models = {r["model"] for r in (got if isinstance(got, list) else [got])}
    assert models == {"laya-rl-agent-onnx"}
    assert_matches(case["expected"], as_agent_result(got))


def test_load_backend_onnx(onnx_modernbert_dir):
    runtime = laya.load(str(onnx_modernbert_dir), backend="onnx", onnx_path="laya.onnx")
    assert isinstance(runtime, laya.ONNXAgent)
    assert runtime.backend_object.name == "onnx" and runtime.backend_object.batch_tokens == 4096
    assert runtime.backend_object.path == onnx_modernbert_dir / "laya.onnx"
    assert "CPUExecutionProvider" in runtime.backend_object.providers
    assert runtime.precision == "fp32"


@pytest.mark.numbers
def test_one_option_pass_is_padded_to_two_markers(onnx_agents, agent):
    questions = {"only": {"type": "choice", "instructions": "Pick one", "criteria": ["yes"]}}
    got = onnx_agents["tiny-modernbert"].predict("hello", questions)
    want = agent.predict("hello", questions)
    assert_matches(want["answers"], got["answers"])


@pytest.mark.numbers
def test_int8_export_from_an_agent_loads_and_answers(agent, onnx_agents, tmp_path):
    import onnx

    path = laya.onnx.export(agent, tmp_path / "sub" / "model.int8.onnx", quantize="int8")
    assert path == tmp_path / "sub" / "model.int8.onnx" and path.is_file()
    # int8 exactly where precision="int8" runs it: the head layers' matmuls (the last one's
    # query and key-value projections apart) and each encoder layer's attention output
    graph = onnx.load(str(path))
    layers = agent.model.encoder.config.num_hidden_layers
    heads = len(agent.model.head.layers)
    int8_matmuls = [
        n for n in graph.graph.node if n.op_type in ("MatMulInteger", "DynamicQuantizeMatMul")
    ]
    assert len(int8_matmuls) == layers + 4 * heads + 1
    assert {p.key: p.value for p in graph.metadata_props}["laya.precision"] == "int8"
    renamed = path.rename(tmp_path / "sub" / "quantized.onnx")  # the record, not the name, says so
    int8 = ONNXAgent(MODERNBERT, onnx_path=renamed)
    assert int8.precision == "int8"
    result = int8.predict("We were billed twice, refund it.", QUESTIONS)
    fp32 = onnx_agents["tiny-modernbert"].predict("We were billed twice, refund it.", QUESTIONS)
    assert result["usage"] == fp32["usage"]
    for qid, answer in result["answers"].items():
        assert answer.keys() == fp32["answers"][qid].keys()
        assert abs(answer["answer_confidence"] - fp32["answers"][qid]["answer_confidence"]) < 0.1
    # activations quantized per token, not per pass: an answer does not change with its batch
    assert not [n for n in graph.graph.node if n.op_type == "DynamicQuantizeLinear"]
    other = "URGENT!!! 4242 4242 4242 4242 CHARGED AGAIN AND AGAIN " * 6
    batched = int8.predict_batch(["We were billed twice, refund it.", other], QUESTIONS)[0]
    assert_matches(result["answers"], batched["answers"])


@pytest.mark.numbers
def test_export_from_a_fast_agent_writes_the_fp32_graph(onnx_agents, tmp_path):
    """A bf16 Agent keeps its matmul weights in bf16; the export traces an fp32 copy."""
    fast = laya.load(str(MODERNBERT), device="cpu", precision="bf16")
    path = laya.onnx.export(fast, tmp_path / "fast.onnx")
    got = ONNXAgent(MODERNBERT, onnx_path=path).predict("hello there", QUESTIONS)
    assert_matches(onnx_agents["tiny-modernbert"].predict("hello there", QUESTIONS), got)


def test_large_models_use_an_external_data_file(monkeypatch, tmp_path):
    monkeypatch.setattr(laya.onnx.graph, "EXTERNAL_DATA_BYTES", 0)
    path = laya.onnx.export(BERT, tmp_path / "big.onnx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.onnx", "big.onnx.data"]
    assert path.stat().st_size < (tmp_path / "big.onnx.data").stat().st_size
    ONNXAgent(BERT, onnx_path=path).predict("hi", QUESTIONS)


@pytest.mark.numbers
def test_export_that_does_not_reproduce_pytorch_writes_nothing(monkeypatch, tmp_path):
    monkeypatch.setattr(laya.onnx.graph, "TOLERANCE", -1.0)
    with pytest.raises(RuntimeError, match="does not reproduce PyTorch: logits is off"):
        laya.onnx.export(BERT, tmp_path / "bad.onnx")
    assert list(tmp_path.iterdir()) == []


def test_export_rejects_unknown_quantization():
    with pytest.raises(ValueError, match="quantize must be None or 'int8'"):
        laya.onnx.export(BERT, quantize="fp8")


def test_running_needs_no_torch(onnx_modernbert_dir):
    code = (
        "import sys, laya, laya.onnx; "
        f"a = laya.ONNXAgent({str(onnx_modernbert_dir)!r}); "
        f"r = a.predict('hi', {QUESTIONS!r}); "
        "assert r['model'] == 'laya-rl-agent-onnx', r; "
        "assert 'torch' not in sys.modules, 'torch was imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


MANY = {
    "topic": {
        "type": "choice",
        "instructions": "Which topic is this about?",
        "criteria": {f"t{i}": f"subject {i}" for i in range(12)},
    },
    "urgent": {"type": "noul", "instructions": "The writer needs an answer today."},
}
LONG_STATE = "The invoice for March was charged twice and nobody answers. " * 60


@pytest.mark.numbers
@pytest.mark.parametrize("name", list(FIXTURE_DIRS))
def test_strategies_run_on_onnx_runtime_and_answer_like_the_agent(onnx_agents, name):
    """predict_long, tournaments and shortlists (mini's graph embeds) as the PyTorch Agent does."""
    agent, onnx = laya.Agent(str(FIXTURE_DIRS[name]), device="cpu"), onnx_agents[name]
    calls = [
        lambda r: r.predict_long(LONG_STATE, QUESTIONS, window=48),
        lambda r: r.predict_tournament("Refund the duplicate charge, please.", MANY, group=3),
        lambda r: r.predict_shortlist("Refund the duplicate charge, please.", MANY, k=5),
        lambda r: r.predict_shortlist("A crash on login.", MANY, k=6, tournament=2),
    ]
    for call in calls:
        assert_close(as_agent_result(call(onnx)), call(agent))
    assert onnx.predict_long(LONG_STATE, QUESTIONS, window=48)["usage"]["windows"] > 1


def test_an_onnx_agent_shortlists_without_torch(onnx_modernbert_dir):
    code = (
        "import sys, laya; "
        f"a = laya.ONNXAgent({str(onnx_modernbert_dir)!r}); "
        f"r = a.predict_shortlist('Refund the duplicate charge.', {MANY!r}, k=4); "
        "assert len(r['answers']['topic']['shortlist']['candidates']) == 4, r; "
        f"r = a.predict_long({LONG_STATE!r}, {QUESTIONS!r}, window=48); "
        "assert r['usage']['windows'] > 1, r; "
        "assert 'torch' not in sys.modules, 'torch was imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


# --------------------------------------------------------------------------- weights="checkpoint"


def stored_as(source, target, dtype: str):
    """A writable copy of checkpoint ``source`` whose weights file holds ``dtype`` tensors."""
    import torch
    from safetensors.torch import load_file, save_file

    directory = writable_copy(source, target)
    weights = directory / "model.safetensors"
    tensors = load_file(weights)
    save_file({k: v.to(getattr(torch, dtype)) for k, v in tensors.items()}, weights)
    return directory


@pytest.fixture(scope="module", params=["float16", "bfloat16", "float32"])
def linked(request, tmp_path_factory):
    """A BERT fixture stored in ``dtype``, exported with weights='checkpoint'."""
    directory = tmp_path_factory.mktemp("linked") / request.param
    stored_as(BERT, directory, request.param)
    assert laya.onnx.export_main([str(directory), "--weights", "checkpoint"]) == 0
    return directory


@pytest.mark.numbers
def test_a_graph_reading_the_checkpoint_answers_like_the_agent(linked):
    graph, weights = linked / "laya.onnx", linked / "model.safetensors"
    assert sorted(p.name for p in linked.iterdir() if p.is_file()) == [
        "laya.onnx",
        "model.safetensors",
        "rl_agent_config.json",
    ]
    assert graph.stat().st_size < weights.stat().st_size / 4
    want = laya.load(str(linked), device="cpu").predict_batch(["hello", "refund me now"], QUESTIONS)
    got = laya.load(str(linked), backend="onnx").predict_batch(
        ["hello", "refund me now"], QUESTIONS
    )
    assert_matches(want, as_agent_result(got))


def test_the_graph_records_its_weights_file(linked):
    import onnx

    from laya.checkpoint import file_sha256

    model = onnx.load(str(linked / "laya.onnx"), load_external_data=False)
    record = json.loads({p.key: p.value for p in model.metadata_props}["laya.weights"])
    weights = linked / "model.safetensors"
    assert record == {
        "file": "model.safetensors",
        "bytes": weights.stat().st_size,
        "sha256": file_sha256(weights),
    }


@pytest.mark.parametrize("change", ["same size", "shorter"])
def test_a_graph_whose_weights_file_changed_is_refused_naming_the_fix(linked, tmp_path, change):
    directory = writable_copy(linked, tmp_path / "changed")
    weights = directory / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(data if change == "same size" else data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="model.safetensors.*--weights checkpoint"):
        ONNXAgent(directory)


def test_a_graph_whose_weights_file_is_gone_is_refused(linked, tmp_path):
    directory = writable_copy(linked, tmp_path / "gone")
    (directory / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match="model.safetensors, which is missing"):
        ONNXAgent(directory)


def test_checkpoint_weights_need_the_graph_in_their_folder(tmp_path, capsys):
    assert (
        laya.onnx.export_main(
            [str(BERT), "--weights", "checkpoint", "--out", str(tmp_path / "g.onnx")]
        )
        == 2
    )
    assert "out: with weights='checkpoint'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_checkpoint_weights_behind_a_link_out_of_the_folder_are_refused(tmp_path):
    """A Hub cache snapshot links to its blobs: ONNX Runtime would refuse to follow them."""
    directory = writable_copy(BERT, tmp_path / "snapshot")
    blob = tmp_path / "blob"
    os.replace(directory / "model.safetensors", blob)
    (directory / "model.safetensors").symlink_to(blob)
    with pytest.raises(InvalidRequest, match="out: with weights='checkpoint'"):
        laya.onnx.export(directory, weights="checkpoint")
    assert not (directory / "laya.onnx").exists()


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"weights": "inline"}, "weights must be"),
        ({"weights": "checkpoint", "quantize": "int8"}, "weights='checkpoint'"),
    ],
)
def test_bad_weights_options_are_refused(options, field):
    with pytest.raises(InvalidRequest, match=field):
        laya.onnx.export(BERT, **options)


# --------------------------------------------------------------------------- the bundled mini


@pytest.mark.numbers
def test_the_bundled_mini_graph_is_small_and_answers_like_the_agent_without_torch():
    """laya.load("mini", backend="onnx") works out of the box, in a fresh interpreter."""
    graph = Path(laya.__file__).parent / "models" / "mini" / "laya.onnx"
    assert graph.stat().st_size < 250_000
    state = "We were billed twice for March, please refund the duplicate"
    code = (
        "import json, sys, laya; "
        "runtime = laya.load('mini', backend='onnx'); "
        f"print(json.dumps(runtime.system_one({state!r}, {QUESTIONS!r}))); "
        "assert not {'torch', 'transformers'} & set(sys.modules), 'torch or transformers imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["model"] == "laya-rl-agent-onnx"
    assert_close(laya.load("mini", device="cpu").system_one(state, QUESTIONS), as_agent_result(got))


def test_the_bundled_mini_graph_is_folded():
    """ONNX Script's optimizer folds what the tracer leaves: the graph's own nodes (the Cast and
    Transpose reading each weight from model.safetensors left aside) are about half the 1,049 of
    the traced graph alone (docs/performance.md, "The exported graph")."""
    import onnx

    graph = onnx.load(str(Path(laya.__file__).parent / "models" / "mini" / "laya.onnx"))
    links = [n for n in graph.graph.node if n.input[0].endswith((".stored", ".cast"))]
    own = len(graph.graph.node) - len(links)
    assert own < 600, own
    assert not [n for n in graph.graph.node if n.op_type == "Constant"]


# --------------------------------------------------------------------------- refusals


def test_missing_graph_says_how_to_make_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="ONNX model not found .*laya export-onnx"):
        ONNXAgent(BERT)
    with pytest.raises(FileNotFoundError, match="other.onnx"):
        ONNXAgent(BERT, onnx_path=tmp_path / "other.onnx")


def test_hub_checkpoint_without_a_graph_is_refused():
    with pytest.raises(FileNotFoundError, match="ONNX model not found at .*snapshots"):
        ONNXAgent("convaiinnovations/laya")
    assert backend.hub_files("laya.int8.onnx")[-1] == "laya.int8.onnx*"
    assert backend.hub_files("/abs/laya.onnx") == (
        "rl_agent_config.json",
        "tokenizer/*",
        "encoder/*",
    )


def test_graph_off_contract_is_refused_naming_inputs_and_outputs(tmp_path):
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["R", "L"])
    y = helper.make_tensor_value_info("scores", TensorProto.INT64, ["R", "L"])
    graph = helper.make_graph(
        [helper.make_node("Identity", ["input_ids"], ["scores"])], "g", [x], [y]
    )
    onnx.save(helper.make_model(graph), tmp_path / "wrong.onnx")
    with pytest.raises(ValueError, match="graph contract") as info:
        ONNXAgent(BERT, onnx_path=tmp_path / "wrong.onnx")
    message = str(info.value)
    assert "marker_mask:bool" in message and "act_logits:float" in message
    assert "found    inputs  input_ids:int64; outputs scores:int64" in message


def test_a_file_that_is_not_a_graph_is_a_checkpoint_error(tmp_path):
    (tmp_path / "garbage.onnx").write_bytes(b"not a graph")
    with pytest.raises(CheckpointError, match="garbage.onnx cannot be opened by ONNX Runtime"):
        ONNXAgent(BERT, onnx_path=tmp_path / "garbage.onnx")


def test_a_sequential_graph_is_refused_for_a_parallel_checkpoint(onnx_modernbert_dir, tmp_path):
    """The graph's inputs say its layout: the wrong one is refused, naming the export command."""
    directory = writable_copy(onnx_modernbert_dir, tmp_path / "parallel")
    config = json.loads((directory / "rl_agent_config.json").read_text())
    config["option_layout"] = "parallel"
    (directory / "rl_agent_config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="graph for the sequential option layout") as info:
        ONNXAgent(directory)
    assert "option_layout='parallel'" in str(info.value)
    assert f"laya export-onnx {directory}" in str(info.value)


# --------------------------------------------------------------------------- command


def test_command_exit_codes(capsys):
    assert laya.onnx.export_main([]) == 2
    assert laya.onnx.export_main(["--help"]) == 0
    assert "--quantize {int8}" in capsys.readouterr().out
    assert laya.onnx.export_main([str(BERT), "--quantize", "fp8"]) == 2
    assert cli.main(["export-onnx", "/no/such/checkpoint"]) == 2
    err = capsys.readouterr().err
    assert "checkpoint: no checkpoint directory at '/no/such/checkpoint'" in err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--opset", "11"], "opset must be a whole number of at least 14"),
        (["--out", "{tmp}"], "out '{tmp}' is a directory; name the file to write, e.g. "),
        (["--out", "{tmp}/file/x.onnx"], "out '{tmp}/file/x.onnx': '{tmp}/file' is a file"),
    ],
)
def test_a_bad_opset_or_output_path_exits_2_before_anything_is_traced(
    tmp_path, capsys, flags, message
):
    (tmp_path / "file").write_text("x")
    flags = [f.format(tmp=tmp_path) for f in flags]
    assert laya.onnx.export_main([str(BERT), *flags]) == 2
    assert message.format(tmp=tmp_path) in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
