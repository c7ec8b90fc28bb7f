"""The ``laya`` command: route or answer from the shell, its subcommands and their terminal
output (docs/cli.md). ``laya.cli.main`` is the command; importing the package loads nothing else."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what __getattr__ loads, as the type checker sees it
    from .command import main

__all__ = ["main"]


def __getattr__(name: str) -> object:
    """``main``, imported on first use (so ``laya.cli.render`` does not load the whole command)."""
    if name == "main":
        from .command import main

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
