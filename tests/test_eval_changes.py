"""``laya eval compare NEW --baseline OLD``: flips (the decision changed) told apart from shifts
(the probabilities moved), rows paired by a digest of state and questions, the flipped rows
listed, ``--max-flips`` / ``--max-shift``; on reports written by hand and by two real runs."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from laya.evals.changes import compare_rows, row_digest
from laya.evals.evals_command import eval_main

ROOT = Path(__file__).resolve().parents[1]
TEAM = {"type": "choice", "instructions": "Which team?", "criteria": ["billing", "tech"]}
URGENT = {"type": "noul", "instructions": "It is urgent."}
LEVEL = {"type": "score", "instructions": "How angry?", "criteria": ["calm", "cross", "furious"]}
QUESTIONS = {"team": TEAM, "urgent": URGENT, "anger": LEVEL}


def case(line: int, state: str, team: str, urgent: float, anger: dict[str, float]) -> dict:
    top = max(anger, key=anger.__getitem__)
    return {
        "line": line,
        "state": state,
        "questions": QUESTIONS,
        "answers": {
            "team": {
                "answer": team,
                "confidence": 0.8,
                "probabilities": {team: 0.8, ("tech" if team == "billing" else "billing"): 0.2},
            },
            "urgent": {"answer": urgent, "confidence": max(urgent, 1 - urgent)},
            "anger": {"answer": float(top), "confidence": anger[top], "probabilities": anger},
        },
    }


def report(cases: list[dict]) -> dict:
    return {
        "schema": "laya-evals-report/1",
        "config": {"dataset_sha256": "d" * 64, "questions_sha256": "q" * 64},
        "overall": {"choice_accuracy": 0.5, "n_answers": 3 * len(cases)},
        "cases": cases,
    }


CALM = {"0": 0.7, "1": 0.2, "2": 0.1}
BASELINE = report(
    [
        case(1, "charged twice", "billing", 0.9, CALM),
        case(2, "app crashes", "tech", 0.4, CALM),
        case(3, "thanks!", "billing", 0.1, CALM),
        {"line": 4, "error": "refused"},
    ]
)


def test_flips_and_shifts_are_told_apart_and_rows_pair_by_digest():
    new = copy.deepcopy(BASELINE)
    new["cases"] = [new["cases"][2], new["cases"][0], new["cases"][1]]  # another order
    new["cases"][1]["answers"]["urgent"]["answer"] = 0.7  # 0.9 -> 0.7: a shift of 0.2
    new["cases"][2]["answers"]["urgent"]["answer"] = 0.6  # 0.4 -> 0.6: a flip
    new["cases"][0]["answers"]["anger"]["probabilities"] = {"0": 0.3, "1": 0.6, "2": 0.1}
    changes = compare_rows(new, BASELINE)
    assert (changes.matched, changes.only_new, changes.only_baseline) == (3, 0, 0)
    assert changes.answers == 9
    assert [(f.qid, f.baseline, f.new) for f in changes.flips] == [
        ("anger", 0, 1),  # the most probable level moved
        ("urgent", False, True),
    ]
    assert changes.flips[1].line == 2 and changes.flips[1].baseline_line == 2
    assert changes.shifted == 1 and changes.max_shift == pytest.approx(0.2)
    assert changes.failures(max_flips=2, max_shift=0.25) == []
    assert changes.failures(max_flips=1, max_shift=0.1) == [
        "flips 2 > --max-flips 1",
        "max shift 0.2000 > --max-shift 0.1",
    ]


def test_the_digest_is_of_state_and_questions_not_of_the_model():
    assert row_digest("x", QUESTIONS) == row_digest("x", json.loads(json.dumps(QUESTIONS)))
    assert row_digest("x", QUESTIONS) != row_digest("y", QUESTIONS)
    moved = copy.deepcopy(BASELINE)
    for c in moved["cases"][:3]:
        c["model"] = "another-checkpoint"
    moved["cases"].append(case(5, "a new row", "tech", 0.5, CALM))
    changes = compare_rows(moved, BASELINE)
    assert changes.matched == 3 and changes.only_new == 1 and changes.flips == []


def test_reports_without_probabilities_compare_their_confidences():
    old = copy.deepcopy(BASELINE)
    new = copy.deepcopy(BASELINE)
    for c in old["cases"][:3]:
        del c["answers"]["team"]["probabilities"]
    for c in new["cases"][:3]:
        del c["answers"]["team"]["probabilities"]
        c["answers"]["team"]["confidence"] = 0.75
    changes = compare_rows(new, old)
    assert changes.flips == [] and changes.shifted == 3
    assert changes.max_shift == pytest.approx(0.05)


def test_the_command_prints_them_and_fails_past_the_limits(tmp_path, capsys):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(BASELINE))
    flipped = copy.deepcopy(BASELINE)
    flipped["cases"][1]["answers"]["urgent"]["answer"] = 0.6
    new.write_text(json.dumps(flipped))
    assert eval_main(["compare", str(new), "--baseline", str(old)]) == 0
    printed = capsys.readouterr().out
    assert "choice_accuracy 0.5000 baseline 0.5000" in printed  # the published comparison stays
    assert "flips 1" in printed and "flip line 2 (baseline line 2) urgent: false -> true" in printed
    assert eval_main(["compare", str(new), "--baseline", str(old), "--max-flips", "0"]) == 1
    assert "FAIL: flips 1 > --max-flips 0" in capsys.readouterr().err
    assert eval_main(["compare", str(new), "--max-flips", "0"]) == 2
    assert "give --baseline" in capsys.readouterr().err
    assert eval_main(["compare", str(new), "--baseline", str(old), "--max-shift", "2"]) == 2
    assert eval_main(["compare", str(new), "--baseline", str(old), "--max-flips", "-1"]) == 2


def test_two_real_runs_shift_without_flipping(tmp_path, capsys):
    """mini with its temperatures against mini with all temperatures 1: the same decisions
    (a temperature never changes which option wins), other probabilities."""
    rows = tmp_path / "rows.jsonl"
    lines = (ROOT / "data/decisions/test.jsonl").read_text().splitlines()[:8]
    rows.write_text("\n".join(lines) + "\n")
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({"temperature": [1.0, 1.0, 1.0]}))
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    assert eval_main(["run", str(rows), "--model", "mini", "--json", str(old)]) == 0
    args = ["run", str(rows), "--model", "mini", "--calibration", str(flat), "--json", str(new)]
    assert eval_main(args) == 0
    capsys.readouterr()
    assert eval_main(["compare", str(new), "--baseline", str(old), "--max-flips", "0"]) == 0
    printed = capsys.readouterr().out
    assert "rows matched 8 (only in the report 0, only in the baseline 0)" in printed
    assert " flips 0 " in printed
    changes = compare_rows(json.loads(new.read_text()), json.loads(old.read_text()))
    assert changes.shifted > 0 and changes.max_shift > 0.01
    limit = ["--max-shift", "0.01"]
    assert eval_main(["compare", str(new), "--baseline", str(old), *limit]) == 1
