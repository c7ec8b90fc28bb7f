"""Certified automation and prediction sets (docs/calibration.md, "Certified automation"): the
exact binomial pieces against rational arithmetic, the promise and the coverage over many random
calibration/test splits of synthetic labelled scores, the fitter's refusals, the file, and the
answers of mini with a certified file (Python, the gate, decide, the server's names)."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from test_calibration import QUESTIONS as MINI_QUESTIONS
from test_calibration import STATE

import laya
from laya.cli import command as cli
from laya.engine.automation import Certification, Entry, mark_automation, prediction_set
from laya.engine.calibration import (
    CERTIFIED_VERSION,
    Calibration,
    config_digest,
    read_calibration,
)
from laya.engine.decoding import Temperatures
from laya.engine.fitting import Sample
from laya.engine.questions import parse_questions
from laya.engine.risk import (
    automation_summary,
    binomial_cdf,
    binomial_upper,
    conformal_level,
    learn_then_test,
    min_labels,
)
from laya.errors import InvalidRequest
from laya.evals.evals_command import eval_main
from laya.training.certify import automated_figures, certify, check_risk
from laya.training.evaluate import read_decisions
from laya.training.fit_calibration import collect

MINI_CONFIG = json.loads(
    (
        __import__("pathlib").Path(laya.__file__).parent / "models/mini/rl_agent_config.json"
    ).read_text()
)


# --------------------------------------------------------------------------- exact pieces


def exact_cdf(k: int, n: int, p: Fraction) -> Fraction:
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


@pytest.mark.parametrize(
    ("k", "n", "p"),
    [(0, 22, "1/10"), (3, 40, "1/10"), (17, 300, "1/20"), (5, 5, "1/3"), (60, 700, "1/10")],
)
def test_the_binomial_tail_is_the_exact_sum(k, n, p):
    assert binomial_cdf(k, n, float(Fraction(p))) == pytest.approx(
        float(exact_cdf(k, n, Fraction(p))), rel=1e-9
    )


def test_the_clopper_pearson_bound_inverts_the_tail():
    for errors, n, delta in ((0, 30, 0.1), (4, 100, 0.05), (12, 80, 0.1)):
        upper = binomial_upper(errors, n, delta)
        assert binomial_cdf(errors, n, upper) == pytest.approx(delta, abs=1e-9)
        assert errors / n < upper < 1
    assert binomial_upper(0, 30, 0.1) == pytest.approx(1 - 0.1 ** (1 / 30), abs=1e-12)
    assert binomial_upper(3, 3, 0.1) == 1.0 and binomial_upper(0, 0, 0.1) == 1.0


def test_the_fewest_labels_are_those_at_which_no_errors_could_pass():
    assert min_labels(0.1, 0.1) == 22  # 0.9**22 = 0.098 <= 0.1 < 0.9**21
    assert min_labels(0.05, 0.05) == 59
    for risk, delta in ((0.1, 0.1), (0.2, 0.01), (0.01, 0.1)):
        n = min_labels(risk, delta)
        assert (1 - risk) ** n <= delta < (1 - risk) ** (n - 1)


# --------------------------------------------------------------------------- the promise


def labelled_pool(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Confidences in four decimals and whether each answer was wrong, P(wrong) = 0.6 *
    (1 - confidence): the error among the answers above a threshold t is 0.3 (1 - t), so the
    best threshold for risk 0.1 keeps 48 % of them."""
    conf = np.round(rng.uniform(0.3, 1.0, n), 4)
    wrong = rng.random(n) < 0.6 * (1 - conf)
    return conf, wrong


def naive_threshold(conf: np.ndarray, wrong: np.ndarray, risk: float) -> float | None:
    """The lowest threshold whose observed error among the kept answers is at most ``risk``
    (no bound, no account of the search): what the certificate is compared with."""
    best = None
    for t in np.unique(conf)[::-1]:
        kept = conf >= t
        if wrong[kept].mean() <= risk:
            best = float(t)
    return best


def violation_rates(
    trials: int, n_cal: int, risk: float, delta: float
) -> tuple[float, float, float]:
    """Over random calibration/test splits of one labelled pool: how often the error among the
    test answers automated exceeds ``risk``, for Learn-then-Test and for the naive threshold;
    and the mean share LTT automates."""
    rng = np.random.default_rng(7)
    conf, wrong = labelled_pool(rng, 6000)
    failed = naive_failed = 0
    shares = []
    for _ in range(trials):
        order = rng.permutation(len(conf))
        cal, test = order[:n_cal], order[n_cal:]
        found = learn_then_test(conf[cal], wrong[cal], risk, delta)
        kept = conf[test] >= (found.threshold if found.threshold is not None else 2.0)
        shares.append(kept.mean())
        failed += bool(kept.any() and wrong[test][kept].mean() > risk)
        naive = naive_threshold(conf[cal], wrong[cal], risk)
        kept = conf[test] >= (naive if naive is not None else 2.0)
        naive_failed += bool(kept.any() and wrong[test][kept].mean() > risk)
    return failed / trials, naive_failed / trials, float(np.mean(shares))


@pytest.mark.numbers
def test_the_certified_promise_holds_at_its_stated_rate_over_random_splits():
    risk, delta, trials = 0.1, 0.1, 300
    ltt, naive, share = violation_rates(trials, 300, risk, delta)
    slack = 3 * math.sqrt(delta * (1 - delta) / trials)  # the rate is measured on 300 splits
    assert ltt <= delta + slack
    assert naive > delta + slack  # the same check catches a threshold that is not certified
    assert share > 0.1  # and the certificate still automates a share


@pytest.mark.numbers
def test_prediction_sets_cover_at_least_one_minus_risk_over_random_splits():
    rng = np.random.default_rng(3)
    n, k, risk = 5000, 5, 0.1
    logits = rng.normal(size=(n, k)) * 2
    truth = np.array([rng.choice(k, p=np.exp(z) / np.exp(z).sum()) for z in logits * 0.6])
    p = np.round(np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True), 4)
    coverage, sizes = [], []
    for _ in range(200):
        order = rng.permutation(n)
        cal, test = order[:300], order[300:]
        level = conformal_level(p[cal, truth[cal]], risk)
        members = p[test] >= level
        members[np.arange(len(test)), p[test].argmax(axis=1)] = True
        coverage.append(members[np.arange(len(test)), truth[test]].mean())
        sizes.append(members.sum(axis=1).mean())
    assert np.mean(coverage) >= 1 - risk - 0.005  # marginal coverage, averaged over the splits
    assert np.mean(sizes) < k  # smaller than every option


def test_a_conformal_level_needs_enough_answers():
    assert conformal_level(np.array([0.9] * 8), 0.1) == 0.0  # rank 9 of 8: every option
    assert conformal_level(np.linspace(0.1, 0.9, 9), 0.1) == pytest.approx(0.1)


# --------------------------------------------------------------------------- the fitter


def samples(n: int, question: dict, seed: int = 0, qid: str = "q") -> list[Sample]:
    """``n`` labelled answers to one question, logits favouring the gold option."""
    rng = np.random.default_rng(seed)
    (parsed,) = parse_questions({qid: question})
    k = len(parsed.options)
    out = []
    for _ in range(n):
        gold = int(rng.integers(k))
        z = rng.normal(size=k).astype(np.float32)
        z[gold] += 3.0
        out.append(Sample(parsed, "test", z, gold))
    return out


NOUL = {"type": "noul", "instructions": "It is urgent."}
CHOICE = {"type": "choice", "instructions": "Route it.", "criteria": ["a", "b", "c", "d"]}
PLAIN = Temperatures((1.0, 1.0, 1.0), {})


def test_too_few_labels_are_refused_naming_how_many_are_needed():
    with pytest.raises(InvalidRequest, match="needs at least 22 labelled answers") as caught:
        certify(samples(15, NOUL), PLAIN, 0.1, 0.1)
    assert "the largest here has 15" in str(caught.value)
    with pytest.raises(InvalidRequest, match="at least 59"):
        certify(samples(40, NOUL), PLAIN, 0.05, 0.05)


def test_a_question_id_with_enough_labels_gets_its_own_certificate():
    data = samples(300, CHOICE, qid="route") + samples(10, CHOICE, seed=1, qid="rare")
    data += samples(40, CHOICE, seed=2, qid="other")
    data += samples(8, {**CHOICE, "criteria": [str(i) for i in range(7)]}, qid="wide")
    found = certify(data, PLAIN, 0.1, 0.1)
    assert set(found.questions) == {"route"}  # 300 >= 4 x 22; "rare" and "other" are the bucket's
    assert found.questions["route"].n == 300 and found.buckets["choice:3-5"].n == 50
    wide = found.buckets["choice:6-10"]
    assert wide.threshold is None and wide.needed == 22 and wide.n == 8
    route = found.questions["route"]
    assert route.threshold is not None and route.errors <= route.automated
    assert route.error_upper <= 0.1  # what was certified: the bound at 1 - delta under the risk
    assert found.entry("rare", "choice:3-5") is found.buckets["choice:3-5"]
    assert found.entry("route", "choice:3-5") is route
    assert found.entry("route", "choice:2") is None  # another bucket: none of this question's


@pytest.mark.parametrize(
    ("risk", "delta", "match"),
    [
        (0.0, 0.1, "risk must be a number strictly between 0 and 1, got 0.0"),
        (1.0, 0.1, "risk must be"),
        (0.1, 1.5, "delta must be a number strictly between 0 and 1, got 1.5"),
        (0.1, -0.1, "delta must be"),
        (float("nan"), 0.1, "risk must be"),
        (True, 0.1, "risk must be"),
        (None, 0.1, "delta needs risk"),
    ],
)
def test_risk_and_delta_out_of_range_are_refused(risk, delta, match):
    with pytest.raises(InvalidRequest, match=match):
        check_risk(risk, delta)


def test_delta_defaults_to_a_tenth():
    assert check_risk(0.05, None) == (0.05, 0.1) and check_risk(None, None) is None


# --------------------------------------------------------------------------- applying


CERT = Certification(
    0.1,
    0.1,
    22,
    {"dept": Entry("choice:3-5", 40, 0.6, 30, 1, 0.12, 0.2)},
    {
        "choice:3-5": Entry("choice:3-5", 300, 0.9, 100, 5, 0.09, 0.3),
        "noul:2": Entry("noul:2", 300, None),
    },
)


def answer(kind: str, probabilities: dict | None = None, **fields) -> dict:
    top = max((probabilities or {"x": 0.5}).values())
    return {"type": kind, "probabilities": probabilities, "answer_confidence": top, **fields}


def test_answers_say_whether_they_automate_and_choices_carry_their_set():
    dept = answer("choice", {"a": 0.65, "b": 0.25, "c": 0.1}, choice="a")
    other = answer("choice", {"a": 0.65, "b": 0.25, "c": 0.1}, choice="a")
    urgent = {"type": "noul", "noul": 0.99, "answer_confidence": 0.99}
    results = [{"answers": {"dept": dept, "other": other, "urgent": urgent}}]
    mark_automation(results, CERT)
    assert dept["automate"] is True and dept["prediction_set"] == ["a", "b"]  # its own entry
    assert other["automate"] is False and other["prediction_set"] == ["a"]  # the bucket's
    assert urgent["automate"] is False and "prediction_set" not in urgent  # nothing certified
    assert "abstention" not in dept  # no gate unless asked
    mark_automation(results, CERT, gate=True)
    assert dept["abstention"] == "passed" and dept["abstention_threshold"] == 0.6
    assert urgent["abstention"] == "abstained" and urgent["low_confidence"] is True
    assert "abstention_threshold" not in urgent  # no threshold was certified
    none = answer("choice", {"a": 0.99, "b": 0.01}, choice=None, abstain=0.7)
    mark_automation([{"answers": {"dept": none}}], CERT)
    assert none["automate"] is False  # "none of these" won: nothing to automate
    assert prediction_set({"probabilities": {"a": 0.5, "b": 0.3}}, None) == ["a", "b"]


def test_the_summary_of_what_automated():
    summary = automation_summary([True, True, False, None], [True, False, False, True])
    assert summary["automated"] == pytest.approx(2 / 3) and summary["automated_error"] == 0.5
    assert summary["automated_error_upper"] == pytest.approx(binomial_upper(1, 2, 0.05))
    assert automation_summary([None], [True]) == {}
    assert math.isnan(automation_summary([False], [True])["automated_error"])


def certified_file(tmp_path, config=MINI_CONFIG, **changes):
    calibration = Calibration(
        (4.25, 5.0, 5.0), {}, config_sha256=config_digest(config), certified=CERT
    )
    payload = {**calibration.to_json(), **changes}
    path = tmp_path / "certified.json"
    path.write_text(json.dumps(payload))
    return path


def test_a_certified_file_is_version_4_and_reads_back(tmp_path):
    path = certified_file(tmp_path)
    payload = json.loads(path.read_text())
    assert payload["version"] == CERTIFIED_VERSION and payload["certified"]["risk"] == 0.1
    assert payload["certified"]["method"] == "learn-then-test"
    read = read_calibration(path)
    assert read.certified == CERT
    assert Calibration((1.0, 1.0, 1.0), {}).to_json()["version"] == 3  # none: still version 3


@pytest.mark.parametrize(
    ("certified", "match"),
    [
        ("x", "field 'certified': must be an object"),
        ({**CERT.to_json(), "risk": 1.2}, "field 'certified.risk': must be a number strictly"),
        ({**CERT.to_json(), "delta": 0}, "field 'certified.delta'"),
        ({**CERT.to_json(), "min_labels": 0}, "field 'certified.min_labels'"),
        ({**CERT.to_json(), "buckets": {"choice:7": {}}}, "field 'certified.buckets.choice:7'"),
        (
            {**CERT.to_json(), "buckets": {"noul:2": {"bucket": "noul:2", "n": 3, "threshold": 2}}},
            "field 'certified.buckets.noul:2.threshold'",
        ),
        (
            {**CERT.to_json(), "questions": {"q": {"bucket": "x", "n": 3, "threshold": 0.5}}},
            "field 'certified.questions.q.bucket'",
        ),
    ],
)
def test_bad_certified_blocks_name_the_field(tmp_path, certified, match):
    with pytest.raises(InvalidRequest, match=match):
        read_calibration(certified_file(tmp_path, certified=certified))


def test_a_certified_file_fitted_for_another_checkpoint_is_refused(tmp_path, modernbert_dir):
    path = certified_file(tmp_path, config={"encoder": "another"})
    with pytest.raises(InvalidRequest, match="fitted for another checkpoint") as caught:
        laya.load("mini", device="cpu", calibration=path)
    assert "laya calibrate DATA.jsonl --model CHECKPOINT" in str(caught.value)
    mine = certified_file(tmp_path)  # mini's file on the ModernBERT fixture
    with pytest.raises(InvalidRequest, match="fitted for another checkpoint"):
        laya.load(modernbert_dir, device="cpu", calibration=mine)


# --------------------------------------------------------------------------- on mini


ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = {qid: MINI_QUESTIONS[qid] for qid in ("dept", "urgent")}


def first_rows(source: Path, rows: int, out: Path) -> Path:
    out.write_text("\n".join(source.read_text().splitlines()[:rows]) + "\n")
    return out


@pytest.fixture(scope="module")
def fitted(tmp_path_factory) -> Path:
    """laya calibrate --risk 0.1 --delta 0.1 for mini on the first 60 rows of the dev split."""
    where = tmp_path_factory.mktemp("certified")
    data = first_rows(ROOT / "data/decisions/dev.jsonl", 60, where / "dev60.jsonl")
    out = where / "mini-certified.json"
    args = ["calibrate", str(data), "--model", "mini", "--out", str(out)]
    assert cli.main([*args, "--risk", "0.1", "--delta", "0.1"]) == 0
    return out


@pytest.fixture(scope="module")
def test_slice(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("slice")
    return first_rows(ROOT / "data/decisions/test.jsonl", 30, where / "test30.jsonl")


def test_laya_calibrate_writes_the_certificate_and_eval_reports_what_it_automates(
    fitted, test_slice, capsys
):
    capsys.readouterr()
    payload = json.loads(fitted.read_text())
    block = payload["certified"]
    assert payload["version"] == 4 and block["risk"] == 0.1 and block["min_labels"] == 22
    assert any(e["threshold"] is not None for e in block["buckets"].values())
    assert all(e["n"] >= 22 for e in block["questions"].values())
    args = [str(test_slice), "--model", "mini", "--calibration", str(fitted), "--json"]
    assert eval_main(["run", *args]) == 0
    report = json.loads(capsys.readouterr().out)  # --json without OUT: the report, alone
    overall = report["overall"]
    assert {"automated", "automated_error", "automated_error_upper"} <= set(overall)
    assert 0 <= overall["automated"] <= 1
    assert all("automated" in figures for figures in report["slices"]["qid"].values())
    # the same figures from the fitter's side, on the labelled answers' raw logits
    calibration = read_calibration(fitted)
    agent = laya.load("mini", device="cpu", calibration=fitted)
    held = collect(agent, read_decisions(test_slice))
    mine = automated_figures(held, agent.temperatures, calibration.certified)
    assert overall["automated"] == pytest.approx(mine["automated"], abs=1e-4)
    assert overall["set_coverage"] == pytest.approx(mine["set_coverage"], abs=1e-4)


def test_answers_gates_and_decisions_read_the_certificate(fitted):
    agent = laya.load("mini", device="cpu", calibration=fitted)
    result = agent.system_one(STATE, QUESTIONS)
    dept, urgent = result["answers"]["dept"], result["answers"]["urgent"]
    assert isinstance(dept["automate"], bool) and isinstance(urgent["automate"], bool)
    assert dept["prediction_set"][0] == dept["choice"] and "prediction_set" not in urgent
    assert "abstention" not in dept  # marked, not gated, unless asked
    gated = agent.system_one(STATE, QUESTIONS, min_confidence="certified")
    for answer in gated["answers"].values():
        assert answer["abstention"] == ("passed" if answer["automate"] else "abstained")
    decided = agent.decide(
        STATE, questions=QUESTIONS, min_confidence="certified", return_details=True
    )
    assert decided.automate == {"dept": dept["automate"], "urgent": urgent["automate"]}
    assert (decided.values["urgent"] is None) == (not urgent["automate"])
    plain = laya.load("mini", device="cpu")
    with pytest.raises(InvalidRequest, match="laya calibrate DATA.jsonl --model CHECKPOINT --risk"):
        plain.system_one(STATE, QUESTIONS, min_confidence="certified")
    assert "automate" not in plain.system_one(STATE, QUESTIONS)["answers"]["dept"]


def test_the_server_names_them_x_and_the_strict_shape_drops_them(fitted):
    import httpx
    from test_server import served

    from laya.server import build_router, create_app, settings_from
    from laya.server.replies import render_result

    settings = settings_from(
        ["--calibration", f"mini={fitted}", "--model", "mini", "--no-preload"], {}
    )
    app = create_app(build_router(settings), settings)
    body = {"state": STATE, "questions": QUESTIONS, "min_confidence": "certified"}
    with served(app) as base:
        reply = httpx.post(f"{base}/v1/systemone", json=body, timeout=120)
        refused = httpx.post(f"{base}/v1/systemone", json={**body, "min_confidence": "sure"})
    assert reply.status_code == 200, reply.text
    dept = reply.json()["answers"]["dept"]
    assert isinstance(dept["x_automate"], bool) and dept["x_prediction_set"]
    assert "automate" not in dept and dept["abstention"] in ("passed", "abstained")
    assert refused.status_code == 422 and "certified" in refused.text
    answer = {"type": "choice", "choice": "a", "probabilities": {"a": 1.0}, "automate": True}
    strict = render_result({"model": "m", "answers": {"q": answer}}, strict=True)
    assert "automate" not in strict["answers"]["q"] and "x_automate" not in strict["answers"]["q"]


def test_the_command_line_says_automate_or_for_review(fitted, capsys):
    args = ["--model", "mini", "--calibration", str(fitted), "--questions"]
    questions = fitted.parent / "questions.json"
    questions.write_text(json.dumps(QUESTIONS))
    assert cli.main([*args, str(questions), "--min-confidence", "certified", STATE]) == 0
    printed = capsys.readouterr().out
    assert "automate" in printed or "for review" in printed


def test_calibrate_refuses_bad_levels_and_too_few_labels_in_one_line(tmp_path, capsys):
    out = str(tmp_path / "c.json")
    data = first_rows(ROOT / "data/decisions/dev.jsonl", 4, tmp_path / "dev4.jsonl")
    base = ["calibrate", str(data), "--model", "mini", "--out", out]
    assert cli.main([*base, "--risk", "1.5"]) == 2
    assert "risk must be a number strictly between 0 and 1" in capsys.readouterr().err
    assert cli.main([*base, "--delta", "0.1"]) == 2
    assert "delta needs risk" in capsys.readouterr().err
    assert cli.main([*base, "--risk", "0.1"]) == 2
    err = capsys.readouterr().err
    assert "needs at least 22 labelled answers" in err and len(err.strip().splitlines()) == 1
    assert not Path(out).exists()
