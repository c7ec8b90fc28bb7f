"""The bundled ``mini`` answered through its shipped ONNX graph, so a command starts in a second.

``mini`` ships ``laya.onnx``, a graph that reads the checkpoint's own weights and answers within
2e-4 of PyTorch (docs/agent.md, the ONNX section). Loading it with ONNX Runtime takes well under
a second and imports neither torch nor transformers, where the PyTorch path spends seconds on
imports alone. So a command that is about to answer with ``mini`` attaches an
:class:`~laya.runtime.ONNXAgent` to its Router first, when ONNX Runtime is installed and nothing
asks for PyTorch (no ``--device``); docs/cli.md, "Start-up".
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.util import find_spec
from typing import TYPE_CHECKING

from ..checkpoint import BUILTIN, BUNDLED

if TYPE_CHECKING:
    from ..router import Router

__all__ = ["MINI", "attach_onnx_mini", "onnx_mini_available"]

MINI = "mini"


def onnx_mini_available(device: str | None) -> bool:
    """Whether ``mini`` can answer on ONNX Runtime here: no torch device asked for, ONNX Runtime
    installed, and the graph shipped beside the weights."""
    graph = BUNDLED[MINI] / "laya.onnx"
    return device is None and graph.is_file() and find_spec("onnxruntime") is not None


def attach_onnx_mini(router: Router, names: Iterable[str], device: str | None) -> bool:
    """Make ``mini`` resident on ONNX Runtime when the Router is about to load it (``names``) as
    the bundled checkpoint and :func:`onnx_mini_available`; returns whether it did."""
    bundled = router.models.get(MINI) == BUILTIN[MINI]
    if MINI not in names or MINI in router.loaded or not bundled:
        return False
    if not onnx_mini_available(device):
        return False
    from ..engine.decoding import MODEL_NAME
    from ..runtime import ONNXAgent

    agent = ONNXAgent(str(BUNDLED[MINI]), calibration=router.calibrations.get(MINI))
    agent.model_name = MODEL_NAME  # its answers read as PyTorch's do
    router.attach(MINI, agent)
    return True
