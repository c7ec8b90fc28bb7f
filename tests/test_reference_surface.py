"""The published runtime's public surface, name by name, on the tiny fixture checkpoints.

Every module path, top-level name and signature of the published laya 0.4.15 in scope here (see
docs/migrating.md) exists; positional orders are the published ones except where the hooks
contract (docs/hooks/api.md) spells its own; and the published functions give the numbers laya's
own calls give (within 2e-4), on the golden cases where they apply.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import math
import shutil
import types
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import BERT, MODERNBERT, QUESTIONS, SNAPSHOT_COMMIT, load_cases
from golden import TOLERANCE, assert_close, assert_matches, run_case

import laya
from laya.engine.strategies.tournament import ChoiceMode
from laya.errors import (
    BackendUnavailable,
    CheckpointError,
    InvalidRequest,
    LayaGuardrailError,
)
from laya.hooks import BaseHook, PredictContext

STATE = "The customer wants a refund for a double charge on the invoice."

# ------------------------------------------------------------------ the published signatures
# Parameter names in order, as the published runtime's introspection lists them: "*" starts the
# keyword-only ones, "**" is a **kwargs. (Transcribed from the published surface: nothing reads
# it at test time.)
HOOK_CALL = "hooks, on_predict_start, on_predict_end, hooks_raise, hooks_timeout"
AGENT_INIT = (
    "model_id_or_path, device, token, subfolder, fast, compile, revision, expected_sha256, "
    "lang_temperatures, hooks, on_predict_start, on_predict_end, hooks_raise, hooks_concurrent, "
    "hooks_timeout, calibration, backend, compile_warmup, compile_cache, compile_mode"
)
DECIDE = "state, schema, *, questions, return_details, min_confidence, **"
DECIDE_BATCH = "states, schema, *, questions, return_details, min_confidence, **"
PREDICT = f"state, questions, lang, {HOOK_CALL}, max_len, head_max_len, min_confidence"
PREDICT_BATCH = (
    f"states, questions, batch_size, lang, {HOOK_CALL}, max_len, head_max_len, sort_by_length, "
    "min_confidence"
)
PREDICT_LONG = f"state, questions, window, stride, aggregate, batch_size, lang, {HOOK_CALL}"
ROUTER_PREDICT = (
    f"state, questions, model, task, lang, lang_guess, {HOOK_CALL}, max_len, head_max_len, "
    "min_confidence"
)
ROUTER_BATCH = (
    "requests, batch_size, hooks_timeout, min_confidence, sort_by_length, *, hooks, "
    "on_predict_start, on_predict_end, hooks_raise, diagnostics"
)
AGENT_METHODS = {
    "accelerate": "use_graphs, strict",
    "deaccelerate": "",
    "decide": DECIDE,
    "decide_batch": DECIDE_BATCH,
    "dtype_for": "rows",
    "fit_binning": "records, min_bucket_n",
    "fit_temperatures": "records, compute_ece, seed",
    "load_calibration": "path",
    "predict": PREDICT,
    "predict_batch": PREDICT_BATCH,
    "predict_long": PREDICT_LONG,
    "save_calibration": "path",
    "set_backend": "name, strict, **",
    "system_one": PREDICT,
    "warmup": "shapes",
}
PUBLISHED = {
    "laya.load": AGENT_INIT.replace("compile_warmup", "onnx_path, compile_warmup"),
    "laya.Agent": AGENT_INIT,
    **{f"laya.Agent.{name}": params for name, params in AGENT_METHODS.items()},
    "laya.RLAgent.decide": DECIDE,
    "laya.ONNXAgent": (
        "model_id_or_path, onnx_path, token, subfolder, revision, expected_sha256, hooks, "
        "on_predict_start, on_predict_end, hooks_raise, hooks_concurrent, hooks_timeout, "
        "lang_temperatures, calibration"
    ),
    "laya.ONNXAgent.decide": DECIDE,
    "laya.ONNXAgent.decide_batch": DECIDE_BATCH,
    "laya.ONNXAgent.load_calibration": "path",
    "laya.ONNXAgent.predict": PREDICT,
    "laya.ONNXAgent.predict_batch": PREDICT_BATCH,
    "laya.ONNXAgent.predict_long": PREDICT_LONG,
    "laya.Router": (
        "models, device, token, revision, revisions, max_loaded, default, auto_task_detection, "
        "standalone_repos, preload, lang_guess, hooks, on_predict_start, on_predict_end, "
        "hooks_raise, hooks_concurrent, hooks_timeout, agent_kwargs, sha256_digests"
    ),
    "laya.Router.attach": "name, agent",
    "laya.Router.decide": DECIDE,
    "laya.Router.decide_batch": DECIDE_BATCH,
    "laya.Router.load": "name",
    "laya.Router.predict": ROUTER_PREDICT,
    "laya.Router.system_one": ROUTER_PREDICT,
    "laya.Router.predict_batch": ROUTER_BATCH,
    "laya.Router.predict_many": ROUTER_BATCH,
    "laya.Router.predict_long": (
        "state, questions, model, task, lang, lang_guess, window, stride, aggregate, "
        f"batch_size, {HOOK_CALL}"
    ),
    "laya.Router.preload": "names",
    "laya.Router.register": "name, source, description",
    "laya.Router.resolve": "name",
    "laya.Router.route": (
        "state, questions, model, task, lang, lang_guess, hooks, hooks_raise, hooks_timeout, "
        "*, explain"
    ),
    "laya.Router.route_batch": "requests, hooks_timeout, *, hooks, hooks_raise, explain",
    "laya.Router.unload": "name",
    "laya.Router.unregister": "name",
    "laya.decide": f"runner, {DECIDE}",
    "laya.decide_batch": f"runner, {DECIDE_BATCH}",
    "laya.predict_tournament": "agent, state, questions, group_size, **",
    "laya.predict_shortlist": "agent, state, questions, embed_fn, k, **",
    "laya.shortlist_choice": "state, criteria, embed_fn, k, *, instructions, return_scores",
    "laya.embed_fn_from_agent": "agent, max_length, batch_size",
    "laya.cached_embed_fn": "embed_fn, maxsize",
    "laya.proper_reward": "q, target, qtype, mask, w_sph, w_rps, log_floor",
    "laya.td_lambda_targets": "p_true, batch, lam",
    "laya.ece_score": "conf, correct, bins",
    "laya.answer_confidence": "p, k",
    "laya.confidence_from_probs": "p, k",
    "laya.render_options": "q",
    "laya.clean_email_body": "body, max_chars",
    "laya.email_state": "subject, body, sender, clean, max_chars, **",
    "laya.email_questions": "categories",
    "laya.fit_abstention_thresholds": (
        "records, temperature, temperature_by_options, *, binning_map, target_error, "
        "min_bucket_n, conservative"
    ),
    "laya.fit_binning_map": ("records, temperature, temperature_by_options, *, bins, min_bucket_n"),
    "laya.fit_one_temperature": "pairs, min_n",
    "laya.fit_temperature_map": "records, compute_ece, seed",
    "laya.fit_temperatures": "records, compute_ece, seed",
    "laya.apply_binning_map": "confidence, bucket, binning_map",
    "laya.apply_confidence_gate": "results, min_confidence",
    "laya.check_min_confidence": "v",
    "laya.check_min_confidence_map": "m",
    "laya.flag_low_confidence": "results, min_confidence",
    "laya.resolve_min_confidence": "answer, thresholds, default",
    "laya.jev_confidence": "answer",
    "laya.detect_language": "state, *, explain",
    "laya.detect_script": "text",
    "laya.is_english": "state",
    "laya.OptionStabilityHook": (
        "*, accept, escalate, probes, n_shuffles, relabel, rename_max_options, variants, seed"
    ),
    "laya.DecisionResult": (
        "values, confidence, probabilities, answers, usage, routing, answer_confidence"
    ),
    "laya.calibrate.calibration_payload": (
        "temperature, temperature_by_options, model_id_or_path, subfolder, config, binning_map"
    ),
    "laya.calibrate.apply_calibration_payload": "obj, payload",
    "laya.calibrate.records_from_labeled": "agent, pairs",
    "laya.revisions.resolve_revision": "model_id_or_path, revision",
    "laya.revisions.snapshot_revision": "path",
    "laya.revisions.verify_digests": "model_dir, expected, onnx_path",
    "laya.structured.answer_to_pydantic": "model, answers",
    "laya.structured.answers_to_json": "answers, schema",
    "laya.structured.plan_from_json_schema": "schema",
    "laya.structured.questions_from_json_schema": "schema",
    "laya.structured.questions_from_pydantic": "model",
    "laya.common.temp_bucket": "qtype, k",
    "laya.common.serialize_state": "state",
    "laya.confidence.answer_confidence_value": "answer",
    "laya.confidence.bucket_keys": "",
    "laya.hooks.make_variants": "labels, seed_key, n_shuffles, relabel, include, reorder",
    "laya.hooks.decide_reliability": "soft_stability, accept, escalate",
    "laya.hooks.calibrate_reliability": (
        "soft_scores, correct, target_accuracy, max_escalate_accuracy"
    ),
    "laya.router.normalise_name": "name",
    "laya.router.resolve_model_spec": "name",
    "laya.router.canonical_name": "name",
    "laya.router.check_agent_kwargs": "agent_kwargs",
    "laya.router.match_typed_decisions_workflow": "questions",
    "laya.lang.analyse": "state, *, explain",
    "laya.lang.guess_latin_language": "text",
    "laya.lang.latin_profile": "text",
    "laya.lang.script_profile": "text",
    "laya.lang.state_text": "state, max_chars",
    "laya.presets.state_field": "questions",
}
# Where the hooks contract (docs/hooks/api.md) spells the positional order, it wins: these
# callables take these parameters first, and the published ones' other parameters after them.
CONTRACT = {
    "laya.Agent": (
        "model_id_or_path, device, token, subfolder, fast, compile, hooks, on_predict_start, "
        "on_predict_end, hooks_raise, hooks_concurrent, hooks_timeout"
    ),
    "laya.Agent.predict_batch": (
        "states, questions, batch_size, hooks, on_predict_start, on_predict_end, hooks_raise, "
        "hooks_timeout, max_len, head_max_len, sort_by_length"
    ),
    "laya.Agent.system_one": (
        "state, questions, hooks, on_predict_start, on_predict_end, hooks_raise, hooks_timeout, "
        "max_len, head_max_len"
    ),
    "laya.ONNXAgent": (
        "model_id_or_path, onnx_path, subfolder, hooks, on_predict_start, on_predict_end, "
        "hooks_raise, hooks_concurrent"
    ),
    "laya.Router": (
        "models, device, token, max_loaded, default, auto_task_detection, standalone_repos, "
        "preload, lang_guess, hooks, on_predict_start, on_predict_end, hooks_raise, "
        "hooks_concurrent"
    ),
    "laya.Router.predict_batch": (
        "requests, batch_size, hooks_timeout, min_confidence, sort_by_length, hooks, "
        "on_predict_start, on_predict_end, hooks_raise"
    ),
    "laya.Router.route": "state, questions, model, task, lang, lang_guess, hooks, hooks_raise",
    "laya.Router.route_batch": "requests, hooks, hooks_raise, hooks_timeout",
}
for _name in ("predict", "system_one"):
    CONTRACT[f"laya.Agent.{_name}"] = CONTRACT["laya.Agent.system_one"]
    CONTRACT[f"laya.ONNXAgent.{_name}"] = CONTRACT["laya.Agent.system_one"]
CONTRACT["laya.ONNXAgent.predict_batch"] = CONTRACT["laya.Agent.predict_batch"]
CONTRACT["laya.Router.predict_many"] = CONTRACT["laya.Router.predict_batch"]
# ``load`` mirrors the Agent's contract order too: it is the Agent's constructor by another name.
DEFAULTS = {
    "laya.load": {"model_id_or_path": "convaiinnovations/laya", "compile_mode": "default"},
    "laya.Agent": {"backend": None, "compile_warmup": True, "compile_cache": False},
    "laya.predict_tournament": {"group_size": 16},
    "laya.predict_shortlist": {"k": 20},
    "laya.shortlist_choice": {"k": 20, "return_scores": False},
    "laya.embed_fn_from_agent": {"max_length": 512, "batch_size": 32},
    "laya.cached_embed_fn": {"maxsize": 4096},
    "laya.clean_email_body": {"max_chars": 3000},
    "laya.proper_reward": {"w_sph": 0.5, "w_rps": 1.0, "log_floor": -9.21},
    "laya.fit_binning_map": {"bins": 15, "min_bucket_n": 200},
    "laya.fit_abstention_thresholds": {"target_error": 0.1, "min_bucket_n": 100},
    "laya.Agent.fit_binning": {"min_bucket_n": 200},
    "laya.Agent.set_backend": {"name": "auto", "strict": False},
    "laya.Router": {"max_loaded": 2, "default": "english"},  # the contract's default
}
# The published __all__ (the framework classes are checked on their own: FRAMEWORK_CLASSES).
PUBLISHED_ALL = [
    "Agent",
    "AsyncHook",
    "BaseHook",
    "DEFAULT_MODELS",
    "DecisionResult",
    "GATE_STATES",
    "Hook",
    "LayaGuardrailError",
    "OptionStabilityHook",
    "PINNED_REVISIONS",
    "PredictContext",
    "PredictHook",
    "QTYPES",
    "QTYPE_NAMES",
    "RLAgent",
    "RouteDecision",
    "Router",
    "__version__",
    "answer_confidence",
    "apply_binning_map",
    "apply_confidence_gate",
    "cached_embed_fn",
    "check_min_confidence",
    "check_min_confidence_map",
    "clean_email_body",
    "confidence",
    "confidence_from_probs",
    "decide",
    "decide_batch",
    "detect_language",
    "detect_script",
    "ece_score",
    "email",
    "email_questions",
    "email_state",
    "embed_fn_from_agent",
    "fit_abstention_thresholds",
    "fit_binning_map",
    "fit_one_temperature",
    "fit_temperature_map",
    "fit_temperatures",
    "flag_low_confidence",
    "guard_questions",
    "hooks",
    "is_english",
    "jev_confidence",
    "lang",
    "load",
    "moderation_questions",
    "predict_shortlist",
    "predict_tournament",
    "presets",
    "proper_reward",
    "render_options",
    "resolve_min_confidence",
    "router",
    "router_questions",
    "shortlist_choice",
    "structured",
    "td_lambda_targets",
    "triage_questions",
]
FRAMEWORK_CLASSES = ("LayaDecision", "LayaEvaluator", "LayaGuardrail", "LayaRouter", "LayaTriage")
MODULE_NAMES = {
    "laya.agent": "Agent RLAgent load QTYPES TEMP_MAX TEMP_MIN",
    "laya.onnx_agent": "ONNXAgent QTYPES TEMP_MAX TEMP_MIN",
    "laya.structured": (
        "DecisionResult SchemaError answer_to_pydantic answers_to_json decide decide_batch "
        "plan_from_json_schema questions_from_json_schema questions_from_pydantic"
    ),
    "laya.confidence": (
        "BUCKET_QTYPES BUCKET_SIZES DEFAULT_BUCKET_KEY GATE_ABSTAINED GATE_PASSED GATE_STATES "
        "GATE_UNEVALUATED answer_confidence_value apply_confidence_gate bucket_keys "
        "check_min_confidence check_min_confidence_map flag_low_confidence jev_confidence "
        "resolve_min_confidence"
    ),
    "laya.calibrate": (
        "CALIBRATION_VERSION ECE_HOLDOUT_FRAC MIN_ABSTAIN_BUCKET_N MIN_BINNING_BUCKET_N "
        "MIN_BUCKET_N MIN_TYPE_N N_QTYPES QTYPES QTYPE_NAMES TEMP_MAX TEMP_MIN apply_binning_map "
        "apply_calibration_payload calibration_payload fit_abstention_thresholds fit_binning_map "
        "fit_one_temperature fit_temperature_map fit_temperatures records_from_labeled"
    ),
    "laya.email": "clean_email_body email_state",
    "laya.serve": (
        "BATCH_BODY_CALL_CONTROLS BATCH_BODY_ITEM_CONTROLS BATCH_BODY_OUT_PARAMETERS BODY_CONTROLS "
        "BODY_REFUSALS DEFAULT_BODY_READ_TIMEOUT DEFAULT_LOG_LEVEL DEFAULT_MAX_BATCH_TOKENS "
        "DEFAULT_MAX_CONCURRENT DEFAULT_MAX_TOKEN_BUDGET DEFAULT_PORT LIVENESS_ONLY MAX_BATCH_STATES "
        "MAX_BODY_BYTES MAX_CHOICE_OPTIONS MAX_QUESTIONS MAX_SCORE_LEVELS MAX_STATE_CHARS "
        "MAX_TOTAL_OPTIONS MAX_TOURNAMENT_CHOICE_OPTIONS build_router create_app main"
    ),
    "laya.train": "TrainConfig dry_run finetune read_data rows_from_csv",
    "laya.evals_cli": "OnnxRunner RouterRunner main",
    "laya.evidence": (
        "INCOMPARABLE INSUFFICIENT MISSING PRESENT UNKNOWN format_summary inspect_calibration "
        "inspect_checkpoint inspect_report relate"
    ),
    "laya.common": (
        "OPTION_LAYOUTS QTYPES QTYPE_NAMES TEMP_MAX TEMP_MIN answer_confidence clamp_temperature "
        "confidence_from_probs ece_score proper_reward render_criterion render_options "
        "serialize_state td_lambda_targets temp_bucket unpermute_probs"
    ),
    "laya.revisions": "PINNED_REVISIONS REVIEWED resolve_revision snapshot_revision verify_digests",
    "laya.shortlist": (
        "DEFAULT_SHORTLIST_K DEFAULT_TOURNAMENT_GROUP cached_embed_fn embed_fn_from_agent "
        "predict_shortlist predict_tournament shortlist_choice"
    ),
    "laya.lang": (
        "NON_LATIN_FRACTION NON_LATIN_MIN_FRACTION NON_LATIN_MIN_LETTERS analyse detect_script "
        "guess_latin_language is_english latin_profile script_profile state_text"
    ),
    "laya.presets": (
        "email_questions guard_questions moderation_questions router_questions state_field "
        "triage_questions"
    ),
    "laya.router": (
        "BUNDLE_REPO DEFAULT_MODELS RouteDecision Router STANDALONE_MODELS canonical_name "
        "check_agent_kwargs match_typed_decisions_workflow normalise_name resolve_model_spec"
    ),
    "laya.hooks": (
        "ALL_VARIANTS AsyncHook BaseHook HOOK_EVENTS Hook HookRegistry OptionStabilityHook "
        "PredictContext VARIANT_PRESETS add_default_hook aggregate_usage calibrate_reliability "
        "clear_default_hooks compose_hooks decide_reliability default_hooks dispatch "
        "make_variants normalise_hooks run_coroutine_sync set_default_hooks validate_timeout"
    ),
}


def _parse(spec: str) -> tuple[list[str], list[str], bool]:
    """(positional names, keyword-only names, takes **kwargs) of a parameter list above."""
    positional: list[str] = []
    keyword: list[str] = []
    target, var_kw = positional, False
    for name in [p.strip() for p in spec.split(",") if p.strip()]:
        if name == "*":
            target = keyword
        elif name == "**":
            var_kw = True
        else:
            target.append(name)
    return positional, keyword, var_kw


def _resolve(path: str):
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = _attribute(obj, attr)
        return obj
    raise AssertionError(path)


def _attribute(owner, name: str):
    """``owner.name``; a function defined as a method is returned bound, so its first
    parameter (``self``, or ``runner`` for the decision functions a runner class takes as
    methods) is not compared."""
    value = getattr(owner, name)
    static = inspect.getattr_static(owner, name, None)
    if (
        inspect.isclass(owner)
        and inspect.isfunction(value)
        and not isinstance(static, staticmethod)
    ):
        return types.MethodType(value, owner)
    return value


def _ours(obj) -> tuple[list[str], set[str], bool]:
    sig = inspect.signature(obj)
    params = [p for p in sig.parameters.values() if p.name != "self"]
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    by_keyword = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return positional, by_keyword, any(p.kind is p.VAR_KEYWORD for p in params)


@pytest.mark.parametrize("path", sorted(PUBLISHED))
def test_every_published_signature_takes_the_published_parameters_in_order(path):
    positional, keyword, var_kw = _parse(PUBLISHED[path])
    ours, by_keyword, our_var_kw = _ours(_resolve(path))
    missing = sorted(set(positional + keyword) - by_keyword)
    assert missing == [], f"{path} lacks {missing}"
    if path in CONTRACT or (path == "laya.load"):
        prefix = _parse(CONTRACT.get(path, CONTRACT["laya.Agent"]))[0]
        if path == "laya.load":  # published order: load takes no hook-contract order
            assert ours[: len(positional)] == positional
        else:
            assert ours[: len(prefix)] == prefix
    else:
        assert ours[: len(positional)] == positional, f"{path}: {ours} vs {positional}"
    assert our_var_kw or not var_kw, f"{path} takes no **kwargs"


@pytest.mark.parametrize("path", sorted(DEFAULTS))
def test_published_defaults(path):
    params = inspect.signature(_resolve(path)).parameters
    for name, value in DEFAULTS[path].items():
        assert params[name].default == value, f"{path}({name}=...)"


def test_the_published_top_level_names_and_modules_exist_and_import_stays_light():
    import subprocess
    import sys

    missing = [n for n in PUBLISHED_ALL if n not in laya.__all__]
    assert missing == []
    for name in PUBLISHED_ALL:
        assert getattr(laya, name) is not None
    for name in FRAMEWORK_CLASSES:  # the LangChain runnables, loaded on first use
        assert name in laya.__all__
    script = "import sys, laya; from laya import *; print('torch' in sys.modules)"
    assert (
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        ).stdout.strip()
        == "False"
    )


@pytest.mark.parametrize("module", sorted(MODULE_NAMES))
def test_the_published_module_paths_hold_their_names(module):
    imported = importlib.import_module(module)
    assert [n for n in MODULE_NAMES[module].split() if not hasattr(imported, n)] == []
    assert getattr(laya, module.split(".")[1]) is imported


def test_module_paths_are_the_modules_that_do_the_job():
    import laya.engine.gate
    import laya.runtime
    import laya.typed.values

    assert importlib.import_module("laya.agent") is laya.runtime
    assert importlib.import_module("laya.onnx_agent") is laya.runtime
    assert importlib.import_module("laya.confidence") is laya.engine.gate
    assert importlib.import_module("laya.structured") is laya.typed.values
    assert laya.RLAgent is laya.Agent
    assert issubclass(laya.structured.SchemaError, ValueError)
    assert issubclass(LayaGuardrailError, ValueError) and issubclass(
        BackendUnavailable, RuntimeError
    )


# ------------------------------------------------------------------ load and the Agent


@pytest.mark.parametrize("fixture", ["tiny-modernbert", "tiny-bert"])
def test_load_with_device_second_reproduces_the_golden_cases(fixture):
    runtime = laya.load(str(MODERNBERT if fixture == "tiny-modernbert" else BERT), "cpu")
    assert str(runtime.device) == "cpu" and runtime.backend == "eager"
    for case in load_cases(fixture):
        assert_matches(case["expected"], run_case(runtime, case), ties=True)


def test_backend_names_and_the_backend_object(agent):
    assert agent.backend == "eager" and agent.backend_object.mode == "eager"
    assert repr(agent).endswith("backend='eager')")
    import torch

    assert agent.dtype_for(4) is torch.float32 and agent.dtype is torch.float32
    assert agent.amp_enabled is False
    assert agent.warmup([(2, 32, 3)]) >= 0.0
    with pytest.raises(InvalidRequest, match="rows, tokens, markers"):
        agent.warmup([(2, 32)])


def test_backend_argument_and_set_backend(modernbert_dir):
    with pytest.raises(InvalidRequest, match="backend='onnx'"):
        laya.Agent(str(modernbert_dir), "cpu", backend="onnx")
    with pytest.raises(InvalidRequest, match="unknown backend"):
        laya.load(str(modernbert_dir), "cpu", backend="gpu")
    with pytest.raises(InvalidRequest, match="compile_mode"):
        laya.load(str(modernbert_dir), "cpu", backend="compile", compile_mode="fastest")
    agent = laya.load(str(modernbert_dir), "cpu", backend="eager")
    want = agent.predict(STATE, QUESTIONS)
    assert agent.set_backend("compile", warmup=False) == "compile" == agent.backend
    assert agent.backend_object.packed is False
    assert agent.set_backend("eager") == "eager"
    assert_close(want, agent.predict(STATE, QUESTIONS))
    with pytest.raises(BackendUnavailable):
        agent.set_backend("tilelang", strict=True)
    with pytest.warns(RuntimeWarning, match="TileLang"):
        assert agent.set_backend("tilelang") == "eager"
    with pytest.raises(TypeError, match="takes no option"):
        agent.set_backend("compile", graphs=True)


def test_accelerate_switches_precision_and_back_exactly(modernbert_dir):
    agent = laya.load(str(modernbert_dir), "cpu")
    want = agent.predict(STATE, QUESTIONS)
    fast = agent.backend_object.fast_precision()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a CPU with nothing faster warns
        assert agent.accelerate() == fast
    if fast != "fp32":
        import torch

        assert agent.dtype_for(1) is not torch.float32
    assert agent.deaccelerate() == "fp32"
    assert_close(want, agent.predict(STATE, QUESTIONS))
    if fast == "fp32":
        with pytest.raises(BackendUnavailable):
            agent.accelerate(strict=True)


def test_load_onnx_and_the_onnx_agent_surface(onnx_modernbert_dir, agent):
    onnx = laya.load(str(onnx_modernbert_dir), backend="onnx")
    assert isinstance(onnx, laya.ONNXAgent) and onnx.backend == "onnx"
    assert_close(
        agent.predict(STATE, QUESTIONS)["answers"], onnx.predict(STATE, QUESTIONS)["answers"]
    )
    with pytest.raises(InvalidRequest, match="onnx_path goes with backend='onnx'"):
        laya.load(str(onnx_modernbert_dir), onnx_path="laya.onnx")


# ------------------------------------------------------------------ digests and revisions


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_expected_sha256_takes_a_mapping_and_a_string(modernbert_dir, monkeypatch):
    weights = modernbert_dir / "model.safetensors"
    tokenizer = modernbert_dir / "tokenizer" / "tokenizer.json"
    mapping = {"model.safetensors": _sha(weights), "tokenizer/tokenizer.json": _sha(tokenizer)}
    laya.load(str(modernbert_dir), "cpu", expected_sha256=mapping)
    laya.load(str(modernbert_dir), "cpu", expected_sha256=_sha(weights))
    with pytest.raises(CheckpointError, match="SHA-256 mismatch for model.safetensors"):
        laya.load(str(modernbert_dir), "cpu", expected_sha256={"model.safetensors": "0" * 64})
    with pytest.raises(FileNotFoundError, match="nope.bin"):
        laya.load(str(modernbert_dir), "cpu", expected_sha256={"nope.bin": "0" * 64})
    with pytest.raises(ValueError, match="inside the checkpoint"):
        laya.load(str(modernbert_dir), "cpu", expected_sha256={"../x": "0" * 64})
    with pytest.raises(ValueError, match="64 hexadecimal"):
        laya.load(str(modernbert_dir), "cpu", expected_sha256={"model.safetensors": "abc"})
    monkeypatch.setenv("LAYA_SHA256_DIGESTS", json.dumps({"model.safetensors": "1" * 64}))
    with pytest.raises(CheckpointError, match="SHA-256 mismatch"):
        laya.load(str(modernbert_dir), "cpu")


def test_onnx_digests_name_the_graph(onnx_modernbert_dir):
    graph = _sha(onnx_modernbert_dir / "laya.onnx")
    laya.ONNXAgent(str(onnx_modernbert_dir), expected_sha256={"onnx": graph})
    with pytest.raises(CheckpointError, match="SHA-256 mismatch for onnx"):
        laya.ONNXAgent(str(onnx_modernbert_dir), expected_sha256={"onnx": "2" * 64})


def test_revisions(monkeypatch):
    from laya.revisions import PINNED_REVISIONS, resolve_revision

    assert (
        resolve_revision("convaiinnovations/laya", "reviewed")
        == PINNED_REVISIONS["convaiinnovations/laya"]
    )
    assert resolve_revision("owner/repo", "abc123") == "abc123"
    assert resolve_revision("owner/repo") is None
    monkeypatch.setenv("LAYA_REVISION", "v2")
    assert resolve_revision("owner/repo") == "v2"
    with pytest.raises(ValueError, match="reviewed"):
        resolve_revision("owner/repo", "reviewed")


def test_router_revision_digests_and_loaded_revisions(monkeypatch):
    weights_sha = _sha(MODERNBERT / "model.safetensors")
    router = laya.Router(
        revision=SNAPSHOT_COMMIT, sha256_digests={"english": {"model.safetensors": weights_sha}}
    )
    router.load("english")
    assert router.loaded_revisions == {"english": SNAPSHOT_COMMIT}
    bad = laya.Router(sha256_digests={"en": {"model.safetensors": "3" * 64}})
    with pytest.raises(CheckpointError, match="SHA-256 mismatch"):
        bad.load("english")
    monkeypatch.setenv(
        "LAYA_SHA256_DIGESTS", json.dumps({"english": {"model.safetensors": "4" * 64}})
    )
    with pytest.raises(CheckpointError, match="SHA-256 mismatch"):
        laya.Router().load("english")
    with pytest.raises(InvalidRequest, match="Agent accepts none of 'colour'"):
        laya.Router(agent_kwargs={"colour": "blue"})


# ------------------------------------------------------------------ Router


def test_router_registry_routes_and_batch_diagnostics(agent):
    router = laya.Router()
    assert router.default == "english"  # the hooks contract's default (docs/migrating.md)
    assert router.route(None).model == router.route("").model == "english"
    assert "no letters" in router.route("").reason
    router.register("support", str(MODERNBERT), description="support tickets")
    assert router.registered == {
        "support": {"source": str(MODERNBERT), "description": "support tickets"}
    }
    router.attach("tiny", agent)
    assert router.registered["tiny"] == {"source": None, "description": None}
    assert router.loaded_revisions["tiny"] is None
    requests = [
        {"state": f"{STATE} ({i})", "questions": QUESTIONS, "model": "tiny"} for i in range(5)
    ]
    diagnostics: dict = {}
    results = router.predict_batch(requests, 2, None, None, True, diagnostics=diagnostics)
    assert diagnostics["sort_by_length"] == {
        "groups": 1,
        "reordered": 1,
        "smallest": 5,
        "largest": 5,
    }
    assert router.predict_many.__func__ is router.predict_batch.__func__
    for request, result in zip(requests, results):
        assert_close(agent.predict(request["state"], QUESTIONS)["answers"], result["answers"])
    assert router.route_batch(requests[:1], hooks_timeout=1.0)[0]["model"] == "tiny"
    router.unregister("support")
    assert "support" not in router.registered


# ------------------------------------------------------------------ decide


SCHEMA = {
    "title": "Ticket",
    "type": "object",
    "properties": {
        "department": {
            "type": "string",
            "enum": ["billing", "technical", "other"],
            "description": "Which department should handle this?",
        },
        "urgent": {"type": "boolean", "description": "Is it urgent?"},
        "urgency": {
            "type": "integer",
            "minimum": 1,
            "maximum": 3,
            "description": "How urgent is this?",
        },
    },
}


def test_decide_is_the_published_form_over_the_same_projection(agent):
    ours = agent.decision(STATE, SCHEMA)
    plain = laya.decide(agent, STATE, SCHEMA)
    assert plain == ours.value == agent.decide(STATE, SCHEMA)
    details = laya.decide(agent, STATE, SCHEMA, return_details=True)
    assert isinstance(details, laya.DecisionResult) and details.values == plain
    answers = agent.predict(STATE, laya.structured.questions_from_json_schema(SCHEMA))["answers"]
    for field in ("department", "urgent", "urgency"):
        assert abs(details.confidence[field] - answers[field]["confidence"]) <= TOLERANCE
        assert (
            abs(details.answer_confidence[field] - answers[field]["answer_confidence"]) <= TOLERANCE
        )
    assert set(details.probabilities["urgent"]) == {"false", "true"}
    assert abs(details.probabilities["urgent"]["true"] - answers["urgent"]["noul"]) <= TOLERANCE
    assert set(details.probabilities["urgency"]) == {"1", "2", "3"}
    assert details.usage["input_tokens"] > 0 and details.routing is None
    assert laya.structured.answers_to_json(details.answers, SCHEMA) == plain


def test_decide_with_questions_gates_and_batches(agent):
    values = laya.decide(agent, STATE, questions=QUESTIONS)
    answers = agent.predict(STATE, QUESTIONS)["answers"]
    assert values["department"] == answers["department"]["choice"]
    assert values["churn_risk"] is (answers["churn_risk"]["noul"] >= 0.5)
    probs = answers["urgency"]["probabilities"]
    assert values["urgency"] == max(range(3), key=lambda i: probs[str(i)])
    gated = laya.decide(agent, STATE, questions=QUESTIONS, min_confidence=0.9999)
    assert gated == {"department": None, "urgency": None, "churn_risk": None}
    batch = laya.decide_batch(agent, [STATE, "Where is my parcel?"], questions=QUESTIONS)
    assert batch[0] == values and len(batch) == 2
    with pytest.raises(InvalidRequest, match="exactly one of schema= and questions="):
        laya.decide(agent, STATE)
    with pytest.raises(TypeError, match="list of states"):
        laya.decide_batch(agent, STATE, questions=QUESTIONS)
    with pytest.raises(TypeError, match="has no predict_batch"):
        laya.decide_batch(object(), [STATE], questions=QUESTIONS)
    with pytest.raises(laya.structured.SchemaError):
        laya.decide(agent, STATE, {"type": "object", "properties": {"note": {"type": "string"}}})


def test_router_decide_copies_request_keys(agent):
    router = laya.Router()
    router.attach("tiny", agent)
    routed = router.decide(STATE, SCHEMA, model="tiny", return_details=True)
    assert routed.routing["model"] == "tiny" and routed.values == laya.decide(agent, STATE, SCHEMA)
    assert router.decide_batch([STATE], SCHEMA, model="tiny") == [routed.values]


# ------------------------------------------------------------------ many options

LABELS = {
    f"label{i}": f"topic number {i} about {w}"
    for i, w in enumerate(
        [
            "refunds",
            "invoices",
            "billing",
            "delivery",
            "parcels",
            "login",
            "passwords",
            "crashes",
            "bugs",
            "sales",
            "pricing",
        ]
    )
}
BIG = {
    "topic": {"type": "choice", "instructions": "Which topic?", "criteria": LABELS},
    "angry": QUESTIONS["churn_risk"],
}


def words(texts):
    """A tiny embedder: counts of a few words (any callable texts -> vectors will do)."""
    vocab = ["refund", "invoice", "billing", "delivery", "login", "crash", "price"]
    return np.array([[t.lower().count(w) + 0.01 for w in vocab] for t in texts])


def test_predict_tournament_reports_the_finalists(agent):
    result = laya.predict_tournament(agent, STATE, BIG, group_size=4)
    block = result["tournament"]["topic"]
    assert block["n"] == 11 and block["rounds"] >= 1 and 2 <= len(block["labels"]) <= 4
    answer = result["answers"]["topic"]
    assert list(answer["probabilities"]) == block["labels"] and "tournament" not in answer
    assert abs(sum(answer["probabilities"].values()) - 1) <= 1e-3
    mode = ChoiceMode(tournament=True, cap=4)
    ours = agent.predict(STATE, BIG, tournament=mode)["answers"]["topic"]
    assert ours["tournament"]["finalists"] == block["labels"]
    for label in block["labels"]:
        assert abs(ours["probabilities"][label] - answer["probabilities"][label]) <= TOLERANCE
    assert_close(
        ours, laya.predict_tournament(agent, STATE, BIG, 4, all_labels=True)["answers"]["topic"]
    )
    assert "angry" not in result["tournament"]
    with pytest.raises(InvalidRequest, match="group_size"):
        laya.predict_tournament(agent, STATE, BIG, group_size=1)


def test_predict_shortlist_and_shortlist_choice(agent):
    chosen, scores = laya.shortlist_choice(
        STATE, LABELS, words, 3, instructions="Which topic?", return_scores=True
    )
    assert len(chosen) == 3 and scores == sorted(scores, reverse=True)
    assert laya.shortlist_choice(STATE, LABELS, words, 3, instructions="Which topic?") == chosen
    calls = []
    assert laya.shortlist_choice(STATE, ["a", "b"], lambda t: calls.append(t), 5) == ["a", "b"]
    assert calls == []
    result = laya.predict_shortlist(agent, STATE, BIG, words, k=3)
    block = result["shortlist"]["topic"]
    assert block == {"labels": chosen, "scores": scores, "k": 3, "n": 11, "passthrough": False}
    narrowed = {**BIG, "topic": {**BIG["topic"], "criteria": {c: LABELS[c] for c in chosen}}}
    assert_close(agent.predict(STATE, narrowed)["answers"], result["answers"])
    wide = laya.predict_shortlist(agent, STATE, BIG, words, k=3, all_labels=True)
    assert list(wide["answers"]["topic"]["probabilities"]) == list(LABELS)
    whole = laya.predict_shortlist(agent, STATE, BIG, words, k=20)["shortlist"]["topic"]
    assert whole["passthrough"] is True and whole["scores"] is None
    ordered = {**BIG, "topic": {**BIG["topic"], "option_order": list(range(11))[::-1]}}
    with pytest.warns(RuntimeWarning, match="dropped option_order"):
        laya.predict_shortlist(agent, STATE, ordered, words, k=3)


def test_embed_fn_from_agent_and_the_cache(agent):
    embed = laya.embed_fn_from_agent(agent, max_length=32, batch_size=2)
    vectors = embed(["hello there", "refund please", "a third text"])
    assert vectors.shape[0] == 3 and np.isfinite(vectors).all()
    np.testing.assert_allclose(
        vectors,
        agent.engine.embed(["hello there", "refund please", "a third text"], 32, 2),
        atol=TOLERANCE,
    )
    cached = laya.cached_embed_fn(embed, maxsize=2)
    np.testing.assert_allclose(cached(["refund please"])[0], vectors[1], atol=TOLERANCE)
    cached(["refund please", "hello there"])
    info = cached.cache_info()
    assert (info.hits, info.misses, info.maxsize, info.currsize) == (1, 2, 2, 2)
    cached.cache_clear()
    assert cached.cache_info().currsize == 0
    with pytest.raises(TypeError, match="laya runtime"):
        laya.embed_fn_from_agent(object())


# ------------------------------------------------------------------ calibration


def _labelled():
    states = [f"{STATE} ({i})" for i in range(6)] + [f"Where is my parcel? ({i})" for i in range(6)]
    gold = {"department": "billing", "urgency": 1, "churn_risk": False}
    return [(s, QUESTIONS, gold) for s in states]


def test_calibration_api_fits_saves_and_round_trips(modernbert_dir, tmp_path):
    agent = laya.load(str(modernbert_dir), "cpu")
    records = laya.calibrate.records_from_labeled(agent, _labelled())
    assert len(records) == 36 and records[0][0] == 0 and records[0][3] == 4
    rows = agent.raw_logits([_labelled()[0][0]], QUESTIONS)
    np.testing.assert_allclose(records[0][1], rows[0][:4], atol=TOLERANCE)
    fitted = agent.fit_temperatures(records)
    assert agent.temperature == fitted["temperature"] and fitted["temperature_by_options"] == {}
    assert fitted["n_by_bucket"] == {"choice:3-5": 12, "score:3-5": 12, "noul:2": 12}
    binning = agent.fit_binning(records, min_bucket_n=5)
    assert set(binning) == {"choice:3-5", "score:3-5", "noul:2"}
    assert agent.binning_map == binning
    path = tmp_path / "calib.json"
    agent.save_calibration(path)
    saved = json.loads(path.read_text())
    assert saved["version"] == 2 and saved["binning_map"] == binning
    assert "temperature" not in saved["config"] and saved["subfolder"] is None
    other = laya.load(str(modernbert_dir), "cpu")
    other.load_calibration(path)
    assert other.temperature == agent.temperature and other.binning_map == binning
    assert_close(
        agent.predict(STATE, QUESTIONS)["answers"], other.predict(STATE, QUESTIONS)["answers"]
    )
    again = tmp_path / "again.json"
    other.save_calibration(again)
    assert json.loads(again.read_text()) == saved
    fresh = laya.load(str(modernbert_dir), "cpu", calibration=str(path))
    assert_close(
        agent.predict(STATE, QUESTIONS)["answers"], fresh.predict(STATE, QUESTIONS)["answers"]
    )
    payload = laya.calibrate.calibration_payload(
        fitted["temperature"], {}, str(modernbert_dir), None, agent.cfg.raw, binning
    )
    assert payload == {**saved, "model_id_or_path": str(modernbert_dir)}
    third = laya.load(str(modernbert_dir), "cpu")
    laya.calibrate.apply_calibration_payload(third, payload)
    assert third.binning_map == binning


def test_calibrate_functions_give_our_fitters_numbers():
    from laya.engine.questions import parse_question
    from laya.training.fit_calibration import fit_binning, fit_grid_temperatures

    rng = np.random.default_rng(3)
    logits = [rng.normal(size=3) * 3 for _ in range(400)]
    gold = [int(np.argmax(z + rng.normal(size=3) * 2)) for z in logits]
    records = [(0, z.tolist(), g) for z, g in zip(logits, gold)]
    fitted = laya.fit_temperature_map(records)
    question = parse_question(
        "q", {"type": "choice", "instructions": "x", "criteria": ["a", "b", "c"]}
    )
    by_type, by_bucket, _ = fit_grid_temperatures(
        logits, gold, [question] * 400, min_bucket=2000, min_type=10
    )
    assert fitted["temperature"] == by_type and fitted["temperature_by_options"] == by_bucket
    assert laya.fit_temperatures is laya.fit_temperature_map
    assert (
        abs(laya.fit_one_temperature([(z, g) for z, g in zip(logits, gold)]) - by_type[0]) <= 0.01
    )
    soft = laya.fit_temperature_map([(0, z.tolist(), np.eye(3)[g]) for z, g in zip(logits, gold)])
    assert soft["temperature"] == fitted["temperature"]
    bins = laya.fit_binning_map(records, [1.0, 1.0, 1.0], {}, bins=10, min_bucket_n=100)
    p = [np.exp(z - z.max()) / np.exp(z - z.max()).sum() for z in logits]
    from laya.training.evaluate import Record

    ours = fit_binning(
        [Record("choice", "d", np.round(x, 4), g) for x, g in zip(p, gold)],
        ["choice:3-5"] * 400,
        10,
        100,
        monotone=False,
    )
    np.testing.assert_allclose(bins["choice:3-5"]["values"], ours["choice:3-5"], atol=TOLERANCE)
    assert laya.apply_binning_map(0.95, "choice:3-5", bins) == bins["choice:3-5"]["values"][9]
    assert laya.apply_binning_map(0.95, "noul:2", bins) == 0.95
    cuts = laya.fit_abstention_thresholds(records, [1.0, 1.0, 1.0], {}, target_error=0.3)
    conf = np.array([x.max() for x in p])
    right = np.array([int(np.argmax(x)) == g for x, g in zip(p, gold)])
    kept = conf >= cuts["choice:3-5"]
    assert (np.sum(~right[kept]) + 1) / kept.sum() <= 0.3
    assert laya.fit_abstention_thresholds(records[:10], [1.0] * 3, {}) == {}


# ------------------------------------------------------------------ scores, confidence, email


def test_scores_match_the_answers_they_describe(agent):
    from laya.common import serialize_state, temp_bucket

    from laya.engine.encoding import serialise_state

    row = agent.raw_logits([STATE], {"department": QUESTIONS["department"]})[0][:4]
    z = row / np.float32(1.6)  # the fixture's choice:3-5 temperature
    p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    answer = agent.predict(STATE, {"department": QUESTIONS["department"]})["answers"]["department"]
    assert abs(laya.confidence_from_probs(p, 4) - answer["confidence"]) <= TOLERANCE
    assert abs(laya.answer_confidence(p, 4) - answer["answer_confidence"]) <= TOLERANCE
    assert temp_bucket(0, 4) == "choice:3-5" and temp_bucket(2, 2) == "noul:2"
    assert serialize_state({"a": 1}) == serialise_state({"a": 1}) == '{"a": 1}'
    assert laya.render_options(QUESTIONS["urgency"]) == [
        "level 0: not urgent",
        "level 1: soon",
        "level 2: blocking",
    ]


def test_proper_reward_ece_and_what_is_not_provided():
    import torch

    from laya.training.evaluate import Record, ece

    q = torch.tensor([[0.7, 0.2, 0.1, 0.0], [0.5, 0.5, 0.0, 0.0]])
    target = torch.tensor([[1.0, 0, 0, 0], [0, 1.0, 0, 0]])
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]]).bool()
    reward = laya.proper_reward(q, target, torch.tensor([1, 0]), mask)
    sph = 0.7 / math.sqrt(0.54)
    want0 = math.log(0.7) + 0.5 * sph - (0.09 + 0.01) / 2
    want1 = math.log(0.5) + 0.5 * 0.5 / math.sqrt(0.5)
    np.testing.assert_allclose(reward.numpy(), [want0, want1], atol=1e-5)
    conf, right = [0.9, 0.8, 0.3], [1, 0, 1]
    records = [
        Record("choice", "d", np.array([c, 1 - c]), 0 if r else 1) for c, r in zip(conf, right)
    ]
    assert abs(laya.ece_score(np.array(conf), np.array(right)) - ece(records)) <= 1e-12
    with pytest.raises(NotImplementedError, match="td_lambda_targets"):
        laya.td_lambda_targets(torch.zeros(2), {})


def test_confidence_helpers():
    from laya.confidence import answer_confidence_value, bucket_keys

    assert laya.GATE_STATES == ("passed", "abstained", "unevaluated")
    assert len(bucket_keys()) == 13 and "default" in bucket_keys()
    assert laya.check_min_confidence_map({"noul:2": 0.5}) == {"noul:2": 0.5}
    with pytest.raises(ValueError, match="bucket like"):
        laya.check_min_confidence_map({"noul": 0.5})
    choice = {
        "type": "choice",
        "probabilities": {"a": 0.7, "b": 0.2, "c": 0.1},
        "confidence": 0.4,
        "answer_confidence": 0.7,
    }
    assert laya.resolve_min_confidence(choice, {"choice:3-5": 0.8, "default": 0.1}) == 0.8
    assert laya.resolve_min_confidence(choice, {"noul:2": 0.8}, 0.3) == 0.3
    assert abs(laya.jev_confidence(choice) - (0.7 - 1 / 3) / (1 - 1 / 3)) <= 1e-9
    assert laya.jev_confidence({"type": "noul", "noul": 0.9}) is None
    assert answer_confidence_value({"answer_confidence": True}) is None
    results = [{"answers": {"q": dict(choice)}}]
    laya.flag_low_confidence(results, 0.75)
    assert results[0]["answers"]["q"] == {**choice, "low_confidence": True}
    laya.apply_confidence_gate(results)
    assert "abstention" not in results[0]["answers"]["q"]


def test_email_helpers():
    body = (
        "Hi team,\r\n\r\nI was charged   twice for order 123.\r\n\r\nThanks,\r\nMaria\r\n\r\n"
        "On Mon, 3 Jun 2024 at 10:00, Support <s@x.com> wrote:\r\n> How can we help?\r\n"
    )
    assert laya.clean_email_body(body) == "Hi team,\n\nI was charged twice for order 123."
    assert laya.clean_email_body(body, 0) == ""
    assert laya.clean_email_body("abcdef", -2) == "abcd"
    footer = "Please cancel.\n\nEste mensaje es confidencial. Si ha recibido este mensaje por error, bórrelo.\n\nEnviado desde mi iPhone"
    assert laya.clean_email_body(footer) == "Please cancel."
    state = laya.email_state("Refund", body, sender="m@x.org", ticket=None, channel="web")
    assert state == {
        "subject": "Refund",
        "body": laya.clean_email_body(body),
        "from": "m@x.org",
        "channel": "web",
    }
    assert laya.email_state("s", " raw ", clean=False)["body"] == " raw "
    assert laya.presets.state_field(laya.email_questions()) == "body"


def test_language_and_router_tables():
    from laya.lang import guess_latin_language, latin_profile
    from laya.router import DEFAULT_MODELS, STANDALONE_MODELS, normalise_name, resolve_model_spec

    assert guess_latin_language("Mein Konto wurde zweimal belastet") == "de"
    assert latin_profile("Mein Konto wurde zweimal belastet")["language"] == "de"
    assert DEFAULT_MODELS["multilingual"] == ("convaiinnovations/laya", "multilingual")
    assert STANDALONE_MODELS["typed-decisions"] == "convaiinnovations/laya-typed-decisions"
    assert normalise_name(" ML ") == "multilingual" and resolve_model_spec("x") is None
    with pytest.raises(ValueError, match="unknown model"):
        normalise_name("mini")


# ------------------------------------------------------------------ OptionStabilityHook


def test_option_stability_hook_reports_and_cleans_up(agent):
    hook = laya.OptionStabilityHook(accept=0.9, escalate=0.2)
    question = {"department": QUESTIONS["department"], "angry": QUESTIONS["churn_risk"]}
    result = agent.predict(STATE, question, hooks=[hook])
    assert set(result["answers"]) == {"department", "angry"}
    record = result["answers"]["department"]["reliability"]
    assert record["probes"] == ["reorder", "rename"] and record["option_layout"] == "sequential"
    assert record["n_variants"] == len(record["variant_choices"]) + 1 >= 4
    assert set(record["variant_choices"].values()) <= set(QUESTIONS["department"]["criteria"])
    assert 0 <= record["soft_stability"] <= 1 and record["decision"] in (
        "ACCEPT",
        "VERIFY",
        "ESCALATE",
    )
    plain = agent.predict(STATE, question)["answers"]["department"]
    assert_close(
        plain, {k: v for k, v in result["answers"]["department"].items() if k != "reliability"}
    )
    assert "reliability" not in result["answers"]["angry"]
    assert not any("::rel" in q for q in result["usage"]["truncated_questions"])
    fast = laya.OptionStabilityHook(accept=None, escalate=None, variants="fast", probes="rename")
    record = agent.predict(STATE, question, hooks=[fast])["answers"]["department"]["reliability"]
    assert record["decision"] is None and set(record["variant_choices"]) <= {"letters_reversed"}
    with pytest.raises(ValueError, match="escalate"):
        laya.OptionStabilityHook(accept=0.5, escalate=0.8)
    with pytest.raises(ValueError, match="variants"):
        laya.OptionStabilityHook(accept=0.5, escalate=None, variants=["sideways"])
    with pytest.raises(ValueError, match="::rel"):
        agent.predict(STATE, {"q::rel1": QUESTIONS["department"]}, hooks=[hook])
    assert isinstance(hook, BaseHook)


def test_stability_helpers():
    from laya.hooks import calibrate_reliability, decide_reliability, make_variants

    variants = make_variants(["a", "b", "c"], "seed|q")
    assert variants == make_variants(["a", "b", "c"], "seed|q")
    assert ("reversed", ["c", "b", "a"], False) in variants
    assert ("letters", ["a", "b", "c"], True) in variants
    assert make_variants(["a", "b"], "k", reorder=False) == [("letters", ["a", "b"], True)]
    assert decide_reliability(0.95, 0.9, 0.3) == "ACCEPT"
    assert decide_reliability(0.2, 0.9, 0.3) == "ESCALATE"
    assert decide_reliability(0.5, 0.9) == "VERIFY" and decide_reliability(0.5, None) is None
    accept, escalate = calibrate_reliability([0.95, 0.9, 0.6, 0.3, 0.1], [1, 1, 1, 0, 0])
    assert (accept, escalate) == (0.6, 0.6) or accept >= escalate
    assert calibrate_reliability([0.5], [0]) == (1.01, 0.0)


def test_skipped_predict_context_still_fills_reliability_none():
    """A hook that answers from a cache leaves the stability hook nothing to fold: no record."""
    hook = laya.OptionStabilityHook(accept=0.9, escalate=None)
    ctx = PredictContext(states=[STATE], questions={"department": QUESTIONS["department"]})
    hook.on_predict_start(ctx)
    assert any("::rel" in q for q in ctx.questions)
    ctx.results = [
        {
            "answers": {
                "department": {
                    "type": "choice",
                    "choice": "billing",
                    "probabilities": {"billing": 1.0},
                }
            }
        }
    ]
    hook.on_predict_end(ctx)
    assert ctx.results[0]["answers"]["department"]["reliability"]["soft_stability"] is None


def test_tmp_copy_is_not_needed_for_fixtures(tmp_path):
    """Loading never writes into a checkpoint (the fixtures are read-only)."""
    copy = shutil.copytree(MODERNBERT, tmp_path / "ckpt")
    before = {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    laya.load(
        str(copy), "cpu", expected_sha256={"model.safetensors": _sha(copy / "model.safetensors")}
    )
    assert {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()} == before
