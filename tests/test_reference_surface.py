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
    "laya.common.build_sequence": (
        "tok, state, q, max_len, head_max_len, option_order, truncate_left, state_ids, "
        "return_stats, return_truncation_stats, return_layout"
    ),
    "laya.common.collate_items": "batch, pad_id",
    "laya.common.render_options": "q",
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
    "laya.lang.is_english": "state",
    "laya.common.clamp_temperature": "t, lo, hi",
    "laya.backends.Backend": "agent",
    "laya.backends.Backend.forward": (
        "input_ids, attention_mask, marker_pos, marker_mask, qtype, detach_encoder"
    ),
    "laya.backends.Backend.install": "",
    "laya.backends.Backend.stock_forward": "**",
    "laya.backends.Backend.uninstall": "",
    "laya.backends.Backend.warmup": "shapes",
    "laya.backends.auto_policy": "agent",
    "laya.backends.bucket_shape": "n_rows, n_tokens, max_len",
    "laya.backends.install": "agent, name, strict, **",
    "laya.backends.make_backend": "name, agent, **",
    "laya.backends.normalise": "name",
    "laya.backends.pad_batch": (
        "input_ids, attention_mask, marker_pos, marker_mask, qtype, max_len, pad_id, keep_one_token"
    ),
    "laya.backends.warn_fallback": "name, why",
    "laya.backends.base.bucket_rows": "n",
    "laya.backends.base.bucket_tokens": "n_tokens, max_len",
    "laya.backends.compile.CompileBackend": "agent, mode, warmup",
    "laya.backends.compile.configure_inductor_cache": "",
    "laya.backends.compile.warmup_enabled": "default",
    "laya.backends.eager.EagerBackend": "agent",
    "laya.backends.tilelang.TileLangBackend": "agent, use_graphs, verbose",
    "laya.train.calibration_records": (
        "model, tok, items, device, max_len, head_max_len, batch_size, parallel"
    ),
    "laya.train.calibration_report": "records, temperature",
    "laya.train.collapse_stats": "records",
    "laya.train.draw_option_order": "item, rng, shuffle_types",
    "laya.train.dry_run": "data, model_dir, config",
    "laya.train.encode_item": "tok, item, max_len, head_max_len, option_order, parallel",
    "laya.train.encode_state": "tok, state, max_len",
    "laya.train.evaluate_records": "records, temperature, temperature_by_options",
    "laya.train.finetune": "data, model_dir, output_dir, config, device",
    "laya.train.items_from_rows": "tok, rows, max_len, head_max_len, label_smoothing",
    "laya.train.load_checkpoint": "model_dir",
    "laya.train.make_item": "tok, q, target, state_ids, head_max_len, max_len",
    "laya.train.optimizer_updates": "n_items, micro_batch, grad_accum, epochs",
    "laya.train.prior_collapse_message": "records",
    "laya.train.read_data": "path, text_column, label_column, question_id, instructions",
    "laya.train.read_jsonl": "path",
    "laya.train.resolve_checkpoint_dir": "model_id_or_path, token",
    "laya.train.resolve_device": "device",
    "laya.train.rlcd_loss": "logits, target, mask, qtype, sigma, samples, w_sph, w_rps",
    "laya.train.rows_from_csv": "path, text_column, label_column, question_id, instructions",
    "laya.train.save_checkpoint": "model, tok, cfg, path",
    "laya.train.sigma_at": "epoch, epochs, start, end",
    "laya.train.soft_ce_loss": "logits, target, mask",
    "laya.train.split_calibration": "items, calib_max, calib_frac, seed",
    "laya.train.target_from_expected": "q, expected_val, label_smoothing",
    "laya.train.target_from_gold": "q, gold_q",
    "laya.train.to_internal": "qid, question",
    "laya.train.train_model": (
        "model, tok, items, config, device, max_len, head_max_len, on_epoch_end, parallel"
    ),
    "laya.train.update_budget_message": "n_train, config",
    "laya.train.TrainConfig.validate": "",
    "laya.train_cli.build_parser": "",
    "laya.train_cli.main": "argv",
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
    "laya.Router": {"max_loaded": 2, "default": "multilingual"},  # the published default
    "laya.common.clamp_temperature": {"lo": 0.5, "hi": 5.0},
    "laya.backends.install": {"strict": False},
    "laya.backends.pad_batch": {"pad_id": 0, "keep_one_token": False},
    "laya.backends.compile.CompileBackend": {"mode": "reduce-overhead", "warmup": None},
    "laya.backends.compile.warmup_enabled": {"default": True},
    "laya.backends.tilelang.TileLangBackend": {"use_graphs": True, "verbose": False},
    "laya.train.calibration_records": {"batch_size": 16, "parallel": False},
    "laya.train.encode_item": {"option_order": None, "parallel": False},
    "laya.train.items_from_rows": {"label_smoothing": 0.0},
    "laya.train.rlcd_loss": {"samples": 4, "w_sph": 0.75, "w_rps": 1.0},
    "laya.train.resolve_device": {"device": "auto"},
    "laya.train.train_model": {"on_epoch_end": None, "parallel": False},
    "laya.train.finetune": {"device": "auto"},
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
    "laya.agent": "Agent RLAgent load MIN_BINNING_BUCKET_N QTYPES TEMP_MAX TEMP_MIN build_sequence",
    "laya.onnx_agent": "ONNXAgent QTYPES TEMP_MAX TEMP_MIN build_sequence",
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
    "laya.train": (
        "CALIB_WARN_N COLLAPSE_CE_REL COLLAPSE_LOGIT_RANGE LOSSES MIN_TYPE_N OPTION_LAYOUTS QTYPES "
        "QTYPE_NAMES TEMP_MAX TEMP_MIN TrainConfig calibration_records calibration_report "
        "collapse_stats draw_option_order dry_run encode_item encode_state evaluate_records "
        "finetune items_from_rows load_checkpoint make_item optimizer_updates "
        "prior_collapse_message read_data read_jsonl resolve_checkpoint_dir resolve_device "
        "rlcd_loss rows_from_csv save_checkpoint sigma_at soft_ce_loss split_calibration "
        "target_from_expected target_from_gold to_internal train_model update_budget_message"
    ),
    "laya.train_cli": "build_parser main",
    "laya.backends": (
        "Backend BackendUnavailable NAMES auto_policy bucket_shape install make_backend normalise "
        "pad_batch warn_fallback"
    ),
    "laya.evals_cli": "OnnxRunner RouterRunner main",
    "laya.evidence": (
        "INCOMPARABLE INSUFFICIENT MISSING PRESENT UNKNOWN format_summary inspect_calibration "
        "inspect_checkpoint inspect_report relate"
    ),
    "laya.common": (
        "OPTION_LAYOUTS QTYPES QTYPE_NAMES TEMP_MAX TEMP_MIN answer_confidence build_sequence "
        "clamp_temperature collate_items confidence_from_probs ece_score proper_reward "
        "render_criterion render_options serialize_state td_lambda_targets temp_bucket "
        "unpermute_probs"
    ),
    "laya.revisions": "PINNED_REVISIONS REVIEWED resolve_revision snapshot_revision verify_digests",
    "laya.shortlist": (
        "DEFAULT_SHORTLIST_K DEFAULT_TOURNAMENT_GROUP cached_embed_fn embed_fn_from_agent "
        "predict_shortlist predict_tournament shortlist_choice"
    ),
    "laya.lang": (
        "ENGLISH_RESCUE_DIACRITIC_RATE NON_EN_DIACRITIC_RATE NON_LATIN_FRACTION NON_LATIN_MIN_FRACTION NON_LATIN_MIN_LETTERS analyse detect_script "
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

    assert importlib.import_module("laya.agent").Agent is laya.runtime.Agent
    assert importlib.import_module("laya.onnx_agent").ONNXAgent is laya.runtime.ONNXAgent
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
    with pytest.warns(RuntimeWarning, match="tilelang"):
        assert agent.set_backend("tilelang") == "eager"
    with pytest.raises(TypeError, match="graphs"):
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
    assert router.default == "multilingual"  # the published default (docs/migrating.md)
    assert router.route(None).model == router.route("").model == "multilingual"
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
        fitted["temperature"], {}, str(modernbert_dir), None, agent.cfg, binning
    )
    assert payload == {**saved, "model_id_or_path": str(modernbert_dir)}
    third = laya.load(str(modernbert_dir), "cpu")
    laya.calibrate.apply_calibration_payload(third, payload)
    assert third.binning_map == binning


def _lbfgs_temperature(logits, gold) -> float:
    """The published fit, made independently: LBFGS on log T over the mean NLL (torch)."""
    import torch

    z, y = torch.tensor(np.array(logits)), torch.tensor(gold)
    log_t = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    optimiser = torch.optim.LBFGS(
        [log_t], max_iter=200, line_search_fn="strong_wolfe", tolerance_grad=1e-12
    )

    def closure():
        optimiser.zero_grad()
        loss = torch.nn.functional.cross_entropy(z / log_t.exp(), y)
        loss.backward()
        return loss

    optimiser.step(closure)
    return float(log_t.detach().exp())


def _noisy_records(seed: int, n: int, k: int = 3, spread: float = 3.0, noise: float = 2.0):
    rng = np.random.default_rng(seed)
    logits = [rng.normal(size=k) * spread for _ in range(n)]
    gold = [int(np.argmax(z + rng.normal(size=k) * noise)) for z in logits]
    return logits, gold


def test_temperature_fits_give_the_published_numbers():
    """Issue 52: the records API fits the NLL optimum (the published LBFGS on log T), clamps it
    to [0.5, 5] and reports the clamp, under the published floors (MIN_TYPE_N, MIN_BUCKET_N)."""
    from laya.calibrate import LOG_T_MARGIN, MIN_BUCKET_N, MIN_TYPE_N

    assert (MIN_BUCKET_N, MIN_TYPE_N, LOG_T_MARGIN) == (2000, 10, 10.0)
    logits, gold = _noisy_records(3, 400)
    expected = _lbfgs_temperature(logits, gold)
    assert abs(laya.fit_one_temperature(list(zip(logits, gold))) - expected) <= 2e-4
    assert laya.fit_one_temperature(list(zip(logits, gold))[:9]) == 1.0  # under MIN_TYPE_N
    assert laya.fit_one_temperature(list(zip(logits, gold))[:5], min_n=3) != 1.0
    records = [(0, z.tolist(), g) for z, g in zip(logits, gold)]
    fitted = laya.fit_temperature_map(records)
    assert list(fitted) == [
        "temperature",
        "temperature_by_options",
        "n_by_bucket",
        "temperature_clamped",
    ]
    assert abs(fitted["temperature"][0] - expected) <= 2e-4
    assert fitted["temperature"][1:] == [1.0, 1.0]
    assert fitted["temperature_by_options"] == {}  # 400 < MIN_BUCKET_N records per bucket
    assert fitted["n_by_bucket"] == {"choice:3-5": 400} and fitted["temperature_clamped"] == {}
    soft = laya.fit_temperature_map([(0, z.tolist(), np.eye(3)[g]) for z, g in zip(logits, gold)])
    assert abs(soft["temperature"][0] - fitted["temperature"][0]) <= 2e-4
    assert laya.fit_temperatures is laya.fit_temperature_map

    many, many_gold = _noisy_records(5, MIN_BUCKET_N, k=2, spread=0.5, noise=0.1)
    bucket = laya.fit_temperature_map([(2, z.tolist(), g) for z, g in zip(many, many_gold)])
    unclamped = _lbfgs_temperature(many, many_gold)
    assert unclamped < 0.5  # the published fit would be sharper than the bound
    assert bucket["temperature_by_options"] == {"noul:2": 0.5} and bucket["temperature"][2] == 0.5
    entry = bucket["temperature_clamped"]["noul:2"]
    assert abs(entry["fitted"] - unclamped) <= 2e-4 and entry["applied"] == 0.5

    held = laya.fit_temperature_map(records, compute_ece=True, seed=1)["report"]
    assert held["n_eval"] == 80 and held["n"] == 320  # a fifth of the bucket held out
    assert 0 <= held["ece_after"] <= 1 and held["excluded_buckets"] == []


def test_binning_and_abstention_fits_give_the_published_numbers():
    """Equal-width bins of the tempered top probability hold their accuracy (an empty bin its
    centre); the abstention cut is the lowest whose kept answers err at most target_error,
    counting one more error when conservative; buckets under the floors are left out."""
    logits, gold = _noisy_records(3, 400)
    records = [(0, z.tolist(), g) for z, g in zip(logits, gold)]
    p = [np.exp(z / 1.3 - max(z / 1.3)) for z in logits]
    p = [x / x.sum() for x in p]
    conf = np.array([x.max() for x in p])
    right = np.array([int(np.argmax(x)) == g for x, g in zip(p, gold)])
    bins = laya.fit_binning_map(records, [1.3, 1.0, 1.0], {}, bins=10, min_bucket_n=100)
    assert list(bins) == ["choice:3-5"] and bins["choice:3-5"]["bins"] == 10
    slots = np.minimum(9, (conf * 10).astype(int))
    for b, value in enumerate(bins["choice:3-5"]["values"]):
        expected = right[slots == b].mean() if (slots == b).any() else (b + 0.5) / 10
        assert abs(value - expected) <= 2e-4, b
    assert laya.fit_binning_map(records[:199], [1.3, 1.0, 1.0], {}) == {}  # < MIN_BINNING_BUCKET_N
    assert set(laya.fit_binning_map(records[:200], [1.3, 1.0, 1.0], {})) == {"choice:3-5"}
    assert laya.apply_binning_map(0.95, "choice:3-5", bins) == bins["choice:3-5"]["values"][9]
    assert laya.apply_binning_map(0.95, "noul:2", bins) == 0.95  # an unknown bucket passes
    for conservative in (True, False):
        cut = laya.fit_abstention_thresholds(
            records, [1.3, 1.0, 1.0], {}, target_error=0.2, conservative=conservative
        )["choice:3-5"]
        extra = int(conservative)
        ok = [c for c in conf if (np.sum(~right[conf >= c]) + extra) / np.sum(conf >= c) <= 0.2]
        assert abs(cut - (min(ok) if ok else 1.0)) <= 2e-4
    assert laya.fit_abstention_thresholds(records[:10], [1.0] * 3, {}) == {}
    hopeless = [(0, [0.0, 0.0, 5.0], 0)] * 100
    assert laya.fit_abstention_thresholds(hopeless, [1.0] * 3, {}) == {"choice:3-5": 1.0}


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


def test_proper_reward_and_ece():
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


def test_td_lambda_targets_blend_the_next_turns_prediction_and_the_outcome():
    """One episode of three turns (given out of order) and a lone row: lam=1 gives the outcome
    to every turn, lam=0 the next turn's prediction, lam=0.5 half of each, worked by hand."""
    import torch

    p = torch.tensor([0.2, 0.9, 0.6, 0.3], requires_grad=True)
    batch = {"target": [1.0, 1.0, 1.0, 0.0], "episode": [7, 7, 7, 8], "turn": [2, 0, 1, 0]}
    outcome = laya.td_lambda_targets(p, batch)
    assert outcome.tolist() == [1.0, 1.0, 1.0, 0.0] and not outcome.requires_grad
    # turns in order: row 1 (p .9), row 2 (p .6), row 0 (p .2, the last: its target 1)
    nxt = laya.td_lambda_targets(p, batch, lam=0.0).tolist()
    assert nxt == pytest.approx([1.0, 0.6, 0.2, 0.0], abs=1e-6)
    half = laya.td_lambda_targets(p, batch, lam=0.5).tolist()
    row2 = 0.5 * 0.2 + 0.5 * 1.0
    assert half == pytest.approx([1.0, 0.5 * 0.6 + 0.5 * row2, row2, 0.0], abs=1e-6)
    alone = laya.td_lambda_targets(p, {"target": torch.tensor([1.0, 0.0, 1.0, 1.0])}, lam=0.0)
    assert alone.tolist() == [1.0, 0.0, 1.0, 1.0]
    for bad, field in (({}, "target"), ({"target": [1.0]}, "target"), (batch, "lam")):
        with pytest.raises(ValueError, match=field):
            laya.td_lambda_targets(p, bad, lam=2.0 if bad is batch else 1.0)


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


@pytest.mark.parametrize(
    ("body", "cleaned"),
    [
        ("Line one\\nLine two", "Line one\nLine two"),  # a literal \\n is a newline
        ("Please refund me.\n> quoted line\nThanks for checking.", "Please refund me.\nThanks for checking."),
        ("Please refund me now.\n\n--\nAna Silva\nACME Corp", "Please refund me now."),
        ("Please refund me.\n\n-----Original Message-----\nFrom: Bob\nSent: Monday\nold", "Please refund me."),
        ("Please refund me.\n\nFrom: Bob <b@x.com>\nSent: Monday\nTo: me\nSubject: hi\n\nold", "Please refund me."),
        ("Merci de me rembourser.\n\nLe lun. 3 juin 2024 à 10:00, Bob <b@x.com> a écrit :\n> vieux", "Merci de me rembourser."),
        ("Por favor reembolsar.\n\nEl lun, 3 jun 2024 a las 10:00, Bob escribió:\n> viejo", "Por favor reembolsar."),
        ("Olá,\n\nPreciso da segunda via.\n\nEm seg., 3 de jun. de 2024 às 10:00, Bob escreveu:\n> antigo", "Olá,\n\nPreciso da segunda via."),
        ("Please refund me.\n\n________________________________\nFrom: Bob\nold", "Please refund me."),
        ("Please refund the duplicate charge.\n\nBest regards,\nAna Silva", "Please refund the duplicate charge."),
        ("Please help with my order.\n\nSent from my iPhone", "Please help with my order."),
        ("Refund   please\t now", "Refund please now"),
    ],
)  # fmt: skip
def test_clean_email_body_as_published(body, cleaned):
    """surface.md 3.2: newlines (a literal \\n too), the quoted reply cut at its header (Gmail
    EN/PT/ES/FR, Outlook rules and From: blocks), > lines dropped, signatures and device footers
    cut, spaces collapsed."""
    assert laya.clean_email_body(body) == cleaned


def test_email_budget_and_state_as_published():
    """0 characters is empty, a negative budget trims from the end; ``email_state`` is
    ``{subject, body, [from], **extra}`` with None extras and a falsy sender left out."""
    assert laya.clean_email_body("Hello there friend", 0) == ""
    assert laya.clean_email_body("Hello there friend", -3) == "Hello there fri"
    assert laya.clean_email_body("Hello there friend", 5) == "Hello"
    assert laya.clean_email_body("x" * 20_000) == "x" * 3000
    state = laya.email_state("Subj", "Body  text", "a@b.c", ticket=None, priority="high", n=0)
    assert list(state) == ["subject", "body", "from", "priority", "n"]
    assert state["body"] == "Body text"
    assert "from" not in laya.email_state("Subj", "Body", "")
    assert laya.email_state("s", " raw ", clean=False)["body"] == " raw "


# The published runtime's exception names, where it defines them, and their published bases.
PUBLISHED_ERRORS = [
    ("laya.backends", "BackendUnavailable", RuntimeError),
    ("laya.backends.base", "BackendUnavailable", RuntimeError),
    ("laya.evals", "EvalError", ValueError),
    ("laya.integrations", "LayaAgnoGuardrailError", ValueError),
    ("laya.integrations", "LayaGuardrailError", ValueError),
    ("laya.integrations", "LayaLowConfidenceError", ValueError),
    ("laya.integrations", "LayaTaskGuardError", ValueError),
    ("laya.integrations.agno", "LayaAgnoGuardrailError", ValueError),
    ("laya.integrations.crewai", "LayaTaskGuardError", ValueError),
    ("laya.integrations.langchain", "LayaGuardrailError", ValueError),
    ("laya.integrations.tools", "LayaLowConfidenceError", ValueError),
    ("laya", "LayaGuardrailError", ValueError),
    ("laya.mcp.remote", "RemoteError", RuntimeError),
    ("laya.mcp.tools", "ToolError", Exception),
    ("laya.structured", "SchemaError", ValueError),
]


@pytest.mark.parametrize(("module", "name", "base"), PUBLISHED_ERRORS)
def test_published_exception_names_have_their_published_bases(module, name, base):
    """Issue 52: every exception name of public-api.md is there, a subclass of its published
    base (so ``except`` clauses written for the published runtime catch ours)."""
    error = getattr(importlib.import_module(module), name)
    assert isinstance(error, type) and issubclass(error, base)


def test_published_exceptions_are_raised_where_the_published_runtime_raises_them():
    """SchemaError for a field decide cannot map, naming its path; EvalError for a bad row,
    naming file:line; ToolError carrying its code; the
    guardrail and low-confidence errors with their published attributes."""
    from laya.structured import SchemaError, questions_from_json_schema

    from laya.evals import Example
    from laya.mcp.tools import ToolError, laya_predict

    for schema in (
        {"properties": {"note": {"type": "string"}}},
        {"properties": {"tags": {"type": "array", "items": {"type": "string"}}}},
        {"properties": {"inner": {"type": "object", "properties": {}}}},
        {"properties": {"mixed": {"type": ["integer", "string"]}}},
    ):
        with pytest.raises(SchemaError, match=next(iter(schema["properties"]))):
            questions_from_json_schema(schema)
    with pytest.raises(laya.evals.EvalError, match="rows.jsonl:3"):
        Example.from_dict({"state": "x"}, where="rows.jsonl:3")
    with pytest.raises(ToolError) as refused:
        laya_predict("x", {})
    assert refused.value.code == "invalid_questions" and refused.value.payload()["error"]
    from laya.integrations import LayaGuardrailError, LayaLowConfidenceError

    guard = LayaGuardrailError([{"question": "toxic", "probability": 0.9}], {"answers": {}})
    assert guard.violations[0]["question"] == "toxic" and guard.raw_decision == {"answers": {}}
    low = LayaLowConfidenceError(0.2, 0.5, {"answers": {}})
    assert (low.confidence, low.threshold, low.raw_decision) == (0.2, 0.5, {"answers": {}})


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


RELIABILITY_KEYS = [
    "probes",
    "option_layout",
    "decision",
    "soft_stability",
    "stability",
    "rename_stability",
    "reorder_stability",
    "n_variants",
    "distinct_choices",
    "variant_choices",
    "variant_support",
]


def _first_shown(ctx: PredictContext) -> None:
    """A stub answer for every question of ``ctx``: the first option shown, with certainty."""
    answers = {}
    for qid, definition in ctx.questions.items():
        shown = list(definition["criteria"])
        probabilities = {label: float(label == shown[0]) for label in shown}
        answers[qid] = {"type": "choice", "choice": shown[0], "probabilities": probabilities}
    ctx.results = [{"answers": answers}]


def test_reliability_block_keeps_the_published_keys_and_values():
    """Issue 52: ``distinct_choices`` is the list of choices made (first seen first), the layout
    is read as published (an Agent's ``config`` attribute: ``sequential``); laya's count and the
    checkpoint's own layout are the extra keys after the published ones."""

    class ParallelAgent:
        cfg = {"option_layout": "parallel"}

    hook = laya.OptionStabilityHook(accept=0.9, escalate=0.2)
    criteria = {"a": "first", "b": "second", "c": "third"}
    question = {"q": {"type": "choice", "instructions": "Which?", "criteria": criteria}}
    ctx = PredictContext(states=["x"], questions=question, agent=ParallelAgent())
    hook.on_predict_start(ctx)
    _first_shown(ctx)
    hook.on_predict_end(ctx)
    record = ctx.results[0]["answers"]["q"]["reliability"]
    assert list(record) == [*RELIABILITY_KEYS, "n_distinct_choices", "checkpoint_layout"]
    assert record["probes"] == ["reorder", "rename"] and record["option_layout"] == "sequential"
    assert record["checkpoint_layout"] == "parallel"
    made = ["a", *record["variant_choices"].values()]
    assert record["distinct_choices"] == list(dict.fromkeys(made))
    assert record["n_distinct_choices"] == len(record["distinct_choices"]) == 3
    agreeing = sum(c == "a" for c in record["variant_choices"].values())
    assert record["stability"] == round(agreeing / (record["n_variants"] - 1), 4)
    assert record["decision"] == "VERIFY"


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
    record = ctx.results[0]["answers"]["department"]["reliability"]
    assert record["soft_stability"] is None and record["distinct_choices"] == ["billing"]


def test_tmp_copy_is_not_needed_for_fixtures(tmp_path):
    """Loading never writes into a checkpoint (the fixtures are read-only)."""
    copy = shutil.copytree(MODERNBERT, tmp_path / "ckpt")
    before = {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    laya.load(
        str(copy), "cpu", expected_sha256={"model.safetensors": _sha(copy / "model.safetensors")}
    )
    assert {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()} == before


# ------------------------------------------------------------------ laya.backends


def _encoded_batch(agent, states, question):
    """The padded tensors of ``states`` x one question, as the published backends take them."""
    import laya.train

    tok, cfg = agent.checkpoint_tokenizer, agent.checkpoint_config
    items = [
        laya.train.make_item(
            tok,
            question,
            [1.0] + [0.0] * (len(question["criteria"]) - 1),
            laya.train.encode_state(tok, state, cfg.max_len),
            cfg.head_max_len,
        )[0]
        for state in states
    ]
    from laya.training.items import collate, encode_item

    rows = [encode_item(tok, i, cfg.max_len, cfg.head_max_len) for i in items]
    inputs, _ = collate(rows, tok.pad_id, "cpu")
    return inputs


def test_backend_names_normalise_and_fall_back(agent, onnx_agent):
    from importlib.util import find_spec

    from laya.backends import NAMES, auto_policy, install, make_backend, normalise
    from laya.backends.eager import EagerBackend

    assert NAMES == ("auto", "eager", "compile", "tilelang", "onnx")
    assert normalise(" PyTorch ") == "eager" and normalise(None) == "auto"
    with pytest.raises(ValueError, match="backend"):
        normalise("gpu")
    assert auto_policy(agent) == "eager"
    assert isinstance(make_backend("auto", agent), EagerBackend)
    with pytest.raises(InvalidRequest, match="backend='onnx'"):
        make_backend("onnx", agent)
    with pytest.raises(InvalidRequest, match="agent"):
        make_backend("eager", onnx_agent)
    what = "pip install tilelang" if find_spec("tilelang") is None else "laya.tl_kernels"
    with pytest.raises(BackendUnavailable, match=what) as refused:
        make_backend("tilelang", agent)
    assert "\n" not in str(refused.value) and isinstance(refused.value, RuntimeError)
    with pytest.raises(BackendUnavailable):
        install(agent, "tilelang", strict=True)
    with pytest.warns(RuntimeWarning, match="running 'eager'"):
        assert isinstance(install(agent, "tilelang"), EagerBackend)
    assert agent.backend == "eager"
    for extra in ("laya.fast", "laya.tl_kernels"):  # the published GPU extras: not here
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(extra)


@pytest.mark.slow  # torch.compile's first compile
def test_eager_and_compile_backends_give_the_default_numbers(modernbert_dir):
    import torch
    from laya.backends import install
    from laya.backends.compile import CompileBackend
    from laya.backends.eager import EagerBackend

    agent = laya.load(str(modernbert_dir), "cpu")
    question = QUESTIONS["department"]
    want = agent.predict_batch([STATE, "my login fails"], QUESTIONS)
    inputs = _encoded_batch(agent, [STATE, "my login fails", "hi"], question)
    stock_logits, stock_act = EagerBackend(agent).stock_forward(*inputs)
    eager = install(agent, "eager")
    logits, act = eager.forward(*inputs)
    assert torch.allclose(logits, stock_logits.float(), atol=TOLERANCE)
    assert torch.allclose(act, stock_act.float(), atol=TOLERANCE)
    compiled = install(agent, "compile", mode="default", warmup=False)
    assert isinstance(compiled, CompileBackend) and agent.backend == "compile"
    c_logits, c_act = compiled.forward(*inputs)  # 3 rows padded to a bucket of 4
    assert c_logits.shape == logits.shape
    assert torch.allclose(c_logits, logits, atol=TOLERANCE)
    assert torch.allclose(c_act, act, atol=TOLERANCE)
    for ours, theirs in zip(agent.predict_batch([STATE, "my login fails"], QUESTIONS), want):
        assert_close(ours, theirs)
    compiled.uninstall()
    assert agent.backend == "eager"


def test_bucketed_shapes_and_padding():
    import torch
    from laya.backends import bucket_shape, pad_batch, warn_fallback
    from laya.backends.base import DYNAMIC_MAX_L, LONG_BUCKET, bucket_rows, bucket_tokens
    from laya.backends.compile import (
        CACHE_DIR_ENV,
        DEFAULT_CACHE_DIR,
        WARMUP_ENV,
        WARMUP_SHAPES,
        warmup_enabled,
    )

    assert (DYNAMIC_MAX_L, LONG_BUCKET) == (256, 64)
    assert bucket_shape(3, 70, 512) == (4, 128)
    assert bucket_shape(5, 300, 512) == (8, 320)
    assert bucket_rows(1) == 1 and bucket_tokens(5, 512) == 16 and bucket_tokens(200, 150) == 200
    ids = torch.ones((3, 70), dtype=torch.long)
    mask = torch.ones((3, 70), dtype=torch.long)
    pos, real, qtype = torch.ones((3, 4), dtype=torch.long), torch.ones((3, 4)), torch.zeros(3)
    padded = pad_batch(ids, mask, pos, real, qtype, max_len=512, pad_id=7, keep_one_token=True)
    assert [tuple(t.shape) for t in padded] == [(4, 128), (4, 128), (4, 4), (4, 4), (4,)]
    assert padded[0][0, -1] == 7 and padded[1][3].tolist() == [1] + [0] * 127
    assert (CACHE_DIR_ENV, WARMUP_ENV) == ("LAYA_INDUCTOR_CACHE_DIR", "LAYA_COMPILE_WARMUP")
    assert DEFAULT_CACHE_DIR == "~/.cache/laya/inductor"
    assert WARMUP_SHAPES == ((1, 64, 3), (4, 128, 5), (8, 256, 6))
    assert isinstance(warmup_enabled(), bool)
    with pytest.warns(RuntimeWarning, match="'x' is not available"):
        warn_fallback("x", "no reason")


# ------------------------------------------------------------------ laya.train


def test_train_constants():
    import laya.train as train

    assert (train.CALIB_WARN_N, train.MIN_TYPE_N) == (50, 10)
    assert (train.COLLAPSE_CE_REL, train.COLLAPSE_LOGIT_RANGE) == (0.02, 0.05)
    assert (train.TEMP_MIN, train.TEMP_MAX) == (0.5, 5.0)
    assert train.QTYPES == {"choice": 0, "score": 1, "noul": 2}
    assert train.QTYPE_NAMES == {0: "choice", 1: "score", 2: "noul"}
    assert train.LOSSES == ("soft-ce", "rlcd")
    assert train.OPTION_LAYOUTS == ("sequential", "parallel")


def test_objectives_are_finite_scalars_with_gradients():
    import torch
    from laya.train import rlcd_loss, sigma_at, soft_ce_loss

    torch.manual_seed(0)
    logits = torch.randn(3, 4, requires_grad=True)
    target = torch.tensor([[1.0, 0, 0, 0], [0, 0.5, 0.5, 0], [0, 1.0, 0, 0]])
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1], [1, 1, 0, 0]]).bool()
    qtype = torch.tensor([0, 1, 2])
    loss = rlcd_loss(logits, target, mask, qtype, sigma=0.4)
    assert loss.dim() == 0 and torch.isfinite(loss)
    loss.backward()
    assert logits.grad is not None and torch.isfinite(logits.grad).all()
    assert logits.grad[~mask].abs().max() == 0 and logits.grad[mask].abs().sum() > 0
    ce = soft_ce_loss(logits.detach(), target, mask)
    log_p = logits.detach().masked_fill(~mask, -1e4).log_softmax(-1)
    assert abs(ce.item() + (target * log_p).sum(-1).mean().item()) <= TOLERANCE
    assert sigma_at(0, 4, 0.4, 0.1) == 0.4 and abs(sigma_at(3, 4, 0.4, 0.1) - 0.1) <= 1e-12
    with pytest.raises(ValueError, match="sigma"):
        rlcd_loss(logits, target, mask, qtype, sigma=0.0)


def test_items_encode_what_the_agent_reads(agent):
    import laya.train as train
    import torch

    model, tok, cfg = train.load_checkpoint(str(MODERNBERT))
    assert cfg["max_len"] == 192 and tok.pad_id == agent.checkpoint_tokenizer.pad_id
    rows = [
        {"state": STATE, "questions": QUESTIONS, "expected": {"department": "billing"}},
        {"state": "my login fails", "questions": QUESTIONS, "expected": {"department": "x"}},
        {
            "state": [{"role": "user", "content": "cancel it"}],
            "questions": {"churn_risk": QUESTIONS["churn_risk"]},
            "gold": {"churn_risk": {"probabilities": {"true": 3, "false": 1}}},
        },
        {"state": "  ", "questions": QUESTIONS},
    ]
    items, skipped = train.items_from_rows(tok, rows, cfg["max_len"], cfg["head_max_len"])
    assert [(i["row"], i["qid"]) for i in items] == [(0, "department"), (2, "churn_risk")]
    assert skipped["target_mismatch"] == 1 and skipped["empty_label"] == 4
    assert skipped["empty_text"] == 3 and items[1]["target"] == [0.25, 0.75]
    assert items[1]["keep_last"] is True
    records = train.calibration_records(
        model, tok, items, torch.device("cpu"), cfg["max_len"], cfg["head_max_len"]
    )
    assert [(r[0], r[3]) for r in records] == [(0, 4), (2, 2)]
    answer = agent.predict(STATE, {"department": QUESTIONS["department"]})["answers"]
    z = np.array(records[0][1]) / 1.6  # a choice of 4 options: its bucket temperature
    p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    for label, prob in zip(QUESTIONS["department"]["criteria"], p):
        assert abs(answer["department"]["probabilities"][label] - prob) <= TOLERANCE
    listed = train.encode_item(tok, items[0], 192, 96, [3, 2, 1, 0])
    assert listed["target"] == [0.0, 0.0, 0.0, 1.0] and listed["option_order"] == [3, 2, 1, 0]
    assert tok.mask_id in listed["input_ids"] and len(listed["marker_pos"]) == 4


def test_make_item_says_why_it_skips_and_to_internal(agent):
    import random

    import laya.train as train

    tok, noul = agent.checkpoint_tokenizer, QUESTIONS["churn_risk"]
    state = train.encode_state(tok, "x " * 500, 20)
    assert len(state) == 20
    assert train.make_item(tok, noul, [0.0, 1.0, 0.0], state, 96)[1] == "target_mismatch"
    assert train.make_item(tok, {"type": "noul"}, [0, 1], state, 96)[1] == "invalid_question"
    starts = ["the very same start one", "the very same start two"]  # cut to 3 tokens each
    same = {"type": "choice", "instructions": "?", "criteria": starts}
    assert train.make_item(tok, same, [1, 0], state, 24)[1] == "options_collapsed"
    far = train.make_item(tok, QUESTIONS["department"], [1, 0, 0, 0], state, 96, max_len=10)
    assert far == (None, "options_beyond_max_len")
    item, reason = train.make_item(tok, noul, [0.0, 1.0], state, 96)
    assert reason is None and (item["qtype"], item["k"]) == (2, 2)
    rng = random.Random(0)
    assert train.draw_option_order(item, rng, ("choice",)) is None
    choice, _ = train.make_item(tok, QUESTIONS["department"], [1, 0, 0, 0], state, 96)
    assert sorted(train.draw_option_order(choice, rng, ("choice",))) == [0, 1, 2, 3]
    internal = train.to_internal("q", {"type": "choice", "instructions": 5, "criteria": ["a"]})
    assert internal == {"t": "choice", "ins": "5", "crit": {"a": None}}
    assert train.to_internal("n", {**noul, "criteria": {"TRUE": "yes"}})["crit"] == {"true": "yes"}
    assert train.make_item(tok, internal, [1.0], state, 96)[1] is None
    with pytest.raises(InvalidRequest, match="instructions"):
        train.to_internal("q", {"type": "choice", "criteria": ["a"]})
    with pytest.raises(ValueError, match="target_mismatch"):
        train.target_from_expected(QUESTIONS["department"], "nowhere")


def test_records_evaluate_and_collapse():
    import laya.train as train

    good = [(0, [4.0 if j == i % 3 else 0.0 for j in range(3)], i % 3, 3) for i in range(60)]
    figures = train.evaluate_records(good)
    assert figures["n"] == 60 and figures["accuracy"] == 1.0
    assert figures["mean_confidence"] > 0.9 and figures["top1_brier"] < 0.01
    hotter = train.evaluate_records(good, [2.0, 1.0, 1.0], {"choice:3-5": 4.0})
    assert hotter["mean_confidence"] < figures["mean_confidence"]
    report = train.calibration_report(good, [2.0, 1.0, 1.0])
    assert report["choice"]["n"] == 60 and report["choice"]["weak"] is False
    assert (
        report["choice"]["after"]["mean_confidence"] < report["choice"]["before"]["mean_confidence"]
    )
    assert train.prior_collapse_message(good) is None
    flat = [(0, [0.01, 0.0, 0.0], i % 3, 3) for i in range(60)]
    stats = train.collapse_stats(flat)
    assert stats["logit_range"] < train.COLLAPSE_LOGIT_RANGE
    assert "class prior" in train.prior_collapse_message(flat)
    assert train.collapse_stats(good[:1]) is None
    with pytest.raises(InvalidRequest, match="record 0"):
        train.evaluate_records([(7, [1.0], 0, 1)])
    with pytest.raises(InvalidRequest, match="temperature"):
        train.calibration_report(good, [1.0, 1.0])
    with pytest.raises(ValueError, match="rows"):
        train.items_from_rows(None, ["not a row"], 192, 96)


def test_train_model_saves_a_checkpoint_laya_loads(tmp_path):
    import laya.train as train
    import torch

    model, tok, cfg = train.load_checkpoint(str(MODERNBERT))
    rows = [
        {"state": f"refund {i}", "questions": QUESTIONS, "expected": {"department": "billing"}}
        for i in range(3)
    ]
    items, _ = train.items_from_rows(tok, rows, 192, 96)
    before = model.scorer[1].weight.detach().clone()
    heard = []
    config = train.TrainConfig(epochs=2, micro_batch=2, grad_accum=1, head_lr=1e-3)
    losses = train.train_model(
        model, tok, items, config, torch.device("cpu"), 192, 96, lambda e, loss: heard.append(e)
    )
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses) and heard == [0, 1]
    assert not torch.equal(before, model.scorer[1].weight)
    soft = train.train_model(
        model, tok, items, train.TrainConfig(epochs=1, loss="soft-ce"), "cpu", 192, 96
    )
    assert len(soft) == 1
    train.save_checkpoint(model, tok, cfg, str(tmp_path / "out"))
    trained = laya.load(str(tmp_path / "out"), "cpu")
    answer = trained.predict(STATE, QUESTIONS)["answers"]["department"]
    records = train.calibration_records(model, tok, items[:1], "cpu", 192, 96)
    assert set(answer["probabilities"]) == set(QUESTIONS["department"]["criteria"])
    assert len(records) == 1
    assert train.resolve_device("cpu") == torch.device("cpu")
    assert train.resolve_checkpoint_dir(str(MODERNBERT)) == str(MODERNBERT)
    with pytest.raises(InvalidRequest, match="loss"):
        train.train_model(model, tok, items, train.TrainConfig(loss="mse"), "cpu", 192, 96)
    with pytest.raises(InvalidRequest, match="items"):
        train.train_model(model, tok, [], train.TrainConfig(), "cpu", 192, 96)


# ------------------------------------------------------------------ the other published names


def test_language_rates_and_temperature_clamp():
    from laya.common import clamp_temperature

    from laya.lang import ENGLISH_RESCUE_DIACRITIC_RATE, NON_EN_DIACRITIC_RATE, analyse

    assert (NON_EN_DIACRITIC_RATE, ENGLISH_RESCUE_DIACRITIC_RATE) == (0.02, 0.06)
    assert analyse("qwz")["is_english"] is True  # undecided, no non-English letters
    assert analyse("qwé")["is_english"] is False  # undecided, 1 of 3 letters non-English
    assert clamp_temperature(9) == 5.0 and clamp_temperature(0.1, 0.2, 3) == 0.2
    assert clamp_temperature("x") == 1.0


def test_server_and_remote_constants():
    import laya.agent
    import laya.serve

    from laya.mcp.remote import RemoteError

    assert laya.serve.BODY_CONTROLS == (
        "model",
        "max_len",
        "head_max_len",
        "task",
        "lang",
        "lang_guess",
        "min_confidence",
    )
    assert laya.agent.MIN_BINNING_BUCKET_N == 200
    assert issubclass(RemoteError, RuntimeError) and issubclass(RemoteError, ConnectionError)
    import laya.mcp

    assert laya.mcp.device.__name__ == "laya.mcp.device" and "tools" in laya.mcp.__all__


def test_mcp_preset_builder_and_remote_router_orders(agent):
    from laya.mcp.remote import RemoteRouter
    from laya.mcp.tools import laya_preset

    rude = {"rude": {"type": "noul", "instructions": "Is the message rude?"}}
    asked = []
    result = laya_preset(
        "guard", STATE, agent=agent, preset_builder=lambda name: asked.append(name) or rude
    )
    assert asked == ["guard"] and set(result["answers"]) == {"rude"}
    assert result["preset"] == "guard"
    remote = RemoteRouter("http://127.0.0.1:9")  # nothing is sent before the checks
    with pytest.raises(InvalidRequest, match="hooks_timeout"):
        remote.predict_batch([{"state": STATE, "questions": QUESTIONS}], None, 5.0)
    names = list(inspect.signature(RemoteRouter.predict).parameters)[1:7]
    assert names == ["state", "questions", "model", "task", "lang", "lang_guess"]
