"""laya.testing.random_checkpoint writes the published checkpoint format (runtime.md 1.1-1.5, 9)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BERT, MODERNBERT

from laya.checkpoint.testing import random_checkpoint

FILES = {
    "rl_agent_config.json",
    "model.safetensors",
    "encoder/config.json",
    "tokenizer/tokenizer.json",
    "tokenizer/tokenizer_config.json",
}
FIXTURES = {"modernbert": MODERNBERT, "bert": BERT}
EMBEDDINGS = (
    "encoder.embeddings.tok_embeddings.weight",
    "encoder.embeddings.word_embeddings.weight",
)
SENTENCE = "Hello, could you please refund my duplicate invoice? Order 42 - zyxq!"


def _tensors(path: Path) -> dict[str, tuple[tuple[int, ...], str]]:
    """Name -> (shape, dtype) of every tensor in a checkpoint's model.safetensors."""
    from safetensors import safe_open

    with safe_open(str(path / "model.safetensors"), "pt") as f:
        slices = {name: f.get_slice(name) for name in list(f.keys())}
        return {k: (tuple(s.get_shape()), s.get_dtype()) for k, s in slices.items()}


def _json(path: Path) -> dict:
    """Parse a JSON file."""
    return json.loads(path.read_text(encoding="utf-8"))


def _digests(path: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under ``path``."""
    return {
        str(f.relative_to(path)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(path.rglob("*"))
        if f.is_file()
    }


def _like_fixture(encoder: str, path: Path) -> Path:
    """A random checkpoint with the fixture's architecture (its vocabulary size aside)."""
    fixture = FIXTURES[encoder]
    ecfg = _json(fixture / "encoder" / "config.json")
    return random_checkpoint(
        path,
        encoder=encoder,
        hidden_size=ecfg["hidden_size"],
        layers=ecfg["num_hidden_layers"],
        heads=ecfg["num_attention_heads"],
        intermediate_size=ecfg["intermediate_size"],
        head_layers=_json(fixture / "rl_agent_config.json")["head_layers"],
        act_costs={"defer": 0.1},
        encoder_config={"max_position_embeddings": ecfg["max_position_embeddings"]},
    )


@pytest.fixture(scope="module", params=["modernbert", "bert"])
def checkpoint(request, tmp_path_factory) -> tuple[str, Path]:
    """(encoder type, directory) of a checkpoint shaped like that encoder's fixture."""
    return request.param, _like_fixture(request.param, tmp_path_factory.mktemp(request.param))


def test_files_and_runtime_config(checkpoint):
    encoder, path = checkpoint
    assert {str(f.relative_to(path)) for f in path.rglob("*") if f.is_file()} == FILES
    cfg = _json(path / "rl_agent_config.json")
    assert (
        cfg["encoder"]
        == {"modernbert": "answerdotai/ModernBERT-base", "bert": "bert-base-uncased"}[encoder]
    )
    assert cfg["head_layers"] == _json(FIXTURES[encoder] / "rl_agent_config.json")["head_layers"]
    assert cfg["act_costs"] == {"defer": 0.1}
    assert (cfg["max_len"], cfg["head_max_len"]) == (128, 48)
    assert cfg["temperature"] == [1.0, 1.0, 1.0]
    assert cfg["temperature_by_options"] == {}
    assert _json(path / "encoder" / "config.json")["model_type"] == encoder


def test_tensors_match_the_fixture(checkpoint):
    encoder, path = checkpoint
    ours, theirs = _tensors(path), _tensors(FIXTURES[encoder])
    assert set(ours) == set(theirs)
    assert {dtype for _, dtype in ours.values()} == {"F16"}
    vocab = _json(path / "encoder" / "config.json")["vocab_size"]
    for name, (shape, _) in theirs.items():
        expected = (vocab, shape[1]) if name in EMBEDDINGS else shape
        assert ours[name][0] == expected, name


def test_shapes_scale_with_hidden_size(tmp_path):
    d, inter, heads, n_act = 128, 192, 2, 3
    path = random_checkpoint(
        tmp_path,
        hidden_size=d,
        layers=2,
        intermediate_size=inter,
        head_layers=heads,
        act_costs={"a": 1.0, "b": 2.0},
        vocab_size=5000,
    )
    shapes = {name: shape for name, (shape, _) in _tensors(path).items()}
    expected = {
        "encoder.embeddings.tok_embeddings.weight": (5000, d),
        "encoder.embeddings.norm.weight": (d,),
        "encoder.layers.1.attn_norm.weight": (d,),
        "encoder.layers.1.attn.Wqkv.weight": (3 * d, d),
        "encoder.layers.1.attn.Wo.weight": (d, d),
        "encoder.layers.1.mlp_norm.weight": (d,),
        "encoder.layers.1.mlp.Wi.weight": (2 * inter, d),
        "encoder.layers.1.mlp.Wo.weight": (d, inter),
        "encoder.final_norm.weight": (d,),
        "type_emb.weight": (3, d),
        "scorer.0.weight": (d,),
        "scorer.0.bias": (d,),
        "scorer.1.weight": (d, d),
        "scorer.1.bias": (d,),
        "scorer.3.weight": (1, d),
        "scorer.3.bias": (1,),
        "act_head.0.weight": (256, d + 4),
        "act_head.0.bias": (256,),
        "act_head.2.weight": (n_act, 256),
        "act_head.2.bias": (n_act,),
        "temperature": (3,),
    }
    for i in range(heads):
        expected |= {
            f"head.layers.{i}.self_attn.in_proj_weight": (3 * d, d),
            f"head.layers.{i}.self_attn.in_proj_bias": (3 * d,),
            f"head.layers.{i}.self_attn.out_proj.weight": (d, d),
            f"head.layers.{i}.self_attn.out_proj.bias": (d,),
            f"head.layers.{i}.linear1.weight": (4 * d, d),
            f"head.layers.{i}.linear1.bias": (4 * d,),
            f"head.layers.{i}.linear2.weight": (d, 4 * d),
            f"head.layers.{i}.linear2.bias": (d,),
        }
        expected |= {
            f"head.layers.{i}.norm{n}.{p}": (d,) for n in (1, 2) for p in ("weight", "bias")
        }
    assert {name: shapes[name] for name in expected} == expected
    assert "encoder.layers.0.attn_norm.weight" not in shapes
    assert not any(name.startswith("head.layers.2.") for name in shapes)


def test_same_seed_same_bytes(tmp_path):
    first = _digests(random_checkpoint(tmp_path / "a", encoder="bert", seed=3))
    assert _digests(random_checkpoint(tmp_path / "b", encoder="bert", seed=3)) == first
    other = _digests(random_checkpoint(tmp_path / "c", encoder="bert", seed=4))
    assert other["model.safetensors"] != first["model.safetensors"]


def test_global_torch_rng_untouched(tmp_path):
    import torch

    torch.manual_seed(123)
    expected = torch.rand(4)
    torch.manual_seed(123)
    random_checkpoint(tmp_path)
    assert torch.equal(torch.rand(4), expected)


def test_tokenizer_loads_and_round_trips(checkpoint):
    from transformers import AutoTokenizer

    _, path = checkpoint
    tok = AutoTokenizer.from_pretrained(path / "tokenizer")
    assert tok.convert_ids_to_tokens([0, 1, 2, 3, 4]) == [
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
    ]
    assert (tok.pad_token_id, tok.cls_token_id, tok.sep_token_id, tok.mask_token_id) == (0, 2, 3, 4)
    ids = tok(SENTENCE)["input_ids"]
    assert (ids[0], ids[-1]) == (tok.cls_token_id, tok.sep_token_id)
    assert tok.unk_token_id not in ids
    assert tok.decode(ids, skip_special_tokens=True) == SENTENCE.lower()
    assert tok.tokenize("please refund") == ["please", "refund"]
    assert len(tok) == _json(path / "encoder" / "config.json")["vocab_size"]


def test_words_vocab_size_and_overrides(tmp_path):
    from transformers import AutoTokenizer

    path = random_checkpoint(
        tmp_path,
        words=["Zebra", "apple", "apple"],
        vocab_size=1000,
        act_costs={},
        encoder_config={"dtype": "bfloat16"},
        option_layout="parallel",
        temperature=(1.2, 0.8, 1.1),
        temperature_by_options={"choice:3-5": 1.5},
    )
    vocab = AutoTokenizer.from_pretrained(path / "tokenizer").get_vocab()
    assert (vocab["apple"], vocab["zebra"]) == (5, 6)
    cfg = _json(path / "rl_agent_config.json")
    assert cfg["option_layout"] == "parallel"
    assert cfg["act_costs"] == {}
    assert cfg["temperature"] == [1.2, 0.8, 1.1]
    assert cfg["temperature_by_options"] == {"choice:3-5": 1.5}
    assert _json(path / "encoder" / "config.json")["dtype"] == "bfloat16"
    shapes = _tensors(path)
    assert shapes["encoder.embeddings.tok_embeddings.weight"][0] == (1000, 64)
    assert shapes["act_head.2.weight"][0] == (1, 256)


def test_vocab_size_smaller_than_tokenizer(tmp_path):
    with pytest.raises(ValueError, match="smaller than the tokenizer"):
        random_checkpoint(tmp_path, vocab_size=100)


def test_import_is_cheap():
    code = "import sys, laya.checkpoint.testing; print(sorted({'torch', 'transformers'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("encoder", ["modernbert", "bert", "roberta"])
def test_agent_answers(tmp_path, encoder):
    import laya

    agent = laya.load(str(random_checkpoint(tmp_path, encoder=encoder)), device="cpu")
    result = agent.system_one("hello", {"q": {"type": "noul", "instructions": "is it a greeting?"}})
    answer = result["answers"]["q"]
    assert answer["type"] == "noul"
    assert 0.0 <= answer["noul"] <= 1.0
    assert result["usage"]["input_tokens"] > 0
