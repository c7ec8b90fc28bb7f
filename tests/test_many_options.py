"""Choices with many options: tournament and shortlist on the bundled mini, for real."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from golden import assert_close

import laya
from laya import Router
from laya.engine.questions import parse_question
from laya.engine.strategies.shortlist import rank_options, recall_at_k
from laya.engine.strategies.tournament import (
    AUTO_GROUP_CAP,
    Bracket,
    _deal,
    choice_mode,
    plan_question,
)
from laya.errors import InvalidRequest

DATA = Path(__file__).resolve().parents[1] / "data" / "options"
TAXONOMIES = json.loads((DATA / "taxonomies.json").read_text(encoding="utf-8"))
UNION = {label: text for t in TAXONOMIES.values() for label, text in t["labels"].items()}
OOM = "kernel: Out of memory: Killed process 23811 (java) total-vm:12GB, anon-rss:7.9GB"


def choice(n: int, instructions: str = "Which category is this?") -> dict:
    labels = list(UNION)[:n]
    return {
        "type": "choice",
        "instructions": instructions,
        "criteria": {k: UNION[k] for k in labels},
    }


BIG = {"label": choice(250), "urgent": {"type": "noul", "instructions": "Is this urgent?"}}
MANY = {"label": choice(120)}  # over the server's 100 options without a tournament or shortlist


@pytest.fixture(scope="module")
def mini():
    return laya.load("mini", device="cpu")


@pytest.fixture(scope="module")
def big_tournament(mini):
    return mini.predict_tournament(OOM, BIG)


class Counter:
    """A hook that counts its events."""

    def __init__(self):
        self.events = []

    def on_predict_start(self, ctx):
        self.events.append("start")

    def on_predict_end(self, ctx):
        self.events.append("end")


def forward_count(runtime):
    """Count the runtime's forward passes (the real backend still runs every one)."""
    calls = []
    real = runtime.backend_object.forward

    def counted(batch):
        calls.append(len(batch.rows))
        return real(batch)

    runtime.backend_object.forward = counted
    return calls, lambda: setattr(runtime.backend_object, "forward", real)


# --------------------------------------------------------------------------- tournament


def test_a_250_label_choice_is_answered_by_a_tournament(big_tournament):
    answer = big_tournament["answers"]["label"]
    probabilities = answer["probabilities"]
    assert list(probabilities) == list(BIG["label"]["criteria"])
    assert answer["choice"] in probabilities
    assert abs(sum(probabilities.values()) - 1.0) < 1e-3  # each value is rounded to 4 places
    finalists = answer["tournament"]["finalists"]
    assert answer["choice"] in finalists and 2 <= len(finalists) <= AUTO_GROUP_CAP
    assert all(probabilities[k] == 0.0 for k in probabilities if k not in finalists)
    assert answer["tournament"]["rounds"] >= 3  # 250 options in groups of at most 8
    assert answer["probabilities"][answer["choice"]] == max(probabilities.values())


def test_a_tournament_says_when_it_set_the_callers_option_order_aside(mini):
    """Groups order a narrowed choice's options, so a caller's option_order cannot apply: the
    answer's tournament block says option_order_dropped (the published server's x_tournament
    and predict_tournament's block carry it too); an order left alone is not flagged."""
    question = choice(30)
    reversed_order = {**question, "option_order": list(range(29, -1, -1))}
    for asked, flagged in ((question, False), (reversed_order, True)):
        played = mini.predict(OOM, {"label": asked}, tournament=True)["answers"]["label"]
        assert played["tournament"].get("option_order_dropped", False) is flagged
        block = laya.predict_tournament(mini, OOM, {"label": asked}, group_size=8)["tournament"]
        assert block["label"].get("option_order_dropped", False) is flagged


def test_questions_a_tournament_does_not_need_are_answered_as_ever(mini, big_tournament):
    plain = mini.system_one(OOM, {"urgent": BIG["urgent"]})["answers"]["urgent"]
    got = big_tournament["answers"]["urgent"]
    assert "tournament" not in got
    assert_close(got["noul"], plain["noul"])
    small = {"team": choice(5)}
    ordinary = mini.system_one(OOM, small)
    both = mini.system_one(OOM, small, tournament=8)
    assert "tournament" not in both["answers"]["team"]
    assert_close(
        both["answers"]["team"]["probabilities"], ordinary["answers"]["team"]["probabilities"]
    )
    assert both["usage"] == ordinary["usage"]


def test_usage_sums_every_round(mini, big_tournament):
    one_group = mini.system_one(OOM, {"label": choice(8)})["usage"]["input_tokens"]
    usage = big_tournament["usage"]
    rounds = big_tournament["answers"]["label"]["tournament"]["rounds"]
    # round one alone reads 250 options in groups of at most 8: at least 32 rows
    assert usage["input_tokens"] > 32 * one_group * 0.5
    assert usage["state_tokens"] < 40 and not usage["truncated"] and rounds >= 3


@pytest.mark.numbers
def test_the_same_seed_gives_the_same_answer_alone_or_in_a_batch(mini):
    questions = {"label": choice(40)}
    states = [OOM, "My card was stolen on the train, please block it"]
    alone = [mini.predict_tournament(s, questions, group=3) for s in states]
    batch = mini.predict_batch(states, questions, tournament=3)
    for one, many in zip(alone, batch):
        a, b = one["answers"]["label"], many["answers"]["label"]
        assert a["tournament"] == b["tournament"] and a["choice"] == b["choice"]
        assert_close(a["probabilities"], b["probabilities"])
        assert one["usage"]["input_tokens"] == many["usage"]["input_tokens"]


def test_groups_are_shuffled_by_the_seed_and_fit_the_budget(mini):
    q = parse_question("label", choice(60))
    mode = choice_mode(True)
    plan = plan_question(mini.checkpoint_tokenizer, q, mode, mini.checkpoint_config.head_max_len)
    bracket = Bracket(0, q, plan, list(range(60)))
    groups = _deal(bracket, 0, 0)
    assert sorted(i for g in groups for i in g) == list(range(60))
    assert all(2 <= len(g) <= AUTO_GROUP_CAP for g in groups[:-1])
    assert all(sum(plan.lengths[i] for i in g) <= plan.room for g in groups if len(g) > 2)
    assert groups == _deal(bracket, 0, 0)
    assert groups != _deal(bracket, 1, 0) and groups != _deal(bracket, 0, 1)
    assert [i for g in groups for i in g] != list(range(60))  # not the caller's order


def test_a_fixed_group_splits_evenly(mini):
    q = parse_question(
        "label", {"type": "choice", "instructions": "x", "criteria": list("abcdefghij")}
    )
    plan = plan_question(
        mini.checkpoint_tokenizer, q, choice_mode(4), mini.checkpoint_config.head_max_len
    )
    groups = _deal(Bracket(0, q, plan, list(range(10))), 0, 0)
    assert sorted(map(len, groups)) == [3, 3, 4]


def test_a_calibration_file_applies_to_the_last_group_and_stamps_the_result(tmp_path):
    from test_calibration import small_file

    bins = {"bins": 10, "values": [0.123] * 10}
    maps = {bucket: bins for bucket in ("choice:2", "choice:3-5", "choice:6-10")}
    agent = laya.load("mini", device="cpu", calibration=small_file(tmp_path, binning_map=maps))
    result = agent.predict_tournament(OOM, {"label": choice(40)})
    assert result["calibration"]["file"] == "calib.json"
    assert result["answers"]["label"]["answer_confidence"] == 0.123


def test_hooks_see_one_start_and_end_per_call_whatever_the_rounds(mini):
    hook = Counter()
    mini.predict_tournament(OOM, {"label": choice(20)}, hooks=[hook])
    assert hook.events == ["start", "end"]
    hook.events.clear()
    mini.predict_batch([OOM, OOM], {"label": choice(20)}, hooks=[hook], tournament=True)
    assert hook.events == ["start", "end"]
    hook.events.clear()
    mini.predict_shortlist(OOM, {"label": choice(20)}, k=5, hooks=[hook])
    assert hook.events == ["start", "end"]


# --------------------------------------------------------------------------- shortlist


def test_a_250_label_choice_is_answered_by_a_shortlist(mini):
    result = mini.predict_shortlist(OOM, BIG, k=10)
    answer = result["answers"]["label"]
    candidates = answer["shortlist"]["candidates"]
    assert len(candidates) == 10 and answer["choice"] in candidates
    assert list(answer["probabilities"]) == list(BIG["label"]["criteria"])
    assert abs(sum(answer["probabilities"].values()) - 1.0) < 1e-3
    assert all(p == 0.0 for k, p in answer["probabilities"].items() if k not in candidates)
    assert "out_of_memory_kill" in candidates  # the mini encoder ranks the right class near
    assert "tournament" not in answer
    both = mini.predict_shortlist(OOM, BIG, k=40, tournament=True)["answers"]["label"]
    assert len(both["shortlist"]["candidates"]) == 40
    assert set(both["tournament"]["finalists"]) <= set(both["shortlist"]["candidates"])


def words(texts):
    """A tiny embedder: counts of a few words (any callable texts -> vectors will do)."""
    vocab = ["card", "memory", "disk", "printer", "refund"]
    return np.array([[t.lower().count(w) + 0.01 for w in vocab] for t in texts])


def test_any_embedder_ranks_the_options(mini):
    question = {
        "type": "choice",
        "instructions": "Which team?",
        "criteria": {
            "cards": "card lost card stolen",
            "ram": "memory memory",
            "storage": "disk space",
            "print": "printer jams",
            "money": "refund refund refund",
        },
    }
    result = mini.predict_shortlist(
        "memory at 99%, memory low, disk full", {"q": question}, k=2, embed=words
    )
    assert result["answers"]["q"]["shortlist"]["candidates"] == ["ram", "storage"]
    ranked = rank_options(
        words, ["my printer", "refund me"], [["print", "printer x"], ["refund", "x"]]
    )
    assert ranked == [[1, 0], [0, 1]]
    assert recall_at_k([[3, 1, 2], [0, 2, 1]], [1, 1], 2) == 0.5
    assert math.isnan(recall_at_k([], [], 1))
    for call, message in [
        (lambda: recall_at_k([[3, 1, 2], [0, 2, 1]], [1], 2), "2 rankings and 1 gold indices"),
        (lambda: recall_at_k([[0]], [0], 0), "k must be a whole number of at least 1, got 0"),
        (lambda: rank_options(words, ["a", "b"], [["x"]]), "2 states and 1 option lists"),
        (lambda: rank_options(words, ["a"], ["xy"]), r"options\[0\] must be a non-empty list"),
        (lambda: rank_options(words, ["a"], [[]]), r"options\[0\] must be a non-empty list"),
    ]:
        with pytest.raises(InvalidRequest, match=message):
            call()


def test_shortlist_and_tournament_through_the_router():
    router = Router(device="cpu")
    hook = Counter()
    result = router.predict(OOM, {"label": choice(20)}, model="mini", tournament=True, hooks=[hook])
    assert "tournament" in result["answers"]["label"] and result["routing"]["model"] == "mini"
    assert hook.events == ["start", "end"]
    requests = [{"state": OOM, "questions": {"label": choice(20)}, "model": "mini"}] * 2
    results = router.predict_batch(requests, shortlist=5)
    assert all(len(r["answers"]["label"]["shortlist"]["candidates"]) == 5 for r in results)
    assert results[0]["answers"] == results[1]["answers"]
    router.unload()


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, named",
    [
        ({"tournament": 1}, "tournament=1"),
        ({"tournament": 0}, "tournament=0"),
        ({"tournament": 2.5}, "tournament=2.5"),
        ({"tournament": "8"}, "tournament='8'"),
        ({"shortlist": 0}, "shortlist=0"),
        ({"shortlist": True}, "shortlist=True"),
    ],
)
def test_bad_group_or_k_is_refused_before_any_hook_or_pass(mini, kwargs, named):
    hook = Counter()
    calls, restore = forward_count(mini)
    try:
        with pytest.raises(InvalidRequest, match=named.replace("(", r"\(")):
            mini.system_one(OOM, BIG, hooks=[hook], **kwargs)
    finally:
        restore()
    assert calls == [] and hook.events == []


@pytest.mark.parametrize("seed", [-1, 2.0, "1"])
def test_a_seed_that_is_not_a_whole_number_of_0_or_more_is_refused_before_any_pass(mini, seed):
    calls, restore = forward_count(mini)
    try:
        with pytest.raises(InvalidRequest, match=rf"seed={seed!r}: pass a whole number of 0 or"):
            mini.predict_tournament(OOM, BIG, seed=seed)
        with pytest.raises(InvalidRequest, match=rf"seed={seed!r}"):
            mini.predict_shortlist(OOM, BIG, k=5, seed=seed)
    finally:
        restore()
    assert calls == []


def test_a_group_larger_than_fits_names_the_largest_that_does(mini):
    calls, restore = forward_count(mini)
    try:
        with pytest.raises(
            InvalidRequest, match=r"tournament=30: .* \(at most \d+ do\); pass tournament=\d"
        ):
            mini.predict_tournament(OOM, BIG, group=30)
    finally:
        restore()
    assert calls == []


def test_labels_that_are_not_strings_are_refused_in_a_tournament(mini):
    numbers = {"n": {"type": "choice", "instructions": "Which?", "criteria": list(range(40))}}
    calls, restore = forward_count(mini)
    try:
        with pytest.raises(InvalidRequest, match="label 0 is a int; .* must be a string"):
            mini.predict_tournament(OOM, numbers)
    finally:
        restore()
    assert calls == []
    assert mini.system_one(OOM, {"n": {**numbers["n"], "criteria": [1, 2, 3]}}, tournament=4)


@pytest.mark.parametrize(
    "embed, message",
    [
        (lambda texts: np.ones((len(texts) + 1, 4)), r"shape \(\d+, 4\) for \d+ option texts"),
        (lambda texts: np.ones(len(texts)), r"shape \(\d+,\) for"),
        (lambda texts: "vectors", "embed returned"),
        (lambda texts: np.full((len(texts), 3), np.nan), "NaN or infinite"),
        ("not callable", "embed='not callable': pass a callable"),
    ],
)
def test_an_embedder_of_the_wrong_shape_is_refused_before_any_pass(mini, embed, message):
    calls, restore = forward_count(mini)
    try:
        with pytest.raises(InvalidRequest, match=message):
            mini.predict_shortlist(OOM, {"label": choice(30)}, k=5, embed=embed)
    finally:
        restore()
    assert calls == []


# --------------------------------------------------------------------------- the command line


def test_the_command_line_answers_120_labels_by_tournament_and_by_shortlist(run_laya, tmp_path):
    from test_cli import json_lines, one_error_line

    path = tmp_path / "labels.json"
    path.write_text(json.dumps({"questions": MANY}))
    common = ("--questions", str(path), "--model", "mini", "--device", "cpu", "--json", OOM)
    for flags, block in (
        (("--tournament", "auto"), "tournament"),
        (("--shortlist", "8"), "shortlist"),
    ):
        (result,) = json_lines(run_laya(*flags, *common))
        answer = result["answers"]["label"]
        assert list(answer["probabilities"]) == list(MANY["label"]["criteria"])
        assert answer["choice"] in answer["probabilities"] and block in answer
        assert abs(sum(answer["probabilities"].values()) - 1.0) < 1e-3
    assert "--tournament" in one_error_line(run_laya("--tournament", "1", *common))
    assert "--shortlist" in one_error_line(run_laya("--shortlist", "4", OOM))


# --------------------------------------------------------------------------- the server


def test_the_server_answers_120_labels_with_the_controls_and_a_default():
    import httpx
    from test_server import served

    from laya.server import Settings, create_app, settings_from

    router = Router(default="mini", device="cpu")
    single = {"state": OOM, "questions": MANY, "model": "mini"}
    with (
        served(create_app(router, Settings())) as base,
        httpx.Client(base_url=base, timeout=300) as client,
    ):
        for control, block in (
            ({"tournament": True}, "x_tournament"),
            ({"shortlist": 8}, "x_shortlist"),
        ):
            response = client.post("/v1/systemone", json={**single, **control})
            assert response.status_code == 200, response.text
            answer = response.json()["answers"]["label"]
            assert list(answer["probabilities"]) == list(MANY["label"]["criteria"])
            assert answer["choice"] in answer["probabilities"] and block in answer
            assert abs(sum(answer["probabilities"].values()) - 1.0) < 1e-3
        unasked = client.post("/v1/systemone", json=single).json()["answers"]["label"]
        assert unasked["x_strategy"] == "tournament"  # 120 options do not fit one pass
        refused = client.post("/v1/systemone", json={**single, "tournament": False})
        assert refused.status_code == 413
        assert "'label'" in refused.json()["detail"] and "tournament" in refused.json()["detail"]
        for bad in ({"tournament": 1}, {"tournament": "8"}, {"shortlist": 0}):
            assert client.post("/v1/systemone", json={**single, **bad}).status_code == 422
        batch = {"states": [OOM, OOM], "questions": MANY, "model": "mini", "shortlist": 5}
        results = client.post("/v1/systemone/batch", json=batch).json()["results"]
        assert [len(r["answers"]["label"]["x_shortlist"]["candidates"]) for r in results] == [5, 5]
        heavy = {**batch, "states": [OOM] * 64, "tournament": 3, "shortlist": None}
        refused = client.post("/v1/systemone/batch", json=heavy)
        assert refused.status_code == 413 and "tokens of work" in refused.json()["detail"]
    assert settings_from(["--tournament", "auto"], {}).tournament is True
    assert settings_from([], {"LAYA_TOURNAMENT": "6"}).tournament == 6
    with (
        served(create_app(router, Settings(tournament=True))) as base,
        httpx.Client(base_url=base, timeout=300) as client,
    ):
        answer = client.post("/v1/systemone", json=single).json()["answers"]["label"]
        assert answer["x_tournament"]["rounds"] >= 3
        off = client.post("/v1/systemone", json={**single, "tournament": False})
        assert off.status_code == 413
    router.unload()


@pytest.mark.parametrize("flags", [["--tournament", "auto"], ["--shortlist", "10"]], ids=str)
def test_laya_batch_answers_a_many_option_file(tmp_path: Path, capsys, flags: list[str]) -> None:
    """``laya batch --tournament`` / ``--shortlist``: every line gets a label of the 120."""
    from laya.cli.batch import batch_main

    questions = {"label": choice(120)}
    (tmp_path / "q.json").write_text(json.dumps(questions), encoding="utf-8")
    states = [OOM, "The invoice shows a charge I never made.", "My parcel has not arrived."]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"state": s}) + "\n" for s in states), encoding="utf-8")
    target = tmp_path / "out.jsonl"
    args = [str(source), "--out", str(target), "--questions", str(tmp_path / "q.json")]
    assert batch_main([*args, "--model", "mini", *flags]) == 0, capsys.readouterr().err
    rows = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 3
    for row in rows:
        answer = row["result"]["answers"]["label"]
        assert row["label"] in questions["label"]["criteria"]
        assert sum(answer["probabilities"].values()) == pytest.approx(1.0, abs=2e-4)
        assert ("tournament" if flags[0] == "--tournament" else "shortlist") in answer


def test_laya_batch_refuses_many_option_modes_on_ray(tmp_path: Path, capsys) -> None:
    from laya.cli.batch import batch_main

    source = tmp_path / "in.jsonl"
    source.write_text('{"state": "x"}\n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert batch_main([str(source), "--out", str(out), "--ray", "--shortlist", "5"]) == 2
    err = capsys.readouterr().err
    assert "--shortlist" in err and "--ray" in err
    assert not out.exists()
