"""Where the MCP server's checkpoints run: the requested device and each resident one's own
(``laya_status``, docs/integrations.md). Nothing here imports torch unless asked to resolve."""

from __future__ import annotations

import os
import sys

from ..checkpoint import canonical_name

__all__ = ["agent_device", "device_report", "env_device", "resolve_device", "router_agent"]


def env_device() -> str | None:
    """The device ``LAYA_DEVICE`` asks for (None: the best available)."""
    return (os.environ.get("LAYA_DEVICE") or "").strip() or None


def resolve_device(force: str | None = None) -> str:
    """The torch device a checkpoint would run on for ``force`` (or ``LAYA_DEVICE``)."""
    from ..engine.backends.torch import resolve_device as torch_device

    return str(torch_device(force or env_device()))


def agent_device(agent: object) -> str | None:
    """The device a built runtime runs on: a torch device, or its backend's name (``onnx``)."""
    device = getattr(agent, "device", None)
    if device is not None:
        return str(device)
    backend = getattr(agent, "backend", None)
    name = getattr(backend, "name", backend)
    return None if name is None else str(name)


def router_agent(router: object, name: str) -> object | None:
    """The resident runtime of checkpoint ``name`` in ``router`` (None when not loaded)."""
    resident = getattr(router, "resident", {})
    return resident.get(canonical_name(name)) if isinstance(resident, dict) else None


def device_report() -> dict[str, str]:
    """The device asked for, and whether torch (and so a device) has been chosen yet."""
    report = {"requested": env_device() or "auto"}
    if "torch" in sys.modules:
        report["resolved"] = resolve_device()
    return report
