"""The published runtime's views of a runtime's parts: the seam :mod:`laya.compat` fills.

The engine's parts are typed objects of its own (``Tokenizer``, ``Question``). Code written for
the published runtime reads them in its shapes: ``agent.tok`` is a Hugging Face tokenizer,
``agent._to_internal(q)`` a question in its internal form, and a ``build_sequence`` rebound in
``laya.agent`` builds the rows of later predictions. Those shapes are adapters in
:mod:`laya.compat`, which nothing in the core imports: the package root hands them to
:func:`present` when ``laya`` is imported, and a runtime asks :func:`published` for them
(docs/architecture.md, "The published surface"). This module imports nothing, so the package
root stays light.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..checkpoint import Tokenizer
    from .questions import Question

__all__ = [
    "PublishedTokenizer",
    "PublishedViews",
    "RowBuilder",
    "present",
    "published",
    "row_builder",
    "use_row_builder",
]


class PublishedTokenizer(Protocol):
    """What the published runtime's users call on ``agent.tok`` (a Hugging Face fast tokenizer)."""

    @property
    def pad_token_id(self) -> int | None: ...

    def __call__(self, text: Any, *args: Any, **kwargs: Any) -> Any: ...

    def encode(self, text: Any, *args: Any, **kwargs: Any) -> Any: ...

    def decode(self, ids: Any, *args: Any, **kwargs: Any) -> Any: ...


class PublishedViews(Protocol):
    """How the published surface presents an engine's parts (:mod:`laya.compat` fulfils it)."""

    def tokenizer(self, tokenizer: Tokenizer) -> PublishedTokenizer:
        """``tokenizer`` as the published runtime's Hugging Face tokenizer."""
        ...

    def internal_question(self, question: Mapping[str, Any]) -> dict[str, Any]:
        """A question dict in the published runtime's internal form."""
        ...


RowBuilder = Callable[
    ["Tokenizer", object, list[int], "Question", int, int], tuple[list[int], list[int]]
]
"""``(tokenizer, state, state_ids, question, max_len, head_max_len) -> (ids, markers)``: one
row of a prediction, built in place of the engine's own layout (a rebound ``build_sequence``)."""

_views: PublishedViews | None = None
_row_builders: dict[str, RowBuilder] = {}


def present(views: PublishedViews) -> None:
    """Use ``views`` for every runtime's published attributes (the package root calls this)."""
    global _views
    _views = views


def published() -> PublishedViews:
    """The views the package root registered."""
    if _views is None:
        raise RuntimeError(
            "laya's published views are not installed: import laya (the package) rather than "
            "loading its modules by file path"
        )
    return _views


def use_row_builder(backend: str, builder: RowBuilder | None) -> None:
    """Build the rows of later predictions on ``backend`` (``torch`` or ``onnx``) with
    ``builder``; None returns to the engine's own layout."""
    if builder is None:
        _row_builders.pop(backend, None)
    else:
        _row_builders[backend] = builder


def row_builder(backend: str) -> RowBuilder | None:
    """The row builder in place for ``backend``, if any (usually none)."""
    return _row_builders.get(backend)
