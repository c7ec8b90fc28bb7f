"""The project works where it was not built: fixtures it carries, one name per checkpoint,
expected failures as one short error, devices this build lacks, and the src layout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import typing
import warnings
from pathlib import Path

import pytest
from conftest import FIXTURES, MODERNBERT, QUESTIONS, verify_fixtures
from golden import assert_close
from test_docs import ROOT, blocks

import laya
from laya.errors import CheckpointUnavailable, InvalidRequest, LayaError

MINI = Path(laya.__file__).parent / "models" / "mini"


def run_python(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """``python -c CODE`` in ``cwd`` with the test environment plus ``env``."""
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
    )


# --------------------------------------------------------------------------- the repository


def test_no_file_of_the_project_reads_the_workspace_beside_it():
    needle = "/".join(["..", "shared"])
    for folder in ("src", "tests", "docs", "examples", "benchmarks", ".ci"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".py", ".md", ".toml", ".js", ".html"} or path.name == "run":
                assert needle not in path.read_text(encoding="utf-8"), path


def test_an_altered_fixture_stops_the_golden_tests_naming_the_file(tmp_path):
    copy = shutil.copytree(FIXTURES, tmp_path / "fixtures")
    verify_fixtures(copy)
    cases = copy / "tiny-bert" / "cases.json"
    cases.write_text(cases.read_text().replace("0.", "1.", 1))
    with pytest.raises(pytest.UsageError, match="tiny-bert/cases.json"):
        verify_fixtures(copy)
    cases.unlink()
    with pytest.raises(pytest.UsageError, match="missing: .*tiny-bert/cases.json"):
        verify_fixtures(copy)


def test_a_folder_named_laya_does_not_shadow_the_installed_package(tmp_path):
    clone = tmp_path / "laya"
    (clone / "src").mkdir(parents=True)
    (clone / "README.md").write_text("a clone of the repository\n")
    proc = run_python("import laya; laya.load; print(laya.__file__)", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not proc.stdout.strip().startswith(str(clone))


def test_predict_hook_is_the_seed_type():
    assert typing.get_args(laya.hooks.PredictHook) == ([laya.PredictContext], type(None))


# --------------------------------------------------------------------------- expected failures


def test_the_readme_example_offline_is_one_short_error_naming_mini(tmp_path):
    (code,) = [code for _, code in blocks(ROOT / "README.md") if "laya.load(" in code]
    script = tmp_path / "example.py"
    script.write_text(code)
    proc = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path / "empty")},
        timeout=300,
    )
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    frames = [line for line in lines if line.lstrip().startswith('File "')]
    assert len(frames) <= 2, proc.stderr  # the caller's line and laya's one entry point
    assert lines[-1].startswith(
        "laya.errors.CheckpointUnavailable: cannot load checkpoint 'english'"
    )
    assert "laya.load('mini')" in lines[-1] and str(tmp_path / "empty") in lines[-1]
    assert "HF_HUB_OFFLINE" in lines[-1] and "HF_HUB_CACHE" in lines[-1]
    assert "During handling" not in proc.stderr and "direct cause" not in proc.stderr


def test_an_unavailable_checkpoint_is_a_laya_error_and_an_oserror(tmp_path, monkeypatch):
    with pytest.raises(CheckpointUnavailable) as info:
        laya.load(str(tmp_path / "nothing-here"))
    assert isinstance(info.value, LayaError) and isinstance(info.value, OSError)
    assert "Local model path not found" in str(info.value)


# --------------------------------------------------------------------------- one name everywhere


def test_a_name_that_resolves_nowhere_is_one_line_with_the_closest_match_everywhere(capsys):
    from laya.onnx import export_main
    from laya.training.evaluate import eval_main

    for call in (
        lambda: laya.load("englsh"),
        lambda: laya.Agent("englsh"),
        lambda: laya.ONNXAgent("englsh"),
        lambda: laya.Router().resolve("englsh"),
    ):
        with pytest.raises(InvalidRequest) as info:
            call()
        message = str(info.value)
        assert "\n" not in message and "did you mean 'english'?" in message
        assert "english, mini, multilingual, typed-decisions" in message
    data = str(ROOT / "data" / "decisions" / "dev.jsonl")
    for main, argv in (
        (export_main, ["englsh", "--out", "x.onnx"]),
        (eval_main, [data, "--model", "englsh"]),
    ):
        assert main(argv) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert "unknown model 'englsh'; did you mean 'english'?" in line


@pytest.mark.numbers
def test_export_onnx_knows_mini_and_onnx_agent_answers_like_the_agent(tmp_path):
    graph = tmp_path / "m.onnx"
    proc = subprocess.run(
        [sys.executable, "-m", "laya", "export-onnx", "mini", "--out", str(graph)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(graph) and graph.is_file()
    state = "We were billed twice for March, please refund the duplicate"
    want = laya.load("mini", device="cpu").system_one(state, QUESTIONS)
    got = laya.ONNXAgent("mini", onnx_path=graph).system_one(state, QUESTIONS)
    assert_close(want["answers"], got["answers"])


def test_onnx_agent_without_a_graph_says_how_to_export_it_by_name():
    """mini ships its fp32 graph (laya.onnx), not an int8 one."""
    with pytest.raises(CheckpointUnavailable, match="laya export-onnx mini --out"):
        laya.ONNXAgent("mini", onnx_path="laya.int8.onnx")


# --------------------------------------------------------------------------- devices


@pytest.mark.parametrize("device", ["xpu", "hpu"])
def test_a_device_this_build_lacks_falls_back_to_the_cpu_with_one_warning(device):
    import torch

    if getattr(torch, device, None) is not None and torch.__dict__[device].is_available():
        pytest.skip(f"this machine has {device}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent = laya.Agent(str(MODERNBERT), device=device)
    assert agent.device.type == "cpu"
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert messages == [f"laya: {device.upper()} requested but not available; falling back to CPU."]


def test_a_string_torch_does_not_know_is_a_clear_error():
    with pytest.raises(InvalidRequest, match="'gpu' is not a torch device; use cpu, cuda"):
        laya.Agent(str(MODERNBERT), device="gpu")


@pytest.mark.parametrize("device", ["gpu", "cuda:x"])
def test_the_command_refuses_a_bad_device_in_one_line_with_exit_2(device):
    proc = subprocess.run(
        [sys.executable, "-m", "laya", "hi", "--predict", "--model", "mini", "--device", device],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"laya: --device: {device!r} is not a torch device; use cpu, cuda, cuda:N, mps or xpu"
    )
