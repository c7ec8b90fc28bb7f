"""``laya batch``: a JSONL file answered on this machine (no Ray), one summary line; a bad row is
named and skipped (tests/test_batch_files.py: resuming, modes, Parquet; test_bad_rows.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MODERNBERT, QUESTIONS
from golden import assert_close

from laya.cli.batch import batch_main
from laya.router import Router

STATES = ["Refund the duplicate charge, please.", "The app crashes when I log in.", "Cancel it."]


def write_input(tmp_path: Path, rows: list[dict]) -> Path:
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return source


def test_local_batch_needs_no_ray_and_prints_one_summary_line(tmp_path: Path) -> None:
    rows = [{"id": i, "state": s, "tier": "gold"} for i, s in enumerate(STATES)]
    source, target = write_input(tmp_path, rows), tmp_path / "out.jsonl"
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps(QUESTIONS))
    code = (
        "import sys; sys.modules['ray'] = None; from laya.cli import main; "  # Ray not importable
        f"sys.exit(main(['batch', {str(source)!r}, '--out', {str(target)!r}, "
        f"'--questions', {str(questions)!r}, '--model', {str(MODERNBERT)!r}]))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    assert line.startswith(f"wrote 3 rows to {target} in ") and line.endswith(" s")
    assert "ray" not in proc.stderr.lower()
    out = [json.loads(x) for x in target.read_text().splitlines()]
    router = Router(models={"bench": str(MODERNBERT)})
    expected = router.predict_batch(
        [{"state": {"request": s}, "questions": QUESTIONS, "model": "bench"} for s in STATES]
    )
    for row, source_row, result in zip(out, rows, expected, strict=True):
        assert row["id"] == source_row["id"] and row["tier"] == "gold"
        assert_close(row["result"]["answers"], result["answers"])
        assert row["result"]["usage"] == result["usage"]
        assert row["department"] == result["answers"]["department"]["choice"]
        assert_close(row["churn_risk_confidence"], result["answers"]["churn_risk"]["confidence"])


@pytest.mark.parametrize(
    ("state", "message"),
    [("   ", "state is empty"), (None, "'state' must not be None"), ({"a": []}, "state is empty")],
)
def test_bad_states_are_skipped_and_named_by_file_line(tmp_path: Path, capsys, state, message):
    source = tmp_path / "in.jsonl"  # blank lines count: the error names the line in the file
    source.write_text(f'{{"state": "fine"}}\n\n\n{json.dumps({"state": state})}\n', "utf-8")
    target = tmp_path / "out.jsonl"
    assert batch_main([str(source), "--out", str(target), "--model", str(MODERNBERT)]) == 2
    err = capsys.readouterr().err
    assert f"bad row {source}:4: {message}" in err and "--skip-bad" in err.splitlines()[-1]
    assert [json.loads(x)["state"] for x in target.read_text().splitlines()] == ["fine"]


def test_usage_errors_write_nothing(tmp_path: Path, capsys) -> None:
    source = write_input(tmp_path, [{"text": "hi"}])
    for argv, message in [
        ([str(source)], "give the output file once"),
        ([str(source), "--out", "o.jsonl"], "no 'state' field (pass --state-column)"),
        ([str(source), "--out", "o.jsonl", "--preset", "nope"], "unknown preset 'nope'"),
        ([str(source), "--out", str(source), "--force"], "it is the input"),
    ]:
        assert batch_main(argv) == 2
        assert message in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]
