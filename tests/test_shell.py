"""The shell a new user meets (issue 47): console scripts over the same code as ``laya <sub>``,
JSON pretty on a terminal and compact when piped, ``--explain``, the prompt, progress that moves
per row on a terminal and nothing when piped, routing where no model is named, ``--calibration``, the
many-options hint, and a busy port as one error line. Terminals are real pseudo-terminals around
a ``python -m laya`` process; the rest runs in this process (``run_laya``)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import socket
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from laya.cli import scripts
from laya.router import pins

TEXT = "We were billed twice for March, please refund the duplicate"
MINI_ANSWER = ["--preset", "triage", "--model", "mini"]
PROGRESS = re.compile(r"(\d+)/(\d+)")


def on_a_terminal(args: list[str], tty: str, feed: bytes = b"", **env: str) -> dict[str, str]:
    """Run ``python -m laya ARGS`` with ``tty`` ("stdout", "stderr" or "stdin") on a 24x100
    pseudo-terminal and the other streams piped; returns what each stream carried (the
    terminal's own text under ``tty``, with what was typed echoed) and the ``status``."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    streams = {name: subprocess.PIPE for name in ("stdin", "stdout", "stderr")}
    streams[tty] = follower
    proc = subprocess.Popen(
        [sys.executable, "-m", "laya", *args],
        env={**os.environ, "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1", **env},
        **streams,
    )
    os.close(follower)
    if feed:
        os.write(leader, feed)
    if proc.stdin is not None:
        proc.stdin.close()
    seen = {tty: _read_until_closed(leader).decode(errors="replace")}
    for name in ("stdout", "stderr"):
        pipe = getattr(proc, name)
        if pipe is not None:
            seen[name] = pipe.read().decode()
    seen["status"] = str(proc.wait(timeout=300))
    return seen


def _read_until_closed(fd: int) -> bytes:
    """Everything written to a pseudo-terminal until the child closes it."""
    chunks = []
    while True:
        ready, _, _ = select.select([fd], [], [], 300)
        if not ready:
            raise TimeoutError("the command wrote nothing for 300 s")
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


# --------------------------------------------------------------------------- console scripts


def test_console_scripts_are_the_subcommands():
    """laya-serve, laya-train, laya-evals and laya-mcp-server run laya serve, train, eval and
    mcp (pyproject.toml)."""
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    for script, target in {
        "laya-serve": "laya.cli.scripts:laya_serve",
        "laya-train": "laya.cli.scripts:laya_train",
        "laya-evals": "laya.cli.scripts:laya_evals",
        "laya-mcp-server": "laya.cli.scripts:laya_mcp_server",
    }.items():
        assert f'{script} = "{target}"' in text
    wrapper = (
        "import sys; from laya.cli import scripts; sys.argv = ['laya-evals', '--help']; "
        "raise SystemExit(scripts.laya_evals())"
    )
    proc = subprocess.run([sys.executable, "-c", wrapper], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: laya eval")
    assert scripts.laya_train.__name__ == "laya_train"


# --------------------------------------------------------------------------- JSON and --explain


def test_json_of_one_request_is_indented_piped_or_on_a_terminal(run_laya):
    """As the published command: one request's JSON indented, wherever it goes (a batch's is
    one object per line, tests/test_cli.py)."""
    piped = run_laya(TEXT, "--json")
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.startswith("{\n  ")
    assert json.loads(piped.stdout)["model"] == "english"
    shown = on_a_terminal([TEXT, "--json"], "stdout")
    assert shown["status"] == "0"
    assert len(shown["stdout"].splitlines()) > 3
    assert json.loads(shown["stdout"])["model"] == "english"
    shown = on_a_terminal([TEXT, "--json=compact"], "stdout")
    assert shown["status"] == "0" and len(shown["stdout"].strip().splitlines()) == 1
    pretty = run_laya(TEXT, "--json=pretty")
    assert pretty.returncode == 0 and json.loads(pretty.stdout)["model"] == "english"
    assert pretty.stdout.startswith("{\n  ")


def test_explain_shows_the_detectors_diagnostics_and_is_routing_only(run_laya):
    proc = run_laya(TEXT, "--explain", "--json")
    assert proc.returncode == 0, proc.stderr
    diagnostic = json.loads(proc.stdout)["detection"]["diagnostic"]
    assert {"stage", "reason"} <= set(diagnostic)
    human = run_laya(TEXT, "--explain")
    detected = human.stdout.splitlines()[2]
    assert detected.startswith("Detected  : ")
    assert json.loads(detected.split(": ", 1)[1])["diagnostic"] == diagnostic
    refused = run_laya(TEXT, "--explain", *MINI_ANSWER)
    assert refused.returncode == 2 and "--explain" in refused.stderr


# --------------------------------------------------------------------------- the prompt


def test_laya_alone_on_a_terminal_opens_a_prompt_that_survives_a_bad_line():
    feed = f"{TEXT}\n{{not json\nquit\n".encode()
    shown = on_a_terminal([], "stdin", feed)
    assert shown["stdout"].count("laya> ") >= 2 and "English Latin text" in shown["stdout"]
    assert "input: not JSON" in shown["stderr"]  # one error line, and the session goes on
    assert shown["status"] == "2"  # the last failing line's status


def test_laya_alone_when_piped_says_what_to_give(run_laya):
    proc = run_laya(stdin="")
    assert proc.returncode == 2 and "nothing to do" in proc.stderr


def test_a_batch_line_of_broken_json_is_refused_not_answered_as_text(run_laya, tmp_path):
    batch = tmp_path / "lines.txt"
    batch.write_text('{"state": "fine"}\n{"state": broken\n', encoding="utf-8")
    proc = run_laya("--batch", str(batch), *MINI_ANSWER)
    assert proc.returncode == 2
    assert "line 2" in proc.stderr and "not JSON" in proc.stderr


# --------------------------------------------------------------------------- progress


def _rows(path: Path, n: int) -> Path:
    lines = [json.dumps({"state": f"ticket {i}: please refund order {i}"}) for i in range(n)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_40_row_batch_moves_its_bar_at_least_every_10_rows(tmp_path):
    """40 rows: more than 10, fewer than --batch-size's default of 64, so a batch answered in
    its quiet chunks moves the bar once, by 40; shown, it moves every 8."""
    data = _rows(tmp_path / "in.jsonl", 40)
    args = ["batch", str(data), "--out", str(tmp_path / "out.jsonl"), *MINI_ANSWER]
    shown = on_a_terminal(args, "stderr")
    assert shown["status"] == "0", shown["stderr"]
    found = PROGRESS.findall(shown["stderr"])
    counts = sorted({int(done) for done, total in found if total == "40"})
    assert counts and counts[-1] == 40, shown["stderr"][-500:]
    steps = [b - a for a, b in zip([0, *counts], counts)]
    assert max(steps) <= 10, steps


def test_laya_eval_run_moves_its_bar_per_row(tmp_path):
    team = {"type": "choice", "instructions": "Which team?", "criteria": ["billing", "tech"]}
    rows = [
        {"state": f"ticket {i}", "questions": {"team": team}, "expected": {"team": "billing"}}
        for i in range(12)
    ]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    shown = on_a_terminal(["eval", "run", str(data), "--model", "mini"], "stderr")
    assert shown["status"] == "0", shown["stderr"]
    counts = {int(done) for done, total in PROGRESS.findall(shown["stderr"]) if total == "12"}
    assert set(range(1, 13)) <= counts, shown["stderr"][-500:]


def test_progress_prints_nothing_when_piped(run_laya, tmp_path):
    data = _rows(tmp_path / "in.jsonl", 20)
    proc = run_laya("batch", str(data), "--out", str(tmp_path / "out.jsonl"), *MINI_ANSWER)
    assert proc.returncode == 0, proc.stderr
    assert "\r" not in proc.stderr and not PROGRESS.search(proc.stderr)


# --------------------------------------------------------------------------- default model


def test_answering_with_no_model_routes_as_published(run_laya, monkeypatch):
    """No --model answers through the routed checkpoint (english for English text), never a
    quietly chosen one; LAYA_DEFAULT_MODEL is the Router's default (undecided text), as the
    server's, and mini answers where it is named."""
    from laya.server.settings import Settings

    monkeypatch.delenv("LAYA_DEFAULT_MODEL", raising=False)
    assert pins.default_model() == "multilingual" == Settings().default_model
    assert Settings().route == "auto"
    assert pins.default_model({"LAYA_DEFAULT_MODEL": " mini "}) == "mini"
    proc = run_laya(TEXT, "--preset", "triage", "--json")
    assert proc.returncode == 0, proc.stderr
    routing = json.loads(proc.stdout)["routing"]
    assert routing["model"] == "english" and routing["reason"] == "English Latin text"
    undecided = json.loads(run_laya("12345 678", "--preset", "triage", "--json").stdout)
    assert undecided["routing"]["model"] == "multilingual"
    monkeypatch.setenv("LAYA_DEFAULT_MODEL", "mini")
    named = json.loads(run_laya("12345 678", "--preset", "triage", "--json").stdout)
    assert named["routing"]["model"] == "mini"
    assert (
        json.loads(run_laya(TEXT, "--preset", "triage", "--json").stdout)["routing"]["model"]
        == "english"
    )
    monkeypatch.setenv("LAYA_DEFAULT_MODEL", "nonsense")
    unknown = run_laya(TEXT, "--preset", "triage")
    assert unknown.returncode == 2 and "LAYA_DEFAULT_MODEL" in unknown.stderr


def test_the_name_default_is_the_published_alias_of_english():
    from laya.router import Router

    router = Router(preload=False, default="mini")
    assert router.resolve("default") == "english" and router.default == "mini"
    assert pins.pin("default", router.models, local=True).name == "english"


# --------------------------------------------------------------------------- --calibration


def test_calibration_is_read_before_answering_and_needs_a_pinned_model(run_laya, tmp_path):
    missing = str(tmp_path / "absent.json")
    proc = run_laya(TEXT, *MINI_ANSWER, "--calibration", missing)
    assert proc.returncode == 2 and "--calibration" in proc.stderr
    routed = run_laya(TEXT, "--preset", "triage", "--model", "auto", "--calibration", missing)
    assert routed.returncode == 2 and "--model" in routed.stderr
    routing = run_laya(TEXT, "--calibration", missing)
    assert routing.returncode == 2 and "--calibration" in routing.stderr
    batch = tmp_path / "in.jsonl"
    batch.write_text('{"state": "refund"}\n', encoding="utf-8")
    out = str(tmp_path / "out.jsonl")
    in_batch = run_laya("batch", str(batch), "--out", out, *MINI_ANSWER, "--calibration", missing)
    assert in_batch.returncode == 2 and "--calibration" in in_batch.stderr


# --------------------------------------------------------------------------- many options


def test_too_many_options_for_one_pass_suggests_a_tournament_or_a_shortlist(run_laya, tmp_path):
    labels = [f"department number {i} of the company" for i in range(200)]
    questions = tmp_path / "q.json"
    questions.write_text(
        json.dumps({"team": {"type": "choice", "instructions": "Which?", "criteria": labels}}),
        encoding="utf-8",
    )
    proc = run_laya(TEXT, "--questions", str(questions), "--model", "mini", "--max-len", "256")
    assert proc.returncode == 2
    assert "--tournament" in proc.stderr and "--shortlist" in proc.stderr


# --------------------------------------------------------------------------- laya serve


def test_serve_on_a_busy_port_is_one_error_line_and_exit_1(run_laya):
    pytest.importorskip("uvicorn")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        proc = run_laya("serve", "--port", port, "--no-preload")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("laya serve: error:"), proc.stderr
    assert port in lines[0] and "--port" in lines[0]


# --------------------------------------------------------------------------- start-up


def test_mini_starts_on_onnx_without_torch_and_answers_as_pytorch_does():
    """``laya TEXT --model mini`` answers from mini's ONNX graph (torch never imported) with the
    answers, and the ``model`` name, that PyTorch gives (``--device cpu``), within 2e-4."""
    wrapper = (
        "import sys; from laya.cli import main; rc = main(sys.argv[1:]); "
        "print('torch' in sys.modules, file=sys.stderr); raise SystemExit(rc)"
    )

    def answer(*extra: str) -> tuple[dict, str]:
        proc = subprocess.run(
            [sys.executable, "-c", wrapper, TEXT, *MINI_ANSWER, "--json=compact", *extra],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout), proc.stderr.strip().splitlines()[-1]

    onnx, onnx_torch = answer()
    torch, torch_torch = answer("--device", "cpu")
    assert (onnx_torch, torch_torch) == ("False", "True")
    assert onnx["model"] == torch["model"] == "laya-rl-agent"
    assert onnx["answers"].keys() == torch["answers"].keys()
    for qid, got in onnx["answers"].items():
        want = torch["answers"][qid]
        assert got.keys() == want.keys()
        for key in ("confidence", "answer_confidence", got["type"]):
            if isinstance(want[key], str):
                assert got[key] == want[key], (qid, key)
            else:
                assert got[key] == pytest.approx(want[key], abs=2e-4), (qid, key)
        for label, p in want.get("probabilities", {}).items():
            assert got["probabilities"][label] == pytest.approx(p, abs=2e-4), (qid, label)
