"""Calibration: fitted by laya calibrate, stored, applied on load / Agent / ONNXAgent / Router,
gating that reads it, and laya eval's selective figures and --gate."""

from __future__ import annotations

import contextlib
import io
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

import laya
from laya.cli import command as cli
from laya.engine.calibration import config_digest, read_calibration
from laya.engine.fitting import _isotonic
from laya.errors import InvalidRequest
from laya.runtime import ONNXAgent
from laya.training.evaluate import eval_main, read_decisions
from laya.training.fit_calibration import (
    calibrate,
    collect,
    figures,
    fit_thresholds,
    wilson_lower,
)
from laya.training.selective import accuracy_at_coverage, aurc, compare

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "data" / "decisions" / "dev.jsonl"
TEST = ROOT / "data" / "decisions" / "test.jsonl"
MINI = Path(laya.__file__).parent / "models" / "mini"
QUESTIONS = {
    "dept": {
        "type": "choice",
        "instructions": "Route it.",
        "criteria": ["billing", "tech", "sales"],
    },
    "urgent": {"type": "noul", "instructions": "The customer needs an answer today."},
    "anger": {
        "type": "score",
        "instructions": "How angry?",
        "criteria": ["calm", "cross", "furious"],
    },
}
STATE = "I was charged twice on my invoice, please refund me today!"


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """laya calibrate on dev for mini, with --target-precision 0.9 and figures on test."""
    out = tmp_path_factory.mktemp("calib") / "mini.json"
    args = ["calibrate", str(DEV), "--model", "mini", "--out", str(out)]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = cli.main([*args, "--target-precision", "0.9", "--eval", str(TEST)])
    assert code == 0
    out.with_suffix(".txt").write_text(printed.getvalue())  # the report it printed
    return out


def small_file(tmp_path: Path, **changes) -> Path:
    """A hand-written version-3 file for mini."""
    payload = {
        "format": "laya-calibration",
        "version": 3,
        "temperature": [2.0, 3.0, 4.0],
        "temperature_by_options": {"choice:3-5": 1.5},
        "thresholds": {"default": 0.7, "noul:2": 0.95},
        "checkpoint": {
            "config_sha256": config_digest(json.loads((MINI / "rl_agent_config.json").read_text()))
        },
        **changes,
    }
    path = tmp_path / "calib.json"
    path.write_text(json.dumps(payload))
    return path


@pytest.mark.numbers
@pytest.mark.slow  # fitted: the whole dev and test splits, which the figures need
def test_calibrate_on_dev_applied_to_test_keeps_ece_and_reaches_the_target_precision(fitted):
    report = fitted.with_suffix(".txt").read_text()
    assert "calibration for mini, fitted on dev.jsonl" in report and "thresholds" in report
    payload = json.loads(fitted.read_text())
    assert payload["version"] == 3 and payload["data"]["file"] == "dev.jsonl"
    assert payload["data"]["sha256"] == __import__("hashlib").sha256(DEV.read_bytes()).hexdigest()
    test = payload["figures"]["eval"]
    assert test["after"]["ece"] <= test["before"]["ece"]
    gate = test["after"]["gate"]
    assert gate["precision"] >= 0.9
    assert 0 < gate["abstention_rate"] < 1 and math.isclose(
        gate["coverage"] + gate["abstention_rate"], 1
    )
    assert set(payload["thresholds"]) >= {"default", "choice:3-5", "noul:2", "score:3-5"}


@pytest.fixture(scope="module")
def test_slice(tmp_path_factory) -> Path:
    """The first 20 rows of the test split: 36 answers of every question type, on which laya eval
    runs several times (its figures against the fitter's, a gate against a baseline)."""
    path = tmp_path_factory.mktemp("slice") / "test20.jsonl"
    path.write_text("\n".join(TEST.read_text().splitlines()[:20]) + "\n")
    return path


@pytest.mark.numbers
@pytest.mark.slow  # fitted
def test_laya_eval_with_the_file_reports_what_the_fitter_computes(
    fitted, test_slice, capsys, tmp_path
):
    out = tmp_path / "report.json"
    args = [str(test_slice), "--model", "mini", "--calibration", str(fitted), "--json", str(out)]
    assert eval_main(args) == 0
    printed = capsys.readouterr().out
    assert "selective  aurc" in printed and "gate       kept" in printed
    report = json.loads(out.read_text())
    calibration = read_calibration(fitted)
    agent = laya.load("mini", device="cpu")
    samples = collect(agent, read_decisions(test_slice))
    temperatures = calibration.temperatures(agent.temperatures)
    want = figures(samples, temperatures, calibration.thresholds)
    assert abs(report["ece"] - want["ece"]) <= 1e-3
    assert abs(report["selective"]["aurc"] - want["aurc"]) <= 1e-3
    assert report["selective"]["gate"]["kept"] == want["gate"]["kept"]


def test_eval_gate_exits_1_when_a_metric_regresses(test_slice, tmp_path, capsys):
    baseline = tmp_path / "baseline.json"
    assert eval_main([str(test_slice), "--model", "mini", "--json", str(baseline)]) == 0
    assert eval_main([str(test_slice), "--model", "mini", "--gate", str(baseline)]) == 0
    assert "no metric regressed" in capsys.readouterr().out
    better = json.loads(baseline.read_text())
    better["choice"]["accuracy"] += 0.05
    better["selective"]["aurc"] -= 0.05
    baseline.write_text(json.dumps(better))
    assert eval_main([str(test_slice), "--model", "mini", "--gate", str(baseline)]) == 1
    err = capsys.readouterr().err
    assert "FAIL choice.accuracy" in err and "FAIL selective.aurc" in err
    args = [str(test_slice), "--model", "mini", "--gate", str(baseline), "--tolerance", "0.06"]
    assert eval_main(args) == 0
    assert (
        eval_main([str(test_slice), "--model", "mini", "--gate", str(tmp_path / "none.json")]) == 2
    )


@pytest.mark.parametrize(
    "baseline, message",
    [
        ("[1]", "a baseline is a laya eval --json report"),
        ("{}", "holds none of the gated metrics"),
        ('{"accuracy": 0.9}', "holds none of the gated metrics"),
        (
            '{"ece": 0.1, "tolerances": {"eec": 0.1}}',
            "tolerances: unknown metric 'eec'; use one of",
        ),
        ('{"ece": 0.1, "tolerances": {"ece": -1}}', "tolerance ece=-1 is not a number >= 0"),
        ("{", "--gate"),
    ],
)
def test_a_baseline_that_would_gate_nothing_exits_2_before_evaluating(
    tmp_path, capsys, baseline, message
):
    path = tmp_path / "baseline.json"
    path.write_text(baseline)
    data = tmp_path / "never-read.jsonl"  # the baseline is refused before the data is read
    assert eval_main([str(data), "--model", "mini", "--gate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("laya eval: error: --gate") and message in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["--tolerance", "eec=0.1"], "unknown metric 'eec'"),
        (["--tolerance", "ece=nan"], "not a number >= 0"),
        (
            ["--json", "/no/such/folder/r.json"],
            "--json '/no/such/folder/r.json': there is no folder",
        ),
        (["--plot", "."], "--plot '.' is a directory; name a file to write"),
        (["--tolerance", "0.02"], "--tolerance sets what --gate allows; add --gate BASELINE.json"),
    ],
)
def test_eval_refuses_bad_tolerances_and_output_paths_before_evaluating(
    tmp_path, capsys, args, message
):
    with contextlib.suppress(SystemExit):  # an argparse error exits from inside the parser
        assert eval_main([str(tmp_path / "never-read.jsonl"), "--model", "mini", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("laya eval: error: ") and message in err and err.count("\n") == 1


@pytest.mark.numbers
def test_the_file_is_applied_inside_decoding_and_says_so(tmp_path):
    path = small_file(tmp_path)
    plain = laya.load("mini", device="cpu")
    calibrated = laya.load("mini", device="cpu", calibration=path)
    logits = plain.raw_logits([STATE], QUESTIONS)
    result = calibrated.system_one(STATE, QUESTIONS)
    digest = __import__("hashlib").sha256(path.read_bytes()).hexdigest()
    assert result["calibration"] == {"file": "calib.json", "sha256": digest[:16], "version": 3}
    assert "calibration" not in plain.system_one(STATE, QUESTIONS)
    for (qid, q), z, t in zip(QUESTIONS.items(), logits, (1.5, 4.0, 3.0)):
        k = len(q.get("criteria") or [0, 1])
        p = np.exp(z[:k] / t - (z[:k] / t).max())
        p /= p.sum()
        assert abs(result["answers"][qid]["answer_confidence"] - round(float(p.max()), 4)) <= 2e-4
    # the file's thresholds gate when the call gives none, a call's own threshold wins
    urgent = result["answers"]["urgent"]
    assert urgent["abstention_threshold"] == 0.95
    assert result["answers"]["dept"]["abstention_threshold"] == 0.7
    assert (urgent["abstention"] == "abstained") == (urgent["answer_confidence"] < 0.95)
    own = calibrated.system_one(STATE, QUESTIONS, min_confidence=0.1)
    assert all(a["abstention_threshold"] == 0.1 for a in own["answers"].values())
    long = calibrated.predict_long(STATE * 40, {"urgent": QUESTIONS["urgent"]})
    assert long["usage"]["windows"] > 1 and long["calibration"] == result["calibration"]


@pytest.mark.numbers
def test_a_binning_map_remaps_answer_confidence(tmp_path):
    values = [0.05 * i for i in range(10)]
    path = small_file(tmp_path, binning_map={"noul:2": {"bins": 10, "values": values}})
    agent = laya.load("mini", device="cpu", calibration=path)
    answer = agent.system_one(STATE, QUESTIONS)["answers"]["urgent"]
    assert answer["answer_confidence"] == round(values[min(9, int(answer["confidence"] * 10))], 4)


def test_router_onnx_and_serve_names_take_a_file_per_checkpoint(tmp_path):
    path = small_file(tmp_path)
    router = laya.Router(calibration={"mini": path})
    result = router.predict(STATE, QUESTIONS, model="mini")
    assert result["calibration"]["file"] == "calib.json"
    assert router.load("mini").calibration.thresholds == {"default": 0.7, "noul:2": 0.95}
    with pytest.raises(InvalidRequest, match="unknown"):
        laya.Router(calibration={"nosuch": path})
    everywhere = laya.Router(agent_kwargs={"calibration": path})  # every checkpoint, as published
    assert everywhere.agent_kwargs["calibration"] == path


@pytest.mark.numbers
def test_onnx_agent_applies_the_same_file(onnx_modernbert_dir, modernbert_dir, tmp_path):
    config = json.loads((modernbert_dir / "rl_agent_config.json").read_text())
    path = small_file(tmp_path, checkpoint={"config_sha256": config_digest(config)})
    questions = {"q": {"type": "choice", "instructions": "x", "criteria": ["a", "b", "c"]}}
    want = laya.load(modernbert_dir, device="cpu", calibration=path).system_one(STATE, questions)
    got = ONNXAgent(onnx_modernbert_dir, calibration=path).system_one(STATE, questions)
    assert got["calibration"] == want["calibration"]
    for label, p in want["answers"]["q"]["probabilities"].items():
        assert abs(got["answers"]["q"]["probabilities"][label] - p) <= 2e-4


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"version": 7}, "field 'version': unsupported version 7; this laya reads versions 1 to 4"),
        ({"version": "2"}, "field 'version': unsupported version '2'"),
        ({"temperature": [1, 2]}, "field 'temperature': must be a list of 3 numbers"),
        ({"temperature_by_options": {"choice:7": 1.0}}, "field 'temperature_by_options.choice:7'"),
        ({"binning_map": {"noul:2": {"bins": 2, "values": [0.5]}}}, "field 'binning_map.noul:2'"),
        ({"thresholds": {"choice": 0.5}}, "field 'thresholds': min_confidence map keys"),
        ({"thresholds": 0.5}, "field 'thresholds': must be a map of bucket -> threshold"),
        ({"thresholds": ["default"]}, "field 'thresholds': must be a map of bucket -> threshold"),
        ({"checkpoint": "x"}, "field 'checkpoint': must be an object holding config_sha256"),
        ({"checkpoint": {"config_sha256": "0" * 64}}, "was fitted for another checkpoint"),
    ],
)
def test_bad_files_raise_one_error_naming_the_file_and_the_field(tmp_path, changes, match):
    path = small_file(tmp_path, **changes)
    with pytest.raises(InvalidRequest, match=match) as caught:
        laya.load("mini", device="cpu", calibration=path)
    assert str(path) in str(caught.value)


def test_a_file_for_another_checkpoint_is_refused_before_the_weights_are_read(
    tmp_path, modernbert_dir
):
    checkpoint = tmp_path / "ckpt"
    shutil.copytree(modernbert_dir, checkpoint)
    (checkpoint / "model.safetensors").write_bytes(b"not weights")  # reading them would fail
    with pytest.raises(InvalidRequest, match="laya calibrate DATA.jsonl --model CHECKPOINT"):
        laya.load(checkpoint, device="cpu", calibration=small_file(tmp_path))
    with pytest.raises(InvalidRequest, match="not found"):
        laya.load("mini", calibration=tmp_path / "missing.json")


def test_published_version_1_and_2_files_are_read(tmp_path):
    config = json.loads((MINI / "rl_agent_config.json").read_text())
    v1 = tmp_path / "v1.json"
    v1.write_text(json.dumps({"temperature": [1.0, 1.0, 1.0], "temperature_by_options": None}))
    assert read_calibration(v1).config_sha256 is None
    assert laya.load("mini", device="cpu", calibration=v1).temperatures.by_type == (1.0, 1.0, 1.0)
    other = {k: v for k, v in config.items() if k != "temperature"}
    v2 = tmp_path / "v2.json"
    v2.write_text(json.dumps({"version": 2, "temperature": [9, 1, 1], "config": other}))
    with pytest.warns(RuntimeWarning, match="temperature\\[0\\]=9 -> 5"):
        agent = laya.load("mini", device="cpu", calibration=v2)
    assert agent.temperatures.by_type == (5.0, 1.0, 1.0)
    v2.write_text(json.dumps({"version": 2, "temperature": [1, 1, 1], "config": {"encoder": "x"}}))
    with pytest.raises(InvalidRequest, match="fitted for another checkpoint"):
        laya.load("mini", device="cpu", calibration=v2)


def test_selective_figures_on_known_rankings():
    conf = np.array([0.9, 0.8, 0.7, 0.6])
    right = np.array([True, True, False, False])
    assert aurc(conf, right) == pytest.approx((0 + 0 + 1 / 3 + 2 / 4) / 4)
    assert aurc(conf, ~right) == pytest.approx((1 + 1 + 2 / 3 + 2 / 4) / 4)
    assert accuracy_at_coverage(conf, right, 0.5) == 1.0
    assert accuracy_at_coverage(conf, right, 0.75) == pytest.approx(2 / 3)
    report = {"ece": 0.05, "choice": {"accuracy": 0.8}, "selective": {"aurc": 0.1}}
    assert compare(report, {"ece": 0.045, "choice": {"accuracy": 0.805}}) == []
    assert compare(report, {"ece": 0.03}) == ["ece 0.0500 > baseline 0.0300 + 0.01"]
    assert compare(report, {"ece": 0.03, "tolerances": {"ece": 0.05}}) == []


def test_threshold_fitting_and_the_isotonic_map():
    conf = np.array([0.99] * 50 + [0.6] * 50)
    right = np.array([True] * 50 + [True, False] * 25)
    cut = fit_thresholds(conf, right, ["noul:2"] * 100, precision=0.9)
    assert cut == {"default": 0.99, "noul:2": 0.99}
    assert fit_thresholds(conf, right, ["noul:2"] * 100, coverage=1.0)["default"] == 0.6
    assert wilson_lower(90, 100) < 0.9 < wilson_lower(990, 1000) + 0.02
    assert list(_isotonic(np.array([0.2, 0.1, 0.5]), np.array([1.0, 1.0, 1.0]))) == pytest.approx(
        [0.15, 0.15, 0.5]
    )


def test_calibrate_from_python_with_binning_writes_a_file_that_loads(tmp_path):
    rows = DEV.read_text().splitlines()[:40]
    data = tmp_path / "small.jsonl"
    data.write_text("\n".join(rows) + "\n")
    agent = laya.load("mini", device="cpu")
    calibration = calibrate(data, agent, out=tmp_path / "c.json", target_coverage=0.8, binning=True)
    assert calibration.source == str(tmp_path / "c.json") and calibration.sha256
    assert calibration.thresholds["default"] > 0
    assert calibration.payload["figures"]["fit"]["after"]["gate"]["coverage"] >= 0.8
    reloaded = laya.load("mini", device="cpu", calibration=tmp_path / "c.json")
    assert reloaded.calibration.temperature == calibration.temperature
    with pytest.raises(InvalidRequest, match="not both"):
        calibrate(data, agent, target_precision=0.9, target_coverage=0.8)


def test_laya_serve_applies_a_calibration_per_checkpoint(tmp_path):
    import httpx
    from test_server import served

    from laya.server import build_router, create_app, settings_from

    path = small_file(tmp_path)
    settings = settings_from(
        ["--calibration", f"mini={path}", "--model", "mini", "--no-preload"], {}
    )
    assert settings.calibration == {"mini": str(path)}
    assert settings_from([], {"LAYA_CALIBRATION": f"mini={path}"}).calibration == {
        "mini": str(path)
    }
    app = create_app(build_router(settings), settings)
    with served(app) as base:
        reply = httpx.post(f"{base}/v1/systemone", json={"state": STATE, "questions": QUESTIONS})
    body = reply.json()
    assert body["x_calibration"]["file"] == "calib.json"
    assert body["answers"]["urgent"]["abstention_threshold"] == 0.95


def test_calibrate_command_refuses_bad_input(tmp_path, capsys):
    out = str(tmp_path / "c.json")
    assert (
        cli.main(["calibrate", str(tmp_path / "none.jsonl"), "--model", "mini", "--out", out]) == 2
    )
    assert "no such data file" in capsys.readouterr().err
    bad = ["calibrate", str(DEV), "--model", "mini", "--out", out, "--target-precision", "1.5"]
    assert cli.main(bad) == 2
    assert "target_precision must be a number in (0, 1]" in capsys.readouterr().err
    never = str(tmp_path / "never-read.jsonl")  # the output is refused before the data is read
    assert cli.main(["calibrate", never, "--model", "mini", "--out", str(tmp_path)]) == 2
    assert f"out {str(tmp_path)!r} is a directory" in capsys.readouterr().err
