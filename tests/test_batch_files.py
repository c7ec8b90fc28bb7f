"""``laya batch``'s files: rows written as they are answered, a real process stopped halfway by
Ctrl-C or ``SIGTERM`` and resumed to what an uninterrupted run writes, the refusal of an existing
output, file modes, the run file never written through a symbolic link, Parquet in and out.

The interrupted processes are paced by a hook (:data:`PACED`): before each row is answered it
prints ``ready`` and waits for a line on its stdin, so the test knows how many rows are written
when it sends the signal (no sleeps). The bundled ``mini`` answers, one row per pass.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from golden import assert_matches

from laya.cli.batch import batch_main
from laya.files.row_output import run_path

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

STATES = [
    "Refund the duplicate charge, please.",
    "The app crashes when I log in.",
    "Cancel my subscription today.",
    "Where is my parcel?",
    "I love the new update!",
    "Your invoice is wrong again, fix it now.",
]
HALF = 3
ANSWER = ["--preset", "triage", "--model", "mini"]
ONE_A_PASS = ["--batch-size", "1"]  # the paced runs: one row a pass, written as answered
PACED = """
import sys

import laya
from laya.cli import main


class Pace:
    def on_predict_start(self, ctx):
        print("ready", flush=True)
        if not sys.stdin.readline():
            raise SystemExit("stdin closed")


laya.add_default_hook(Pace())
sys.exit(main(sys.argv[1:]))
"""


def write_jsonl(path: Path, states: list[str] = STATES) -> Path:
    rows = [{"id": i, "state": s} for i, s in enumerate(states)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_parquet(path: Path) -> Path:
    table = pa.table({"id": list(range(len(STATES))), "state": STATES})
    pq.write_table(table, path)
    return path


def jsonl_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def parquet_rows(path: Path) -> list[dict]:
    rows = pq.read_table(path).to_pylist()
    return [{**row, "result": json.loads(row["result"])} for row in rows]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("inputs")
    return {
        "jsonl": write_jsonl(folder / "in.jsonl"),
        "parquet": write_parquet(folder / "in.parquet"),
        "one": write_jsonl(folder / "one.jsonl", STATES[:1]),  # where one row tells enough
    }


@pytest.fixture(scope="module")
def uninterrupted(inputs, tmp_path_factory) -> dict[str, Path]:
    """One uninterrupted run per input (JSONL in and out, Parquet in and out, one row)."""
    folder = tmp_path_factory.mktemp("uninterrupted")
    outputs = {"jsonl": folder / "out.jsonl", "parquet": folder / "out.parquet"}
    outputs["one"] = folder / "one.jsonl"
    for kind, output in outputs.items():
        assert batch_main([str(inputs[kind]), "--out", str(output), *ANSWER]) == 0
    return outputs


def same_rows(expected: list[dict], got: list[dict]) -> None:
    """The same rows in the same order, every number within 2e-4 (golden.TOLERANCE)."""
    assert len(got) == len(expected)
    for want, have in zip(expected, got):
        assert_matches(want, have, ties=True)


def paced_batch(source: Path, output: Path) -> subprocess.Popen:
    command = [sys.executable, "-c", PACED, "batch", str(source), "--out", str(output)]
    command += [*ANSWER, *ONE_A_PASS]
    return subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=output.parent,
    )


def answer_rows(proc: subprocess.Popen, n: int) -> None:
    """Let ``n`` rows be answered; return when the next is about to be: ``n`` are written."""
    for done in range(n + 1):
        line = proc.stdout.readline()
        assert line == "ready\n", line or proc.stderr.read()
        if done < n:
            proc.stdin.write("go\n")
            proc.stdin.flush()


def stop(proc: subprocess.Popen, how: signal.Signals) -> tuple[int, str]:
    proc.send_signal(how)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


# --------------------------------------------------------------------------- interrupted


@pytest.mark.parametrize(
    ("how", "status", "said"),
    [(signal.SIGINT, 130, "laya: interrupted"), (signal.SIGTERM, 143, "laya: terminated")],
    ids=["sigint", "sigterm"],
)
def test_a_run_stopped_halfway_keeps_its_rows_and_resumes_to_the_same_file(
    inputs, uninterrupted, tmp_path, how, status, said
):
    output = tmp_path / "out.jsonl"
    proc = paced_batch(inputs["jsonl"], output)
    answer_rows(proc, HALF)
    assert len(output.read_text(encoding="utf-8").splitlines()) == HALF  # written as answered
    code, err = stop(proc, how)
    assert code == status and said in err
    text = output.read_text(encoding="utf-8")
    assert text.endswith("\n") and len(text.splitlines()) == HALF  # whole rows, nothing cut
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "out.jsonl.laya-run"]
    assert "complete" not in json.loads(run_path(output).read_text())

    assert batch_main([str(inputs["jsonl"]), "--out", str(output), *ANSWER, "--resume"]) == 0
    same_rows(jsonl_rows(uninterrupted["jsonl"]), jsonl_rows(output))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "out.jsonl.laya-run"]


def test_a_parquet_run_stopped_halfway_is_a_whole_file_and_resumes(inputs, uninterrupted, tmp_path):
    output = tmp_path / "out.parquet"
    proc = paced_batch(inputs["parquet"], output)
    answer_rows(proc, HALF)
    code, err = stop(proc, signal.SIGTERM)
    assert code == 143, err
    table = pq.read_table(output)  # whole: written from the run file when the run stopped
    assert table.num_rows == HALF and table.schema.field("id").type == pa.int64()
    assert table.schema.field("intent_confidence").type == pa.float64()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet", "out.parquet.laya-run"]

    assert batch_main([str(inputs["parquet"]), "--out", str(output), *ANSWER, "--resume"]) == 0
    same_rows(parquet_rows(uninterrupted["parquet"]), parquet_rows(output))
    assert pq.read_table(output).schema == pq.read_table(uninterrupted["parquet"]).schema


def test_a_row_cut_short_by_a_crash_is_answered_again(inputs, uninterrupted, tmp_path):
    """What ``kill -9`` in the middle of a write would leave: half a last line, and a run file
    not marked complete; --resume drops the half line and answers from there."""
    output = tmp_path / "out.jsonl"
    whole = uninterrupted["jsonl"].read_bytes()
    kept = whole[: whole.index(b"\n", whole.index(b"\n") + 1) + 1]  # two whole rows
    output.write_bytes(kept + whole[len(kept) : len(kept) + 40])
    record = json.loads(run_path(uninterrupted["jsonl"]).read_text())
    record.pop("complete")
    run_path(output).write_text(json.dumps(record) + "\n")
    assert batch_main([str(inputs["jsonl"]), "--out", str(output), *ANSWER, "--resume"]) == 0
    same_rows(jsonl_rows(uninterrupted["jsonl"]), jsonl_rows(output))


def test_a_csv_output_resumes_after_its_last_whole_record(inputs, tmp_path):
    output = tmp_path / "out.csv"
    assert batch_main([str(inputs["jsonl"]), "--out", str(output), *ANSWER]) == 0
    whole = output.read_bytes()
    header, first, second, *_ = whole.split(b"\r\n")
    assert header.startswith(b"id,state,intent,intent_confidence,")
    output.write_bytes(b"\r\n".join([header, first, second]) + b"\r\n" + b'7,"half a rec')
    record = json.loads(run_path(output).read_text())
    record.pop("complete")
    run_path(output).write_text(json.dumps(record) + "\n")
    assert batch_main([str(inputs["jsonl"]), "--out", str(output), *ANSWER, "--resume"]) == 0
    resumed = output.read_bytes().split(b"\r\n")
    assert len(resumed) == len(whole.split(b"\r\n")) and resumed[:3] == [header, first, second]


# --------------------------------------------------------------------------- refusals


def copy_of(output: Path, folder: Path) -> Path:
    """A finished output and its run file, copied into ``folder``."""
    target = folder / output.name
    target.write_bytes(output.read_bytes())
    run_path(target).write_bytes(run_path(output).read_bytes())
    return target


def test_an_existing_output_is_refused_without_resume_or_force(
    inputs, uninterrupted, tmp_path, capsys
):
    output = copy_of(uninterrupted["one"], tmp_path)
    before = output.read_bytes()
    command = [str(inputs["one"]), "--out", str(output), *ANSWER]
    assert batch_main(command) == 2
    err = capsys.readouterr().err
    assert "--resume" in err and "--force" in err and err.count("\n") == 1
    assert output.read_bytes() == before

    assert batch_main([*command, "--resume"]) == 0  # finished already: nothing to answer
    assert capsys.readouterr().out.startswith(f"wrote 0 rows to {output} (1 there already)")
    for other, named in [
        (["--preset", "email"], "questions --preset triage then, --preset email now"),
        (["--min-confidence", "0.5"], "--min-confidence (none) then, 0.5 now"),
    ]:
        assert batch_main([*command, *other, "--resume"]) == 2
        err = capsys.readouterr().err
        assert named in err and "--force" in err and err.count("\n") == 1
    changed = write_jsonl(tmp_path / "changed.jsonl", [*STATES[:1], "one more"])
    assert batch_main([str(changed), "--out", str(output), *ANSWER, "--resume"]) == 2
    assert "is not the file it was begun from" in capsys.readouterr().err
    assert output.read_bytes() == before

    assert batch_main([*command, "--force", "--resume"]) == 2
    assert batch_main([*command, "--force"]) == 0
    same_rows(jsonl_rows(uninterrupted["one"]), jsonl_rows(output))


def test_outputs_honour_the_umask_and_keep_an_existing_files_mode(inputs, uninterrupted, tmp_path):
    output = tmp_path / "new.jsonl"
    saved = os.umask(0o077)
    try:
        assert batch_main([str(inputs["one"]), "--out", str(output), *ANSWER]) == 0
    finally:
        os.umask(saved)
    for made in (output, run_path(output)):
        assert made.stat().st_mode & 0o777 == 0o600
    (tmp_path / "kept").mkdir()
    kept = copy_of(uninterrupted["one"], tmp_path / "kept")
    kept.chmod(0o640)
    assert batch_main([str(inputs["one"]), "--out", str(kept), *ANSWER, "--force"]) == 0
    assert kept.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in kept.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_the_run_file_is_never_written_through_a_planted_symbolic_link(
    inputs, uninterrupted, tmp_path, capsys
):
    output = tmp_path / "out.jsonl"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    run_path(output).symlink_to(victim)
    command = [str(inputs["one"]), "--out", str(output), *ANSWER]
    assert batch_main(command) == 2  # a run file (even a link) means an output was begun
    assert batch_main([*command, "--resume"]) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert batch_main([*command, "--force"]) == 0
    assert victim.read_text() == "precious\n" and not run_path(output).is_symlink()
    same_rows(jsonl_rows(uninterrupted["one"]), jsonl_rows(output))


def test_parquet_without_pyarrow_is_one_line_naming_the_extra(inputs, tmp_path):
    code = (
        "import sys; sys.modules['pyarrow'] = None; from laya.cli import main; "
        f"sys.exit(main(['batch', {str(inputs['parquet'])!r}, '--out', "
        f"{str(tmp_path / 'out.jsonl')!r}, '--model', 'mini']))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith("laya batch: error: ") and "pip install 'laya[parquet]'" in line
    assert list(tmp_path.iterdir()) == []
