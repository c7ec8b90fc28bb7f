"""The exact path: packed passes and oneDNN linears give the padded forward's numbers."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import BERT, MODERNBERT, QUESTIONS, load_cases
from golden import assert_close, assert_matches, run_case

import laya
from laya.checkpoint.testing import random_checkpoint
from laya.engine.backends import kernels, packed
from laya.engine.encoding import Pass
from laya.server import MINI_DIR

pytestmark = pytest.mark.numbers


def padded_reference(model, batch):
    """The padded forward with gradients on: PyTorch's own kernels, no packing, no oneDNN."""
    tensors = [torch.from_numpy(a) for a in batch]
    with torch.enable_grad():
        return [t.detach() for t in model(*tensors)]


def ragged_batch(vocab: int, lengths, markers: int, seed: int = 0):
    """A padded pass of rows of ``lengths`` tokens, the second row one marker short."""
    rng = np.random.default_rng(seed)
    width = max(lengths)
    mask = (np.arange(width)[None] < np.array(lengths)[:, None]).astype(np.int64)
    ids = np.where(mask == 1, rng.integers(5, vocab, (len(lengths), width)), 0)
    pos = np.stack([rng.choice(np.arange(1, n), markers, replace=False) for n in lengths])
    marker_mask = np.ones((len(lengths), markers), dtype=bool)
    marker_mask[1, -1] = False
    qtype = np.arange(len(lengths)) % 3
    return ids, mask, pos, marker_mask, qtype


@pytest.fixture(scope="module")
def windowed(tmp_path_factory):
    """A ModernBERT whose sliding window (4 tokens each side) is shorter than its rows."""
    path = tmp_path_factory.mktemp("windowed") / "ckpt"
    random_checkpoint(path, layers=3, head_layers=2, encoder_config={"local_attention": 8})
    return laya.load(str(path), device="cpu")


@pytest.mark.parametrize("name", ["windowed", "bert", "modernbert"])
def test_packed_forward_is_the_padded_forward(name, windowed):
    path = BERT if name == "bert" else MODERNBERT
    agent = windowed if name == "windowed" else laya.load(str(path), device="cpu")
    assert agent.backend_object.packed
    model = agent.model
    ids, mask, pos, marker_mask, qtype = ragged_batch(
        model.encoder.config.vocab_size, [40, 17, 29], 3
    )
    want = padded_reference(model, (ids, mask, pos, marker_mask, qtype))
    with torch.inference_mode():
        rows = Pass(list(range(3)), ids[mask == 1], mask.sum(1), pos, marker_mask, qtype, 0)
        got = packed.packed_forward(model, rows)
    for w, g in zip(want, got):
        assert w.shape == g.shape
        np.testing.assert_allclose(
            g.numpy(), w.numpy(), rtol=0, atol=2e-4 * max(1.0, w.abs().max())
        )


def test_the_sliding_window_mask_is_transformers_inclusive_bound():
    """``sliding_window`` arrives as flash attention's bound: |i - j| < 5 keeps 4 each side."""
    layout = packed.Layout.of(np.array([12]), torch.device("cpu"))
    near = layout.mask(5)[0, 0]
    assert near[6, 2] and near[6, 10] and not near[6, 1] and not near[6, 11]


def test_an_encoder_that_packing_would_change_keeps_padded_passes(tmp_path):
    """RoBERTa numbers positions from padding_idx + 1, so the probe refuses packed passes."""
    path = random_checkpoint(tmp_path / "roberta", encoder="roberta", hidden_size=32, layers=1)
    agent = laya.load(str(path), device="cpu")
    assert agent.backend_object.packed is False
    assert agent.model.encoder.config._attn_implementation == "sdpa"
    single = agent.system_one("a short state", QUESTIONS)
    assert_close(
        single, agent.predict_batch(["other words, longer", "a short state"], QUESTIONS)[1]
    )


@pytest.mark.skipif(not MINI_DIR.is_dir(), reason="the bundled mini model is absent")
def test_mini_answers_as_the_padded_forward_does(monkeypatch):
    """The trained model: whole calls through the exact path against the padded reference."""
    agent = laya.load("mini", device="cpu")
    states = ["Refund my order, it arrived broken.", "Thanks, all good now!", "x " * 120]
    results = agent.predict_batch(states, QUESTIONS)
    agent.backend_object.packed = False  # the padded forward, as before packing existed
    monkeypatch.setattr(kernels, "ONEDNN", False)  # on PyTorch's own linear kernels
    assert_close(agent.predict_batch(states, QUESTIONS), results)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_onednn_linear_is_linear_and_steps_aside_for_gradients_and_tracing():
    layer = torch.nn.Linear(16, 8)
    x = torch.randn(3, 5, 16)
    with torch.enable_grad():
        want = layer(x).detach()
    assert kernels.use_onednn(torch.nn.Sequential(layer)) == (1 if kernels.ONEDNN else 0)
    with torch.inference_mode():
        np.testing.assert_allclose(layer(x).numpy(), want.numpy(), atol=1e-5)
    y = layer(x)  # gradients on: PyTorch's kernel, so backward works
    y.sum().backward()
    assert layer.weight.grad is not None
    traced = torch.jit.trace(layer, x)
    assert "mkldnn" not in str(traced.graph)


@pytest.mark.skipif(not kernels.AVAILABLE, reason="this torch build has no oneDNN linear")
@pytest.mark.parametrize("fixture", ["tiny-modernbert", "tiny-bert"])
def test_onednn_linears_reproduce_the_golden_cases_where_laya_would_not_choose_them(
    fixture, monkeypatch
):
    """oneDNN is chosen by CPU flags (AVX-512); forced on here, it must still give the numbers."""
    monkeypatch.setattr(kernels, "ONEDNN", True)
    agent = laya.load(str(BERT if fixture == "tiny-bert" else MODERNBERT), device="cpu")
    assert any(isinstance(m, kernels.OneDNNLinear) for m in agent.model.modules())
    for case in load_cases(fixture):
        assert_matches(case["expected"], run_case(agent, case))
