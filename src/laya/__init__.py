"""laya: typed decisions (choice, score, noul) with calibrated probabilities from one encoder pass.

``import laya`` is light: the hook system is pure Python, and the runtimes (which need torch,
transformers or onnxruntime) are imported the first time one of their names is used. Module
paths of earlier layouts (``laya.testing``, ``laya.encoding``...) and of the published runtime
(``laya.agent``, ``laya.structured``, ``laya.common``...) are installed here by
:mod:`laya.compat`, the published surface, which only this module imports
(docs/architecture.md, docs/migrating.md).
"""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec
from typing import Any

from . import compat, hooks
from .hooks import (
    HOOK_EVENTS,
    AsyncHook,
    BaseHook,
    Hook,
    PredictContext,
    PredictHook,
    add_default_hook,
    aggregate_usage,
    clear_default_hooks,
    compose_hooks,
    default_hooks,
    set_default_hooks,
)
from .version import __version__

compat.install()  # the published module paths and views: the one import of laya.compat

_LAZY = {
    "Agent": "laya.runtime",
    "RLAgent": "laya.runtime",
    "ONNXAgent": "laya.runtime",
    "load": "laya.runtime",
    "Router": "laya.router",
    "RouteDecision": "laya.router",
    "DEFAULT_MODELS": "laya.router",
    "analyse": "laya.lang",
    "detect_language": "laya.lang",
    "detect_script": "laya.lang",
    "is_english": "laya.lang",
    "PRESETS": "laya.typed.presets",
    "email_questions": "laya.typed.presets",
    "guard_questions": "laya.typed.presets",
    "moderation_questions": "laya.typed.presets",
    "router_questions": "laya.typed.presets",
    "state_field": "laya.typed.presets",
    "triage_questions": "laya.typed.presets",
    "clean_email_body": "laya.typed.email_states",
    "email_state": "laya.typed.email_states",
    "decide": "laya.typed.values",
    "decide_batch": "laya.typed.values",
    "DecisionResult": "laya.typed.values",
    "decision": "laya.router.shortcuts",
    "decision_batch": "laya.router.shortcuts",
    "Decision": "laya.typed.decisions",
    "FieldDecision": "laya.typed.decisions",
    "Criteria": "laya.typed.plans",
    "Scale": "laya.typed.plans",
    "Calibration": "laya.engine.calibration",
    "read_calibration": "laya.engine.calibration",
    "GATE_STATES": "laya.engine.gate",
    "apply_confidence_gate": "laya.engine.gate",
    "check_min_confidence": "laya.engine.gate",
    "check_min_confidence_map": "laya.engine.gate",
    "flag_low_confidence": "laya.engine.gate",
    "jev_confidence": "laya.engine.gate",
    "resolve_min_confidence": "laya.engine.gate",
    "QTYPES": "laya.engine.questions",
    "QTYPE_NAMES": "laya.engine.questions",
    "render_options": "laya.compat.laya_common",
    "answer_confidence": "laya.engine.decoding",
    "confidence_from_probs": "laya.engine.decoding",
    "ece_score": "laya.engine.scores",
    "proper_reward": "laya.engine.scores",
    "td_lambda_targets": "laya.engine.scores",
    "PINNED_REVISIONS": "laya.checkpoint.revisions",
    "OptionStabilityHook": "laya.hooks.stability",
    "predict_tournament": "laya.engine.strategies.choices",
    "predict_shortlist": "laya.engine.strategies.choices",
    "shortlist_choice": "laya.engine.strategies.choices",
    "embed_fn_from_agent": "laya.runtime",
    "cached_embed_fn": "laya.engine.strategies.choices",
    "apply_binning_map": "laya.training.fit_calibration",
    "fit_abstention_thresholds": "laya.training.fit_calibration",
    "fit_binning_map": "laya.training.fit_calibration",
    "fit_one_temperature": "laya.training.fit_calibration",
    "fit_temperature_map": "laya.training.fit_calibration",
    "fit_temperatures": "laya.training.fit_calibration",
    "LayaRouter": "laya.integrations.langchain",
    "LayaGuardrail": "laya.integrations.langchain",
    "LayaTriage": "laya.integrations.langchain",
    "LayaEvaluator": "laya.integrations.langchain",
    "LayaDecision": "laya.integrations.langchain",
    "LayaGuardrailError": "laya.errors",
}

__all__ = [
    "HOOK_EVENTS",
    "AsyncHook",
    "BaseHook",
    "Hook",
    "PredictContext",
    "PredictHook",
    "__version__",
    "add_default_hook",
    "aggregate_usage",
    "clear_default_hooks",
    "compose_hooks",
    "default_hooks",
    "hooks",
    "set_default_hooks",
    *_LAZY,
    # modules, as the published runtime lists them (the alias finder imports them on first use)
    "confidence",
    "email",
    "lang",
    "presets",
    "router",
    "structured",
]


def __getattr__(name: str) -> Any:
    """The runtimes' names, and the submodules (``laya.testing``, ``laya.errors``), on first use."""
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(import_module(module), name)
    elif not name.startswith("_") and find_spec(f"{__name__}.{name}") is not None:
        value = import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module 'laya' has no attribute {name!r}")
    globals()[name] = value
    return value
