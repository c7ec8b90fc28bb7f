"""The Agent against the published runtime's golden results, and its loading and input rules."""

from __future__ import annotations

import copy
import json
import shutil
import threading
from pathlib import Path

import pytest
from conftest import BERT, MODERNBERT, QUESTIONS, load_cases
from golden import as_json, assert_close, assert_matches, run_case

import laya
from laya.errors import (
    CheckpointError,
    CheckpointUnavailable,
    InvalidRequest,
    MissingCheckpointFile,
)

CASES = [
    (name, i) for name in ("tiny-modernbert", "tiny-bert") for i in range(len(load_cases(name)))
]


@pytest.fixture(scope="module")
def agents(agent, bert_agent):
    return {"tiny-modernbert": agent, "tiny-bert": bert_agent}


@pytest.mark.numbers
@pytest.mark.parametrize(("fixture", "index"), CASES)
def test_fixture_case(agents, fixture, index):
    case = load_cases(fixture)[index]
    assert_matches(case["expected"], run_case(agents[fixture], case))


@pytest.mark.numbers
def test_predict_is_system_one_and_batch_agrees(agent):
    state = "We were billed twice for March, please refund the duplicate."
    single = agent.predict(state, QUESTIONS)
    assert agent.system_one(state, QUESTIONS) == single
    batch = agent.predict_batch(["other text", state], QUESTIONS)
    assert_matches(as_json(single), as_json(batch[1]))


# --------------------------------------------------------------------------- loading


def test_load_from_offline_hub_cache_by_repo_subfolder_and_alias():
    root = laya.load("convaiinnovations/laya", device="cpu")
    sub = laya.load("convaiinnovations/laya", subfolder="multilingual", device="cpu")
    alias = laya.load("ML", device="cpu")
    typed = laya.load("typed", device="cpu")
    assert root.directory.name != "multilingual" and sub.directory.name == "multilingual"
    assert alias.directory == sub.directory and typed.directory.name == "typed-decisions"
    case = load_cases("tiny-bert")[0]
    assert_matches(case["expected"], run_case(alias, case))
    assert_matches(
        load_cases("tiny-modernbert")[0]["expected"],
        run_case(root, load_cases("tiny-modernbert")[0]),
    )


def test_english_alias_names_the_bundle_root():
    assert laya.load("English", device="cpu").directory == laya.load("en", device="cpu").directory


def test_unknown_hub_repo_offline_says_how_to_use_a_local_directory():
    with pytest.raises(OSError, match="local checkpoint directory"):
        laya.load("someone/not-cached", device="cpu")


def test_tokenizer_is_parsed_once_per_directory(agent):
    other = laya.Agent(str(MODERNBERT), device="cpu")
    assert other.checkpoint_tokenizer is agent.checkpoint_tokenizer


def test_loading_never_writes_into_the_checkpoint(tmp_path):
    copy_dir = tmp_path / "ckpt"
    shutil.copytree(MODERNBERT, copy_dir)
    before = {p: p.read_bytes() for p in copy_dir.rglob("*") if p.is_file()}
    for p in copy_dir.rglob("*"):
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        laya.Agent(str(copy_dir), device="cpu").predict("hi", QUESTIONS)
    finally:
        for p in copy_dir.rglob("*"):
            p.chmod(0o755 if p.is_dir() else 0o644)
    assert {p: p.read_bytes() for p in copy_dir.rglob("*") if p.is_file()} == before


def test_transformers4_tokenizer_config_loads(tmp_path, agent):
    ckpt = tmp_path / "ckpt"
    shutil.copytree(MODERNBERT, ckpt)
    config_path = ckpt / "tokenizer" / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    config.pop("backend", None)
    config["tokenizer_class"] = "PreTrainedTokenizerFast"
    config_path.write_text(json.dumps(config))
    result = laya.Agent(str(ckpt), device="cpu").predict("refund please", QUESTIONS)
    assert_close(agent.predict("refund please", QUESTIONS), result)


def test_unavailable_device_falls_back_to_cpu_with_a_warning():
    with pytest.warns(RuntimeWarning, match="CUDA requested but not available"):
        fallback = laya.Agent(str(BERT), device="cuda:0")
    assert fallback.device.type == "cpu"


# --------------------------------------------------------------------------- bad checkpoints


def _broken(tmp_path: Path, edit) -> str:
    ckpt = tmp_path / "ckpt"
    shutil.copytree(MODERNBERT, ckpt)
    edit(ckpt)
    return str(ckpt)


def _edit_config(**changes):
    def edit(ckpt: Path) -> None:
        path = ckpt / "rl_agent_config.json"
        config = json.loads(path.read_text())
        for key, value in changes.items():
            if value is None:
                config.pop(key)
            else:
                config[key] = value
        path.write_text(json.dumps(config))

    return edit


def _edit_tensors(mutate):
    def edit(ckpt: Path) -> None:
        from safetensors.torch import load_file, save_file

        tensors = load_file(str(ckpt / "model.safetensors"))
        mutate(tensors)
        save_file(tensors, str(ckpt / "model.safetensors"))

    return edit


@pytest.mark.parametrize("source", [5, None, b"bytes", "", "   "])
def test_a_checkpoint_that_is_not_a_name_or_path_is_refused(source):
    with pytest.raises(InvalidRequest, match="checkpoint"):
        laya.load(source)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_batch_tokens": "4096"}, "max_batch_tokens"),
        ({"max_batch_tokens": 0}, "max_batch_tokens"),
        ({"max_batch_tokens": -5}, "max_batch_tokens"),
        ({"subfolder": 5}, "subfolder"),
    ],
)
def test_constructor_counts_and_names_are_checked(kwargs, message):
    with pytest.raises(InvalidRequest, match=message):
        laya.Agent(str(MODERNBERT), device="cpu", **kwargs)


def test_a_bad_max_batch_tokens_is_refused_before_the_checkpoint_is_looked_up(tmp_path):
    with pytest.raises(InvalidRequest, match="max_batch_tokens"):
        laya.Agent(str(tmp_path / "absent"), device="cpu", max_batch_tokens=0)


@pytest.mark.parametrize("name", ["mini", "multilingual"])
def test_a_subfolder_with_a_built_in_name_is_refused(name):
    with pytest.raises(InvalidRequest, match=f"subfolder='nope'.*{name!r}"):
        laya.load(name, subfolder="nope")


def test_a_missing_checkpoint_file_is_a_checkpoint_error_and_a_file_not_found_error():
    assert issubclass(MissingCheckpointFile, CheckpointError)
    assert issubclass(MissingCheckpointFile, FileNotFoundError)


def test_missing_directory_is_named():
    with pytest.raises(FileNotFoundError, match="'./nowhere'"):
        laya.Agent("./nowhere")


@pytest.mark.parametrize(
    ("edit", "error", "message"),
    [
        (
            lambda c: (c / "rl_agent_config.json").unlink(),
            MissingCheckpointFile,  # a CheckpointError and a FileNotFoundError
            "rl_agent_config.json",
        ),
        (lambda c: (c / "model.safetensors").unlink(), MissingCheckpointFile, "model.safetensors"),
        (
            lambda c: (c / "model.safetensors").write_bytes(b"not tensors"),
            CheckpointError,
            "model.safetensors",
        ),
        (
            lambda c: (c / "encoder" / "config.json").write_text("{bad"),
            CheckpointError,
            "encoder/config.json",
        ),
        (
            lambda c: (c / "tokenizer" / "tokenizer.json").write_text('{"x":'),
            CheckpointError,
            "tokenizer.json",
        ),
        (
            lambda c: shutil.rmtree(c / "encoder"),
            CheckpointUnavailable,
            "encoder/",
        ),
        (
            lambda c: shutil.rmtree(c / "tokenizer"),
            CheckpointUnavailable,
            "tokenizer/",
        ),
        (_edit_config(encoder=None), ValueError, "'encoder'"),
        (_edit_config(head_layers=None), ValueError, "'head_layers'"),
        (_edit_config(temperature=[1.0, 2.0]), ValueError, "temperature"),
        (_edit_config(option_layout="diagonal"), CheckpointError, "option_layout"),
        (_edit_config(head_layers=3), ValueError, "Model weights incomplete"),
        (
            _edit_tensors(lambda t: t.pop("type_emb.weight")),
            ValueError,
            "'type_emb.'",
        ),
        (
            _edit_tensors(lambda t: t.pop("scorer.1.bias")),
            ValueError,
            "'scorer.1.bias'",
        ),
        (_edit_tensors(lambda t: t.pop("temperature")), ValueError, "temperature"),
        (
            _edit_tensors(
                lambda t: t.__setitem__("scorer.1.weight", t["scorer.1.weight"][:, :8].contiguous())
            ),
            ValueError,
            "scorer.1.weight",
        ),
        (
            _edit_tensors(lambda t: t.__setitem__("extra.weight", t["type_emb.weight"].clone())),
            ValueError,
            "extra.weight",
        ),
    ],
)
def test_broken_checkpoint_is_refused_clearly(tmp_path, edit, error, message):
    path = _broken(tmp_path, edit)
    with pytest.raises(error, match=message):
        laya.Agent(path, device="cpu")


def test_out_of_range_temperatures_warn_once_and_clamp(tmp_path):
    path = _broken(
        tmp_path,
        _edit_config(temperature=[0.1, "x", 9.0], temperature_by_options={"choice:11+": 0.1006}),
    )
    with pytest.warns(RuntimeWarning, match=r"temperature\[0\].*choice:11\+"):
        clamped = laya.Agent(path, device="cpu")
    assert clamped.temperatures.by_type == (0.5, 1.0, 5.0)


# --------------------------------------------------------------------------- bad questions


def _ask(agent, questions, state="hello"):
    return agent.predict(state, questions)


@pytest.mark.parametrize(
    ("questions", "error", "message"),
    [
        ({None: {"type": "noul", "instructions": "x"}}, ValueError, "question id"),
        ({"  ": {"type": "noul", "instructions": "x"}}, ValueError, "question id"),
        ({"q": "noul"}, ValueError, "question 'q'"),
        ({"q": {"type": "bool", "instructions": "x"}}, ValueError, "question 'q'.*type"),
        ({"q": {"type": "noul"}}, ValueError, "question 'q'.*'instructions'"),
        ({"q": {"type": "noul", "instructions": None}}, ValueError, "question 'q'.*instructions"),
        ({"q": {"type": "noul", "instructions": "  "}}, ValueError, "question 'q'.*instructions"),
        ({"q": {"type": "noul", "instructions": {}}}, ValueError, "question 'q'.*instructions"),
        ({"q": {"type": "noul", "instructions": b"x"}}, ValueError, "question 'q'.*instructions"),
        (
            {"q": {"type": "choice", "instructions": "x", "criteria": "a,b"}},
            ValueError,
            "question 'q'.*criteria",
        ),
        (
            {"q": {"type": "choice", "instructions": "x", "criteria": []}},
            ValueError,
            "question 'q'.*criteri",
        ),
        (
            {"q": {"type": "choice", "instructions": "x", "criteria": [["a"]]}},
            ValueError,
            "question 'q'.*label 0",
        ),
        (
            {"q": {"type": "choice", "instructions": "x", "criteria": [None]}},
            ValueError,
            "question 'q'.*label 0",
        ),
        (
            {"q": {"type": "choice", "instructions": "x", "criteria": [1, True]}},
            ValueError,
            "question 'q'.*label 1",
        ),
        (
            {"q": {"type": "choice", "instructions": "x", "criteria": ["a", 1, "1"]}},
            InvalidRequest,
            r"question 'q'.*labels 1 \(1\) and 2",
        ),
        (
            {"q": {"type": "choice", "instructions": "x", "criteria": {1.0: "a", "1.0": "b"}}},
            InvalidRequest,
            r"question 'q'.*labels 0 \(1.0\) and 1",
        ),
        (
            {"q": {"type": "choice", "instructions": "x", "criteria": [True, "true"]}},
            InvalidRequest,
            r"question 'q'.*labels 0 \(True\) and 1",
        ),
        (
            {"q": {"type": "choice", "instructions": "x", "criteria": [False, "False"]}},
            InvalidRequest,
            r"question 'q'.*labels 0 \(False\) and 1",
        ),
        (
            {"q": {"type": "noul", "instructions": json.loads("[" * 101 + "1" + "]" * 101)}},
            InvalidRequest,
            "question 'q': instructions",
        ),
        (
            {
                "q": {
                    "type": "score",
                    "instructions": "x",
                    "criteria": [json.loads("[" * 100 + "]" * 100)],
                }
            },
            InvalidRequest,
            "question 'q': criteria",
        ),
        (
            {"q": {"type": "score", "instructions": "x", "criteria": {"a": 1}}},
            ValueError,
            "question 'q'.*criteria",
        ),
        (
            {"q": {"type": "score", "instructions": "x", "criteria": []}},
            ValueError,
            "question 'q'.*level",
        ),
        (
            {"q": {"type": "score", "instructions": "x", "criteria": ["a", None]}},
            ValueError,
            "question 'q'.*level 1",
        ),
        (
            {"q": {"type": "noul", "instructions": "x", "criteria": ["yes"]}},
            ValueError,
            "question 'q'.*criteria",
        ),
        (
            {"q": {"type": "noul", "instructions": "x", "criteria": {"maybe": "?"}}},
            ValueError,
            "question 'q'.*criteria",
        ),
        (
            {
                "q": {
                    "type": "choice",
                    "instructions": "x",
                    "criteria": ["a", "b"],
                    "option_order": [0, 0],
                }
            },
            ValueError,
            "question 'q'.*option_order",
        ),
        (
            {"q": {"type": "noul", "instructions": "x", "option_order": [True, False]}},
            ValueError,
            "question 'q'.*option_order",
        ),
        (
            {"q": {"type": "choice", "instructions": "x", "criteria": ["a"], "labels": {}}},
            ValueError,
            "question 'q'.*'labels'",
        ),
        (
            {
                "q": {
                    "type": "noul",
                    "instructions": "x",
                    "labels": {"false": "same", "true": "same "},
                }
            },
            ValueError,
            "question 'q'.*labels",
        ),
        (
            {"q": {"type": "noul", "instructions": "x", "labels": {"true": "yes"}}},
            ValueError,
            "question 'q'.*labels",
        ),
    ],
)
def test_invalid_question_names_the_id_and_fix(agent, questions, error, message):
    with pytest.raises(error, match=message):
        _ask(agent, questions)


def test_labels_distinct_once_serialised_are_answered_under_their_own_keys(agent):
    question = {"q": {"type": "choice", "instructions": "Which?", "criteria": [1, "2", 2.5, False]}}
    answer = agent.predict("hello", question)["answers"]["q"]
    assert list(answer["probabilities"]) == [1, "2", 2.5, False]
    assert json.loads(json.dumps(answer))["probabilities"].keys() == {"1", "2", "2.5", "false"}


def test_questions_must_be_a_dict(agent):
    with pytest.raises(
        TypeError, match="questions must be a dict of question id -> definition, got list"
    ):
        agent.predict("hello", [QUESTIONS["urgency"]])


def test_states_must_be_a_list_and_not_none(agent):
    with pytest.raises(TypeError, match="predict_batch expects a list of states"):
        agent.predict_batch("hello", QUESTIONS)
    with pytest.raises(TypeError, match="state must not be None"):
        agent.predict_batch(["a", None], QUESTIONS)
    with pytest.raises(TypeError, match="state must not be None"):
        agent.predict(None, QUESTIONS)


def test_options_that_do_not_fit_max_len_are_refused(agent):
    with pytest.raises(
        ValueError,
        match=r"question 'department': only \d of its 4 option markers fit in max_len=20",
    ):
        agent.predict("hello", QUESTIONS, max_len=20, head_max_len=48)


@pytest.mark.parametrize("budget", ["max_len", "head_max_len"])
@pytest.mark.parametrize("bad", ["128", 128.0, float("inf"), True, [128], 0, -5])
def test_a_budget_that_is_not_a_whole_number_is_refused_inside_the_lifecycle(agent, budget, bad):
    events = []
    hooks = {
        "on_predict_start": lambda ctx: events.append("start"),
        "on_predict_end": lambda ctx: events.append(("end", type(ctx.error).__name__)),
    }
    with pytest.raises(InvalidRequest, match=f"{budget} must be a whole number of tokens"):
        agent.predict("hello", QUESTIONS, **hooks, **{budget: bad})
    assert events == ["start", ("end", "InvalidRequest")]  # hooks.md §6: validated after start


def test_a_start_hook_may_repair_a_bad_budget_or_an_empty_state(agent):
    def repair(ctx):
        ctx.max_len, ctx.states = 128, ["hello"]

    fixed = agent.predict("", QUESTIONS, max_len=-5, on_predict_start=repair)
    assert_close(agent.predict("hello", QUESTIONS, max_len=128)["answers"], fixed["answers"])


def test_a_budget_a_start_hook_sets_is_checked_too(agent):
    def set_text_budget(ctx):
        ctx.head_max_len = "96"

    with pytest.raises(InvalidRequest, match="head_max_len must be a whole number of tokens"):
        agent.predict("hello", QUESTIONS, on_predict_start=set_text_budget)


def test_numpy_integer_budgets_answer_like_ints(agent):
    import numpy as np

    expected = agent.predict("hello", QUESTIONS, max_len=128, head_max_len=64)
    assert_close(
        expected,
        agent.predict("hello", QUESTIONS, max_len=np.int64(128), head_max_len=np.int32(64)),
    )


def test_min_confidence_is_validated_before_anything(agent):
    for bad in (True, 1.5, -0.1, float("nan"), "0.5", {}, {"choice:7": 0.5}, {"default": 2}):
        with pytest.raises(ValueError, match="min_confidence"):
            agent.predict("hello", QUESTIONS, min_confidence=bad)


def test_min_confidence_takes_numpy_numbers_like_floats(agent):
    import numpy as np

    plain = agent.predict("refund me twice", QUESTIONS, min_confidence=0.99)
    for value in (np.float32(0.99), {"default": np.float64(0.99)}):
        numpy = agent.predict("refund me twice", QUESTIONS, min_confidence=value)
        for qid, answer in plain["answers"].items():
            assert numpy["answers"][qid]["abstention"] == answer["abstention"]
            assert type(numpy["answers"][qid]["abstention_threshold"]) is float
    with pytest.raises(ValueError, match="min_confidence"):
        agent.predict("hello", QUESTIONS, min_confidence=np.bool_(True))


# --------------------------------------------------------------------------- shapes and options


def test_empty_inputs(agent):
    assert agent.predict_batch([], QUESTIONS) == []
    assert agent.predict("hello", {}) == {
        "model": "laya-rl-agent",
        "answers": {},
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }


def test_json_states_and_int_question_ids(agent):
    questions = {7: QUESTIONS["churn_risk"]}
    result = agent.predict({"subject": "Cancel", "body": "I will leave"}, questions)
    assert list(result["answers"]) == [7]
    assert agent.predict(["turn one", "turn two"], questions)["usage"]["state_tokens"] > 0


@pytest.mark.numbers
def test_option_order_does_not_change_the_answer_keys(agent):
    reordered = copy.deepcopy(QUESTIONS)
    reordered["department"]["option_order"] = [3, 2, 1, 0]
    result = agent.predict("refund me", reordered)
    assert list(result["answers"]["department"]["probabilities"]) == [
        "billing",
        "technical",
        "sales",
        "other",
    ]
    assert abs(sum(result["answers"]["department"]["probabilities"].values()) - 1) < 1e-3


def test_min_confidence_gate_fields(agent):
    result = agent.predict(
        "refund me twice", QUESTIONS, min_confidence={"noul:2": 0.99, "default": 0.0}
    )
    noul = result["answers"]["churn_risk"]
    assert noul["abstention"] == "abstained" and noul["low_confidence"] is True
    assert noul["abstention_threshold"] == 0.99
    choice = result["answers"]["department"]
    assert choice["abstention"] == "passed" and "low_confidence" not in choice
    assert "abstention" not in agent.predict("refund me twice", QUESTIONS)["answers"]["department"]


def test_conversation_lists_keep_their_newest_tokens(agent):
    turns = [f"old message number {i}" for i in range(60)] + ["the newest message"]
    result = agent.predict(turns, QUESTIONS)
    text = agent.predict(" ".join(turns), QUESTIONS)
    assert result["usage"]["truncated"] and text["usage"]["truncated"]
    assert result["answers"] != text["answers"]


@pytest.mark.numbers
def test_batch_size_and_packing_do_not_change_answers(agent):
    states = [("word " * n).strip() for n in (3, 40, 7, 90, 1, 15)]
    whole = agent.predict_batch(states, QUESTIONS)
    chunked = agent.predict_batch(states, QUESTIONS, batch_size=2, sort_by_length=True)
    small = laya.Agent(str(MODERNBERT), device="cpu", max_batch_tokens=300).predict_batch(
        states, QUESTIONS
    )
    for a, b, c in zip(whole, chunked, small):
        assert_matches(as_json(a), as_json(b))
        assert_matches(as_json(a), as_json(c))


@pytest.mark.numbers
def test_sixteen_threads_answer_like_serial_calls(agent):
    states = [f"Ticket {i}: the app crashes when I open invoice {i * 7}" for i in range(16)]
    serial = [agent.predict(s, QUESTIONS) for s in states]
    results = [None] * 16

    def call(i: int) -> None:
        results[i] = agent.predict(states[i], QUESTIONS)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert_close(serial, results)


# --------------------------------------------------------------------------- predict_long


def test_predict_long_reports_windows(agent):
    document = " ".join(
        f"line {i}: the customer asks about invoice {i} and a refund." for i in range(40)
    )
    result = agent.predict_long(document, QUESTIONS)
    count = result["usage"]["windows"]
    assert count > 1
    for answer in result["answers"].values():
        window = answer["window"]
        assert window["count"] == count and 0 <= window["index"] < count
        assert window["token_start"] < window["token_end"]
    short = agent.predict_long("a short note", QUESTIONS)
    assert short["usage"]["windows"] == 1 and "window" not in short["answers"]["department"]


def test_predict_long_validation(agent):
    with pytest.raises(ValueError, match="only aggregate='auto'"):
        agent.predict_long("x", QUESTIONS, aggregate="mean")
    with pytest.raises(TypeError, match="state must not be None"):
        agent.predict_long(None, QUESTIONS)
    with pytest.raises(ValueError, match="stride=500 steps past the 40-token window"):
        agent.predict_long("x " * 300, QUESTIONS, window=40, stride=500)
    with pytest.warns(RuntimeWarning, match="window=500 is wider than"):
        agent.predict_long("x " * 300, QUESTIONS, window=500)


@pytest.mark.parametrize(
    ("option", "error", "message"),
    [
        ({"window": "200"}, InvalidRequest, "window must be a whole number of tokens"),
        ({"window": 2e100}, InvalidRequest, "window must be a whole number of tokens"),
        ({"stride": True}, InvalidRequest, "stride must be a whole number of tokens"),
        ({"batch_size": 2.5}, InvalidRequest, "batch_size must be a whole number of windows"),
        ({"window": 0}, InvalidRequest, r"window must be .* \(at least 1\)"),
        ({"stride": -3}, InvalidRequest, r"stride must be .* \(at least 1\)"),
        ({"lang": 57}, TypeError, "lang must be a language code \\(one document\\), or None"),
    ],
)
def test_predict_long_refuses_a_bad_option_before_any_hook(agent, option, error, message):
    started = []
    with pytest.raises(error, match=message):
        agent.predict_long("x " * 300, QUESTIONS, on_predict_start=started.append, **option)
    router = laya.Router(models={"english": str(MODERNBERT)})
    with pytest.raises(error, match=message if "lang" not in option else "lang must be a code"):
        router.predict_long(
            "x " * 300, QUESTIONS, model="english", hooks=[Started(started)], **option
        )
    assert started == []


class Started(laya.BaseHook):
    def __init__(self, seen: list) -> None:
        self.seen = seen

    def on_predict_start(self, ctx) -> None:
        self.seen.append(ctx)


@pytest.mark.parametrize(
    ("option", "error", "message"),
    [
        ({"batch_size": "8"}, InvalidRequest, "batch_size must be a whole number of states"),
        ({"batch_size": 0}, InvalidRequest, r"batch_size must be .* \(at least 1\)"),
        ({"lang": 5}, TypeError, "lang must be a language code, or a list of one code"),
        ({"lang": ["en", 5]}, TypeError, "lang must be a language code, or a list of one code"),
    ],
)
def test_predict_batch_refuses_a_bad_option_before_any_hook(agent, option, error, message):
    started = []
    with pytest.raises(error, match=message):
        agent.predict_batch(["a", "b"], QUESTIONS, on_predict_start=started.append, **option)
    assert started == []
