"""Module paths that name a module living elsewhere: earlier layouts of this package and the
published runtime's paths (docs/migrating.md), each imported as the very module that does that
job (one module, two names; a package alias covers its submodules)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib import import_module
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from importlib.util import spec_from_loader
from types import ModuleType

__all__ = ["ALIASES", "install_aliases"]

ALIASES = {
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
    "laya.shortlist": "laya.compat.laya_shortlist",
    "laya.schema": "laya.typed.plans",
    "laya.presets": "laya.typed.presets",
    "laya.shortcuts": "laya.router.shortcuts",
    "laya.router.decide": "laya.router.table",
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
    # the published runtime's module paths: the core module that does the job, or where the
    # published module holds more than that (its internals), the one here that presents it
    "laya.agent": "laya.compat.laya_agent",
    "laya.onnx_agent": "laya.compat.laya_onnx_agent",
    "laya.common": "laya.compat.laya_common",
    "laya.serve": "laya.compat.laya_serve",
    "laya.train": "laya.compat.laya_train",
    "laya.structured": "laya.typed.values",
    "laya.confidence": "laya.engine.gate",
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

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        return None if self.target(fullname) is None else spec_from_loader(fullname, self)

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        return import_module(self.target(spec.name) or spec.name)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module it names ran when it was imported."""


def install_aliases() -> None:
    """Put the alias finder first on ``sys.meta_path`` (once per process)."""
    if not any(isinstance(finder, _Aliases) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Aliases())
