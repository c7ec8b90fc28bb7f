"""The out-of-distribution checks in data/checks/ and the contrast data in data/decisions/.

The challenge file, its minimal pairs and the OOD dev split are hand-written (docs/training.md,
"Out-of-distribution checks"); these tests hold them to the issue's shape and check that the
build scripts reproduce the committed files.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from laya.training.evaluate import read_decisions

ROOT = Path(__file__).resolve().parents[1]
CHECKS = ROOT / "data" / "checks"
DECISIONS = ROOT / "data" / "decisions"


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def words(state) -> int:
    """Words of a state: a string's words, or those of every key and value of a record."""
    if isinstance(state, str):
        return len(state.split())
    if isinstance(state, list):
        return sum(map(words, state))
    if isinstance(state, dict):
        return sum(words(str(k)) + words(v) for k, v in state.items())
    return 1


@pytest.fixture(scope="module")
def challenge():
    return load(CHECKS / "challenge.jsonl")


@pytest.fixture(scope="module")
def pairs():
    return load(CHECKS / "pairs.jsonl")


def test_every_check_file_is_valid_labelled_data():
    for name in ("challenge", "pairs", "dev"):
        assert read_decisions(CHECKS / f"{name}.jsonl")


def test_the_challenge_file_has_the_size_and_shape_the_issue_asks_for(challenge):
    assert len(challenge) >= 300
    assert len({r["domain"] for r in challenge}) >= 20
    sizes = [words(r["state"]) for r in challenge]
    assert min(sizes) >= 30 and max(sizes) <= 400
    assert sum(40 <= s <= 400 for s in sizes) >= 0.95 * len(sizes)
    assert max(sizes) >= 250  # long reports, letters and threads too
    kinds = Counter(type(r["state"]).__name__ for r in challenge)
    assert kinds["dict"] >= 30 and kinds["list"] >= 20, kinds  # JSON and conversation states
    noul = [r["answers"][q] for r in challenge for q, d in r["questions"].items()
            if d["type"] == "noul"]  # fmt: skip
    choice = [q for r in challenge for q, d in r["questions"].items() if d["type"] == "choice"]
    assert noul.count(False) >= len(noul) / 3 and noul.count(True) >= len(noul) / 3
    assert len(choice) >= 150


def test_every_minimal_pair_flips_its_answers(pairs):
    by_pair = defaultdict(list)
    for row in pairs:
        by_pair[row["pair"]].append(row)
    assert len(by_pair) >= 200
    for pair, (first, second) in by_pair.items():
        assert first["questions"] == second["questions"], pair
        assert first["state"] != second["state"], pair
        assert all(first["answers"][q] != second["answers"][q] for q in first["questions"]), pair


def test_no_challenge_or_dev_text_is_in_the_training_data(challenge):
    dev = load(CHECKS / "dev.jsonl")
    seen = {
        json.dumps(r["state"], sort_keys=True)
        for name in ("train.jsonl", "contrast.jsonl", "corruptions.jsonl")
        for r in load(DECISIONS / name)
    }
    for row in challenge + dev:
        assert json.dumps(row["state"], sort_keys=True) not in seen, row["id"]


def test_the_build_scripts_reproduce_the_committed_files(tmp_path):
    subprocess.run([sys.executable, str(CHECKS / "build_checks.py"), "--out", str(tmp_path)],
                   check=True, capture_output=True)  # fmt: skip
    for name in ("challenge.jsonl", "pairs.jsonl", "dev.jsonl"):
        assert (tmp_path / name).read_bytes() == (CHECKS / name).read_bytes(), name
    for name in ("contrast", "corruptions"):
        out = tmp_path / f"{name}.jsonl"
        subprocess.run([sys.executable, str(DECISIONS / f"build_{name}.py"), "--out", str(out)],
                       check=True, capture_output=True)  # fmt: skip
        assert out.read_bytes() == (DECISIONS / f"{name}.jsonl").read_bytes(), name


def test_every_contrast_and_corruption_row_is_valid_labelled_data():
    for name in ("contrast", "corruptions"):
        assert read_decisions(DECISIONS / f"{name}.jsonl")


def test_each_corruption_pair_changes_one_sentence_and_flips_both_answers():
    rows = load(DECISIONS / "corruptions.jsonl")
    assert len(rows) >= 2000
    for first, second in zip(rows[::2], rows[1::2]):
        assert first["pair"] == second["pair"] and first["questions"] == second["questions"]
        copy, changed = (first["questions"][q]["instructions"] for q in ("copy", "changed"))
        assert copy != changed and abs(len(copy.split()) - len(changed.split())) <= 2
        assert first["answers"] == {"copy": True, "changed": False}
        assert second["answers"] == {"copy": False, "changed": True}
        assert first["state"] != second["state"]


def test_every_negated_statement_comes_with_a_paraphrase_of_the_same_answer(monkeypatch):
    monkeypatch.syspath_prepend(str(DECISIONS))
    from negations import NEGATIONS
    from paraphrases import PARAPHRASES

    assert set(PARAPHRASES) == set(NEGATIONS)
    for row in load(DECISIONS / "contrast.jsonl"):
        negated = [q for q in row["questions"] if q.endswith("_neg")]
        for qid in negated:
            twin = qid[: -len("_neg")] + "_para"
            assert row["answers"][twin] is not row["answers"][qid], row["id"]
