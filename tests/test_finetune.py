"""The published runtime's fine-tuning API over laya's loop (``laya.train``: finetune, TrainConfig,
dry_run) and ``laya train --data FILE`` (the ``laya-train`` script), JSONL with ``expected`` or
CSV, on a tiny random checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import laya
from laya.checkpoint.testing import random_checkpoint
from laya.errors import InvalidRequest
from laya.training.finetune import SKIP_REASONS, TrainConfig, dry_run, finetune, rows_from_csv
from laya.training.train_command import main as train_main

TEAM = {"type": "choice", "instructions": "Which team?", "criteria": ["billing", "technical"]}
URGENT = {"type": "noul", "instructions": "Is this urgent?"}
CSV = "\ufefftext,label\n" + "".join(
    f"{text} {i},{label}\n"
    for i in range(12)
    for text, label in (("refund the payment", "billing"), ("the app crashes", "technical"))
)


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return random_checkpoint(
        tmp_path_factory.mktemp("base") / "ckpt", encoder="bert", hidden_size=32, layers=1
    )


@pytest.fixture(scope="module")
def csv_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("data") / "tickets.csv"
    path.write_text(CSV, encoding="utf-8")
    return path


def test_csv_rows_become_one_choice_question_with_labels_in_order(csv_file):
    from laya.train import rows_from_csv as published  # the published runtime's module name

    assert published is rows_from_csv
    rows = rows_from_csv(str(csv_file))
    assert len(rows) == 24
    question = rows[0]["questions"]["label"]
    assert question["type"] == "choice" and question["criteria"] == ["billing", "technical"]
    assert rows[1]["expected"] == {"label": "technical"}


def test_dry_run_counts_rows_and_updates_without_training(csv_file, base, capsys):
    counts = dry_run(str(csv_file), str(base), TrainConfig(micro_batch=2, grad_accum=2))
    assert counts["rows"] == 24 and counts["train_questions"] == counts["train_rows"]
    assert counts["optimizer_updates"] >= 1
    assert "optimizer updates" in capsys.readouterr().out


def test_dry_run_prints_item_counts_and_the_update_budget(csv_file, base, capsys):
    """surface.md 3.6: ``dry_run`` (and ``laya train --dry-run`` / ``laya-train --dry-run``)
    reads the tokenizer only and prints the item counts and the optimizer-update budget, the
    published ``optimizer_updates(n_items, micro_batch, grad_accum, epochs)``."""
    from laya.train import optimizer_updates

    config = TrainConfig(micro_batch=2, grad_accum=3, epochs=2)
    counts = dry_run(str(csv_file), str(base), config)
    printed = capsys.readouterr().out.splitlines()
    updates = optimizer_updates(counts["train_questions"], 2, 3, 2)
    assert counts["optimizer_updates"] == updates == 2 * -(-counts["train_questions"] // 6)
    assert printed[0].startswith(f"{counts['rows']} rows: {counts['train_rows']} to train on")
    assert printed[-1].startswith(
        f"{counts['train_questions']} training questions, 6 per update, 2 epochs: "
        f"{updates} optimizer updates"
    )
    flags = ["--data", str(csv_file), "--base", str(base), "--micro-batch", "2"]
    assert train_main([*flags, "--grad-accum", "3", "--epochs", "2", "--dry-run"]) == 0
    assert capsys.readouterr().out.splitlines() == printed


def test_unusable_questions_are_skipped_and_counted_by_reason(tmp_path, base):
    rows = [
        {"state": "refund me", "questions": {"team": TEAM}, "expected": {"team": "billing"}},
        {"state": "crash", "questions": {"team": TEAM}, "expected": {"team": "nobody"}},
        {"state": "down", "questions": {"urgent": URGENT}, "expected": {"urgent": "yes"}},
    ]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    counts = dry_run(str(data), str(base))
    assert counts["rows"] == 2
    assert set(counts["skipped"]) <= set(SKIP_REASONS) and sum(counts["skipped"].values()) == 1


def test_a_setting_laya_cannot_honour_is_refused_naming_it(csv_file, base):
    for bad, field in (
        ({"label_smoothing": 0.1}, "label_smoothing"),
        ({"epochs": 0}, "epochs"),
        ({"loss": "mse"}, "loss"),
    ):
        with pytest.raises(InvalidRequest, match=field):
            dry_run(str(csv_file), str(base), TrainConfig(**bad))


def test_finetune_writes_a_checkpoint_laya_loads_and_a_report(csv_file, base, tmp_path):
    out = tmp_path / "tuned"
    config = TrainConfig(epochs=1, micro_batch=4, grad_accum=1, min_abstain_n=1000)
    summary = finetune(str(csv_file), str(base), str(out), config, device="cpu", progress=False)
    assert summary["output_dir"] == str(out)
    assert json.loads((out / "train_report.json").read_text())["rows"] == 24
    assert json.loads((out / "questions.json").read_text())[0]["label"]["type"] == "choice"
    answer = laya.load(str(out)).predict("refund the payment", {"team": TEAM})
    assert sum(answer["answers"]["team"]["probabilities"].values()) == pytest.approx(1, abs=2e-4)


def test_the_objective_is_the_configs_loss(csv_file, base, tmp_path):
    """loss="rlcd" (the default) trains on the RLCD objective, recorded in the checkpoint's
    training settings; "soft-ce" on the log loss: from one seed, two different models."""
    billing = {}
    for loss in ("rlcd", "soft-ce"):
        out = tmp_path / loss
        config = TrainConfig(epochs=1, micro_batch=4, grad_accum=1, min_abstain_n=1000, loss=loss)
        finetune(str(csv_file), str(base), str(out), config, device="cpu", progress=False)
        training = json.loads((out / "rl_agent_config.json").read_text())["training"]
        assert ("rlcd" in training) is (loss == "rlcd")
        answer = laya.load(str(out)).predict("refund the payment", {"team": TEAM})
        billing[loss] = answer["answers"]["team"]["probabilities"]["billing"]
    assert TrainConfig().loss == "rlcd"
    assert json.loads((tmp_path / "rlcd" / "rl_agent_config.json").read_text())["training"][
        "rlcd"
    ] == {"samples": 4, "sigma_start": 0.4, "sigma_end": 0.1}
    assert abs(billing["rlcd"] - billing["soft-ce"]) > 1e-6


def test_the_rates_decay_on_a_cosine_to_min_lr_or_linearly_to_zero(base):
    """finetune's schedule (min_lr): warm-up, then a cosine to min_lr; laya train's: to zero."""
    from laya.training.run_files import load_checkpoint
    from laya.training.train import optimizer_for

    model = load_checkpoint(str(base))[0]
    for min_lr, last in ((1e-6, 1e-6), (None, 0.0)):
        optimizer, scheduler = optimizer_for(model, 2.5e-5, 1e-4, 100, 0.01, min_lr)
        rates = []
        for _ in range(100):
            rates.append(optimizer.param_groups[1]["lr"])
            optimizer.step()
            scheduler.step()
        peak = rates.index(max(rates))
        assert rates[peak] == pytest.approx(1e-4, rel=1e-6)
        assert rates[: peak + 1] == sorted(rates[: peak + 1])  # the warm-up rises
        assert rates[peak:] == sorted(rates[peak:], reverse=True)  # then the decay falls
        assert optimizer.param_groups[1]["lr"] == pytest.approx(last, abs=1e-12)
        halfway = rates[peak + (100 - peak) // 2]  # both schedules halfway down at half time
        assert halfway == pytest.approx((1e-4 + last) / 2, rel=0.05)


def test_finetune_warns_of_weak_calibration_on_its_calibration_slice(base, tmp_path):
    rows = [
        {"state": f"{text} {i}", "questions": {"team": TEAM}, "expected": {"team": label}}
        for i in range(120)
        for text, label in (("refund the payment", "billing"), ("the app crashes", "technical"))
    ]
    data = tmp_path / "tickets.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    config = TrainConfig(epochs=1, micro_batch=8, grad_accum=1, min_abstain_n=1000)
    with pytest.warns(RuntimeWarning, match="choice temperatures were fitted on 24 answers"):
        summary = finetune(str(data), str(base), str(tmp_path / "out"), config, progress=False)
    assert summary["calibration_rows"] == 24
    assert any("fewer than 50" in message for message in summary["warnings"])


def test_laya_train_data_form(csv_file, base, tmp_path, capsys):
    assert train_main(["--data", str(csv_file), "--base", str(base), "--dry-run"]) == 0
    assert "24 rows" in capsys.readouterr().out
    out = str(tmp_path / "never")
    mixed = ["--data", str(csv_file), "--base", str(base), "--out", out, "--dev", str(csv_file)]
    assert train_main(mixed) == 2
    assert "--dev" in capsys.readouterr().err
    assert train_main(["--data", str(csv_file), "--base", str(base)]) == 2
    assert "--out" in capsys.readouterr().err
    assert not Path(out).exists()
