"""Checkpoints in the published Laya format: find them, read them, and make tiny ones for tests.

A checkpoint is ``rl_agent_config.json`` + ``model.safetensors`` + ``encoder/`` + ``tokenizer/``.
:mod:`~laya.checkpoint.sources` knows the published names and fetches from the Hub,
:mod:`~laya.checkpoint.config` parses the config with its strict checks,
:mod:`~laya.checkpoint.tokenizer` loads the tokenizer, and :mod:`~laya.checkpoint.testing` makes
random checkpoints (``laya.testing``). Nothing here writes into a checkpoint directory.
"""

from .config import (
    OPTION_LAYOUTS,
    CheckpointConfig,
    clamp_temperature,
    encoder_positions,
    file_sha256,
    read_config,
    read_json_object,
    snapshot_revision,
    verify_sha256,
    warn_replaced_temperatures,
)
from .sources import (
    ALIASES,
    ARTIFACTS,
    BUILTIN,
    BUNDLE_REPO,
    BUNDLED,
    ENCODER_FILES,
    HUB_ID,
    Source,
    cached_checkpoint,
    canonical_name,
    check_path,
    locate,
    looks_like_path,
    resolve_name,
    resolve_source,
    source_name,
    unknown_name,
)
from .tokenizer import TOKENIZER_FILES, Tokenizer, encoder_files, load_tokenizer, parse_tokenizer

__all__ = [
    "ALIASES",
    "ARTIFACTS",
    "BUILTIN",
    "BUNDLED",
    "BUNDLE_REPO",
    "ENCODER_FILES",
    "HUB_ID",
    "OPTION_LAYOUTS",
    "TOKENIZER_FILES",
    "CheckpointConfig",
    "Source",
    "Tokenizer",
    "cached_checkpoint",
    "canonical_name",
    "check_path",
    "clamp_temperature",
    "encoder_files",
    "encoder_positions",
    "file_sha256",
    "load_tokenizer",
    "locate",
    "looks_like_path",
    "parse_tokenizer",
    "read_config",
    "read_json_object",
    "resolve_name",
    "resolve_source",
    "snapshot_revision",
    "source_name",
    "unknown_name",
    "verify_sha256",
    "warn_replaced_temperatures",
]
