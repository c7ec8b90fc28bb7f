"""laya: typed decisions (choice, score, noul) with calibrated probabilities from one encoder pass.

``import laya`` is light: the hook system is pure Python, and the runtimes (which need torch,
transformers or onnxruntime) are imported the first time one of their names is used. Module
paths of earlier layouts (``laya.onnx``, ``laya.testing``, ``laya.lang``...) and of the published
runtime (``laya.agent``, ``laya.structured``, ``laya.confidence``...) are aliases of the modules
that do that job here (docs/architecture.md, docs/migrating.md).
"""

from __future__ import annotations

import sys
from importlib import import_module
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from importlib.util import find_spec, spec_from_loader
from types import ModuleType
from typing import Any

from . import hooks
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

__version__ = "0.1.0"

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
    "render_options": "laya.engine.questions",
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
    "embed_fn_from_agent": "laya.engine.strategies.choices",
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

# Module paths that name a module living elsewhere today (a package alias covers its submodules):
# earlier layouts of this package, and the published runtime's paths.
ALIASES = {
    "laya.serve": "laya.server.published",
    "laya.onnx_weights": "laya.onnx.linked_weights",
    "laya.testing": "laya.checkpoint.testing",
    "laya.lifecycle": "laya.hooks.lifecycle",
    "laya.questions": "laya.engine.questions",
    "laya.states": "laya.engine.states",
    "laya.encoding": "laya.engine.encoding",
    "laya.decoding": "laya.engine.decoding",
    "laya.result": "laya.engine.result",
    "laya.gate": "laya.engine.gate",
    "laya.calibration": "laya.engine.calibration",
    "laya.precision": "laya.engine.precision",
    "laya.deadline": "laya.engine.deadline",
    # laya.backends held the engine's backends before it became the published run modes
    "laya.backends.torch": "laya.engine.backends.torch",
    "laya.backends.packed": "laya.engine.backends.packed",
    "laya.backends.kernels": "laya.engine.backends.kernels",
    "laya.backends.masks": "laya.engine.backends.masks",
    "laya.backends.onnx": "laya.engine.backends.onnx",
    "laya.backends": "laya.run_modes",
    "laya.scan": "laya.engine.strategies.long_documents",
    "laya.tournament": "laya.engine.strategies.tournament",
    "laya.shortlist": "laya.engine.strategies.choices",
    "laya.schema": "laya.typed.plans",
    "laya.presets": "laya.typed.presets",
    "laya.shortcuts": "laya.router.shortcuts",
    "laya.router.decide": "laya.router.table",
    "laya.train": "laya.training.published_train",
    "laya.train_cli": "laya.training.train_command",
    "laya.evals_cli": "laya.evals.evals_command",
    "laya.evals_shortlist": "laya.evals.many_options",
    "laya.evals_tournament": "laya.evals.many_options",
    "laya.evidence": "laya.evals.evidence",
    "laya.train_files": "laya.training.run_files",
    "laya.option_binding": "laya.training.option_binding",
    "laya.pairs": "laya.training.pairs",
    "laya.warmup": "laya.training.warmup_data",
    "laya.evaluate": "laya.training.evaluate",
    "laya.fitting": "laya.training.fit_calibration",
    "laya.selective": "laya.training.selective",
    "laya.render": "laya.cli.render",
    "laya.batch": "laya.cli.batch",
    "laya.server.errors": "laya.server.statuses",
    "laya.server.main": "laya.server.serve",
    "laya.playground": "laya.server.playground",
    "laya.mcp_server": "laya.mcp.server",
    # the published runtime's module paths (docs/migrating.md)
    "laya.agent": "laya.runtime",
    "laya.onnx_agent": "laya.runtime",
    "laya.structured": "laya.typed.values",
    "laya.confidence": "laya.engine.gate",
    "laya.common": "laya.engine.scores",
    "laya.email": "laya.typed.email_states",
    "laya.revisions": "laya.checkpoint.revisions",
    "laya.calibrate": "laya.training.fit_calibration",
    "laya.integrations.tools": "laya.integrations.tool_selector",
}


class _Aliases(MetaPathFinder, Loader):
    """Imports an alias as the very module object it names (one module, two names)."""

    @staticmethod
    def target(fullname: str) -> str | None:
        for alias, real in ALIASES.items():
            if fullname == alias or fullname.startswith(alias + "."):
                return real + fullname[len(alias) :]
        return None

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        return None if self.target(fullname) is None else spec_from_loader(fullname, self)

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        return import_module(self.target(spec.name) or spec.name)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module it names ran when it was imported."""


if not any(isinstance(finder, _Aliases) for finder in sys.meta_path):
    sys.meta_path.insert(0, _Aliases())

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
