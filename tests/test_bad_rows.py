"""Rows a command cannot use, in ``laya batch``, ``laya train --data``, ``laya calibrate`` and
``laya eval``: the work goes on with the others, each bad row is named ``FILE:LINE`` on stderr at
the end, and the exit status is 2 unless ``--skip-bad`` (docs/cli.md, "Rows that cannot be
used"); and ``laya calibrate`` writes its file with the umask's mode, never through a link
planted at a temporary name."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from laya.checkpoint.testing import random_checkpoint
from laya.cli.batch import batch_main
from laya.evals.evals_command import eval_main
from laya.training.evaluate import eval_main as own_eval_main
from laya.training.fit_calibration import calibrate_main
from laya.training.train_command import main as train_main

URGENT = {"type": "noul", "instructions": "Is this urgent?"}


def bad_lines(err: str, prog: str) -> list[str]:
    """The FILE:LINE of each ``PROG: bad row FILE:LINE: ...`` line."""
    start = f"{prog}: bad row "
    return [
        line[len(start) :].split(": ", 1)[0] for line in err.splitlines() if line.startswith(start)
    ]


def names(path: Path, *lines: int) -> list[str]:
    return [f"{path}:{n}" for n in lines]


# --------------------------------------------------------------------------- laya batch


def test_batch_answers_the_good_rows_and_names_the_bad(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    source.write_text(
        '{"id": 1, "state": "refund me"}\n{"id": 2, "state": broken\n[1, 2]\n\n{"id": 4}\n'
        '{"id": 5, "state": "  "}\n{"id": 6, "state": "the app crashes"}\n',
        encoding="utf-8",
    )
    out = tmp_path / "out.jsonl"
    assert batch_main([str(source), "--out", str(out), "--model", "mini"]) == 2
    err = capsys.readouterr().err
    assert bad_lines(err, "laya batch") == names(source, 2, 3, 5, 6)
    assert "4 of 6 rows could not be used" in err and "--skip-bad" in err.splitlines()[-1]
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == [1, 6]

    csv = tmp_path / "in.csv"
    csv.write_text("id,state\n1,refund me\n2,too,many\n3,\n4,the app crashes\n", "utf-8")
    out = tmp_path / "out.csv"
    assert batch_main([str(csv), "--out", str(out), "--model", "mini", "--skip-bad"]) == 0
    err = capsys.readouterr().err
    assert bad_lines(err, "laya batch") == names(csv, 3, 4)
    assert "2 fields where the header has" not in err and "3 fields where the header has 2" in err
    assert [line.split(",")[0] for line in out.read_text().splitlines()] == ["id", "1", "4"]


def test_batch_with_no_usable_row_writes_nothing(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "hi"}\n', encoding="utf-8")
    assert batch_main([str(source), "--out", str(tmp_path / "out.jsonl")]) == 2
    assert f"{source}:1: no 'state' field (pass --state-column)" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [source]


# --------------------------------------------------------------------------- laya train --data


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return random_checkpoint(
        tmp_path_factory.mktemp("base") / "ckpt", encoder="bert", hidden_size=32, layers=1
    )


def test_train_data_names_the_rows_it_did_not_train_on(base, tmp_path, capsys):
    """The published runtime trained on 2 of these 4 rows and said only "Training complete!"."""
    data = tmp_path / "tickets.csv"
    data.write_text(
        "text,label\nrefund the payment,billing\n,billing\nthe app crashes,technical\nslow,\n",
        encoding="utf-8",
    )
    out = tmp_path / "tuned"
    command = ["--data", str(data), "--base", str(base), "--out", str(out), "--device", "cpu"]
    command += ["--epochs", "1", "--micro-batch", "2", "--grad-accum", "1"]
    assert train_main(command) == 2
    printed = capsys.readouterr()
    assert "Training complete!" in printed.out
    assert bad_lines(printed.err, "laya train") == names(data, 3, 5)
    assert "empty_text" in printed.err and "empty_label" in printed.err
    report = json.loads((out / "train_report.json").read_text())
    assert [line.split(": ")[0] for line in report["bad_rows"]] == names(data, 3, 5)

    data.write_text(data.read_text() + "one,two,three\n", encoding="utf-8")
    assert train_main([*command[:4], "--dry-run", "--skip-bad"]) == 0
    assert bad_lines(capsys.readouterr().err, "laya train") == names(data, 3, 5, 6)


# --------------------------------------------------------------------------- laya calibrate


def labelled(path: Path, key: str = "answers") -> Path:
    """Two good rows around a broken line and a row whose answer is not a truth."""
    good = [
        {"state": "The server is down", "questions": {"u": URGENT}, key: {"u": True}},
        {"state": "Thanks for lunch", "questions": {"u": URGENT}, key: {"u": False}},
    ]
    lines = [
        json.dumps(good[0]),
        '{"state": broken',
        json.dumps(good[1]),
        json.dumps({"state": "x", "questions": {"u": URGENT}, key: {"u": "maybe"}}),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_calibrate_names_bad_rows_and_writes_safely(tmp_path, capsys):
    data = labelled(tmp_path / "dev.jsonl")
    out = tmp_path / "calib.json"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (tmp_path / "calib.json.tmp").symlink_to(victim)  # where laya calibrate used to write
    saved = os.umask(0o077)
    try:
        assert calibrate_main([str(data), "--model", "mini", "--out", str(out)]) == 2
    finally:
        os.umask(saved)
    err = capsys.readouterr().err
    assert bad_lines(err, "laya calibrate") == names(data, 2, 4) and "answers.u" in err
    assert victim.read_text() == "precious\n"
    assert json.loads(out.read_text())["data"]["answers"] == 2
    assert out.stat().st_mode & 0o777 == 0o600
    out.chmod(0o640)
    assert calibrate_main([str(data), "--model", "mini", "--out", str(out), "--skip-bad"]) == 0
    assert out.stat().st_mode & 0o777 == 0o640
    leftovers = sorted(p.name for p in tmp_path.iterdir())
    assert leftovers == ["calib.json", "calib.json.tmp", "dev.jsonl", "victim.txt"]


# --------------------------------------------------------------------------- laya eval


def test_eval_names_bad_rows_and_skip_bad_accepts_them(tmp_path, capsys):
    data = labelled(tmp_path / "rows.jsonl", key="expected")
    assert eval_main(["validate", str(data)]) == 2
    err = capsys.readouterr().err
    assert bad_lines(err, "laya eval") == names(data, 2, 4)
    assert eval_main(["validate", str(data), "--skip-bad"]) == 0
    assert capsys.readouterr().out.startswith("examples 2\n")

    run = ["run", str(data), "--model", "mini"]
    assert eval_main([*run, "--on-error", "skip"]) == 2  # the published flag: refused rows only
    assert bad_lines(capsys.readouterr().err, "laya eval") == names(data, 2, 4)
    assert eval_main([*run, "--skip-bad", "--on-error", "fail"]) == 2
    assert "--on-error fail" in capsys.readouterr().err
    report = tmp_path / "report.json"
    assert eval_main([*run, "--skip-bad", "--json", str(report)]) == 0
    written = json.loads(report.read_text())
    assert written["overall"]["n_examples"] == 2 and written["config"]["on_error"] == "skip"


def test_laya_eval_data_names_bad_rows(tmp_path, capsys):
    data = labelled(tmp_path / "dev.jsonl")
    assert own_eval_main([str(data), "--model", "mini"]) == 2
    printed = capsys.readouterr()
    assert bad_lines(printed.err, "laya eval") == names(data, 2, 4)
    assert printed.out.startswith("states 2 ")
