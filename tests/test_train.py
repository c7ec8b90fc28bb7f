"""Training, evaluation and the bundled ``mini`` model (issue 6)."""

from __future__ import annotations

import json
import math
import random
import re
from dataclasses import fields, replace
from pathlib import Path

import numpy as np
import pytest
import torch

import laya
from laya.checkpoint import BUNDLED, load_tokenizer
from laya.checkpoint.testing import random_checkpoint
from laya.errors import InvalidRequest
from laya.training import train as train_module
from laya.training.evaluate import Record, eval_main, evaluate, read_decisions, summarise
from laya.training.option_binding import OptionBinding
from laya.training.pairs import pair_groups, pair_loss, partners, split_passes
from laya.training.train import base_directory, train
from laya.training.train_command import main as train_main
from laya.training.train_settings import TrainOptions, TrainSettings
from laya.training.warmup_data import WORD, warmup_examples

TEAM = {
    "type": "choice",
    "instructions": "Which team should handle this ticket?",
    "criteria": {
        "billing": "payment, invoices, refunds",
        "technical": "bugs, crashes, errors",
        "account": "login, password, profile and account settings",
        "shipping": "delivery, tracking, returns",
    },
}
URGENCY = {"type": "score", "instructions": "How urgent is this?", "criteria": ["low", "high"]}
REFUND = {"type": "noul", "instructions": "The customer is asking for a refund."}
ROWS = [
    ("charged twice please refund the payment", "billing", 1, True),
    ("the app crashes with an error", "technical", 1, False),
    ("I cannot login, my password fails", "account", 0, False),
    ("the parcel tracking never updates", "shipping", 0, False),
    ("refund the invoice payment now", "billing", 1, True),
    ("a bug shows an error on save", "technical", 0, False),
]


def _row(state: str, team: str, urgency: int, refund: bool) -> dict:
    return {
        "id": state[:8],
        "domain": "support" if refund else "other",
        "state": state,
        "questions": {"team": TEAM, "urgency": URGENCY, "refund": REFUND},
        "answers": {"team": team, "urgency": urgency, "refund": refund},
    }


def _write(path: Path, rows: list) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return random_checkpoint(
        tmp_path_factory.mktemp("base") / "ckpt",
        encoder="bert",
        hidden_size=32,
        layers=1,
        initializer_range=0.05,
    )


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return _write(tmp_path_factory.mktemp("data") / "train.jsonl", [_row(*r) for r in ROWS])


def _fit(data: Path, base: Path, out: Path) -> Path:
    return train(data, base, out, epochs=3, dev=data, lr=3e-3, batch_size=4, progress=False)


@pytest.fixture(scope="module")
def trained(tmp_path_factory, data: Path, base: Path) -> Path:
    return _fit(data, base, tmp_path_factory.mktemp("out") / "model")


# --------------------------------------------------------------------------- training


def test_training_writes_a_loadable_fp16_checkpoint_and_lowers_the_loss(trained, base):
    from safetensors.numpy import load_file

    tensors = load_file(str(trained / "model.safetensors"))
    published = load_file(str(base / "model.safetensors"))
    assert set(tensors) == set(published)
    assert all(t.dtype == np.float16 for t in tensors.values())
    assert (trained / "encoder" / "config.json").is_file()
    assert (trained / "tokenizer" / "tokenizer.json").is_file()
    assert (trained / "tokenizer" / "tokenizer_config.json").is_file()
    config = json.loads((trained / "rl_agent_config.json").read_text())
    for key in ("encoder", "head_layers", "max_len", "head_max_len", "act_costs"):
        assert key in config
    assert len(config["temperature"]) == 3
    assert all(
        0.5 <= t <= 5 for t in [*config["temperature"], *config["temperature_by_options"].values()]
    )
    losses = config["training"]["metrics"]["train_loss"]
    assert losses[-1] < losses[0]
    assert len(config["training"]["data_sha256"]) == 64
    agent = laya.load(str(trained), device="cpu")
    answer = agent.system_one("refund my payment", {"team": TEAM})["answers"]["team"]
    assert answer["choice"] in TEAM["criteria"]


def test_settings_with_keywords_over_them_and_an_explicit_cpu_write_the_same_weights(
    tmp_path, data, base, trained
):
    settings = TrainSettings(epochs=3, dev=data, lr=1.0, batch_size=4, progress=False)
    out = train(data, base, tmp_path / "m", settings, lr=3e-3, device="cpu")
    written = (out / "model.safetensors").read_bytes()
    assert written == (trained / "model.safetensors").read_bytes()


def test_every_setting_is_a_keyword_of_train():
    assert list(TrainOptions.__annotations__) == [f.name for f in fields(TrainSettings)]


def test_settings_given_positionally_must_be_train_settings(tmp_path, data, base):
    with pytest.raises(InvalidRequest, match="settings must be a TrainSettings"):
        train(data, base, tmp_path / "out", 3)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("device", ["gpu", "cuda"])
def test_an_unusable_device_is_refused_before_anything_is_written(tmp_path, data, base, device):
    if device == "cuda" and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ValueError, match="device"):
        train(data, base, tmp_path / "out", progress=False, device=device)
    assert not (tmp_path / "out").exists()
    args = [str(data), "--base", str(base), "--out", str(tmp_path / "out"), "--device", device]
    assert train_main(args) == 2


def test_resume_continues_from_the_last_finished_epoch(tmp_path, data, base, trained, monkeypatch):
    from safetensors.numpy import load_file

    real_epoch = train_module.run_epoch
    calls = []

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_epoch(*args)

    monkeypatch.setattr(train_module, "run_epoch", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _fit(data, base, tmp_path / "model")
    assert (tmp_path / "model" / ".train" / "checkpoint-epoch-1" / "state.pt").is_file()
    monkeypatch.setattr(train_module, "run_epoch", real_epoch)
    resumed = []
    monkeypatch.setattr(train_module, "run_epoch", lambda *a: resumed.append(1) or real_epoch(*a))
    _fit(data, base, tmp_path / "model")
    assert len(resumed) == 2  # epochs 2 and 3 only
    again = load_file(str(tmp_path / "model" / "model.safetensors"))
    fresh = load_file(str(trained / "model.safetensors"))
    assert all(np.array_equal(again[k], fresh[k]) for k in fresh)  # deterministic with the seed


def test_the_epoch_with_the_best_dev_accuracy_is_written(tmp_path, data, base, trained):
    import torch
    from safetensors.numpy import load_file

    metrics = json.loads((trained / "rl_agent_config.json").read_text())["training"]["metrics"]
    accuracy = metrics["dev_accuracy"]
    assert len(accuracy) == 3 and all(0 <= a <= 1 for a in accuracy)
    assert metrics["best_epoch"] == int(np.argmax(accuracy)) + 1
    best = torch.load(trained / ".train" / "best.pt", weights_only=True)
    written = load_file(str(trained / "model.safetensors"))
    assert all(
        np.array_equal(best[k].half().numpy(), written[k]) for k in written if k != "temperature"
    )

    out = train(data, base, tmp_path / "last", epochs=3, dev=data, lr=3e-3, batch_size=4,
                progress=False, keep_best=False)  # fmt: skip
    last = torch.load(out / ".train" / "checkpoint-epoch-3" / "state.pt", weights_only=False)
    written = load_file(str(out / "model.safetensors"))
    assert all(
        np.array_equal(last["model"][k].half().numpy(), written[k])
        for k in written
        if k != "temperature"
    )
    assert (
        "best_epoch"
        not in json.loads((out / "rl_agent_config.json").read_text())["training"]["metrics"]
    )


@pytest.fixture(scope="module")
def plain_encoder(tmp_path_factory, base: Path) -> Path:
    """A plain transformers encoder directory (weights and ``tokenizer.json``), as --base takes."""
    import shutil

    import torch
    from transformers import AutoConfig, AutoModel

    out = tmp_path_factory.mktemp("plain") / "encoder"
    torch.manual_seed(0)
    AutoModel.from_config(AutoConfig.from_pretrained(base / "encoder")).save_pretrained(out)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (base / "tokenizer" / name).is_file():
            shutil.copyfile(base / "tokenizer" / name, out / name)
    return out


def test_a_new_head_starts_as_the_identity_with_bullet_markers(plain_encoder):
    import torch

    model = train_module._new_model(plain_encoder)
    for layer in model.head.layers:
        for projection in (layer.self_attn.out_proj, layer.linear2):
            assert not projection.weight.any() and not projection.bias.any()
    vocab = json.loads((plain_encoder / "tokenizer.json").read_text())["model"]["vocab"]
    table = model.encoder.get_input_embeddings().weight
    assert torch.equal(table[vocab["[MASK]"]], table[vocab["*"]])
    assert not torch.equal(table[vocab["[MASK]"]], table[vocab["[CLS]"]])


def test_option_binding_reads_each_option_and_trains(tmp_path, data, plain_encoder):
    from laya.checkpoint import load_tokenizer

    out = train(
        data,
        plain_encoder,
        tmp_path / "m",
        epochs=3,
        lr=3e-3,
        batch_size=4,
        bind_weight=1.0,
        head_lr=6e-3,
        progress=False,
    )
    config = json.loads((out / "rl_agent_config.json").read_text())
    assert config["training"]["bind_weight"] == 1.0 and config["training"]["head_lr"] == 6e-3
    losses = config["training"]["metrics"]["train_loss"]
    assert losses[-1] < losses[0]
    tok = load_tokenizer(out, None)
    model = train_module._new_model(plain_encoder)
    binding = OptionBinding(model.encoder, tok)
    rows, _, _ = train_module._encode(tok, read_decisions(data)[:1], 128, 48)
    spans = [tok.decode(list(span)).replace(" ", "") for span in binding.spans(rows[0])]
    assert [span.split(":")[0] for span in spans] == list(TEAM["criteria"])
    noul = [tok.decode(list(span)).replace(" ", "") for span in binding.spans(rows[2])]
    assert noul[0].startswith("false:") and noul[1] == REFUND["instructions"].lower().replace(
        " ", ""
    )
    binding.embed(rows)
    for row in rows:
        for span in binding.spans(row):
            assert binding.targets[span].shape == (model.encoder.config.hidden_size,)
    answer = laya.load(str(out), device="cpu").system_one("refund please", {"team": TEAM})
    assert answer["answers"]["team"]["choice"] in TEAM["criteria"]


def _words(text: str) -> str:
    return " ".join(WORD.findall(text))


def test_warmup_questions_are_answerable_from_the_state(data):
    examples = read_decisions(data)
    first = warmup_examples(examples, random.Random(7), share=1.0)
    assert first == warmup_examples(examples, random.Random(7), share=1.0)  # seeded
    assert len(first) == len(examples)  # share 1.0: every state with words gets questions
    for warm, ex in zip(first, examples):
        assert warm.state == ex.state and warm.domain == "warmup"
        assert [q.type for q in warm.questions] == ["choice", "choice"]  # no lexical noul
        quote, domain = warm.questions
        assert quote.qid == "quote" and 3 <= len(quote.keys) <= 5
        text = _words(ex.state)
        for i, phrase in enumerate(quote.keys):  # only the gold phrase is the state's own
            assert (phrase in text) == (i == warm.gold[0])
        assert domain.keys[warm.gold[1]] == ex.domain
        assert sorted(domain.keys) == ["other", "support"]
    assert len(warmup_examples(examples, random.Random(7), share=0.0)) == 0
    one_domain = [replace(ex, domain="support") for ex in examples]
    assert all(len(w.questions) == 1 for w in warmup_examples(one_domain, random.Random(7), 1.0))


def test_warmup_epochs_add_synthetic_rows_to_the_first_epochs_only(tmp_path, data, base):
    def steps(warmup_epochs: int) -> int:
        out = train(data, base, tmp_path / f"w{warmup_epochs}", epochs=2, lr=3e-3, batch_size=4,
                    progress=False, warmup_epochs=warmup_epochs)  # fmt: skip
        state = torch.load(out / ".train" / "checkpoint-epoch-2" / "state.pt", weights_only=False)
        assert state["fingerprint"]["warmup_epochs"] == warmup_epochs
        return state["scheduler"]["last_epoch"]

    plain, warm_one, warm_two = steps(0), steps(1), steps(2)
    assert plain == 2 * math.ceil(3 * len(ROWS) / 4)
    assert plain < warm_one < warm_two
    args = [str(data), "--base", str(base), "--out", str(tmp_path / "cli"), "--epochs", "1",
            "--warmup-epochs", "1", "--batch-size", "4"]  # fmt: skip
    assert train_main(args) == 0
    config = json.loads((tmp_path / "cli" / "rl_agent_config.json").read_text())
    assert config["training"]["warmup_epochs"] == 1
    with pytest.raises(ValueError, match="warmup_epochs"):
        train(data, base, tmp_path / "bad", warmup_epochs=-1, progress=False)
    assert not (tmp_path / "bad").exists()


# --------------------------------------------------------------------------- minimal pairs

PAIRS = [
    ("please refund the duplicate charge", True, "I do not want a refund, just the invoice", False),
    ("the parcel never arrived, refund me", True, "the parcel arrived, no refund needed", False),
]


def _pair_rows() -> list[dict]:
    rows = []
    for n, (first, gold_first, second, gold_second) in enumerate(PAIRS):
        for state, gold in ((first, gold_first), (second, gold_second)):
            rows.append(
                {"pair": f"p{n}", "state": state, "questions": {"refund": REFUND},
                 "answers": {"refund": gold}}
            )  # fmt: skip
    return rows


def test_minimal_pairs_share_a_pass_and_pay_log_2_when_answered_alike(tmp_path, base):
    examples = read_decisions(_write(tmp_path / "pairs.jsonl", _pair_rows() + [_row(*ROWS[1])]))
    tok = load_tokenizer(base, None)
    rows, targets, _ = train_module._encode(tok, examples, 64, 32, random.Random(0))
    groups = pair_groups(train_module._row_keys(examples), targets)
    assert groups == [[0, 1], [2, 3]]  # the unpaired row's three questions are not grouped
    passes = split_passes(rows, groups, tok.pad_id, 4, 64)
    assert sorted(r for p in passes for r in p.rows) == list(range(len(rows)))
    together = [p for p in passes if set(p.rows) & {0, 1}]
    assert len(together) == 1 and {0, 1, 2, 3} <= set(together[0].rows)
    batch = together[0]
    same = torch.zeros(len(batch.rows), 2)  # both states of a pair answered the same way
    assert pair_loss(same, batch, targets, partners(groups)).item() == pytest.approx(math.log(2))
    apart = torch.zeros(len(batch.rows), 2)
    for j, r in enumerate(batch.rows):
        apart[j, targets[r]] = 5.0  # each state prefers its own gold by a margin of 5
    assert pair_loss(apart, batch, targets, partners(groups)).item() == pytest.approx(
        math.log1p(math.exp(-10)), abs=1e-6
    )
    assert pair_loss(same, passes[0], targets, {}) is None


def test_training_reads_several_files_and_declares_its_languages(tmp_path, data, base):
    pairs = _write(tmp_path / "pairs.jsonl", _pair_rows())
    out = train(
        [data, pairs], base, tmp_path / "out", epochs=1, lr=3e-3, batch_size=4, progress=False,
        pair_weight=1.0, languages=["en"],
    )  # fmt: skip
    config = json.loads((out / "rl_agent_config.json").read_text())
    assert config["languages"] == ["en"]
    assert config["training"]["examples"] == len(ROWS) + 2 * len(PAIRS)
    assert len(config["training"]["data_sha256"]) == 2
    agent = laya.load(str(out), device="cpu")
    spanish, english = agent.predict_batch(
        ["Me cobraron dos veces en marzo, por favor devuelvan el duplicado", ROWS[0][0]],
        {"refund": REFUND},
    )
    assert spanish["warnings"][0]["type"] == "language"
    assert spanish["warnings"][0]["language"] == "es"
    assert "warnings" not in english


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('{"state": "x", "questions": ', "malformed JSON"),
        (
            _row("x", "billing", 0, True) | {"questions": {"team": {**TEAM, "type": "pick"}}},
            "questions.team",
        ),
        (_row("x", "sales", 0, True), "answers.team"),
        (_row("x", "billing", 2, True), "answers.urgency"),
        (_row("x", "billing", 0, "yes"), "answers.refund"),
        (_row(" \u200b ", "billing", 0, True), "field 'state': is empty"),
        (
            _row("x", "billing", 0, True) | {"state": {"subject": "", "body": []}},
            "state': is empty",
        ),
    ],
)
def test_bad_input_names_file_line_and_field(tmp_path, base, line, field):
    path = _write(tmp_path / "bad.jsonl", [_row(*ROWS[0]), line])
    with pytest.raises(InvalidRequest) as info:
        train(path, base, tmp_path / "out", progress=False)
    message = str(info.value)
    assert str(path) in message and "line 2" in message and field in message
    assert not (tmp_path / "out").exists()  # nothing written before the data is checked


def test_empty_split_and_cli_exit_code(tmp_path, base, capsys):
    empty = _write(tmp_path / "empty.jsonl", [])
    with pytest.raises(ValueError, match="empty"):
        read_decisions(empty)
    args = [str(empty), "--base", str(base), "--out", str(tmp_path / "out")]
    assert train_main(args) == 2
    assert str(empty) in capsys.readouterr().err


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"epochs": 0}, "epochs must be a whole number of at least 1, got 0"),
        ({"epochs": -1}, "epochs must be a whole number of at least 1, got -1"),
        ({"batch_size": 0}, "batch_size must be a whole number of at least 1"),
        ({"max_len": 2.5}, "max_len must be a whole number of at least 1, got 2.5"),
        ({"threads": -1}, "threads must be a whole number of at least 1, got -1"),
        ({"freeze_layers": -2}, "freeze_layers must be a whole number of at least 0"),
        ({"lr": float("nan")}, "lr must be a finite number above 0, got nan"),
        ({"lr": 0}, "lr must be a finite number above 0, got 0"),
        ({"head_lr": -1e-3}, "head_lr must be a finite number above 0"),
        ({"brier_weight": -0.1}, "brier_weight must be 0 or more"),
        ({"pair_weight": "1"}, "pair_weight must be a number, got '1'"),
        ({"max_len": 513}, "max_len 513 is more than the encoder's 512 token positions"),
    ],
)
def test_bad_settings_are_refused_naming_the_argument_and_write_nothing(
    tmp_path, data, base, setting, message
):
    out = tmp_path / "out"
    with pytest.raises(InvalidRequest, match=re.escape(message)):
        train(data, base, out, progress=False, **setting)
    assert not out.exists()
    if "positions" not in message:  # the encoder's limit is known once the base is read
        with pytest.raises(InvalidRequest, match=re.escape(message)):
            TrainSettings(**setting)


def test_an_out_that_is_a_file_the_base_or_someone_elses_folder_is_refused(
    tmp_path, data, base, capsys
):
    (tmp_path / "file").write_text("x")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("keep me")
    for out, message in [
        (tmp_path / "file", "is a file; name a directory"),
        (base, "is the base checkpoint itself"),
        (tmp_path / "notes", "holds other files (todo.txt); name a new or empty directory"),
    ]:
        assert train_main([str(data), "--base", str(base), "--out", str(out)]) == 2
        assert message in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "notes").iterdir()) == ["todo.txt"]
    assert (tmp_path / "file").read_text() == "x"


def test_a_run_refused_after_it_began_writing_leaves_an_empty_out_empty(tmp_path, data, base):
    many = {"type": "choice", "instructions": "Which?", "criteria": [f"t{i}" for i in range(80)]}
    row = {"state": "x", "questions": {"team": many}, "answers": {"team": "t0"}}
    long_dev = _write(tmp_path / "dev.jsonl", [row])  # 80 option markers do not fit 64 tokens
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(InvalidRequest, match="dev.jsonl"):
        train(data, base, out, dev=long_dev, max_len=64, progress=False)
    assert list(out.iterdir()) == []


# --------------------------------------------------------------------------- evaluation


def test_metrics_on_a_hand_computed_case():
    records = [
        Record("choice", "a", np.array([0.7, 0.2, 0.1]), 0),  # right, brier 0.14
        Record("choice", "a", np.array([0.4, 0.6]), 0),  # wrong, brier 0.72
        Record("noul", "b", np.array([0.2, 0.8]), 1),  # right, brier 0.08
        Record("score", "b", np.array([0.1, 0.3, 0.6]), 1),  # expected 1.5, argmax 2, brier 0.86
    ]
    report = summarise(records)
    assert report["choice"]["accuracy"] == pytest.approx(0.5)
    assert report["noul"]["accuracy"] == pytest.approx(1.0)
    assert report["score"]["mae"] == pytest.approx(0.5)
    assert report["score"]["exact"] == pytest.approx(0.0)
    assert report["brier"] == pytest.approx(0.45)
    # bins of width 1/15: {0.6, 0.6} wrong, {0.7} right, {0.8} right
    assert report["ece"] == pytest.approx(2 / 4 * 0.6 + 1 / 4 * 0.3 + 1 / 4 * 0.2)
    assert report["by_domain"]["a"]["choice"]["n"] == 2
    assert math.isnan(summarise([])["ece"])


def test_types_the_dev_split_does_not_ask_keep_the_base_temperatures():
    from laya.engine.questions import QTYPES, parse_question

    questions = [parse_question(f"q{i}", REFUND) for i in range(30)]
    logits = [np.array([0.0, 4.0]) if i % 10 else np.array([4.0, 0.0]) for i in range(30)]
    targets = [1] * 30  # one in ten confidently wrong: the best noul temperature is about 1.8
    base = [4.0, 5.0, 3.0]
    buckets = {"score:3-5": 5.0, "noul:2": 5.0}
    by_type, by_bucket, _ = train_module.fit_grid_temperatures(
        logits, targets, questions, base, buckets
    )
    assert by_type[QTYPES["score"]] == 5.0 and by_type[QTYPES["choice"]] == 4.0
    assert by_type[QTYPES["noul"]] == pytest.approx(4 / math.log(9), abs=0.01)
    assert by_bucket == {"score:3-5": 5.0, "noul:2": by_type[QTYPES["noul"]]}
    assert train_module.fit_grid_temperatures(logits, targets, questions)[0][QTYPES["score"]] == 1.0


def test_pair_accuracy_counts_a_pair_only_when_both_states_are_right():
    right, wrong = np.array([0.2, 0.8]), np.array([0.8, 0.2])
    records = [
        Record("noul", "a", right, 1, "p1"),
        Record("noul", "a", right, 1, "p1"),  # both right
        Record("noul", "a", right, 1, "p2"),
        Record("noul", "a", right, 0, "p2"),  # one wrong
        Record("noul", "a", right, 1, "p3"),  # no partner: not a pair
        Record("noul", "a", wrong, 1),
    ]
    assert summarise(records)["pairs"] == {"n": 2, "accuracy": 0.5}
    assert summarise(records[-1:])["pairs"] == {"n": 0}


def test_a_pair_id_must_be_a_string(tmp_path):
    path = _write(tmp_path / "bad.jsonl", [_row(*ROWS[0]) | {"pair": 7}])
    with pytest.raises(ValueError, match="line 1, field 'pair'"):
        read_decisions(path)


def test_evaluate_and_the_eval_command(tmp_path, trained, data, capsys):
    report = evaluate(data, str(trained), device="cpu")
    assert report["states"] == len(ROWS) and report["answers"] == 3 * len(ROWS)
    assert report["latency_ms_per_state"] > 0
    assert set(report["by_domain"]) == {"support", "other"}
    out_json, out_png = tmp_path / "report.json", tmp_path / "reliability.png"
    code = eval_main(
        [str(data), "--model", str(trained), "--json", str(out_json), "--plot", str(out_png)]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "choice acc" in printed and "minimal pairs" not in printed
    assert json.loads(out_json.read_text())["answers"] == 3 * len(ROWS)
    assert out_png.stat().st_size > 0
    with pytest.raises(InvalidRequest, match="no labelled rows to score"):
        evaluate([], str(trained))
    many = {"type": "choice", "instructions": "Which?", "criteria": [f"t{i}" for i in range(300)]}
    row = {"state": "x", "questions": {"team": many}, "answers": {"team": "t0"}}
    refused = _write(tmp_path / "many.jsonl", [_row(*ROWS[0]), row])
    with pytest.raises(InvalidRequest, match=r"many\.jsonl, line 2: .*option markers fit"):
        evaluate(refused, str(trained), device="cpu")


# --------------------------------------------------------------------------- laya-mini


@pytest.fixture(scope="module")
def mini():
    if not (BUNDLED["mini"] / "model.safetensors").is_file():
        pytest.skip("laya/models/mini is not in this checkout")
    return laya.load("mini", device="cpu")


@pytest.mark.parametrize(
    ("state", "team"),
    [
        (
            "I was charged twice for my subscription this month. Please refund the duplicate charge.",
            "billing",
        ),
        ("The app crashes every time I open it since the latest update.", "technical"),
    ],
)
def test_mini_routes_support_tickets(mini, state, team):
    result = mini.system_one(state, {"team": TEAM})
    assert result["answers"]["team"]["choice"] == team
    assert "warnings" not in result


@pytest.mark.parametrize(
    ("state", "language"),
    [
        ("Nos cobraron dos veces en marzo, por favor devuelvan el cargo duplicado.", "es"),
        ("3월 요금이 두 번 청구되었습니다. 중복 결제를 환불해 주세요.", "ko"),
    ],
)
def test_mini_warns_that_it_reads_english_only(mini, state, language):
    (warning,) = mini.system_one(state, {"refund": REFUND})["warnings"]
    assert warning["type"] == "language" and warning["language"] == language
    assert "reads en only" in warning["message"]


def test_a_router_passes_minis_language_warning_on(mini):
    """Through a Router (single and batched), mini's answer to a Spanish state keeps its warning."""
    router = laya.Router(default="mini")
    router.attach("mini", mini)
    spanish = "Nos cobraron dos veces en marzo, por favor devuelvan el cargo duplicado."
    english = "We were charged twice in March, please refund the duplicate charge."
    single = router.predict(spanish, {"refund": REFUND}, model="mini")
    assert single["routing"]["model"] == "mini"
    assert single["warnings"][0]["language"] == "es"
    batched = router.predict_batch(
        [{"state": s, "questions": {"refund": REFUND}, "model": "mini"} for s in (spanish, english)]
    )
    assert batched[0]["warnings"][0]["language"] == "es"
    assert "warnings" not in batched[1]


def test_a_file_that_is_not_utf8_or_not_there_is_refused_naming_it(tmp_path):
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes('{"state": "caf\u00e9"}\n'.encode("latin-1"))
    with pytest.raises(InvalidRequest, match=r"latin1.jsonl: not UTF-8 text \(byte 14"):
        read_decisions(latin)
    with pytest.raises(InvalidRequest, match="missing.jsonl: no such data file"):
        read_decisions(tmp_path / "missing.jsonl")


def test_a_file_saved_with_a_byte_order_mark_reads_as_without_one(tmp_path):
    plain = _write(tmp_path / "plain.jsonl", [_row(*ROWS[0])])
    marked = tmp_path / "marked.jsonl"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    assert read_decisions(marked)[0].state == read_decisions(plain)[0].state


def test_a_row_with_a_raw_line_separator_in_a_string_is_one_row(tmp_path):
    row = _row("refund\u2028please", "billing", 0, True)
    path = tmp_path / "sep.jsonl"
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    (example,) = read_decisions(path)
    assert example.state == "refund\u2028please"


# --------------------------------------------------------------------------- the base


def test_the_base_may_be_a_name_as_laya_load_takes_it(base):
    assert base_directory("mini") == BUNDLED["mini"]
    assert base_directory(" MINI ") == BUNDLED["mini"]
    assert base_directory(base) == base


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("englsh", "unknown model 'englsh'; did you mean 'english'?"),
        ("./nowhere", "--base: no checkpoint directory at './nowhere'"),
    ],
)
def test_a_base_that_resolves_nowhere_is_refused_before_anything_is_written(
    tmp_path, data, name, message
):
    with pytest.raises(InvalidRequest, match=message):
        train(data, name, tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


def test_a_folder_that_is_no_checkpoint_or_encoder_is_refused(tmp_path, data, capsys):
    (tmp_path / "notes").mkdir()
    args = [str(data), "--base", str(tmp_path / "notes"), "--out", str(tmp_path / "out")]
    assert train_main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("laya train: error: base ")
    assert "neither a Laya checkpoint (rl_agent_config.json) nor a transformers encoder" in err
    assert not (tmp_path / "out").exists()
