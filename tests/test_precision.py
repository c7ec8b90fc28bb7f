"""What ``fast=True`` and ``precision=`` choose, on this machine and on machines given by flags."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import MODERNBERT, QUESTIONS

import laya
from laya.engine.precision import choose_precision, cpu_flags, native_bf16, native_int8
from laya.errors import InvalidRequest

ZEN4 = {"avx2", "avx512f", "avx512_bf16", "avx512_vnni"}
SAPPHIRE_RAPIDS = {"avx2", "avx512f", "amx_bf16", "amx_int8", "amx_tile"}
ICE_LAKE = {"avx2", "avx512f", "avx512bw", "avx512_vnni"}  # int8 dot products, no bf16
ALDER_LAKE = {"avx2", "fma", "avx_vnni"}
SKYLAKE = {"avx2", "avx512f", "avx512bw"}
HASWELL = {"avx2", "fma"}


@pytest.mark.parametrize(
    ("flags", "fast", "want"),
    [
        (ZEN4, True, "bf16"),
        (SAPPHIRE_RAPIDS, True, "bf16"),
        (SKYLAKE, True, "fp32"),  # emulated bf16 would be slower than fp32: fast stays fp32
        (HASWELL, True, "fp32"),
        (set(), True, "fp32"),  # no /proc/cpuinfo: counted as without
        (ZEN4, False, "fp32"),
    ],
)
def test_fast_on_a_cpu_picks_bf16_only_where_it_is_native(flags, fast, want):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert choose_precision("cpu", fast=fast, flags=flags) == want


@pytest.mark.parametrize(
    ("flags", "keeps", "want"),
    [
        (ZEN4, True, "int8"),
        (ZEN4, False, "bf16"),  # no fidelity record that allows int8: fast stays on bf16
        (SAPPHIRE_RAPIDS, True, "int8"),
        (ICE_LAKE, True, "int8"),
        (ICE_LAKE, False, "fp32"),
        (ALDER_LAKE, True, "int8"),
        (SKYLAKE, True, "fp32"),  # int8 without VNNI would be slower than fp32
        (HASWELL, True, "fp32"),
        (set(), True, "fp32"),
    ],
)
def test_fast_picks_int8_only_with_vnni_or_amx_and_a_record_that_allows_it(flags, keeps, want):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = choose_precision("cpu", fast=True, flags=flags, int8_keeps_decisions=keeps)
    assert got == want
    assert choose_precision("cpu", fast=False, flags=flags, int8_keeps_decisions=keeps) == "fp32"
    assert (
        choose_precision("cuda", fast=True, amp_dtype="bf16", int8_keeps_decisions=keeps) == "bf16"
    )


@pytest.mark.parametrize("flags", [ZEN4, SAPPHIRE_RAPIDS, ICE_LAKE, ALDER_LAKE])
def test_int8_is_granted_where_the_cpu_has_int8_dot_products(flags):
    assert choose_precision("cpu", precision="int8", flags=flags) == "int8"
    assert choose_precision("cpu", fast=True, precision="INT8", flags=flags) == "int8"


@pytest.mark.parametrize("flags", [SKYLAKE, HASWELL, set()])
def test_int8_is_refused_where_the_cpu_cannot_run_it_fast(flags):
    with pytest.raises(InvalidRequest, match=r"^precision: .*VNNI.*fast=True") as refused:
        choose_precision("cpu", precision="int8", flags=flags)
    assert "precision='fp32'" in str(refused.value)


@pytest.mark.parametrize("device", ["cuda", "mps"])
def test_int8_off_the_cpu_is_refused_naming_the_device(device):
    with pytest.raises(InvalidRequest, match=f"^precision: int8 runs on the CPU only.*{device}"):
        choose_precision(device, precision="int8", flags=ZEN4)


def test_an_override_the_cpu_cannot_run_warns_once_and_runs_fp32():
    for precision in ("bf16", "fp16"):
        with pytest.warns(RuntimeWarning, match=f"precision='{precision}'.*runs fp32") as seen:
            assert choose_precision("cpu", precision=precision, flags=SKYLAKE) == "fp32"
        assert len(seen) == 1
    assert choose_precision("cpu", precision="bfloat16", flags=ZEN4) == "bf16"
    assert choose_precision("cpu", fast=True, precision="fp32", flags=ZEN4) == "fp32"


@pytest.mark.parametrize("bad", ["int4", "fp64", "turbo"])
def test_an_unknown_precision_is_an_invalid_request_naming_the_field(bad):
    with pytest.raises(
        InvalidRequest, match="^precision: .* not one of auto, fp32, bf16, fp16, int8"
    ):
        choose_precision("cpu", precision=bad, flags=ZEN4)


def test_cuda_keeps_the_checkpoint_amp_dtype():
    assert choose_precision("cuda", amp_dtype="bf16") == "bf16"
    assert choose_precision("cuda", fast=True, amp_dtype="fp16") == "fp16"
    assert choose_precision("cuda", amp_dtype="bf16", cuda_capability=7) == "fp16"
    assert choose_precision("cuda", precision="fp32", amp_dtype="bf16") == "fp32"
    assert choose_precision("mps", fast=True) == "fp16"


def test_this_machine_flags_are_read():
    flags = cpu_flags()
    assert isinstance(flags, frozenset)
    assert native_bf16(flags) == any(f in flags for f in ("avx512_bf16", "amx_bf16"))
    assert native_int8(flags) == any(f in flags for f in ("avx512_vnni", "avx_vnni", "amx_int8"))


@pytest.mark.numbers
def test_the_agent_says_what_it_runs_and_fast_answers_near_fp32():
    exact = laya.load(str(MODERNBERT), device="cpu")
    fast = laya.load(str(MODERNBERT), device="cpu", fast=True)
    assert exact.precision == "fp32"
    assert fast.precision == choose_precision("cpu", fast=True)
    a = exact.system_one("We were billed twice, please refund.", QUESTIONS)
    b = fast.system_one("We were billed twice, please refund.", QUESTIONS)
    assert a["answers"].keys() == b["answers"].keys()
    for qid, answer in a["answers"].items():
        assert np.isclose(answer["confidence"], b["answers"][qid]["confidence"], atol=0.1)


def test_an_agent_asked_for_fp16_on_a_cpu_warns_and_runs_fp32():
    with pytest.warns(RuntimeWarning, match="precision='fp16'"):
        agent = laya.load(str(MODERNBERT), device="cpu", precision="fp16")
    assert agent.precision == "fp32"
    assert agent.system_one("hello", QUESTIONS)["answers"]


def test_an_agent_refuses_int8_on_a_cpu_without_vnni_before_loading_weights(monkeypatch):
    monkeypatch.setattr("laya.engine.precision.cpu_flags", lambda: frozenset(SKYLAKE))
    with pytest.raises(InvalidRequest, match="^precision: int8 runs fast only"):
        laya.load(str(MODERNBERT), device="cpu", precision="int8")


# --------------------------------------------------------------------------- int8 on PyTorch

INT8 = pytest.mark.skipif(
    not native_int8(cpu_flags()), reason="this CPU has no VNNI or AMX: int8 is refused here"
)


@INT8
@pytest.mark.numbers
def test_an_int8_linear_is_per_channel_weights_times_per_token_inputs():
    """The oneDNN product equals the same quantization done in float, row by row."""
    import torch

    from laya.engine.backends.int8 import Int8Linear

    torch.manual_seed(0)
    linear = torch.nn.Linear(96, 40)
    x = torch.randn(3, 7, 96)
    x[0, 2] *= 50  # one loud token: per-token scales keep it from drowning the others
    w, b = linear.weight.detach(), linear.bias.detach()
    w_step = w.abs().amax(1, keepdim=True) / 127
    x_step = x.abs().amax(-1, keepdim=True) / 127
    want = (torch.round(x / x_step) @ torch.round(w / w_step).T) * x_step * w_step.T + b
    got = Int8Linear.of(linear)(x)
    assert got.shape == (3, 7, 40) and got.dtype == torch.float32
    assert torch.allclose(got, want, rtol=1e-5, atol=1e-4)
    alone = Int8Linear.of(linear)(x[1:2, 3:4])  # a token's answer does not depend on its pass
    assert torch.equal(alone[0, 0], got[1, 3])


@INT8
@pytest.mark.numbers
def test_an_int8_agent_says_so_and_goes_back_to_the_exact_answers():
    exact = laya.load(str(MODERNBERT), device="cpu")
    agent = laya.load(str(MODERNBERT), device="cpu", precision="int8")
    assert agent.precision == "int8" and agent.torch_backend.packed
    state = "We were billed twice, please refund."
    assert agent.system_one(state, QUESTIONS)["answers"].keys() == QUESTIONS.keys()
    agent.torch_backend.use_precision("fp32")  # the checkpoint's own weights again
    assert agent.precision == "fp32"
    assert agent.system_one(state, QUESTIONS) == exact.system_one(state, QUESTIONS)


@INT8
def test_int8_runs_eager_and_compile_is_refused_naming_the_fix():
    with pytest.raises(InvalidRequest, match="^precision: int8 runs the eager backend.*compile"):
        laya.load(str(MODERNBERT), device="cpu", precision="int8", compile=True)
    agent = laya.load(str(MODERNBERT), device="cpu", precision="int8")
    with pytest.raises(InvalidRequest, match="^precision: int8 runs the eager backend"):
        agent.set_backend("compile", warmup=False)


# --------------------------------------------------------------------------- the fidelity record


def write_record(directory, flipped=2, decisions=400, **changes):
    """A fidelity record for the checkpoint in ``directory`` as benchmarks/fidelity.py writes it."""
    import json

    from laya.checkpoint import file_sha256
    from laya.checkpoint.fidelity import FIDELITY_FILE, RECORD_FORMAT
    from laya.engine.backends.int8 import RECIPE

    files = {"test.jsonl": {"decisions": decisions, "flipped": flipped, "max_abs_dp": 0.03}}
    record = {
        "format": RECORD_FORMAT,
        "weights_sha256": file_sha256(directory / "model.safetensors"),
        "precisions": {"int8": {"recipe": RECIPE, "files": files}},
        **changes,
    }
    (directory / FIDELITY_FILE).write_text(json.dumps(record))


@pytest.fixture
def checkpoint_copy(tmp_path):
    import shutil

    target = tmp_path / "ckpt"
    shutil.copytree(MODERNBERT, target)
    return target


def test_the_record_allows_int8_only_for_these_weights_this_recipe_and_few_flips(checkpoint_copy):
    from laya.checkpoint.fidelity import keeps_decisions
    from laya.engine.backends.int8 import RECIPE

    def allowed() -> bool:
        return keeps_decisions(
            checkpoint_copy, checkpoint_copy / "model.safetensors", "int8", RECIPE
        )

    assert not allowed()  # no record
    write_record(checkpoint_copy, flipped=4, decisions=400)  # 1 in 100: allowed
    assert allowed()
    write_record(checkpoint_copy, flipped=5, decisions=400)
    assert not allowed()
    write_record(checkpoint_copy, weights_sha256="0" * 64)  # measured on other weights
    assert not allowed()
    write_record(checkpoint_copy)
    assert not keeps_decisions(
        checkpoint_copy, checkpoint_copy / "model.safetensors", "int8", "another-recipe"
    )
    (checkpoint_copy / "fidelity.json").write_text("{not json")
    with pytest.warns(RuntimeWarning, match="fidelity.json is unreadable.*--record"):
        assert not allowed()


@INT8
def test_fast_runs_int8_where_the_record_allows_it_and_health_says_so(checkpoint_copy):
    without = laya.load(str(checkpoint_copy), device="cpu", fast=True)
    assert without.precision == choose_precision("cpu", fast=True)  # bf16 on this CPU, not int8
    write_record(checkpoint_copy)
    assert laya.load(str(checkpoint_copy), device="cpu", fast=True).precision == "int8"
    assert laya.load(str(checkpoint_copy), device="cpu").precision == "fp32"
    write_record(checkpoint_copy, flipped=40)
    assert laya.load(str(checkpoint_copy), device="cpu", fast=True).precision != "int8"


# --------------------------------------------------------------------------- laya serve


def test_serve_reads_precision_from_the_flag_or_the_variable(monkeypatch):
    from laya.server import settings_from
    from laya.server.settings import SettingsError

    assert settings_from([], {}).precision is None
    assert settings_from([], {"LAYA_PRECISION": "bfloat16"}).precision == "bf16"
    assert settings_from(["--precision", "fp32"], {"LAYA_PRECISION": "bf16"}).precision == "fp32"
    assert settings_from(["--precision", "auto"], {}).precision is None
    with pytest.raises(SettingsError, match="^--precision='turbo': must be one of auto, fp32"):
        settings_from(["--precision", "turbo"], {})
    monkeypatch.setattr("laya.engine.precision.cpu_flags", lambda: frozenset(HASWELL))
    with pytest.raises(SettingsError, match="^LAYA_PRECISION='int8': int8 runs fast only .*VNNI"):
        settings_from([], {"LAYA_PRECISION": "int8"})


@INT8
def test_serve_precision_int8_answers_and_health_names_it():
    import httpx
    from test_server import ENGLISH, served

    from laya.server import create_app, settings_from

    argv = ["--precision", "int8", "--models", f"bench={MODERNBERT}", "--model", "bench"]
    settings = settings_from([*argv, "--device", "cpu"], {})
    with served(create_app(settings=settings)) as base:
        health = httpx.get(base + "/health").json()
        answer = httpx.post(base + "/v1/systemone", json={"state": ENGLISH, "questions": QUESTIONS})
    assert health["precision"] == {"bench": "int8"}
    assert answer.status_code == 200, answer.text


# --------------------------------------------------------------------------- int8 fidelity

# The fixtures are tiny random checkpoints, far less well conditioned than a trained one: bf16
# alone moves tiny-modernbert's option probabilities by up to 0.056 and tiny-bert's act
# probabilities by 0.98. So the bound there is on option probabilities (act probabilities left
# out), about what int8 was measured at, and a decision may only change where the golden one is
# a near tie; mini, a trained checkpoint, is held to the acceptance bound of its decisions.
FIXTURE_BOUND = {"tiny-modernbert": 0.15, "tiny-bert": 0.05, "tiny-parallel": 0.05}
MINI_BOUND = 0.05


def option_probabilities(result: dict) -> dict[str, list[float]]:
    """Each answer's option distribution, in order (noul: [false, true])."""
    out = {}
    for qid, answer in result["answers"].items():
        if "noul" in answer:
            out[qid] = [1 - answer["noul"], answer["noul"]]
        else:
            out[qid] = list(answer["probabilities"].values())
    return out


@INT8
@pytest.mark.numbers
@pytest.mark.parametrize("fixture", list(FIXTURE_BOUND))
def test_int8_answers_the_golden_cases_within_the_fixture_bound(fixture):
    from conftest import FIXTURES, load_cases
    from golden import as_json, run_case

    bound = FIXTURE_BOUND[fixture]
    agent = laya.load(str(FIXTURES / fixture / "checkpoint"), device="cpu", precision="int8")
    for case in load_cases(fixture):
        expected, got = case["expected"], as_json(run_case(agent, case))
        for want, have in zip(*(r if isinstance(r, list) else [r] for r in (expected, got))):
            golden, answered = option_probabilities(want), option_probabilities(have)
            for qid, probabilities in golden.items():
                assert np.abs(np.subtract(probabilities, answered[qid])).max() <= bound, qid
                top = sorted(probabilities)[-2:]  # one option: nothing can flip
                if len(top) < 2 or top[1] - top[0] > 2 * bound:  # not a near tie: it stays
                    assert np.argmax(answered[qid]) == np.argmax(probabilities), qid


@INT8
@pytest.mark.numbers
def test_int8_keeps_minis_decisions_on_a_slice_of_its_test_split():
    """The acceptance bound (docs/performance.md#int8): at most 1 decision in 100 flipped
    against fp32, no probability moved by more than 0.05; here on the first 24 labelled rows."""
    from pathlib import Path

    from laya.training.evaluate import answer_probs, read_decisions

    rows = read_decisions(Path(__file__).parents[1] / "data" / "decisions" / "test.jsonl")[:24]
    exact, int8 = (laya.load("mini", device="cpu", precision=p) for p in ("fp32", "int8"))
    flips, moved, decisions = 0, 0.0, 0
    for row in rows:
        a, b = (r.predict(row.state, row.raw_questions) for r in (exact, int8))
        for question in row.questions:
            p, q = (answer_probs(question, r["answers"][question.qid]) for r in (a, b))
            flips += int(np.argmax(p) != np.argmax(q))
            moved = max(moved, float(np.abs(p - q).max()))
            decisions += 1
    assert flips <= decisions // 100 and moved <= MINI_BOUND, (flips, decisions, moved)
