"""The seams: the runtime protocol the Router uses, the backend protocol, and checkpoint pinning
(``expected_sha256=``, ``revision=``, ``Router(revisions=...)``)."""

from __future__ import annotations

import hashlib
import importlib

import pytest
from conftest import MODERNBERT, QUESTIONS, SNAPSHOT_COMMIT
from golden import assert_close

import laya
from laya.engine.contract import Backend
from laya.errors import CheckpointError, InvalidRequest
from laya.hooks import BaseHook, set_default_hooks
from laya.runtime import RuntimeProtocol

STATE = "The app crashes every time I open the invoices page."
DIGEST = hashlib.sha256((MODERNBERT / "model.safetensors").read_bytes()).hexdigest()


class Log(BaseHook):
    def __init__(self, tag: str, log: list) -> None:
        self.tag, self.log = tag, log

    def on_predict_start(self, ctx):
        self.log.append((self.tag, "start"))

    def on_predict_end(self, ctx):
        self.log.append((self.tag, "end"))


def test_both_runtimes_implement_the_protocol_and_their_backends_theirs(agent, onnx_agent):
    for runtime in (agent, onnx_agent):
        assert isinstance(runtime, RuntimeProtocol)
        assert isinstance(runtime.backend_object, Backend)
        assert runtime.backend_object.batch_tokens == 4096


def test_a_run_mode_drives_the_agents_engine_backend_and_only_an_agent_has_one(agent, onnx_agent):
    """The published laya.backends is laya.run_modes: a mode holds the Agent's engine and its
    PyTorch backend (the PyTorchAgent Protocol), which an ONNXAgent does not have."""
    from laya.backends.base import Backend as RunMode
    from laya.backends.base import PyTorchAgent

    assert isinstance(agent, PyTorchAgent) and not isinstance(onnx_agent, PyTorchAgent)
    mode = RunMode(agent)
    assert mode.engine is agent.engine and mode.torch_backend is agent.engine.backend


def test_earlier_laya_backends_paths_name_the_engines_backends():
    """laya.backends once held the engine's backends; those module paths still import them."""
    for name in ("torch", "packed", "kernels", "masks", "onnx"):
        earlier = importlib.import_module(f"laya.backends.{name}")
        assert earlier is importlib.import_module(f"laya.engine.backends.{name}")
    assert importlib.import_module("laya.backends.eager").__name__ == "laya.run_modes.eager"


def test_answer_runs_installed_hooks_and_leaves_defaults_out_when_asked(agent):
    log: list = []
    set_default_hooks(hooks=Log("default", log))
    try:
        with agent.hooks_installed(Log("installed", log)):
            (inner,) = agent.answer([STATE], QUESTIONS, defaults=False)
            assert log == [("installed", "start"), ("installed", "end")]
            log.clear()
            (outer,) = agent.answer([STATE], QUESTIONS)
            assert [tag for tag, _ in log] == ["default", "installed", "default", "installed"]
    finally:
        set_default_hooks()
    assert_close(agent.system_one(STATE, QUESTIONS), inner)
    assert_close(inner, outer)


def test_answer_takes_one_language_per_state(agent):
    tuned = laya.Agent(
        str(MODERNBERT), device="cpu", lang_temperatures={"fr": {"temperature": [5, 5, 5]}}
    )
    plain, french = tuned.answer([STATE, STATE], QUESTIONS, lang=[None, "fr"])
    assert_close(agent.system_one(STATE, QUESTIONS), plain)
    assert_close(tuned.system_one(STATE, QUESTIONS, lang="fr"), french)
    assert french["answers"]["urgency"]["confidence"] != plain["answers"]["urgency"]["confidence"]
    with pytest.raises(InvalidRequest, match="lang holds 1 languages for 2 states"):
        tuned.answer([STATE, STATE], QUESTIONS, lang=["fr"])


def test_answer_long_is_predict_long_without_per_call_hooks(agent):
    long_state = " ".join([STATE] * 30)
    assert_close(
        agent.predict_long(long_state, QUESTIONS, window=64),
        agent.answer_long(long_state, QUESTIONS, window=64),
    )


def test_protocol_calls_refuse_an_option_they_do_not_take(agent):
    with pytest.raises(TypeError, match="takes no option windw; it takes aggregate"):
        agent.answer_long(STATE, QUESTIONS, windw=64)
    with pytest.raises(TypeError, match="windw"):
        agent.answer([STATE], QUESTIONS, windw=64)


def test_a_closed_runtime_says_so():
    runtime = laya.Agent(str(MODERNBERT), device="cpu")
    runtime.close()
    runtime.close()  # twice is harmless
    with pytest.raises(RuntimeError, match="was closed"):
        runtime.system_one(STATE, QUESTIONS)


# --------------------------------------------------------------------------- pinning


def test_a_wrong_digest_is_refused_before_any_weight_is_read(monkeypatch):
    import laya.engine.backends.torch as torch_backend

    def never(*args, **kwargs):
        raise AssertionError("weights were read")

    monkeypatch.setattr(torch_backend, "build_model", never)
    monkeypatch.setattr(torch_backend, "load_weights", never)
    wrong = "0" * 64
    with pytest.raises(CheckpointError) as info:
        laya.load(str(MODERNBERT), device="cpu", expected_sha256=wrong)
    assert DIGEST in str(info.value) and wrong in str(info.value)
    with pytest.raises(InvalidRequest, match="64 hexadecimal digits"):
        laya.load(str(MODERNBERT), device="cpu", expected_sha256="abc")


def test_the_right_digest_loads(agent):
    pinned = laya.load(str(MODERNBERT), device="cpu", expected_sha256=DIGEST.upper())
    assert_close(agent.system_one(STATE, QUESTIONS), pinned.system_one(STATE, QUESTIONS))


def test_onnx_agent_checks_the_digest_of_its_graph(onnx_modernbert_dir):
    graph = onnx_modernbert_dir / "laya.onnx"
    digest = hashlib.sha256(graph.read_bytes()).hexdigest()
    laya.ONNXAgent(str(onnx_modernbert_dir), expected_sha256=digest)
    with pytest.raises(CheckpointError, match="laya.onnx has SHA-256"):
        laya.ONNXAgent(str(onnx_modernbert_dir), expected_sha256=DIGEST)


def test_the_loaded_revision_is_visible(agent):
    assert agent.revision is None  # a local directory has none
    hub = laya.load("english", device="cpu", revision=SNAPSHOT_COMMIT)
    assert hub.revision == SNAPSHOT_COMMIT
    assert laya.load("ml", device="cpu").revision == SNAPSHOT_COMMIT


def test_router_revisions_pin_each_checkpoint():
    router = laya.Router(revisions={"EN": SNAPSHOT_COMMIT})
    assert router.revisions == {"english": SNAPSHOT_COMMIT}
    assert router.load("english").revision == SNAPSHOT_COMMIT
    with pytest.raises(InvalidRequest, match="unknown model 'nope'"):
        laya.Router(revisions={"nope": SNAPSHOT_COMMIT})


def test_one_name_rule_for_a_pinned_checkpoint(tmp_path):
    from laya.checkpoint import source_name

    folder = tmp_path / "Mini FT (v2)"
    folder.mkdir()
    assert source_name(str(folder)) == "mini-ft-v2"
    assert source_name("Owner/Laya_Large") == "laya_large"
    assert source_name("owner/...") == "local"
