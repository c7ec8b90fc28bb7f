"""Backends embed texts: rows ``[CLS] text [SEP]`` in, each row's encoder states averaged out.

PyTorch runs the encoder alone; an exported graph gives its ``embedding`` output. Both agree
within 2e-4, on the fixtures and on the bundled ``mini`` (whose graph ships with the package).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import BERT

import laya
from laya.engine.contract import Backend
from laya.engine.encoding import Pass, sequence_pass
from laya.errors import CheckpointError

TEXTS = [
    "We were billed twice for March, please refund the duplicate",
    "hi",
    "The build on main fails since this morning; the deploy is blocked",
]


def token_rows(tok, texts: list[str]) -> list[list[int]]:
    return [[tok.cls_id, *ids, tok.sep_id] for ids in tok.encode(texts)]


def embedding_pass(tok, texts: list[str]) -> Pass:
    """One pass of rows ``[CLS] text [SEP]`` (no markers), as a shortlist embedder builds it."""
    return sequence_pass(token_rows(tok, texts), tok.pad_id)


@pytest.fixture(scope="module")
def mini_agent():
    return laya.load("mini", device="cpu")


@pytest.fixture(scope="module")
def mini_onnx():
    """The bundled mini on ONNX Runtime, from the graph shipped beside its weights."""
    return laya.load("mini", backend="onnx")


@pytest.mark.numbers
def test_torch_embed_is_the_mean_of_each_texts_encoder_states(mini_agent):
    got = mini_agent.backend_object.embed(embedding_pass(mini_agent.checkpoint_tokenizer, TEXTS))
    assert got.shape == (len(TEXTS), 384) and got.dtype == np.float32
    encoder = mini_agent.backend_object.model.encoder
    for vector, ids in zip(
        got, token_rows(mini_agent.checkpoint_tokenizer, TEXTS)
    ):  # alone: no padding at all
        with torch.inference_mode():
            states = encoder(input_ids=torch.tensor([ids])).last_hidden_state[0]
        np.testing.assert_allclose(vector, states.mean(0).numpy(), rtol=0, atol=2e-4)


@pytest.mark.numbers
def test_the_bundled_mini_graph_embeds_like_pytorch(mini_agent, mini_onnx):
    for backend in (mini_agent.backend_object, mini_onnx.backend_object):
        assert isinstance(backend, Backend) and backend.can_embed
    batch = embedding_pass(mini_agent.checkpoint_tokenizer, TEXTS)
    want, got = mini_agent.backend_object.embed(batch), mini_onnx.backend_object.embed(batch)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-4)


@pytest.mark.numbers
def test_an_exported_fixture_embeds_like_pytorch(onnx_agent, agent):
    batch = embedding_pass(agent.checkpoint_tokenizer, TEXTS)
    np.testing.assert_allclose(
        onnx_agent.backend_object.embed(batch), agent.backend_object.embed(batch), rtol=0, atol=2e-4
    )


def test_a_graph_without_the_embedding_output_answers_but_cannot_embed(
    onnx_modernbert_dir, tmp_path, agent
):
    """Graphs of the published runtime have logits and act_logits only: they keep loading."""
    import onnx

    model = onnx.load(str(onnx_modernbert_dir / "laya.onnx"))
    (embedding,) = [o for o in model.graph.output if o.name == "embedding"]
    model.graph.output.remove(embedding)
    onnx.save(model, str(tmp_path / "published.onnx"))
    runtime = laya.ONNXAgent(onnx_modernbert_dir, onnx_path=tmp_path / "published.onnx")
    assert runtime.backend_object.can_embed is False
    assert runtime.predict("hi", {"q": {"type": "noul", "instructions": "Is it a greeting?"}})
    with pytest.raises(CheckpointError, match="'embedding' output.*laya export-onnx"):
        runtime.backend_object.embed(embedding_pass(agent.checkpoint_tokenizer, TEXTS))


@pytest.mark.numbers
def test_a_bf16_agent_embeds_close_to_fp32():
    fp32 = laya.load(str(BERT), device="cpu")
    fast = laya.load(str(BERT), device="cpu", precision="bf16")
    batch = embedding_pass(fp32.checkpoint_tokenizer, TEXTS)
    got = fast.backend_object.embed(batch)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, fp32.backend_object.embed(batch), rtol=0, atol=0.05)
