"""Every ```python block of the README and docs/ runs (docs/hooks has its own, richer test)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
PAGES = [ROOT / "README.md"] + sorted(
    p for p in (ROOT / "docs").rglob("*.md") if "hooks" not in p.relative_to(ROOT / "docs").parts
)


def blocks(page: Path) -> list[tuple[int, str]]:
    """(line, code) of every python block of a page."""
    text = page.read_text()
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in FENCE.finditer(text)]


@pytest.mark.parametrize(
    "page", [p for p in PAGES if blocks(p)], ids=lambda p: str(p.relative_to(ROOT))
)
def test_python_blocks_run(page):
    namespace: dict = {"__name__": "__docs__"}
    for line, code in blocks(page):
        exec(compile("\n" * (line - 1) + code, str(page), "exec"), namespace)
