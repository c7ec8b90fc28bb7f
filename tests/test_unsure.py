"""The unsure marker: a checkpoint's ``recommended_min_confidence`` (in its config) marks answers
under it ``unsure: true`` without gating them; the CLI shows them as unsure, and the bundled
``mini`` carries its threshold (docs/calibration.md, docs/models/mini.md)."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import MODERNBERT

import laya
from laya.cli import render
from laya.engine.calibration import config_digest
from laya.errors import CheckpointError

STATE = "We were billed twice for March, please refund the duplicate"
QUESTIONS = {
    "intent": {"type": "choice", "instructions": "What is it?", "criteria": ["refund", "other"]},
    "urgent": {"type": "noul", "instructions": "Is it urgent?"},
}


def with_threshold(tmp_path, value):
    ckpt = tmp_path / "ckpt"
    shutil.copytree(MODERNBERT, ckpt, copy_function=shutil.copyfile)
    path = ckpt / "rl_agent_config.json"
    config = json.loads(path.read_text())
    path.write_text(json.dumps({**config, "recommended_min_confidence": value}))
    return ckpt


def test_answers_under_the_recommended_threshold_are_marked_not_gated(tmp_path, agent):
    plain = agent.predict(STATE, QUESTIONS)
    marked = laya.load(str(with_threshold(tmp_path, 0.99)), device="cpu").predict(STATE, QUESTIONS)
    for qid, answer in marked["answers"].items():
        assert answer.pop("unsure") is True
        assert "abstention" not in answer
        assert answer == plain["answers"][qid]


def test_answers_over_it_carry_no_marker(tmp_path):
    result = laya.load(str(with_threshold(tmp_path, 0.0)), device="cpu").predict(STATE, QUESTIONS)
    assert not any("unsure" in answer for answer in result["answers"].values())


@pytest.mark.parametrize("value", [1.5, "0.9", True, -0.1])
def test_a_bad_threshold_is_refused_at_load_naming_the_key(tmp_path, value):
    with pytest.raises(CheckpointError, match="recommended_min_confidence"):
        laya.load(str(with_threshold(tmp_path, value)), device="cpu")


def test_the_threshold_leaves_the_calibration_digest_alone():
    config = json.loads((MODERNBERT / "rl_agent_config.json").read_text())
    marked = {**config, "recommended_min_confidence": 0.9}
    assert config_digest(marked) == config_digest(config)


def test_the_cli_shows_an_unsure_answer_as_unsure():
    answer = {"type": "noul", "noul": 0.7, "confidence": 0.7, "unsure": True}
    lines = render.show_answers({"answers": {"urgent": answer}}, render.Style())
    assert lines[2] == "urgent  yes  confidence 0.70  unsure"


def test_the_cli_shows_none_of_these():
    answer = {
        "type": "choice",
        "choice": None,
        "probabilities": {"refund": 0.6, "other": 0.4},
        "abstain": 0.7,
        "confidence": 0.1,
    }
    lines = render.show_answers({"answers": {"intent": answer}}, render.Style())
    assert lines[2] == f"intent  {render.NONE_OF_THESE}  confidence 0.10"
    assert lines[-1].startswith(f"  {render.NONE_OF_THESE}") and lines[-1].endswith("0.70")


def test_mini_carries_its_recommended_threshold():
    mini = laya.load("mini", device="cpu")
    assert 0.5 <= mini.engine.config.unsure_below < 1.0
