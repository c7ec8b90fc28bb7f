"""The published runtime's surface over laya's core: its module paths, its internals, its
modules that only present names (docs/architecture.md, "The published surface";
docs/migrating.md).

* :mod:`~laya.compat.aliases`: the module paths (``laya.agent``, ``laya.structured``,
  ``laya.testing``...) as an import hook, each the module that does that job;
* :mod:`~laya.compat.adapters`: what ``agent.tok`` and ``agent._to_internal`` present, and the
  rows of a rebound ``build_sequence`` (the core asks through laya.engine.seams);
* ``laya_agent``, ``laya_onnx_agent``, ``laya_common``, ``laya_serve``, ``laya_train``: the
  published modules whose names are more than one core module holds.

Nothing in the core imports this package: the package root calls :func:`install` once, when
``laya`` is imported. Importing it loads nothing heavy.
"""

from __future__ import annotations

from ..engine.seams import present
from .adapters import Views
from .aliases import ALIASES, install_aliases

__all__ = ["ALIASES", "install"]


def install() -> None:
    """Make the published module paths importable and hand the core the published views."""
    install_aliases()
    present(Views())
