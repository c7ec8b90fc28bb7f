"""The console scripts beside ``laya`` (pyproject.toml): ``laya-serve``, ``laya-train``,
``laya-evals`` and ``laya-mcp-server`` run ``laya serve``, ``laya train``, ``laya eval`` and
``laya mcp`` with the process's arguments, the very same code (docs/cli.md, "Console scripts"),
so a missing extra is the command's one error line, not an import traceback."""

from __future__ import annotations

from .command import script

__all__ = ["laya_evals", "laya_mcp_server", "laya_serve", "laya_train"]

laya_serve = script("serve")
laya_train = script("train")
laya_evals = script("eval")
laya_mcp_server = script("mcp")
