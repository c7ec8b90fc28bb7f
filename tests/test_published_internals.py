"""The published runtime's internals that packages built on it use (docs/migrating.md,
"Published internals"): ``agent.cfg`` as its dict, ``agent.tok`` as a Hugging Face tokenizer,
``agent.model``'s module tree, ``agent._to_internal``, ``laya.common``'s sequence helpers, and a
``build_sequence`` rebound in ``laya.agent`` building the rows of later predictions.

Each is checked against the published facts (/work/shared/reference: runtime.md sections 1.5,
2 and 3) and the golden fixtures: rows built with ``laya.common`` and run through
``agent.model`` give the published answers within 2e-4.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import BERT, FIXTURE_DIRS, MODERNBERT, QUESTIONS, load_cases
from golden import TOLERANCE
from safetensors.torch import load_file

import laya

STATE = "Hi, we were billed twice for March. Please refund the duplicate today."
LONG = "START early words " + "filler " * 400 + "the correction at the very end"
NOUL = {"angry": {"type": "noul", "instructions": "Is the customer angry?"}}


# ------------------------------------------------------------------ agent.cfg


def test_cfg_is_the_published_dict_and_a_budget_written_to_it_holds(modernbert_dir):
    agent = laya.load(str(modernbert_dir), "cpu")
    cfg = agent.cfg
    assert isinstance(cfg, dict) and cfg is agent.cfg
    assert cfg["max_len"] == 192 and cfg.get("head_max_len") == 96 and cfg.get("nope", 7) == 7
    assert {**cfg}["encoder"] == "answerdotai/ModernBERT-large"
    before = agent.predict(LONG, NOUL)["usage"]
    cfg["max_len"] = 64
    after = agent.predict(LONG, NOUL)["usage"]
    assert before["input_tokens"] == 192 and after["input_tokens"] == 64
    assert after["state_tokens_dropped"] > before["state_tokens_dropped"]
    agent.cfg["head_max_len"] = 24  # a later write through a fresh read of the attribute
    assert agent.predict_batch([STATE], NOUL)[0]["usage"]["input_tokens"] <= 64
    cfg["max_len"] = "lots"
    with pytest.raises(laya.errors.InvalidRequest, match="max_len"):
        agent.predict(STATE, NOUL)


def test_a_cfg_write_leaves_the_checkpoint_identity_alone(modernbert_dir, tmp_path):
    agent = laya.load(str(modernbert_dir), "cpu")
    path = tmp_path / "calib.json"
    agent.save_calibration(path)
    agent.cfg["max_len"] = 128
    agent.load_calibration(path)  # fitted for this checkpoint: its file, not the live budgets
    assert agent.checkpoint_config.file["max_len"] == 192


# ------------------------------------------------------------------ agent.tok


@pytest.mark.parametrize("directory", [MODERNBERT, BERT, laya.runtime.BUNDLED["mini"]])
def test_tok_is_the_hugging_face_tokenizer_of_the_checkpoint(directory):
    from transformers import AutoTokenizer

    agent = laya.load(str(directory), "cpu")
    tok, reference = agent.tok, AutoTokenizer.from_pretrained(str(directory / "tokenizer"))
    text = "Refund my dóuble charge, please [MASK] now!"
    assert (
        tok(text, add_special_tokens=False)["input_ids"]
        == (reference(text, add_special_tokens=False)["input_ids"])
    )
    assert tok(text)["input_ids"] == reference(text)["input_ids"]
    assert tok.encode(text) == reference.encode(text)
    assert tok.decode(tok.encode(text, add_special_tokens=False)) == reference.decode(
        reference.encode(text, add_special_tokens=False)
    )
    core = agent.checkpoint_tokenizer
    assert (tok.pad_token_id, tok.cls_token_id, tok.sep_token_id, tok.mask_token_id) == (
        core.pad_id,
        core.cls_id,
        core.sep_id,
        core.mask_id,
    )
    assert tok.mask_token == core.mask_token
    batch = tok(["short", "a little longer text"], padding=True, return_tensors="pt")
    assert batch["input_ids"].shape == batch["attention_mask"].shape
    assert int(batch["input_ids"][0, -1]) == tok.pad_token_id
    assert agent.tok is tok  # one per tokenizer


def test_tok_settings_never_reach_the_engine(modernbert_dir):
    agent = laya.load(str(modernbert_dir), "cpu")
    before = agent.predict(LONG, NOUL)
    agent.tok(LONG, truncation=True, max_length=8)  # the Hugging Face side truncates this call
    assert agent.predict(LONG, NOUL) == before


# ------------------------------------------------------------------ agent.model


def test_model_has_the_published_module_tree_and_state_dict(agent, modernbert_dir):
    model = agent.model
    assert {"encoder", "head", "type_emb", "scorer", "act_head"} <= dict(
        model.named_children()
    ).keys()
    names = set(model.state_dict())
    published = load_file(str(modernbert_dir / "model.safetensors"))
    assert names == set(published)  # runtime.md 1.5, as the checkpoint writes them
    for name in ("type_emb.weight", "scorer.0.weight", "scorer.1.bias", "scorer.3.weight",
                 "act_head.0.weight", "act_head.2.bias", "temperature",
                 "head.layers.0.self_attn.in_proj_weight", "head.layers.1.linear2.bias"):  # fmt: skip
        assert name in names, name
    assert tuple(model.act_head[0].weight.shape) == (256, 64 + 4)
    assert next(model.parameters()).dtype.is_floating_point


def test_a_head_loaded_into_the_model_answers_the_later_calls(modernbert_dir):
    import torch

    agent = laya.load(str(modernbert_dir), "cpu")
    before = agent.predict(STATE, NOUL)["answers"]["angry"]["noul"]
    head = {k: v.clone() for k, v in agent.model.state_dict().items() if k.startswith("scorer.")}
    changed = {k: torch.zeros_like(v) for k, v in head.items()}
    agent.model.load_state_dict(changed, strict=False)
    assert agent.predict(STATE, NOUL)["answers"]["angry"]["noul"] == 0.5  # equal logits
    agent.model.load_state_dict(head, strict=False)
    assert agent.predict(STATE, NOUL)["answers"]["angry"]["noul"] == before


# ------------------------------------------------------------------ questions and rows


def test_to_internal_is_the_published_internal_form(agent):
    assert agent._to_internal({"type": "choice", "instructions": 5, "criteria": ["a", "b"]}) == {
        "t": "choice",
        "ins": "5",
        "crit": {"a": None, "b": None},
    }
    noul = {"type": "noul", "instructions": {"a": "é"}, "criteria": {"TRUE": "yes it is"},
            "labels": {"false": "calm", "true": "angry"}}  # fmt: skip
    assert agent._to_internal(noul) == {
        "t": "noul",
        "ins": '{"a": "é"}',
        "crit": {"true": "yes it is"},
        "labels": {"false": "calm", "true": "angry"},
    }
    assert agent._to_internal({"type": "score", "instructions": True, "criteria": ["lo", "hi"],
                               "option_order": [1, 0]}) == {  # fmt: skip
        "t": "score", "ins": "true", "crit": ["lo", "hi"], "option_order": [1, 0]
    }  # fmt: skip
    with pytest.raises(ValueError, match="instructions"):
        agent._to_internal({"type": "noul"})


def test_common_renders_options_from_either_form():
    from laya.common import QTYPES, render_options

    assert QTYPES == {"choice": 0, "score": 1, "noul": 2}
    internal = {"t": "choice", "ins": "?", "crit": {"x": 0, "y": False, "z": None, "w": ""}}
    assert render_options(internal) == ["x: 0", "y: false", "z", "w"]
    assert render_options({"t": "score", "ins": "?", "crit": ["low", {"a": 1}]}) == [
        "level 0: low",
        'level 1: {"a": 1}',
    ]
    noul = {"t": "noul", "ins": "?", "crit": None, "labels": {"false": "calm", "true": "angry"}}
    assert render_options(noul) == [
        "calm: no, the statement does not hold",
        "angry: yes, the statement holds",
    ]
    assert render_options({"type": "choice", "instructions": "?", "criteria": ["a"]}) == ["a"]
    assert laya.render_options is render_options


def _published_answers(
    agent, state, questions, max_len=None, head_max_len=None, truncate_left=False
):
    """The answers of one state as the published runtime's users compute them: rows from
    ``laya.common.build_sequence``, batched by ``collate_items``, through ``agent.model``, decoded
    with the checkpoint's temperatures (runtime.md 3.1-3.2)."""
    import torch
    from laya.common import QTYPES, build_sequence, collate_items, temp_bucket

    cfg = agent.cfg
    rows, internals = [], []
    for question in questions.values():
        internal = agent._to_internal(question)
        budgets = (max_len or cfg["max_len"], head_max_len or cfg["head_max_len"])
        ids, markers = build_sequence(
            agent.tok, state, internal, *budgets, truncate_left=truncate_left
        )
        rows.append({"ids": ids, "markers": markers, "qtype": QTYPES[internal["t"]]})
        internals.append(internal)
    batch = collate_items([rows], agent.tok.pad_token_id)
    with torch.no_grad():
        logits, act = agent.model(**batch)
    answers = {}
    for i, (qid, internal) in enumerate(zip(questions, internals)):
        k = len(rows[i]["markers"])
        qtype = QTYPES[internal["t"]]
        t = agent.temperature_by_options.get(temp_bucket(qtype, k), agent.temperature[qtype])
        z = logits[i, :k].numpy().astype(np.float32) / np.float32(t)
        p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        a = np.exp(act[i].numpy() - act[i].numpy().max())
        answer = {"act": float(a[0] / a.sum())}
        if internal["t"] == "noul":
            answer["noul"] = float(p[1])
        else:
            keys = list(internal["crit"]) if internal["t"] == "choice" else range(k)
            answer["probabilities"] = {str(key): float(v) for key, v in zip(keys, p)}
        answers[qid] = answer
    return answers


@pytest.mark.parametrize("fixture", sorted(FIXTURE_DIRS))
def test_rows_from_common_through_the_model_give_the_golden_answers(fixture, agent, bert_agent):
    runtime = agent if fixture == "tiny-modernbert" else bert_agent
    cases = [c for c in load_cases(fixture) if c["call"] == "system_one"]
    for case in cases:
        got = _published_answers(
            runtime, case["state"], case["questions"], case.get("max_len"), case.get("head_max_len")
        )
        for qid, want in case["expected"]["answers"].items():
            assert abs(got[qid]["act"] - want["action"]["act_probability"]) <= TOLERANCE
            if want["type"] == "noul":
                assert abs(got[qid]["noul"] - want["noul"]) <= TOLERANCE
            else:
                for key, value in want["probabilities"].items():
                    assert abs(got[qid]["probabilities"][key] - value) <= TOLERANCE, (qid, key)


def test_build_sequence_options_stats_and_a_foreign_tokenizer(agent):
    from laya.common import build_sequence
    from transformers import AutoTokenizer

    internal = agent._to_internal(QUESTIONS["department"])
    ids, markers, stats, cut = build_sequence(
        agent.tok, LONG, internal, 64, 48, return_stats=True, return_truncation_stats=True
    )
    assert len(ids) == 64 and ids[0] == agent.tok.cls_token_id and ids[-1] == agent.tok.sep_token_id
    assert all(ids[m] == agent.tok.mask_token_id for m in markers) and len(markers) == 4
    assert stats == {"options": 4, "options_distinct": 4, "tokens_per_option": 8}
    assert (
        cut["truncated"]
        and cut["state_tokens_used"] + cut["state_tokens_dropped"] == (cut["state_tokens"])
    )
    tail, _ = build_sequence(agent.tok, LONG, internal, 64, 48, truncate_left=True)
    end = agent.tok.encode(" the very end", add_special_tokens=False)
    assert tail[-1 - len(end) : -1] == end and ids[-1 - len(end) : -1] != end
    reordered, moved = build_sequence(
        agent.tok, STATE, internal, 192, 96, option_order=[3, 2, 1, 0]
    )
    assert len(moved) == 4 and reordered != build_sequence(agent.tok, STATE, internal, 192, 96)[0]
    foreign = AutoTokenizer.from_pretrained(str(MODERNBERT / "tokenizer"))
    assert build_sequence(foreign, STATE, internal, 192, 96) == build_sequence(
        agent.tok, STATE, internal, 192, 96
    )
    state_ids = agent.tok.encode(STATE, add_special_tokens=False)
    assert build_sequence(agent.tok, "ignored", internal, 192, 96, state_ids=state_ids) == (
        build_sequence(agent.tok, STATE, internal, 192, 96)
    )


def test_collate_items_pads_rows_and_their_targets():
    from laya.common import collate_items

    rows = [
        {"ids": [1, 5, 6, 2], "markers": [1, 2], "qtype": 0, "target": [1.0, 0.0]},
        {"ids": [1, 7, 2], "markers": [1, 2, 3][:1], "qtype": 2, "target": [0.5]},
    ]
    batch = collate_items([rows[:1], rows[1:]], pad_id=9)
    assert batch["input_ids"].tolist() == [[1, 5, 6, 2], [1, 7, 2, 9]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1, 1], [1, 1, 1, 0]]
    assert batch["marker_pos"].tolist() == [[1, 2], [1, 0]]
    assert batch["marker_mask"].tolist() == [[True, True], [True, False]]
    assert batch["qtype"].tolist() == [0, 2] and batch["target"].tolist() == [[1, 0], [0.5, 0]]
    assert collate_items([], pad_id=0) is None and collate_items([rows[0]], 0)[
        "qtype"
    ].tolist() == [0]


# ------------------------------------------------------------------ a rebound build_sequence


def _left_truncation(monkeypatch):
    """laya-mcp's patch: ``laya.agent.build_sequence`` rebound to keep a long state's tail."""
    from laya import agent as laya_agent

    original = laya_agent.build_sequence
    calls = []

    def build_sequence(*args, **kwargs):
        calls.append(args)
        if len(args) < 7:
            kwargs["truncate_left"] = True
        return original(*args, **kwargs)

    monkeypatch.setattr(laya_agent, "build_sequence", build_sequence)
    return calls


def test_a_rebound_build_sequence_builds_the_later_predictions(modernbert_dir, monkeypatch):
    agent = laya.load(str(modernbert_dir), "cpu")
    head_kept = agent.predict(LONG, QUESTIONS)
    calls = _left_truncation(monkeypatch)
    tail_kept = agent.predict(LONG, QUESTIONS)
    assert len(calls) == len(QUESTIONS) and calls[0][0] is agent.tok
    want = _published_answers(agent, LONG, QUESTIONS, truncate_left=True)
    for qid, answer in tail_kept["answers"].items():
        got = answer.get("noul", answer.get("probabilities"))
        assert json.dumps(got) != json.dumps(
            head_kept["answers"][qid].get("noul", head_kept["answers"][qid].get("probabilities"))
        )
        if answer["type"] == "noul":
            assert abs(answer["noul"] - want[qid]["noul"]) <= TOLERANCE
        else:
            for key, value in answer["probabilities"].items():
                assert abs(value - want[qid]["probabilities"][str(key)]) <= TOLERANCE
    assert tail_kept["usage"] == head_kept["usage"]  # the same share of the state fits
    monkeypatch.undo()  # the module's own function back: the engine's rows again
    assert agent.predict(LONG, QUESTIONS) == head_kept


def test_the_rebound_name_reaches_router_agents_and_not_onnx_ones(monkeypatch, onnx_agent):
    router = laya.Router()
    english = router.load("english")
    assert isinstance(english.cfg, dict) and english.tok.pad_token_id is not None
    assert english.model.encoder is not None and english._to_internal(NOUL["angry"])["t"] == "noul"
    before_router = router.predict(LONG, NOUL, model="english")["answers"]
    before_onnx = onnx_agent.predict(LONG, NOUL)["answers"]
    calls = _left_truncation(monkeypatch)
    assert router.predict(LONG, NOUL, model="english")["answers"] != before_router
    assert calls and onnx_agent.predict(LONG, NOUL)["answers"] == before_onnx


def test_onnx_agents_have_cfg_tok_and_their_own_rebindable_name(onnx_agent, monkeypatch):
    import laya.onnx_agent

    assert isinstance(onnx_agent.cfg, dict) and onnx_agent.cfg["max_len"] == 192
    assert onnx_agent.tok("refund", add_special_tokens=False)["input_ids"]
    before = onnx_agent.predict(LONG, NOUL)["answers"]["angry"]["noul"]
    original = laya.onnx_agent.build_sequence
    monkeypatch.setattr(
        laya.onnx_agent,
        "build_sequence",
        lambda tok, state, q, max_len, head_max_len, **kw: original(
            tok, state, q, max_len, head_max_len, truncate_left=True, **kw
        ),
    )
    assert onnx_agent.predict(LONG, NOUL)["answers"]["angry"]["noul"] != before
