"""The ``laya`` command: ``laya.cli.command.main`` in this process, with conftest's offline Hub.

Most tests call ``main(ARGS)`` as ``python -m laya ARGS`` would, and read its exit code, stdout and
stderr (``run_laya``). A real process is started only where the process is what is tested: the
``python -m laya`` entry point, routing that never imports torch, and Ctrl-C.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest
from conftest import MODERNBERT, Ran

import laya
from laya.cli import command as cli
from laya.cli import render
from laya.typed.presets import router_questions, triage_questions

BILLED_TWICE = "We were billed twice for March, please refund the duplicate"
MINI = Path(laya.__file__).parent / "models" / "mini"
ROOT = Path(__file__).resolve().parents[1]
needs_mini = pytest.mark.skipif(not MINI.is_dir(), reason="the bundled mini model is not there yet")


@pytest.fixture
def empty_hub(monkeypatch, tmp_path) -> Path:
    """An empty Hugging Face cache (offline, as everywhere in the suite): nothing is cached."""
    from huggingface_hub import constants

    empty = tmp_path / "empty-hub"
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(empty))
    return empty


def one_error_line(ran: Ran) -> str:
    """The single clean ``laya...`` line a failing run leaves on stderr."""
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("laya"), ran.stderr
    assert "Traceback" not in ran.stderr
    return lines[0]


def json_lines(ran: Ran) -> list[dict]:
    assert ran.returncode == 0, ran.stderr
    return [json.loads(line) for line in ran.stdout.splitlines()]


# --------------------------------------------------------------------------- processes


def test_routing_only_prints_the_decision_and_never_imports_torch():
    wrapper = (
        "import sys; from laya.cli import main; rc = main(sys.argv[1:]); "
        "print('torch imported' if 'torch' in sys.modules else 'no torch', file=sys.stderr); "
        "raise SystemExit(rc)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", wrapper, BILLED_TWICE],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == "no torch"
    assert "english" in proc.stdout and "English Latin text" in proc.stdout


def test_python_m_laya_routes_and_json_is_one_object_per_line():
    proc = subprocess.run(
        [sys.executable, "-m", "laya", "Wir wurden im März doppelt belastet,", "bitte", "--json"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    (decision,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert decision["model"] == "multilingual"
    assert decision["detection"]["language"] == "de"
    assert proc.stderr == ""
    usage = subprocess.run(
        [sys.executable, "-m", "laya", "--bogus"], capture_output=True, text=True
    )
    assert usage.returncode == 2 and usage.stderr.startswith("laya: ") and usage.stdout == ""


# A ``laya`` process that stops where it opens a checkpoint's config (loading the model, well inside
# the command): it says "inside" on one pipe, then waits on another until a signal interrupts it.
HELD_LAYA = """
import os, runpy, sys
said, wait = (int(fd) for fd in os.environ["LAYA_TEST_FDS"].split(","))
held = []
def hold_at_the_config(event, args):
    if event == "open" and str(args[0]).endswith("rl_agent_config.json") and not held:
        held.append(True)
        os.write(said, b"inside\\n")
        os.read(wait, 1)  # nothing is ever written: only a signal ends this
sys.addaudithook(hold_at_the_config)
runpy.run_module("laya", run_name="__main__", alter_sys=True)
"""


@needs_mini
@pytest.mark.parametrize(
    "args",
    [
        ["batch", "in.jsonl", "--out", "out.jsonl", "--model", "mini"],
        ["eval", "in.jsonl", "--model", "mini"],
        [BILLED_TWICE, "--preset", "triage", "--model", "mini"],
    ],
    ids=["batch", "eval", "main"],
)
def test_ctrl_c_in_any_command_is_one_line_and_exit_130(tmp_path, args):
    row = {"state": BILLED_TWICE, "questions": {"r": {"type": "noul", "instructions": "refund"}}}
    (tmp_path / "in.jsonl").write_text(json.dumps(row | {"answers": {"r": True}}) + "\n")
    said_read, said = os.pipe()
    wait, wait_write = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-c", HELD_LAYA, *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "LAYA_TEST_FDS": f"{said},{wait}"},
        pass_fds=(said, wait),
    )
    os.close(said)
    os.close(wait)
    try:
        with os.fdopen(said_read) as told:
            assert told.readline() == "inside\n"  # loading mini, inside the command
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        os.close(wait_write)
        proc.kill()
    assert err == "laya: interrupted\n"
    # 130, or -SIGINT when CPython 3.11 re-raises the signal at exit after an interrupt deep in
    # an import (the message above says the interrupt was handled either way)
    assert proc.returncode in (130, -signal.SIGINT)
    assert not (tmp_path / "out.jsonl").exists()


FINALIZER_SWALLOWS_CTRL_C = """
import threading
from laya.commands import run_command
class Finalizer:
    def __del__(self):
        raise KeyboardInterrupt  # where a Ctrl-C that lands in a finalizer is raised
def work(_args):
    Finalizer()
    for thread in threading.enumerate():  # laya delivers the interrupt again from a timer
        if isinstance(thread, threading.Timer):
            thread.join(60)
    print("not interrupted")
print("exit", run_command("laya demo", [], list, work))
"""


def test_a_ctrl_c_that_lands_in_a_finalizer_still_stops_the_command():
    run = subprocess.run(
        [sys.executable, "-c", FINALIZER_SWALLOWS_CTRL_C], capture_output=True, text=True
    )
    assert run.stdout == "exit 130\n"
    assert run.stderr == "laya: interrupted\n"


# --------------------------------------------------------------------------- routing (no torch)


def test_route_batch_from_stdin_accepts_plain_and_jsonl_lines(run_laya):
    lines = [
        "hello there, how are you doing today",
        "",
        json.dumps({"state": {"message": "Bonjour, je voudrais annuler mon abonnement"}, "id": 7}),
        json.dumps({"state": "hola", "lang": "en"}),
    ]
    records = json_lines(run_laya("--batch", "-", "--json", stdin="\n".join(lines)))
    assert [r["model"] for r in records] == ["english", "multilingual", "english"]
    assert records[1]["id"] == 7 and "id" not in records[0]
    assert records[2]["reason"] == "explicit lang='en'"
    human = run_laya("--batch", "-", "--lang-guess", "fr", stdin="\n".join(lines))
    assert human.returncode == 0, human.stderr
    assert len(human.stdout.splitlines()) == 3
    assert all(row.startswith("multilingual") for row in human.stdout.splitlines()[:2])


# --------------------------------------------------------------------------- usage errors (exit 2)


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--bogus", "x"], "--bogus"),
        ([], "TEXT"),
        (["x", "--batch", "-"], "--batch"),
        (["x", "--preset", "triage", "--questions", "q.json"], "--questions"),
        (["x", "--preset", "nope"], "'nope'"),
        (["x", "--predict", "--min-confidence", "1.5"], "min_confidence"),
        (["x", "--max-len", "64"], "--max-len"),
        (["x", "--predict", "--batch-size", "0"], "--batch-size"),
        (["x", "--predict", "--sort-by-length"], "--sort-by-length"),
        (["x", "--model", "englsh"], "'english'"),
        (["x", "--model", "./no/such/dir"], "'./no/such/dir'"),
        (["x", "--task", "nonsense"], "--task"),
        (["x", "--predict", "--preset", "triage"], "--predict"),
        (["x", "--predict", "--questions", "q.json"], "--questions"),
        (["--batch", "/no/such/file.txt"], "/no/such/file.txt"),
    ],
)
def test_usage_errors_exit_2_with_one_line_naming_the_field(run_laya, args, field):
    ran = run_laya(*args)
    assert ran.returncode == 2
    line = one_error_line(ran)
    assert line.startswith("laya: ") and field in line
    assert ran.stdout == ""


def test_empty_batch_and_bad_jsonl_request_exit_2_naming_the_line(run_laya):
    empty = run_laya("--batch", "-", stdin="\n  \n")
    assert empty.returncode == 2 and "no requests" in one_error_line(empty)
    bad = json.dumps({"state": "x", "questons": {}})
    ran = run_laya("--batch", "-", "--predict", stdin=f"fine\n{bad}\n")
    assert ran.returncode == 2
    line = one_error_line(ran)
    assert "line 2" in line and "'questons'" in line


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ({"state": ""}, "state"),
        ({"state": "x", "lang": 5}, "lang"),
        ({"state": "x", "max_len": "a"}, "max_len"),
        ({"state": "x", "head_max_len": 1e309}, "head_max_len"),
        ({"state": None}, "'state'"),
        ({"state": "x", "task": "nonsense"}, "task"),
    ],
)
def test_a_bad_request_line_exits_2_naming_its_line_before_any_model_loads(run_laya, line, field):
    ran = run_laya("--batch", "-", "--predict", stdin=f"fine\n{json.dumps(line)}\n")
    assert ran.returncode == 2
    said = one_error_line(ran)
    assert "- line 2: " in said and field in said.partition("- line 2: ")[2]
    assert ran.stdout == ""


@pytest.mark.parametrize(
    ("content", "field"),
    [
        (None, "cannot read"),
        ('{"intent": {"type": "choice",}', "line 1 column 30"),
        ("[1, 2]", "array"),
        ("{}", "empty object"),
        ('{"intent": {"type": "pick", "instructions": "x"}}', "question 'intent'"),
        (
            '{"questions": {"a": {"type": "noul", "instructions": "x"}}, "state_key": 3}',
            "state_key",
        ),
        (
            '{"questions": {"a": {"type": "noul", "instructions": "x"}}, "state_key": "t", "x": 1}',
            "'x'",
        ),
    ],
)
def test_questions_file_errors_exit_2_naming_the_file(run_laya, tmp_path, content, field):
    path = tmp_path / "questions.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    ran = run_laya("some text", "--questions", str(path))
    assert ran.returncode == 2
    line = one_error_line(ran)
    assert str(path) in line and field in line


# --------------------------------------------------------------------------- answering (torch)


def test_preset_on_a_fixture_directory_prints_one_table_per_question(run_laya):
    ran = run_laya(BILLED_TWICE, "--preset", "triage", "--model", str(MODERNBERT))
    assert ran.returncode == 0, ran.stderr
    out = ran.stdout
    assert out.startswith("→ checkpoint (") and "explicit model='checkpoint'" in out
    for qid in triage_questions():
        assert any(line.startswith(qid) for line in out.splitlines()), qid
    assert "p(true)" in out and "█" in out and "confidence " in out
    assert "\x1b[" not in out  # not a terminal: no colour


def test_alias_through_the_offline_hub_cache_answers_the_router_preset_as_json(run_laya):
    (result,) = json_lines(
        run_laya("Write a haiku about the sea", "--predict", "--model", "ml", "--json")
    )
    assert result["routing"]["model"] == "multilingual"
    assert list(result["answers"]) == list(router_questions())


def test_batch_predict_from_stdin_with_gate_budget_and_per_line_questions(run_laya):
    own = {"spam": {"type": "noul", "instructions": "Is this spam?"}}
    lines = [
        "first ticket: the app crashes on start",
        json.dumps({"state": {"post": "buy cheap watches"}, "questions": own, "id": "b"}),
        "third ticket: please close my account",
    ]
    args = ["--batch", "-", "--preset", "moderation", "--model", "english", "--json"]
    args += [
        "--batch-size",
        "2",
        "--sort-by-length",
        "--min-confidence",
        "0.99",
        "--max-len",
        "200",
    ]
    records = json_lines(run_laya(*args, stdin="\n".join(lines)))
    assert [r.get("id") for r in records] == [None, "b", None]
    assert list(records[1]["answers"]) == ["spam"]
    assert list(records[0]["answers"]) == ["toxic", "harassment", "threat", "spam", "severity"]
    assert all(a["abstention_threshold"] == 0.99 for r in records for a in r["answers"].values())


def test_questions_file_with_state_key_in_batch_human_output(run_laya, tmp_path):
    path = tmp_path / "q.json"
    questions = {"urgent": {"type": "noul", "instructions": "Is the `ticket` urgent?"}}
    path.write_text(json.dumps({"questions": questions, "state_key": "ticket"}), encoding="utf-8")
    batch = tmp_path / "batch.txt"
    batch.write_text("server down since 9am\nthanks for the quick fix\n", encoding="utf-8")
    ran = run_laya("--batch", str(batch), "--questions", str(path), "--model", str(MODERNBERT))
    assert ran.returncode == 0, ran.stderr
    blocks = ran.stdout.split("# ")[1:]
    assert [b.splitlines()[0] for b in blocks] == [
        "server down since 9am",
        "thanks for the quick fix",
    ]
    assert all("urgent" in b for b in blocks)


def test_unloadable_routed_checkpoint_exits_1_and_names_the_fix(run_laya, empty_hub):
    ran = run_laya(BILLED_TWICE, "--predict", "--model", "auto")
    assert ran.returncode == 1
    line = one_error_line(ran)
    assert line.startswith("laya: ") and "'english'" in line
    assert "--model PATH" in line
    assert ("--model mini" in line) == MINI.is_dir()


def test_answering_with_no_model_fails_offline_naming_mini_never_switching(run_laya, empty_hub):
    """No --model routes as the published command does; the routed checkpoint not cached and
    no network: one line naming --model mini, exit 1, no answer from another checkpoint."""
    for flags in (["--preset", "triage"], ["--predict"], ["--preset", "triage", "--json"]):
        ran = run_laya(BILLED_TWICE, *flags)
        assert ran.returncode == 1 and ran.stdout == ""
        line = one_error_line(ran)
        assert "'english'" in line and ("--model mini" in line) == MINI.is_dir()


def test_answering_with_no_model_answers_through_the_routed_checkpoint(run_laya):
    routed = json_lines(run_laya(BILLED_TWICE, "--preset", "triage", "--json"))[0]["routing"]
    assert (routed["model"], routed["reason"]) == ("english", "English Latin text")
    french = "Nous avons été facturés deux fois en mars, remboursez le doublon"
    assert json_lines(run_laya(french, "--predict", "--json"))[0]["routing"]["model"] == (
        "multilingual"
    )


def test_broken_checkpoint_directory_exits_1_with_the_reason(run_laya, tmp_path):
    ran = run_laya("hello", "--predict", "--model", str(tmp_path))
    assert ran.returncode == 1
    assert "rl_agent_config.json" in one_error_line(ran)


SUBCOMMANDS_OFFLINE = {
    "batch": ["batch", "{data}", "--out", "{out}", "--model", "auto"],
    "eval": ["eval", "{data}", "--model", "english"],
    "calibrate": ["calibrate", "{data}", "--model", "english", "--out", "{out}"],
    "train": ["train", "{data}", "--base", "english", "--out", "{out}"],
    "export-onnx": ["export-onnx", "english", "--out", "{out}"],
}


@pytest.mark.parametrize("command", SUBCOMMANDS_OFFLINE)
def test_every_subcommand_reports_an_unavailable_checkpoint_in_one_line(
    run_laya, empty_hub, tmp_path, command
):
    data = tmp_path / "data.jsonl"
    row = {"state": BILLED_TWICE, "questions": {"r": {"type": "noul", "instructions": "refund"}}}
    data.write_text(json.dumps(row | {"answers": {"r": True}}) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    ran = run_laya(*(a.format(data=data, out=out) for a in SUBCOMMANDS_OFFLINE[command]))
    assert ran.returncode == 1, ran.stderr
    line = one_error_line(ran)
    assert line.startswith(f"laya {command}: error: ") and "'english'" in line
    assert "HF_HUB_OFFLINE" in line and "--model PATH" in line
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "prefix"),
    [
        (["eval", "data.jsonl", "--model", "./nowhere"], "laya eval: error: --model"),
        (
            ["calibrate", "data.jsonl", "--model", "./nowhere", "--out", "c.json"],
            "laya calibrate: error: --model",
        ),
        (
            ["train", "data.jsonl", "--base", "./nowhere", "--out", "out"],
            "laya train: error: --base",
        ),
        (["export-onnx", "./nowhere"], "laya export-onnx: error: checkpoint"),
        (
            ["batch", "data.jsonl", "--out", "o.jsonl", "--model", "./nowhere"],
            "laya batch: error: --model",
        ),
        (["hello", "--model", "./nowhere"], "laya: --model"),
    ],
)
def test_a_checkpoint_path_that_is_not_there_is_a_usage_error_everywhere(
    run_laya, tmp_path, monkeypatch, args, prefix
):
    row = {"state": BILLED_TWICE, "questions": {"r": {"type": "noul", "instructions": "refund"}}}
    (tmp_path / "data.jsonl").write_text(json.dumps(row | {"answers": {"r": True}}) + "\n")
    monkeypatch.chdir(tmp_path)
    ran = run_laya(*args)
    assert ran.returncode == 2, ran.stderr
    line = one_error_line(ran)
    assert line.startswith(prefix) and "'./nowhere'" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.jsonl"]


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["batch", "in.jsonl", "--out", "o.jsonl", "--batch-size", "0"], "--batch-size"),
        (["eval", "data.jsonl"], "--model"),
        (["calibrate", "data.jsonl", "--model", "mini"], "--out"),
        (["train", "data.jsonl", "--out", "o"], "--base"),
        (["export-onnx", "mini", "--opset", "x"], "--opset"),
        pytest.param(
            ["mcp", "--http", "--port", "http"],
            "--port",
            marks=pytest.mark.skipif(find_spec("mcp") is None, reason="laya[mcp] not installed"),
        ),
    ],
    ids=lambda value: value[0] if isinstance(value, list) else None,
)
def test_a_subcommand_usage_error_is_one_line_not_the_usage_block(
    run_laya, tmp_path, monkeypatch, args, field
):
    monkeypatch.chdir(tmp_path)
    ran = run_laya(*args)
    assert ran.returncode == 2
    command = f"laya {args[0]}"
    line = one_error_line(ran)
    assert line.startswith(f"{command}: error: ") and line.endswith(f"(see {command} --help)")
    assert field in line
    assert list(tmp_path.iterdir()) == []


OFFLINE_RUN = re.compile(
    r"```console\n\$ laya (\"We were billed twice for March\".*?)\n(.*?)\n```", re.S
)


def test_documented_offline_error_is_the_programs(run_laya, empty_hub):
    found = OFFLINE_RUN.search((ROOT / "docs" / "cli.md").read_text(encoding="utf-8"))
    assert found, "docs/cli.md has no offline run with its error"
    ran = run_laya(*shlex.split(found.group(1)))
    assert ran.returncode == 1
    assert one_error_line(ran).replace(str(empty_hub), "~/.cache/huggingface/hub") == found.group(2)


@needs_mini
def test_mini_answers_the_main_triage_job_sensibly(run_laya):
    (result,) = json_lines(
        run_laya(BILLED_TWICE, "--preset", "triage", "--model", "mini", "--json")
    )
    assert result["answers"]["intent"]["choice"] in {"refund", "billing_question"}
    assert result["routing"]["model"] == "mini"
    assert "warnings" not in result


@needs_mini
def test_mini_on_a_spanish_state_shows_the_language_warning(run_laya):
    spanish = "Nos cobraron dos veces en marzo, por favor devuelvan el cargo duplicado"
    ran = run_laya(spanish, "--preset", "triage", "--model", "mini")
    assert ran.returncode == 0
    (line,) = [x for x in ran.stdout.splitlines() if x.startswith("warning:")]
    assert "en" in line and "es" in line


@needs_mini
def test_a_subcommand_prints_a_warning_on_one_line(run_laya, tmp_path):
    row = {"state": BILLED_TWICE, "questions": {"q": {"type": "noul", "instructions": "Paid?"}}}
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps({**row, "answers": {"q": True}}) + "\n")
    ran = run_laya("eval", str(data), "--model", "mini", "--device", "hpu")
    assert ran.returncode == 0, ran.stderr
    (warned,) = ran.stderr.splitlines()  # no file name, no source line under it
    assert warned.startswith("laya: ") and "HPU" in warned


@needs_mini
def test_a_builtin_name_beside_a_folder_of_that_name_is_still_the_builtin(
    run_laya, tmp_path, monkeypatch
):
    (tmp_path / "mini").mkdir()  # no checkpoint in it
    (tmp_path / "english").mkdir()
    monkeypatch.chdir(tmp_path)
    ran = run_laya("hi there", "--model", "mini", "--json")
    assert ran.returncode == 0, ran.stderr
    assert json_lines(ran)[0]["model"] == "mini"
    from laya.checkpoint import resolve_source
    from laya.runtime import load

    assert Path(resolve_source("mini")[0]) == MINI and resolve_source("english")[0] != "english"
    assert resolve_source("./mini") == ("./mini", None)
    with pytest.raises(FileNotFoundError, match="rl_agent_config.json"):
        load("./mini", device="cpu")


# --------------------------------------------------------------------------- in-process pieces


def test_subcommands_dispatch_lazily_and_a_missing_one_exits_2(run_laya, monkeypatch):
    seen = []
    fake = type(sys)("laya_fake_command")
    fake.fake_main = lambda argv: seen.append(argv) or 5
    monkeypatch.setitem(sys.modules, "laya_fake_command", fake)
    commands = {
        "fake": ("laya_fake_command", "fake_main", "a fake"),
        "gone": ("laya.no_such_module", "gone_main", "not built yet"),
    }
    monkeypatch.setattr(cli, "COMMANDS", commands)
    assert run_laya("fake", "--flag", "x").returncode == 5 and seen == [["--flag", "x"]]
    gone = run_laya("gone")
    assert gone.returncode == 2 and "'gone'" in one_error_line(gone)


def test_the_four_subcommands_are_in_the_table():
    assert set(cli.COMMANDS) >= {"serve", "export-onnx", "train", "eval"}


def test_bar_has_eighth_cell_resolution_and_fixed_width():
    assert render.bar(0.0) == " " * render.BAR_WIDTH
    assert render.bar(1.0) == "█" * render.BAR_WIDTH
    assert render.bar(0.5 + 3 / 160) == "█" * 10 + "▍" + " " * 9
    assert render.bar(7.0) == render.bar(1.0) and len(render.bar(0.33)) == render.BAR_WIDTH


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_without_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert render.Style.for_stream(_Terminal()).colour
    assert not render.Style.for_stream(io.StringIO()).colour
    monkeypatch.setenv("NO_COLOR", "1")
    assert not render.Style.for_stream(_Terminal()).colour


def test_answer_tables_show_verdicts_gate_flags_and_truncation():
    result = {
        "answers": {
            "intent": {
                "type": "choice",
                "choice": "refund",
                "probabilities": {"other": 0.2, "refund": 0.8},
                "confidence": 0.28,
                "low_confidence": True,
            },
            "mood": {
                "type": "score",
                "score": 1.2,
                "legend": {"0": "calm", "1": "cross"},
                "probabilities": {"0": 0.1, "1": 0.9},
                "confidence": 0.53,
            },
            "urgent": {"type": "noul", "noul": 0.25, "confidence": 0.75},
        },
        "usage": {"truncated": True, "state_tokens_dropped": 12},
        "routing": {"model": "mini", "repo": "/models/mini", "reason": "explicit model='mini'"},
    }
    lines = render.show_answers(result, render.Style())
    assert lines[0] == "→ mini (/models/mini): explicit model='mini'"
    assert lines[2] == "intent  refund  confidence 0.28  low confidence"
    assert lines[3].startswith("  refund   ") and lines[3].endswith("0.80")
    assert "mood    1.20, most likely cross  confidence 0.53" in lines
    assert "urgent  no  confidence 0.75" in lines
    assert lines[-1] == "note: state truncated, 12 tokens dropped"
    warned = {**result, "warnings": [{"type": "language", "message": "reads en only"}]}
    assert render.show_answers(warned, render.Style())[-2] == "warning: reads en only"


def test_a_request_the_checkpoint_refuses_is_a_usage_error():
    class Refusing:
        def predict_batch(self, requests, **options):
            raise ValueError("question 'q': does not fit in\nmax_len=8")

    with pytest.raises(cli.UsageError, match="^question 'q': does not fit in max_len=8$"):
        cli._answer(Refusing(), [{"state": "x", "questions": {}}], {})


def test_model_pins_register_directories_and_hub_ids_under_free_names(bert_dir):
    from laya.router import Router

    router = Router()
    assert cli.pin(router, str(MODERNBERT), "--model") == "checkpoint"
    assert cli.pin(router, str(bert_dir), "--model") == "checkpoint-2"
    assert cli.pin(router, str(MODERNBERT), "--model") == "checkpoint"  # same path, same name
    assert cli.pin(router, "someone/English", "--model") == "english-2"
    assert router.models["english-2"] == ("someone/English", None)
    assert cli.pin(router, " ML ", "--model") == "multilingual"
    assert cli.pin(router, "AUTO", "--model") is None


# --------------------------------------------------------------------------- help and docs


def options_without_help(text: str) -> list[str]:
    """The options a ``--help`` text lists with no help text beside or under them."""
    lines = text.splitlines()
    bare = []
    for i, line in enumerate(lines):
        match = re.match(r"^  (-[^\s,]+(?:[ ,][^\s]+)*?)(\s{2,}\S.*)?$", line)
        if not match or line.startswith("   "):
            continue
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if match.group(2) is None and not re.match(r"^\s{6,}\S", following):
            bare.append(match.group(1))
    return bare


@pytest.mark.parametrize("command", [[], *([name] for name in cli.COMMANDS)], ids=str)
def test_every_subcommand_help_describes_every_option(run_laya, command: list[str]) -> None:
    ran = run_laya(*command, "--help")
    assert ran.returncode == 0, ran.stderr
    text = ran.stdout
    assert "``" not in text and "keep_best" not in text
    usage, _, rest = text.partition("\n\n")
    description = rest.strip().splitlines()[0]
    assert description and not description.startswith(("``", "usage", "laya "))
    options = [line for line in text.splitlines() if re.match(r"^  -", line)]
    assert len(options) >= 2
    assert options_without_help(text) == [], text


DOCUMENTED_RUN = re.compile(r"```bash\nlaya (\"We were billed.*?)\n```\n\n```text\n(.*?)```", re.S)


@needs_mini
@pytest.mark.parametrize("page", ["README.md", "docs/cli.md"])
def test_documented_triage_output_is_the_programs(run_laya, page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    found = DOCUMENTED_RUN.search(text)
    assert found, f"{page} has no triage run with its output"
    ran = run_laya(BILLED_TWICE, "--preset", "triage", "--model", "mini")
    assert ran.returncode == 0, ran.stderr
    shown = ran.stdout.replace(str(MINI.parent.parent), "/path/to/laya")
    assert shown == found.group(2)


def test_docs_have_no_placeholders() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for page in pages:
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            assert not re.search(r"\bpending\b|TODO|FIXME", line), f"{page.name}:{n}: {line}"
