"""Route each request to the checkpoint that can read it, and keep a few checkpoints resident.

The package's files are its jobs: ``names`` (the checkpoint table and its rules), ``table``
(the routing table, pure), ``residency`` (which runtimes stay in memory) and ``core`` (the
:class:`Router` that composes them and runs the hook lifecycle). Importing it does not import
torch: the runtime and the language detector load the first time they are needed.
"""

from .core import Router
from .names import STANDALONE_REPOS
from .table import (
    TYPED_DECISIONS_WORKFLOWS,
    RouteDecision,
    english_from_code,
    match_typed_decisions_workflow,
)

__all__ = [
    "STANDALONE_REPOS",
    "TYPED_DECISIONS_WORKFLOWS",
    "RouteDecision",
    "Router",
    "english_from_code",
    "match_typed_decisions_workflow",
]
