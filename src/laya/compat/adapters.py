"""The published runtime's shapes over the engine's parts (laya.engine.seams): a Hugging Face
tokenizer over a checkpoint's tokenizer, questions in its internal form, and the rows of a
rebound ``build_sequence``.

Importing this module loads nothing heavy: transformers loads when a tokenizer is first asked
for (``agent.tok``), as it does in the published runtime.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..engine.questions import internal_form, parse_question, public_form
from ..engine.seams import PublishedTokenizer, RowBuilder, use_row_builder

if TYPE_CHECKING:
    from ..checkpoint import Tokenizer
    from ..engine.questions import Question

__all__ = [
    "PublishedModule",
    "Views",
    "core_tokenizer",
    "hf_tokenizer",
    "internal_question",
    "question_of",
    "rebound",
]

_lock = threading.Lock()
_hf: dict[
    int, tuple[Tokenizer, PublishedTokenizer]
] = {}  # id(core tokenizer) -> (it, its Hugging Face view)
_core: dict[int, tuple[object, Tokenizer]] = {}  # id(Hugging Face tokenizer) -> (it, a core one)


def hf_tokenizer(tokenizer: Tokenizer) -> PublishedTokenizer:
    """The Hugging Face fast tokenizer of ``tokenizer``'s folder, as the published runtime
    loads it (``AutoTokenizer``, else the plain fast class), one per tokenizer per process. It
    holds a tokenizer engine of its own, so its settings never reach the engine's."""
    with _lock:
        known = _hf.get(id(tokenizer))
        if known is not None:
            return known[1]
        view: PublishedTokenizer = _load_hf(tokenizer)  # a transformers fast tokenizer
        _hf[id(tokenizer)] = (tokenizer, view)
        _core[id(view)] = (view, tokenizer)
        return view


def _load_hf(tokenizer: Tokenizer) -> Any:
    from tokenizers import Tokenizer as Engine
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    if tokenizer.directory is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for loader in (AutoTokenizer, PreTrainedTokenizerFast):
                try:
                    return loader.from_pretrained(str(tokenizer.directory))
                except (OSError, ValueError, TypeError, KeyError, AttributeError):
                    continue  # a config transformers cannot read: the next loader, then the file
    backend = tokenizer.backend
    return PreTrainedTokenizerFast(
        tokenizer_object=Engine.from_str(backend.to_str()),
        **{
            f"{name}_token": backend.id_to_token(token_id)
            for name, token_id in (
                ("cls", tokenizer.cls_id),
                ("sep", tokenizer.sep_id),
                ("mask", tokenizer.mask_id),
                ("pad", tokenizer.pad_id),
            )
        },
    )


def core_tokenizer(tok: Any) -> Tokenizer:
    """The engine's tokenizer for ``tok``: an ``agent.tok``, the engine's own, or any Hugging
    Face fast tokenizer (read through a copy of its engine, once per tokenizer per process)."""
    from ..checkpoint import Tokenizer

    if isinstance(tok, Tokenizer):
        return tok
    with _lock:
        known = _core.get(id(tok))
        if known is not None:
            return known[1]
    backend = getattr(tok, "backend_tokenizer", None)
    ids = [getattr(tok, f"{name}_token_id", None) for name in ("cls", "sep", "mask", "pad")]
    if backend is None or not all(isinstance(i, int) for i in ids):
        raise TypeError(
            f"tok must be a Hugging Face fast tokenizer with cls, sep, mask and pad tokens (such "
            f"as agent.tok), got {type(tok).__name__}"
        )
    from tokenizers import Tokenizer as Engine

    engine = Engine.from_str(backend.to_str())
    engine.no_truncation()
    engine.no_padding()
    cls_id, sep_id, mask_id, pad_id = (int(i or 0) for i in ids)
    core = Tokenizer(engine, cls_id, sep_id, mask_id, pad_id, str(tok.mask_token))
    with _lock:
        _core[id(tok)] = (tok, core)
    return core


def internal_question(question: Mapping[str, Any]) -> dict[str, Any]:
    """``agent._to_internal(question)``: a public question in the internal form (checked;
    one already internal is returned as a copy)."""
    definition = dict(question)
    if "t" in definition and "type" not in definition:
        return definition
    return internal_form("question", definition)


def question_of(q: Mapping[str, object], option_order: Iterable[object] | None = None) -> Question:
    """A parsed question from either spelling; ``option_order`` (if given) replaces its own."""
    public = dict(public_form(dict(q)))
    if option_order is not None:
        public["option_order"] = list(option_order)
    return parse_question("question", public)


def internal_of(question: Question) -> dict[str, Any]:
    """The internal form a rebound ``build_sequence`` is given for a parsed question: the
    caller's own definition, or (a choice narrowed to some of its options) the option texts
    as labels, which read as the same text."""
    source = question.source
    if (
        isinstance(source, dict)
        and parse_question(question.qid, source).options == question.options
    ):
        return internal_form(question.qid, source)
    return {
        "t": question.type,
        "ins": question.instructions,
        "crit": dict.fromkeys(question.options),
        "option_order": list(question.order),
    }


def rebound(build: Callable[..., Any]) -> RowBuilder:
    """The engine's row builder for a ``build_sequence`` a user rebound in ``laya.agent`` or
    ``laya.onnx_agent``: called as the published runtime calls it, ``(tok, state, q, max_len,
    head_max_len)`` with the state's tokens as ``state_ids`` when it takes them."""
    import inspect

    try:
        parameters = inspect.signature(build).parameters.values()
        takes_ids = any(p.name == "state_ids" or p.kind is p.VAR_KEYWORD for p in parameters)
    except (TypeError, ValueError):
        takes_ids = False

    def row(
        tokenizer: Tokenizer,
        state: object,
        state_ids: list[int],
        question: Question,
        max_len: int,
        head_max_len: int,
    ) -> tuple[list[int], list[int]]:
        extra = {"state_ids": state_ids} if takes_ids else {}
        out = build(
            hf_tokenizer(tokenizer), state, internal_of(question), max_len, head_max_len, **extra
        )
        ids, markers = out[0], out[1]
        return list(ids), list(markers)

    return row


class Views:
    """What :mod:`laya.engine.seams` asks the published surface for."""

    def tokenizer(self, tokenizer: Tokenizer) -> PublishedTokenizer:
        return hf_tokenizer(tokenizer)

    def internal_question(self, question: Mapping[str, Any]) -> dict[str, Any]:
        return internal_question(question)


class PublishedModule(ModuleType):
    """A published module path (``laya.agent``, ``laya.onnx_agent``) whose ``build_sequence``,
    when a user rebinds it, builds the rows of the later predictions of its runtime's backend
    (the module's ``_ROWS_BACKEND``), as the published runtime calls the name it imported;
    binding the module's own function (``_OWN_BUILD``) back returns to the engine's rows."""

    def __setattr__(self, name: str, value: object) -> None:
        super().__setattr__(name, value)
        if name == "build_sequence":
            self._rebind(value)

    def __delattr__(self, name: str) -> None:
        super().__delattr__(name)
        if name == "build_sequence":
            self._rebind(None)

    def _rebind(self, build: Any) -> None:
        own = build is None or build is self.__dict__["_OWN_BUILD"]
        use_row_builder(self.__dict__["_ROWS_BACKEND"], None if own else rebound(build))
