"""Every ```python block of the README and docs/ runs (docs/hooks has its own, richer test)."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
PAGES = [ROOT / "README.md"] + sorted(
    p for p in (ROOT / "docs").rglob("*.md") if "hooks" not in p.relative_to(ROOT / "docs").parts
)


# The frameworks' telemetry and first-run prompts stay off: no test needs the network or a terminal.
QUIET = {
    "CREWAI_TESTING": "true",
    "CREWAI_DISABLE_TELEMETRY": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "OTEL_SDK_DISABLED": "true",
    "AGNO_TELEMETRY": "false",
}


def blocks(page: Path) -> list[tuple[int, str]]:
    """(line, code) of every python block of a page."""
    text = page.read_text()
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in FENCE.finditer(text)]


@pytest.mark.parametrize(
    "page", [p for p in PAGES if blocks(p)], ids=lambda p: str(p.relative_to(ROOT))
)
def test_python_blocks_run(page, tmp_path, monkeypatch):
    """The blocks run in order in one module, as a file of them would: its source is a .py file
    with every block at its line of the page (so inspect.getsource and pydantic find classes)."""
    for name, value in QUIET.items():
        monkeypatch.setenv(name, value)
    found = blocks(page)
    lines = [""] * page.read_text().count("\n")
    for line, code in found:
        for i, text in enumerate(code.splitlines()):
            lines[line - 1 + i] = text
    source = tmp_path / f"{page.stem}.py"
    source.write_text("\n".join(lines) + "\n")
    module = types.ModuleType("__docs__")
    module.__file__ = str(source)
    monkeypatch.setitem(sys.modules, "__docs__", module)
    for line, code in found:
        code = compile("\n" * (line - 1) + code, str(source), "exec", dont_inherit=True)
        exec(code, module.__dict__)
