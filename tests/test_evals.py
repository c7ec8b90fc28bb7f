"""laya.evals and ``laya eval run|validate|compare|agreement|evidence`` (the ``laya-evals``
script): rows with ``expected``, the figures, limits, baselines, the gate policy, agreement and
evidence, answered by the bundled ``mini`` (on ONNX Runtime when it is installed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from laya.checkpoint import BUNDLED
from laya.evals import (
    Dataset,
    EvalError,
    EvalReport,
    Example,
    aurc,
    brier,
    compare_agreement,
    ece,
    evaluate,
    selective_accuracy,
)
from laya.evals.evals_command import eval_main
from laya.evals.evidence import MISSING, inspect_checkpoint

URGENT = {"type": "noul", "instructions": "Is this urgent?"}
TEAM = {"type": "choice", "instructions": "Which team?", "criteria": ["billing", "tech", "sales"]}
ROWS = [
    {"state": {"message": "The server is down and nobody can pay"}, "questions": {"urgent": URGENT},
     "expected": {"urgent": True}, "tags": ["ops"]},
    {"state": {"message": "Thanks for lunch yesterday"}, "questions": {"urgent": URGENT},
     "expected": {"urgent": False}, "tags": ["ops"]},
    {"state": {"message": "Refund my order, I was billed twice"}, "questions": {"team": TEAM},
     "expected": {"team": "billing"}, "language": "en"},
    {"state": {"message": "The app crashes when I log in"}, "questions": {"team": TEAM},
     "expected": {"team": "tech"}, "language": "en"},
]  # fmt: skip


@pytest.fixture(scope="module")
def dataset_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("evals") / "rows.jsonl"
    lines = ["# a comment", *(json.dumps(row) for row in ROWS), ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def report_file(dataset_file) -> Path:
    """One ``laya eval run`` of the rows with mini, written as JSON (built once)."""
    out = dataset_file.parent / "report.json"
    assert eval_main(["run", str(dataset_file), "--model", "mini", "--json", str(out)]) == 0
    return out


def test_dataset_rows_with_expected_and_refusals_naming_file_and_line(dataset_file, tmp_path):
    dataset = Dataset.from_jsonl(str(dataset_file))
    assert len(dataset) == 4
    assert [e.tags for e in dataset][:2] == [("ops",), ("ops",)]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**ROWS[2], "expected": {"team": "nobody"}}) + "\n")
    with pytest.raises(EvalError) as refused:
        Dataset.from_jsonl(str(bad))
    assert "bad.jsonl:1" in str(refused.value) and "team" in str(refused.value)
    with pytest.raises(EvalError):
        Example.from_dict({"state": "x", "questions": {"urgent": URGENT}})


def test_figures_on_known_numbers():
    confidences, corrects = [0.9, 0.8, 0.6, 0.3], [True, True, False, False]
    assert brier(confidences, corrects) == pytest.approx((0.01 + 0.04 + 0.36 + 0.09) / 4, abs=2e-4)
    assert selective_accuracy(confidences, corrects, 0.5) == pytest.approx(1.0, abs=2e-4)
    assert 0 <= ece(confidences, corrects) <= 1
    assert aurc(confidences, corrects) == pytest.approx((0 + 0 + 1 / 3 + 2 / 4) / 4, abs=2e-4)
    assert ece([], []) is None


def test_run_reports_figures_slices_and_cases(report_file):
    report = json.loads(report_file.read_text())
    assert report["config"]["schema"] == "laya-evals-report/1"
    assert len(report["config"]["dataset_sha256"]) == 64
    overall = report["overall"]
    assert overall["n_examples"] == 4 and overall["n_answers"] == 4
    for figure in ("choice_accuracy", "noul_accuracy", "mean_confidence", "ece", "brier"):
        assert 0 <= overall[figure] <= 1
    assert set(report["slices"]["tag"]) == {"ops"}
    assert len(report["cases"]) == 4


def test_evaluate_in_python_matches_the_command(dataset_file, report_file):
    import laya

    agent = laya.load("mini")
    report = evaluate(agent, Dataset.from_jsonl(str(dataset_file)))
    assert isinstance(report, EvalReport)
    saved = json.loads(report_file.read_text())["overall"]
    for figure in ("choice_accuracy", "noul_accuracy", "mean_confidence"):
        assert report.overall[figure] == pytest.approx(saved[figure], abs=2e-4)
    assert "choice_accuracy" in report.to_markdown()


def test_validate_counts_examples_and_questions(dataset_file, capsys):
    assert eval_main(["validate", str(dataset_file)]) == 0
    out = capsys.readouterr().out
    assert "examples 4" in out and "question_ids 2" in out


def test_a_limit_that_fails_exits_1_with_a_fail_line(dataset_file, capsys):
    status = eval_main(["run", str(dataset_file), "--model", "mini", "--max", "ece=0"])
    assert status == 1
    assert "FAIL" in capsys.readouterr().err
    assert eval_main(["run", str(dataset_file), "--min", "ece=nan"]) == 2


def test_compare_and_the_gate_policy(report_file, tmp_path, capsys):
    assert eval_main(["compare", str(report_file), "--baseline", str(report_file)]) == 0
    policy = tmp_path / "policy.json"
    rules = [{"slice": {"tag": "ops"}, "metric": "noul_accuracy", "min": 1.01}]
    policy.write_text(json.dumps({"version": 1, "rules": rules}))
    status = eval_main(["compare", str(report_file), "--gate-policy", str(policy)])
    assert status == 1 and "policy" in capsys.readouterr().err
    relative = tmp_path / "relative.json"
    relative.write_text(json.dumps({"version": 1, "rules": [{"metric": "ece", "max_drop": 0}]}))
    assert eval_main(["compare", str(report_file), "--gate-policy", str(relative)]) == 2
    assert "--baseline" in capsys.readouterr().err


def test_agreement_of_a_report_with_itself_is_one(report_file):
    report = json.loads(report_file.read_text())
    figures = compare_agreement(report, report, report, bootstrap_samples=50)
    assert figures["reference_student"]["agreement"] == pytest.approx(1.0, abs=2e-4)
    assert json.dumps(figures)  # JSON all the way down
    assert eval_main(["agreement", *[str(report_file)] * 3, "--bootstrap-samples", "50"]) == 0


def test_evidence_of_mini_says_what_is_missing(report_file, capsys):
    mini = str(BUNDLED["mini"])
    found = inspect_checkpoint(mini, str(report_file))
    assert found["calibration"]["status"] in {MISSING, "PRESENT", "UNKNOWN", "INSUFFICIENT"}
    assert eval_main(["evidence", "--checkpoint", mini, "--report", str(report_file)]) == 0
    assert capsys.readouterr().out.strip()
    with pytest.raises(EvalError, match="--checkpoint"):
        inspect_checkpoint(str(report_file.parent))


PUBLISHED_METRICS = {
    "choice_accuracy",
    "noul_accuracy",
    "mean_confidence",
    "ece",
    "brier",
    "aurc",
    "selective_accuracy@50",
    "selective_accuracy@80",
    "latency_p50_ms",
    "latency_p95_ms",
    "cost_per_decision_p50_ms",
    "cost_per_decision_p95_ms",
}


def _published_figures(conf: list[float], right: list[bool]) -> dict[str, float]:
    """surface.md 3.7, computed here: ECE over 15 equal-width bins, Brier, AURC (the mean risk
    of the most confident k answers, k = 1..n) and accuracy of the ceil(C*n) most confident."""
    import math

    n, bins = len(conf), [[] for _ in range(15)]
    for c, r in zip(conf, right):
        bins[min(14, int(c * 15))].append((c, r))
    ece_value = sum(
        len(b) / n * abs(sum(r for _, r in b) / len(b) - sum(c for c, _ in b) / len(b))
        for b in bins
        if b
    )
    ranked = [r for _, r in sorted(zip(conf, right), key=lambda pair: -pair[0])]
    risks = [1 - sum(ranked[: k + 1]) / (k + 1) for k in range(n)]
    return {
        "ece": ece_value,
        "brier": sum((c - r) ** 2 for c, r in zip(conf, right)) / n,
        "aurc": sum(risks) / n,
        "selective_accuracy@50": sum(ranked[: math.ceil(0.5 * n)]) / math.ceil(0.5 * n),
        "selective_accuracy@80": sum(ranked[: math.ceil(0.8 * n)]) / math.ceil(0.8 * n),
        "mean_confidence": sum(conf) / n,
    }


def test_the_report_keeps_the_published_schema_metrics_and_definitions(dataset_file, report_file):
    """Issue 52: config (schema laya-evals-report/1, dataset and its sha256, questions sha256,
    laya version, thresholds, revisions, timing), the metric names and their definitions, the
    slices, to_json / to_markdown, compare / comparable_to / assert_regression."""
    import hashlib

    from laya.evals import REPORT_SCHEMA, assert_regression

    saved = json.loads(report_file.read_text())
    config = saved["config"]
    assert REPORT_SCHEMA == config["schema"] == "laya-evals-report/1"
    assert config["dataset_sha256"] == hashlib.sha256(dataset_file.read_bytes()).hexdigest()
    assert {
        "dataset",
        "questions_sha256",
        "laya_version",
        "thresholds",
        "revisions",
        "timing",
    } <= set(config)
    assert set(saved["overall"]) >= PUBLISHED_METRICS
    assert set(saved["slices"]) <= {"language", "model", "qid", "tag"}
    pairs = [
        (a["confidence"], a["correct"]) for case in saved["cases"] for a in case["answers"].values()
    ]
    expected = _published_figures([c for c, _ in pairs], [r for _, r in pairs])
    for name, value in expected.items():
        assert saved["overall"][name] == pytest.approx(value, abs=2e-4), name

    report = EvalReport(**{k: saved[k] for k in ("config", "overall", "slices", "cases")})
    assert report.to_json()["config"]["schema"] == REPORT_SCHEMA
    assert "| choice_accuracy |" in report.to_markdown()
    assert report.comparable_to(saved) == (True, [])
    other = {**saved, "config": {**config, "dataset_sha256": "0" * 64}}
    comparable, reasons = report.comparable_to(other)
    assert not comparable and any("dataset" in reason for reason in reasons)
    rows = report.compare(saved)
    assert rows["choice_accuracy"]["delta"] == 0 and not rows["choice_accuracy"]["regressed"]
    better = {**saved, "overall": {**saved["overall"], "noul_accuracy": 1.0}}
    assert report.compare(better)["noul_accuracy"]["regressed"]
    with pytest.raises(AssertionError, match="noul_accuracy"):
        assert_regression(report, better)


def test_run_prints_metric_value_lines_and_fail_lines_on_stderr(dataset_file, report_file, capsys):
    """``laya eval run`` prints one ``metric value`` line per overall figure, ``FAIL: ...`` on
    stderr for a limit it misses (exit 1); ``validate`` prints the example and question counts."""
    assert (
        eval_main(["run", str(dataset_file), "--model", "mini", "--min", "choice_accuracy=0"]) == 0
    )
    out, err = capsys.readouterr()
    printed = dict(line.split(" ", 1) for line in out.splitlines())
    assert set(printed) >= PUBLISHED_METRICS and err == ""
    assert float(printed["choice_accuracy"]) == pytest.approx(
        json.loads(report_file.read_text())["overall"]["choice_accuracy"], abs=2e-4
    )
    assert eval_main(["run", str(dataset_file), "--model", "mini", "--max", "ece=0"]) == 1
    out, err = capsys.readouterr()
    fails = [line for line in err.splitlines() if line.startswith("FAIL: ")]
    assert fails and all(line.startswith("FAIL: ece ") for line in fails)
    assert "FAIL" not in out
    assert eval_main(["validate", str(dataset_file)]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == ["examples 4", "question_ids 2"]
