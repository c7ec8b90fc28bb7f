"""Language detection: which script and language a state is in (docs/routing.md, "Language
detection"). The Router routes by it and a checkpoint that reads one language warns by it; the
detector (:mod:`~laya.lang.detect`) loads its model only when a text needs it."""

from .detect import (
    ENGLISH_RESCUE_DIACRITIC_RATE,
    MAX_CHARS,
    NON_EN_DIACRITIC_RATE,
    NON_LATIN_FRACTION,
    NON_LATIN_MIN_FRACTION,
    NON_LATIN_MIN_LETTERS,
    analyse,
    cache_dir,
    detect_language,
    detect_script,
    guess_latin_language,
    is_english,
    latin_profile,
    script_profile,
    state_text,
)

__all__ = [
    "ENGLISH_RESCUE_DIACRITIC_RATE",
    "MAX_CHARS",
    "NON_EN_DIACRITIC_RATE",
    "NON_LATIN_FRACTION",
    "NON_LATIN_MIN_FRACTION",
    "NON_LATIN_MIN_LETTERS",
    "analyse",
    "cache_dir",
    "detect_language",
    "detect_script",
    "guess_latin_language",
    "is_english",
    "latin_profile",
    "script_profile",
    "state_text",
]
