"""Language detection: which script and language a state is in (docs/routing.md, "Language
detection"). The Router routes by it and a checkpoint that reads one language warns by it; the
detector (:mod:`~laya.lang.detect`) loads its model only when a text needs it."""

from .detect import (
    MAX_CHARS,
    analyse,
    cache_dir,
    detect_language,
    detect_script,
    is_english,
    script_profile,
    state_text,
)

__all__ = [
    "MAX_CHARS",
    "analyse",
    "cache_dir",
    "detect_language",
    "detect_script",
    "is_english",
    "script_profile",
    "state_text",
]
