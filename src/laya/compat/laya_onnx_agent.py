"""The published ``laya.onnx_agent`` module: ``ONNXAgent``, its constants, and
``build_sequence``, the name its ONNXAgent builds rows with: rebinding it here builds the rows
of later ONNX Runtime predictions (laya.compat.adapters.PublishedModule)."""

from __future__ import annotations

import sys

from ..engine.questions import QTYPES
from ..runtime import TEMP_MAX, TEMP_MIN, ONNXAgent
from .adapters import PublishedModule
from .laya_common import build_sequence

__all__ = ["QTYPES", "TEMP_MAX", "TEMP_MIN", "ONNXAgent", "build_sequence"]

_OWN_BUILD = build_sequence
_ROWS_BACKEND = "onnx"
sys.modules[__name__].__class__ = PublishedModule
