"""A checkpoint's tokenizer, read with the ``tokenizers`` library (one per directory per process)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import (
    CheckpointError,
    CheckpointUnavailable,
    one_line,
)
from .config import read_json_object
from .sources import locate

if TYPE_CHECKING:
    from tokenizers import Tokenizer as Backend

SEQUENTIAL_TEXTS = 32
SEQUENTIAL_CHARS = 16_384  # texts longer in all go to encode_batch, which releases the GIL
TOKENIZER_CONFIGS = ("special_tokens_map.json", "tokenizer_config.json")  # later ones win
TOKENIZER_FILES = ("tokenizer.json", *TOKENIZER_CONFIGS)  # an encoder's, when a checkpoint has none


@dataclass(frozen=True)
class Tokenizer:
    """A parsed fast tokenizer plus the special ids the token layout needs."""

    backend: Backend
    cls_id: int
    sep_id: int
    mask_id: int
    pad_id: int
    mask_token: str
    directory: Path | None = None  # the folder it was read from (tokenizer.json and its configs)

    def encode(self, texts: list[str]) -> list[list[int]]:
        """Token ids of each text, no special tokens added.

        A few short texts (one call's questions and states) are encoded in the calling thread:
        handing them to the library's thread pool costs more than it saves, and on a busy CPU
        waiting for its threads to be scheduled can take milliseconds. The library's single-text
        ``encode`` holds the GIL throughout (a 1.9 MB text held every other thread of a server
        for seconds), so longer texts go to ``encode_batch``, which releases it.
        """
        if len(texts) <= SEQUENTIAL_TEXTS and sum(map(len, texts)) <= SEQUENTIAL_CHARS:
            return [self.backend.encode(t, add_special_tokens=False).ids for t in texts]
        return [e.ids for e in self.backend.encode_batch(texts, add_special_tokens=False)]

    def decode(self, ids: list[int]) -> str:
        """Text of token ids, special tokens kept (how window texts are made)."""
        return self.backend.decode(ids, skip_special_tokens=False)


_tokenizers: dict[tuple[str, float], Tokenizer] = {}
_tokenizers_lock = threading.Lock()


def load_tokenizer(directory: Path, encoder_id: str | None) -> Tokenizer:
    """The tokenizer of a checkpoint, parsed once per directory (and file version) per process.

    Reads ``tokenizer.json`` with the ``tokenizers`` library directly, so configs written by
    transformers 4 or 5 both load and nothing in the checkpoint directory is rewritten.
    """
    tok_dir = directory / "tokenizer"
    if not (tok_dir / "tokenizer.json").is_file():
        tok_dir = encoder_files(directory, "tokenizer", encoder_id, TOKENIZER_FILES)
    stamp = (tok_dir / "tokenizer.json").stat().st_mtime
    key = (str(tok_dir.resolve()), stamp)
    with _tokenizers_lock:
        tokenizer = _tokenizers.get(key)
        if tokenizer is None:
            tokenizer = _tokenizers[key] = parse_tokenizer(tok_dir)
    return tokenizer


def encoder_files(
    directory: Path, folder: str, encoder_id: object, artifacts: tuple[str, ...]
) -> Path:
    """A checkpoint without its own ``folder`` (``encoder``, ``tokenizer``) uses its encoder's
    files from the Hub or its cache, as the published runtime does; a failure names both."""
    what = f"{directory} has no {folder}/ of its own"
    if not isinstance(encoder_id, str) or not encoder_id.strip():
        raise CheckpointError(
            f"{what}, and its config names no 'encoder' to fetch one from; copy the {folder} "
            f"files into {directory / folder}"
        )
    try:
        return locate(encoder_id, artifacts=artifacts)
    except CheckpointUnavailable as exc:
        reason = f"{what}, so it needs its encoder's ({encoder_id!r}): {exc.reason}"
        raise CheckpointUnavailable(reason, reason, exc.retry_after) from None


def _special(config: dict[str, Any], name: str, default: str) -> str:
    value = config.get(name) or default
    return value.get("content", default) if isinstance(value, dict) else str(value)


def parse_tokenizer(tok_dir: Path) -> Tokenizer:
    """The tokenizer in ``tok_dir`` (``tokenizer.json`` plus its special-token configs), uncached."""
    from tokenizers import Tokenizer as Backend

    path = tok_dir / "tokenizer.json"
    try:
        backend = Backend.from_file(str(path))
    except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception for a bad file
        raise CheckpointError(f"{path} is not a tokenizer file: {one_line(exc)}") from None
    backend.no_truncation()
    backend.no_padding()
    config: dict[str, Any] = {}
    for name in TOKENIZER_CONFIGS:
        config.update(read_json_object(tok_dir / name, missing_ok=True))
    ids: dict[str, int] = {}
    tokens: dict[str, str] = {}
    for name in ("cls", "sep", "mask", "pad"):
        token = tokens[name] = _special(config, f"{name}_token", f"[{name.upper()}]")
        token_id = backend.token_to_id(token)
        if token_id is None:
            raise CheckpointError(
                f"{tok_dir}: the {name} token {token!r} is not in tokenizer.json; a Laya checkpoint "
                f"needs cls, sep, mask and pad tokens"
            )
        ids[name] = token_id
    return Tokenizer(
        backend, ids["cls"], ids["sep"], ids["mask"], ids["pad"], tokens["mask"], tok_dir
    )
