"""The console scripts beside ``laya`` (pyproject.toml): ``laya-serve``, ``laya-train`` and
``laya-evals`` run ``laya serve``, ``laya train`` and ``laya eval`` with the process's arguments,
the very same code (docs/cli.md, "Console scripts"). ``laya-mcp-server`` is ``laya mcp``'s own
entry point, ``laya.mcp.server:mcp_main``."""

from __future__ import annotations

from .command import script

__all__ = ["laya_evals", "laya_serve", "laya_train"]

laya_serve = script("serve")
laya_train = script("train")
laya_evals = script("eval")
