"""The published ``laya.agent`` module: ``Agent`` (``RLAgent``), ``load``, its constants, and
``build_sequence``, the name its Agent builds rows with: rebinding it here (as laya-mcp does)
builds the rows of later PyTorch predictions (laya.compat.adapters.PublishedModule;
docs/migrating.md, "Published internals")."""

from __future__ import annotations

import sys

from ..engine.fitting import MIN_BINNING_BUCKET_N
from ..engine.questions import QTYPES
from ..runtime import TEMP_MAX, TEMP_MIN, Agent, RLAgent, load
from .adapters import PublishedModule
from .laya_common import build_sequence

__all__ = [
    "MIN_BINNING_BUCKET_N",
    "QTYPES",
    "TEMP_MAX",
    "TEMP_MIN",
    "Agent",
    "RLAgent",
    "build_sequence",
    "load",
]

_OWN_BUILD = build_sequence
_ROWS_BACKEND = "torch"
sys.modules[__name__].__class__ = PublishedModule
