"""Validation of the laya-mini decision dataset in data/decisions/ (see docs/training.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "decisions"
SPLITS = ("train", "dev", "test")
TYPES = ("choice", "score", "noul")


def load(split):
    """All rows of one split."""
    with open(DATA / f"{split}.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


@pytest.fixture(scope="module")
def splits():
    return {split: load(split) for split in SPLITS}


@pytest.fixture(scope="module")
def rows(splits):
    return [row for split in SPLITS for row in splits[split]]


def question_problem(question):
    """Why ``question`` breaks laya's question rules (runtime.md section 4), or None."""
    if not isinstance(question, dict):
        return "definition must be a dict"
    qtype = question.get("type")
    if qtype not in TYPES:
        return f"unknown type {qtype!r}"
    ins = question.get("instructions")
    if not isinstance(ins, str) or not ins.strip():
        return "instructions must be a non-empty string"
    crit = question.get("criteria")
    if qtype == "choice":
        labels = list(crit) if isinstance(crit, dict | list) else None
        if not labels:
            return "choice criteria must be a non-empty dict or list"
        if any(
            label is None or not isinstance(label, str | int | float | bool) for label in labels
        ):
            return "choice labels must be non-null scalars"
        if len(set(labels)) != len(labels):
            return "choice labels repeat"
    elif qtype == "score":
        if not isinstance(crit, list) or not crit or any(level is None for level in crit):
            return "score criteria must be a non-empty list without nulls"
    elif crit is not None and (
        not isinstance(crit, dict) or not {str(k).lower() for k in crit} <= {"true", "false"}
    ):
        return "noul criteria must be a dict keyed only true/false"
    if "labels" in question or "option_order" in question:
        return "unexpected labels/option_order"
    return None


def answer_ok(question, answer):
    """True when ``answer`` is a valid gold answer for ``question``."""
    if question["type"] == "choice":
        return answer in list(question["criteria"]) and not isinstance(answer, bool)
    if question["type"] == "score":
        return type(answer) is int and 0 <= answer < len(question["criteria"])
    return isinstance(answer, bool)


def state_key(row):
    return json.dumps(row["state"], ensure_ascii=False, sort_keys=True)


def test_rows_are_well_formed(rows):
    keys = {"id", "domain", "source", "state", "questions", "answers"}
    for row in rows:
        assert set(row) == keys, row["id"]
        assert isinstance(row["state"], str | dict | list) and row["state"], row["id"]
        assert 1 <= len(row["questions"]) <= 3, row["id"]
        assert set(row["answers"]) == set(row["questions"]), row["id"]


def test_size_ids_and_domains(rows):
    assert len(rows) >= 1500
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids))
    assert len({row["domain"] for row in rows}) >= 8


def test_every_question_and_answer_is_valid(rows):
    for row in rows:
        for qid, question in row["questions"].items():
            assert isinstance(qid, str) and qid.strip(), row["id"]
            assert question_problem(question) is None, (row["id"], qid, question_problem(question))
            assert answer_ok(question, row["answers"][qid]), (row["id"], qid)


def test_no_source_or_state_in_two_splits(splits):
    for attr in ("source", "state"):
        owner = {}
        for split in SPLITS:
            for row in splits[split]:
                key = row["source"] if attr == "source" else state_key(row)
                assert owner.setdefault(key, split) == split, (attr, row["id"])


def test_question_types_well_represented(rows):
    types = Counter(q["type"] for row in rows for q in row["questions"].values())
    total = sum(types.values())
    for qtype in TYPES:
        assert types[qtype] / total >= 0.25, types


def test_state_forms_and_criteria_forms_vary(rows):
    forms = Counter(type(row["state"]).__name__ for row in rows)
    assert all(forms[f] >= 150 for f in ("str", "dict", "list")), forms
    crit = Counter(
        type(q["criteria"]).__name__
        for row in rows
        for q in row["questions"].values()
        if q["type"] == "choice"
    )
    assert crit["dict"] >= 300 and crit["list"] >= 300, crit
    sizes = {
        len(q["criteria"])
        for row in rows
        for q in row["questions"].values()
        if q["type"] == "choice"
    }
    assert {2, 3, 4, 5, 6} <= sizes


def choice_families(rows):
    """Choice answers grouped by family: labels that ever share a question are one family."""
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for row in rows:
        for q in row["questions"].values():
            if q["type"] == "choice":
                labels = [(row["domain"], label) for label in q["criteria"]]
                for label in labels[1:]:
                    parent[find(label)] = find(labels[0])
    groups = defaultdict(Counter)
    for row in rows:
        for qid, q in row["questions"].items():
            if q["type"] == "choice":
                groups[find((row["domain"], row["answers"][qid]))][row["answers"][qid]] += 1
    return groups


def test_label_balance(rows):
    for family, counter in choice_families(rows).items():
        assert max(counter.values()) / sum(counter.values()) <= 0.6, (family, counter)
    scores, truths = defaultdict(Counter), defaultdict(Counter)
    for row in rows:
        for qid, q in row["questions"].items():
            answer = row["answers"][qid]
            if q["type"] == "score":
                scores[(row["domain"], len(q["criteria"]))][answer] += 1
            elif q["type"] == "noul":
                truths[row["domain"]][answer] += 1
    for key, counter in scores.items():
        assert max(counter.values()) / sum(counter.values()) <= 0.6, (key, counter)
    for domain, counter in truths.items():
        assert 0.4 <= counter[True] / sum(counter.values()) <= 0.6, (domain, counter)


def test_acceptance_probes_are_covered(rows):
    """The billing (duplicate charge) and technical (crash) triage cases have gold rows."""
    found = Counter()
    for row in rows:
        text = state_key(row)
        for qid, q in row["questions"].items():
            if q["type"] != "choice" or row["domain"] != "support_triage":
                continue
            if "charged twice" in text or "two times" in text:
                found["billing"] += row["answers"][qid] == "billing"
            if "crashes" in text:
                found["technical"] += row["answers"][qid] == "technical"
    assert found["billing"] >= 3 and found["technical"] >= 3, found


def test_build_reproduces_files(tmp_path):
    subprocess.run([sys.executable, str(DATA / "build.py"), "--out", str(tmp_path)], check=True)
    for split in SPLITS:
        name = f"{split}.jsonl"
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name


def hold_out(tmp_path, *args):
    """Run ``hold_out.py`` into ``tmp_path``; its exit status, output and the six files' rows."""
    run = subprocess.run(
        [sys.executable, str(DATA / "hold_out.py"), *args, "--out", str(tmp_path / "lodo")],
        capture_output=True,
        text=True,
    )
    files = {path.name: path.read_text(encoding="utf-8") for path in tmp_path.glob("lodo*")}
    return run, files


def test_hold_out_draw_splits_every_row_once(tmp_path, splits):
    run, files = hold_out(tmp_path, "--draw", "2", "--seed", "0")
    assert run.returncode == 0, run.stderr
    assert "held out: scheduling_hr support_triage" in run.stdout
    held = {"scheduling_hr", "support_triage"}
    for split in SPLITS:
        kept = [json.loads(line) for line in files[f"lodo-{split}.jsonl"].splitlines()]
        out = [json.loads(line) for line in files[f"lodo-held-{split}.jsonl"].splitlines()]
        assert {row["domain"] for row in out} == held
        assert not held & {row["domain"] for row in kept}
        assert sorted(r["id"] for r in kept + out) == sorted(r["id"] for r in splits[split])
    original = (DATA / "train.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    assert files["lodo-held-train.jsonl"] == "".join(
        line for line in original if json.loads(line)["domain"] in held
    )
    assert [len(files[f"lodo-held-{s}.jsonl"].splitlines()) for s in SPLITS] == [621, 105, 111]


def test_hold_out_named_domains_match_the_draw(tmp_path):
    (tmp_path / "drawn").mkdir()
    (tmp_path / "named").mkdir()
    drawn, drawn_files = hold_out(tmp_path / "drawn", "--draw", "2")
    named, named_files = hold_out(tmp_path / "named", "support_triage", "scheduling_hr")
    assert drawn.returncode == named.returncode == 0
    assert len(drawn_files) == 6
    assert drawn_files == named_files


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["hr"], "unknown domain(s) hr; known: billing_invoices"),
        ([], "name the domains to hold out, or give --draw N"),
        (["generic", "--draw", "1"], "name the domains to hold out, or give --draw N"),
        (["--draw", "9"], "--draw must be between 1 and 8, got 9"),
    ],
)
def test_hold_out_bad_arguments_write_nothing(tmp_path, args, message):
    run, files = hold_out(tmp_path, *args)
    assert run.returncode == 2
    assert message in run.stderr
    assert files == {}
