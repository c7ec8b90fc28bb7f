"""The ``laya`` command, run for real: ``python -m laya`` in a subprocess, with conftest's offline Hub.

Routing and usage errors never import torch, so those subprocesses are quick; the few that answer
(each imports torch, a few seconds) use the fixture checkpoints, by path or through the Hub cache.
Rendering and subcommand dispatch are checked in-process.
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
import time
from importlib.util import find_spec
from pathlib import Path

import pytest
from conftest import MODERNBERT

import laya
from laya.cli import command as cli
from laya.cli import render
from laya.typed.presets import router_questions, triage_questions

BILLED_TWICE = "We were billed twice for March, please refund the duplicate"
MINI = Path(laya.__file__).parent / "models" / "mini"
ROOT = Path(__file__).resolve().parents[1]


def laya(*args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess:
    """Run ``python -m laya ARGS`` with the test process's environment (offline Hub cache)."""
    return subprocess.run(
        [sys.executable, "-m", "laya", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, "PYTHONIOENCODING": "utf-8", **env},
        timeout=300,
    )


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    """The single clean ``laya: ...`` line a failing run leaves on stderr."""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("laya: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def json_lines(proc: subprocess.CompletedProcess) -> list[dict]:
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


# --------------------------------------------------------------------------- routing (no torch)


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


def test_console_script_routes_and_json_is_one_object_per_line():
    proc = laya("Wir wurden im März doppelt belastet,", "bitte erstatten", "--json")
    (decision,) = json_lines(proc)
    assert decision["model"] == "multilingual"
    assert decision["detection"]["language"] == "de"
    assert proc.stderr == ""


def test_route_batch_from_stdin_accepts_plain_and_jsonl_lines():
    lines = [
        "hello there, how are you doing today",
        "",
        json.dumps({"state": {"message": "Bonjour, je voudrais annuler mon abonnement"}, "id": 7}),
        json.dumps({"state": "hola", "lang": "en"}),
    ]
    records = json_lines(laya("--batch", "-", "--json", stdin="\n".join(lines)))
    assert [r["model"] for r in records] == ["english", "multilingual", "english"]
    assert records[1]["id"] == 7 and "id" not in records[0]
    assert records[2]["reason"] == "explicit lang='en'"
    human = laya("--batch", "-", "--lang-guess", "fr", stdin="\n".join(lines))
    assert human.returncode == 0, human.stderr
    assert len(human.stdout.splitlines()) == 3
    assert all(row.startswith("multilingual") for row in human.stdout.splitlines()[:2])


# --------------------------------------------------------------------------- usage errors (exit 2)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--bogus", "x"], "unrecognized arguments: --bogus"),
        ([], "nothing to do"),
        (["x", "--batch", "-"], "not both"),
        (["x", "--preset", "triage", "--questions", "q.json"], "exclusive"),
        (["x", "--preset", "nope"], "invalid choice: 'nope'"),
        (["x", "--predict", "--min-confidence", "1.5"], "min_confidence"),
        (["x", "--max-len", "64"], "--max-len only applies when answering"),
        (["x", "--predict", "--batch-size", "0"], "positive whole number"),
        (["x", "--predict", "--sort-by-length"], "--sort-by-length needs --batch"),
        (["x", "--model", "englsh"], "did you mean 'english'"),
        (["x", "--model", "./no/such/dir"], "no checkpoint directory at './no/such/dir'"),
        (["x", "--task", "nonsense"], "--task: unknown task 'nonsense'"),
        (["x", "--predict", "--preset", "triage"], "--predict answers the 'router' preset"),
        (["x", "--predict", "--questions", "q.json"], "not both"),
        (["--batch", "/no/such/file.txt"], "cannot read batch file /no/such/file.txt"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args, expected):
    proc = laya(*args)
    assert proc.returncode == 2
    assert expected in one_error_line(proc)
    assert proc.stdout == ""


def test_empty_batch_and_bad_jsonl_request_exit_2_naming_the_line():
    assert "no requests" in one_error_line(laya("--batch", "-", stdin="\n  \n"))
    bad = json.dumps({"state": "x", "questons": {}})
    proc = laya("--batch", "-", "--predict", stdin=f"fine\n{bad}\n")
    assert proc.returncode == 2
    assert "- line 2: unknown key 'questons'" in one_error_line(proc)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ({"state": ""}, "- line 2: state is empty"),
        ({"state": "x", "lang": 5}, "- line 2: lang must be a code, got int"),
        ({"state": "x", "max_len": "a"}, "- line 2: max_len must be a whole number of tokens"),
        ({"state": "x", "head_max_len": 1e309}, "- line 2: head_max_len must be a whole number"),
        ({"state": None}, "- line 2: 'state' must not be null"),
        ({"state": "x", "task": "nonsense"}, "- line 2: task: unknown task 'nonsense'"),
    ],
)
def test_a_bad_request_line_exits_2_naming_its_line_before_any_model_loads(line, expected):
    proc = laya("--batch", "-", "--predict", stdin=f"fine\n{json.dumps(line)}\n")
    assert proc.returncode == 2
    assert expected in one_error_line(proc)
    assert proc.stdout == ""


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "cannot read questions file"),
        ('{"intent": {"type": "choice",}', "invalid JSON at line 1 column 30"),
        ("[1, 2]", "got an array"),
        ("{}", "got an empty object"),
        ('{"intent": {"type": "pick", "instructions": "x"}}', "question 'intent': unknown type"),
        (
            '{"questions": {"a": {"type": "noul", "instructions": "x"}}, "state_key": 3}',
            "state_key",
        ),
        (
            '{"questions": {"a": {"type": "noul", "instructions": "x"}}, "state_key": "t", "x": 1}',
            "unexpected key 'x' beside 'questions'; a questions file is either",
        ),
    ],
)
def test_questions_file_errors_exit_2_naming_the_file(tmp_path, content, expected):
    path = tmp_path / "questions.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    proc = laya("some text", "--questions", str(path))
    assert proc.returncode == 2
    line = one_error_line(proc)
    assert str(path) in line and expected in line


# --------------------------------------------------------------------------- answering (torch)


def test_preset_on_a_fixture_directory_prints_one_table_per_question():
    proc = laya(BILLED_TWICE, "--preset", "triage", "--model", str(MODERNBERT))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("→ checkpoint (") and "explicit model='checkpoint'" in out
    for qid in triage_questions():
        assert any(line.startswith(qid) for line in out.splitlines()), qid
    assert "p(true)" in out and "█" in out and "confidence " in out
    assert "\x1b[" not in out  # not a terminal: no colour


def test_alias_through_the_offline_hub_cache_answers_the_router_preset_as_json():
    (result,) = json_lines(
        laya("Write a haiku about the sea", "--predict", "--model", "ml", "--json")
    )
    assert result["routing"]["model"] == "multilingual"
    assert list(result["answers"]) == list(router_questions())


def test_batch_predict_from_stdin_with_gate_budget_and_per_line_questions():
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
    records = json_lines(laya(*args, stdin="\n".join(lines)))
    assert [r.get("id") for r in records] == [None, "b", None]
    assert list(records[1]["answers"]) == ["spam"]
    assert list(records[0]["answers"]) == ["toxic", "harassment", "threat", "spam", "severity"]
    assert all(a["abstention_threshold"] == 0.99 for r in records for a in r["answers"].values())


def test_questions_file_with_state_key_in_batch_human_output(tmp_path):
    path = tmp_path / "q.json"
    questions = {"urgent": {"type": "noul", "instructions": "Is the `ticket` urgent?"}}
    path.write_text(json.dumps({"questions": questions, "state_key": "ticket"}), encoding="utf-8")
    batch = tmp_path / "batch.txt"
    batch.write_text("server down since 9am\nthanks for the quick fix\n", encoding="utf-8")
    proc = laya("--batch", str(batch), "--questions", str(path), "--model", str(MODERNBERT))
    assert proc.returncode == 0, proc.stderr
    blocks = proc.stdout.split("# ")[1:]
    assert [b.splitlines()[0] for b in blocks] == [
        "server down since 9am",
        "thanks for the quick fix",
    ]
    assert all("urgent" in b for b in blocks)


def test_unloadable_routed_checkpoint_exits_1_and_names_the_fix(tmp_path):
    proc = laya(BILLED_TWICE, "--predict", HF_HUB_CACHE=str(tmp_path))
    assert proc.returncode == 1
    line = one_error_line(proc)
    assert "cannot load checkpoint 'english'" in line
    assert "--model PATH" in line
    assert ("--model mini" in line) == MINI.is_dir()


def test_broken_checkpoint_directory_exits_1_with_the_reason(tmp_path):
    proc = laya("hello", "--predict", "--model", str(tmp_path))
    assert proc.returncode == 1
    assert "rl_agent_config.json" in one_error_line(proc)


SUBCOMMANDS_OFFLINE = {
    "batch": ["batch", "{data}", "--out", "{out}"],
    "eval": ["eval", "{data}", "--model", "english"],
    "calibrate": ["calibrate", "{data}", "--model", "english", "--out", "{out}"],
    "train": ["train", "{data}", "--base", "english", "--out", "{out}"],
    "export-onnx": ["export-onnx", "english", "--out", "{out}"],
}


@pytest.mark.parametrize("command", SUBCOMMANDS_OFFLINE)
def test_every_subcommand_reports_an_unavailable_checkpoint_in_one_line(tmp_path, command):
    data = tmp_path / "data.jsonl"
    row = {"state": BILLED_TWICE, "questions": {"r": {"type": "noul", "instructions": "refund"}}}
    data.write_text(json.dumps(row | {"answers": {"r": True}}) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    args = [a.format(data=data, out=out) for a in SUBCOMMANDS_OFFLINE[command]]
    proc = laya(*args, HF_HUB_CACHE=str(tmp_path / "empty"))
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith(f"laya {command}: error: cannot load checkpoint 'english'")
    assert "HF_HUB_OFFLINE is set" in lines[0] and "--model PATH" in lines[0]
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
def test_a_checkpoint_path_that_is_not_there_is_a_usage_error_everywhere(tmp_path, args, prefix):
    row = {"state": BILLED_TWICE, "questions": {"r": {"type": "noul", "instructions": "refund"}}}
    (tmp_path / "data.jsonl").write_text(json.dumps(row | {"answers": {"r": True}}) + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "laya", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"{prefix}: no checkpoint directory at './nowhere'"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.jsonl"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["batch", "in.jsonl", "--out", "o.jsonl", "--batch-size", "0"],
            "argument --batch-size: expected a positive whole number, got '0'",
        ),
        (["eval", "data.jsonl"], "the following arguments are required: --model"),
        (
            ["calibrate", "data.jsonl", "--model", "mini"],
            "the following arguments are required: --out",
        ),
        (["train", "data.jsonl", "--out", "o"], "the following arguments are required: --base"),
        (["export-onnx", "mini", "--opset", "x"], "argument --opset: invalid int value: 'x'"),
        pytest.param(
            ["mcp", "--http", "--port", "http"],
            "argument --port: invalid int value: 'http'",
            marks=pytest.mark.skipif(find_spec("mcp") is None, reason="laya[mcp] not installed"),
        ),
    ],
    ids=lambda value: value[0] if isinstance(value, list) else None,
)
def test_a_subcommand_usage_error_is_one_line_not_the_usage_block(tmp_path, args, expected):
    proc = subprocess.run(
        [sys.executable, "-m", "laya", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 2
    command = f"laya {args[0]}"
    assert proc.stderr == f"{command}: error: {expected} (see {command} --help)\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not MINI.is_dir(), reason="the bundled mini model is not there yet")
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
    lines = json.dumps(row | {"answers": {"r": True}}) + "\n"
    (tmp_path / "in.jsonl").write_text(lines * 5000, encoding="utf-8")  # far from done in 1.5 s
    proc = subprocess.Popen(
        [sys.executable, "-m", "laya", *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.5)  # well inside the command: importing torch or loading mini
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert err == "laya: interrupted\n"
    # 130, or -SIGINT when CPython 3.11 re-raises the signal at exit after an interrupt deep in
    # an import (the message above says the interrupt was handled either way)
    assert proc.returncode in (130, -signal.SIGINT)
    assert not (tmp_path / "out.jsonl").exists()


FINALIZER_SWALLOWS_CTRL_C = """
import time
from laya.commands import run_command
class Finalizer:
    def __del__(self):
        raise KeyboardInterrupt  # where a Ctrl-C that lands in a finalizer is raised
def work(_args):
    Finalizer()
    for _ in range(100):  # the command's work, which the redelivered Ctrl-C stops
        time.sleep(0.1)
    print("not interrupted")
print("exit", run_command("laya demo", [], list, work))
"""


def test_a_ctrl_c_that_lands_in_a_finalizer_still_stops_the_command():
    run = subprocess.run(
        [sys.executable, "-c", FINALIZER_SWALLOWS_CTRL_C], capture_output=True, text=True
    )
    assert run.stdout == "exit 130\n"
    assert run.stderr == "laya: interrupted\n"


OFFLINE_RUN = re.compile(
    r"```console\n\$ laya (\"We were billed twice for March\".*?)\n(.*?)\n```", re.S
)


def test_documented_offline_error_is_the_programs(tmp_path):
    found = OFFLINE_RUN.search((ROOT / "docs" / "cli.md").read_text(encoding="utf-8"))
    assert found, "docs/cli.md has no offline run with its error"
    proc = laya(*shlex.split(found.group(1)), HF_HUB_OFFLINE="1", HF_HUB_CACHE=str(tmp_path))
    assert proc.returncode == 1
    assert one_error_line(proc).replace(str(tmp_path), "~/.cache/huggingface/hub") == found.group(2)


@pytest.mark.skipif(not MINI.is_dir(), reason="the bundled mini model is not there yet")
def test_mini_answers_the_main_triage_job_sensibly():
    (result,) = json_lines(laya(BILLED_TWICE, "--preset", "triage", "--model", "mini", "--json"))
    assert result["answers"]["intent"]["choice"] in {"refund", "billing_question"}
    assert result["routing"]["model"] == "mini"
    assert "warnings" not in result


@pytest.mark.skipif(not MINI.is_dir(), reason="the bundled mini model is not there yet")
def test_mini_on_a_spanish_state_shows_the_language_warning():
    spanish = "Nos cobraron dos veces en marzo, por favor devuelvan el cargo duplicado"
    proc = laya(spanish, "--preset", "triage", "--model", "mini")
    assert proc.returncode == 0
    (line,) = [x for x in proc.stdout.splitlines() if x.startswith("warning:")]
    assert "reads en only" in line and "looks like es" in line


def test_a_subcommand_prints_a_warning_on_one_line(tmp_path):
    row = {"state": BILLED_TWICE, "questions": {"q": {"type": "noul", "instructions": "Paid?"}}}
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps({**row, "answers": {"q": True}}) + "\n")
    proc = laya("eval", str(data), "--model", "mini", "--device", "hpu")
    assert proc.returncode == 0, proc.stderr
    warned = "laya: HPU requested but not available; falling back to CPU."
    assert proc.stderr.splitlines() == [warned]  # no file name, no source line under it


def test_a_builtin_name_beside_a_folder_of_that_name_is_still_the_builtin(tmp_path, monkeypatch):
    (tmp_path / "mini").mkdir()  # no checkpoint in it
    (tmp_path / "english").mkdir()
    monkeypatch.chdir(tmp_path)
    proc = laya("hi there", "--model", "mini", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json_lines(proc)[0]["model"] == "mini"
    from laya.checkpoint import resolve_source
    from laya.runtime import load

    assert Path(resolve_source("mini")[0]) == MINI and resolve_source("english")[0] != "english"
    assert resolve_source("./mini") == ("./mini", None)
    with pytest.raises(FileNotFoundError, match="does not contain 'rl_agent_config.json'"):
        load("./mini", device="cpu")


# --------------------------------------------------------------------------- in-process pieces


def test_subcommands_dispatch_lazily_and_a_missing_one_exits_2(monkeypatch, capsys):
    seen = []
    fake = type(sys)("laya_fake_command")
    fake.fake_main = lambda argv: seen.append(argv) or 5
    monkeypatch.setitem(sys.modules, "laya_fake_command", fake)
    commands = {
        "fake": ("laya_fake_command", "fake_main", "a fake"),
        "gone": ("laya.no_such_module", "gone_main", "not built yet"),
    }
    monkeypatch.setattr(cli, "COMMANDS", commands)
    assert cli.main(["fake", "--flag", "x"]) == 5 and seen == [["--flag", "x"]]
    assert cli.main(["gone"]) == 2
    assert capsys.readouterr().err == "laya: 'gone' is not installed in this build of laya\n"


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
def test_every_subcommand_help_describes_every_option(command: list[str]) -> None:
    proc = laya(*command, "--help")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "``" not in text and "keep_best" not in text
    usage, _, rest = text.partition("\n\n")
    description = rest.strip().splitlines()[0]
    assert description and not description.startswith(("``", "usage", "laya "))
    options = [line for line in text.splitlines() if re.match(r"^  -", line)]
    assert len(options) >= 2
    assert options_without_help(text) == [], text


DOCUMENTED_RUN = re.compile(r"```bash\nlaya (\"We were billed.*?)\n```\n\n```text\n(.*?)```", re.S)


@pytest.mark.skipif(not MINI.is_dir(), reason="mini is not installed")
@pytest.mark.parametrize("page", ["README.md", "docs/cli.md"])
def test_documented_triage_output_is_the_programs(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    found = DOCUMENTED_RUN.search(text)
    assert found, f"{page} has no triage run with its output"
    proc = laya(BILLED_TWICE, "--preset", "triage", "--model", "mini")
    assert proc.returncode == 0, proc.stderr
    shown = proc.stdout.replace(str(MINI.parent.parent), "/path/to/laya")
    assert shown == found.group(2)


def test_docs_have_no_placeholders() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for page in pages:
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            assert not re.search(r"pending|TODO|FIXME", line), f"{page.name}:{n}: {line}"
