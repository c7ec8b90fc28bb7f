"""Route each request to the checkpoint that can read it, and keep a few checkpoints resident.

The package's files are its jobs: ``names`` (the checkpoint table and its rules), ``table``
(the routing table, pure), ``residency`` (which runtimes stay in memory) and ``core`` (the
:class:`Router` that composes them and runs the hook lifecycle). Importing it does not import
torch: the runtime and the language detector load the first time they are needed.
"""

from ..checkpoint import BUNDLE_REPO, canonical_name
from .core import Router
from .names import (
    DEFAULT_MODELS,
    STANDALONE_MODELS,
    STANDALONE_REPOS,
    normalise_name,
    resolve_model_spec,
)
from .requests import check_agent_kwargs
from .table import (
    TYPED_DECISIONS_WORKFLOWS,
    RouteDecision,
    english_from_code,
    match_typed_decisions_workflow,
)

__all__ = [
    "BUNDLE_REPO",
    "DEFAULT_MODELS",
    "STANDALONE_MODELS",
    "STANDALONE_REPOS",
    "TYPED_DECISIONS_WORKFLOWS",
    "RouteDecision",
    "Router",
    "canonical_name",
    "check_agent_kwargs",
    "english_from_code",
    "match_typed_decisions_workflow",
    "normalise_name",
    "resolve_model_spec",
]
