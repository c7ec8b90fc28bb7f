"""What ``fast=True`` and ``precision=`` choose, on this machine and on machines given by flags."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import MODERNBERT, QUESTIONS

import laya
from laya.engine.precision import choose_precision, cpu_flags, native_bf16
from laya.errors import InvalidRequest

ZEN4 = {"avx2", "avx512f", "avx512_bf16", "avx512_vnni"}
SAPPHIRE_RAPIDS = {"avx2", "avx512f", "amx_bf16", "amx_tile"}
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


def test_an_override_the_cpu_cannot_run_warns_once_and_runs_fp32():
    for precision in ("bf16", "fp16"):
        with pytest.warns(RuntimeWarning, match=f"precision='{precision}'.*runs fp32") as seen:
            assert choose_precision("cpu", precision=precision, flags=SKYLAKE) == "fp32"
        assert len(seen) == 1
    assert choose_precision("cpu", precision="bfloat16", flags=ZEN4) == "bf16"
    assert choose_precision("cpu", fast=True, precision="fp32", flags=ZEN4) == "fp32"


@pytest.mark.parametrize("bad", ["int8", "fp64", "turbo"])
def test_an_unknown_precision_is_an_invalid_request_naming_the_field(bad):
    with pytest.raises(InvalidRequest, match="precision"):
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


def test_an_agent_refuses_int8_before_loading_weights():
    with pytest.raises(InvalidRequest, match="int8 is the quantized ONNX graph"):
        laya.load(str(MODERNBERT), device="cpu", precision="int8")
