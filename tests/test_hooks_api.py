"""The hooks docs are executable: every ```python block of docs/hooks/*.md runs, every
examples/hooks/*.py script runs, and the four caching blocks agree on their key.

Blocks of one page share a namespace and run in order, so later blocks use names defined by
earlier ones. A small per-page preamble supplies the few names a page uses as placeholders
(``ship``, ``ship_async``). Blocks that build a runtime run for real against the offline fixture hub cache
laid out by conftest.py.
"""

from __future__ import annotations

import ast
import asyncio
import re
import runpy
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from laya.hooks import PredictContext, default_hooks, set_default_hooks

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "hooks"
EXAMPLES = ROOT / "examples" / "hooks"
SEED = ROOT / "tests" / "fixtures" / "seeds" / "hooks-api.es.txt"
PAGES = ["api.md", "lifecycle.md", "errors.md", "patterns.md", "examples.md"]
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    """One fenced python block: where it starts in its file and its code."""

    path: Path
    line: int
    code: str

    def compiled(self, code: str | None = None) -> Any:
        """Compile so tracebacks point at the page and line of the block."""
        padded = "\n" * (self.line - 1) + (self.code if code is None else code)
        return compile(padded, str(self.path), "exec")


def python_blocks(page: str) -> list[Block]:
    """Every ```python block of a docs page, in order."""
    text = (DOCS / page).read_text()
    return [
        Block(DOCS / page, text.count("\n", 0, m.start(1)) + 1, m.group(1))
        for m in FENCE.finditer(text)
    ]


def preamble() -> dict[str, Any]:
    """Stand-ins for the names the pages use as placeholders for the user's own code."""
    shipped: list[tuple[Any, ...]] = []

    def ship(*args: Any) -> None:
        shipped.append(args)

    async def ship_async(*args: Any) -> None:
        await asyncio.sleep(0)
        shipped.append(args)

    return {"__name__": "__docs__", "ship": ship, "ship_async": ship_async, "shipped": shipped}


@pytest.fixture(autouse=True)
def restore_default_hooks() -> Iterator[None]:
    """Pages and scripts may install process-wide defaults; put the previous set back."""
    saved = default_hooks()
    yield
    set_default_hooks(hooks=saved)


@pytest.fixture(autouse=True)
def in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks may write files (audit logs); keep them out of the repo."""
    monkeypatch.chdir(tmp_path)


# --------------------------------------------------------------------------- pages and scripts


@pytest.mark.parametrize("page", PAGES)
def test_page_blocks_run(page: str) -> None:
    blocks = python_blocks(page)
    assert blocks, f"{page} has no python blocks"
    namespace = preamble()
    for block in blocks:
        exec(block.compiled(), namespace)


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_example_script_runs(script: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = EXAMPLES / script
    monkeypatch.setattr(sys, "argv", [str(path)])
    monkeypatch.delenv("LAYA_CHECKPOINT", raising=False)
    runpy.run_path(str(path), run_name="__main__")


def test_every_page_exists_and_examples_include_cache() -> None:
    assert sorted(p.name for p in DOCS.glob("*.md")) == sorted(PAGES)
    assert {"cache.py", "tracing.py", "redaction.py", "async_shipping.py"} <= {
        p.name for p in EXAMPLES.glob("*.py")
    }


def test_lifecycle_page_has_the_diagrams() -> None:
    text = (DOCS / "lifecycle.md").read_text()
    assert text.count("```mermaid\nsequenceDiagram") >= 4
    for heading in (
        "## Agent calls",
        "## Router.predict",
        "## Router.predict_batch",
        "## predict_long",
    ):
        assert heading in text


# --------------------------------------------------------------------------- the caching contract


def seed_cache_block() -> str:
    """The caching block of the user's page, from ``CACHE = {}`` to the ``laya.load`` line."""
    text = SEED.read_text()
    start = text.index("CACHE = {}")
    end = text.index("\n", text.index("laya.load(", start))
    return text[start:end]


def test_api_page_carries_the_seed_cache_block_verbatim() -> None:
    block = next(b for b in python_blocks("api.md") if "def key(ctx" in b.code)
    assert block.code.startswith("import hashlib, json, laya\n")
    assert seed_cache_block() in block.code


DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)


def _definitions_only(code: str) -> str:
    """The imports, functions and literal assignments of a block, without its calls."""
    kept = [
        node
        for node in ast.parse(code).body
        if isinstance(node, DEFINITIONS)
        or (isinstance(node, ast.Assign) and isinstance(node.value, (ast.Dict, ast.Constant)))
    ]
    return ast.unparse(ast.Module(body=kept, type_ignores=[]))


def page_key(page: str) -> Any:
    """The ``key`` function of a page's caching block, as written (the block's calls left out)."""
    block = next(b for b in python_blocks(page) if "def key(ctx" in b.code)
    namespace = preamble()
    exec(compile(_definitions_only(block.code), str(block.path), "exec"), namespace)
    return namespace["key"]


def script_key() -> Any:
    """The ``key`` function of examples/hooks/cache.py (imported, not run as a script)."""
    return runpy.run_path(str(EXAMPLES / "cache.py"), run_name="cache_example")["key"]


QUESTIONS = {
    "department": {"type": "choice", "instructions": "Route it", "criteria": {"a": "x", "b": "y"}},
    "urgent": {"type": "noul", "instructions": "Urgent?"},
}
REORDERED = {"urgent": QUESTIONS["urgent"], "department": QUESTIONS["department"]}
SWAPPED_CRITERIA = {
    **QUESTIONS,
    "department": {**QUESTIONS["department"], "criteria": {"b": "y", "a": "x"}},
}


def key_contexts() -> list[PredictContext]:
    """Contexts that differ in exactly one thing the answer depends on."""
    base = {"states": ["refund me", {"msg": "crash", "n": 2}], "questions": QUESTIONS}
    return [
        PredictContext(**base),
        PredictContext(states=["other text", {"msg": "crash", "n": 3}], questions=QUESTIONS),
        PredictContext(states=base["states"], questions=REORDERED),
        PredictContext(states=base["states"], questions=SWAPPED_CRITERIA),
        PredictContext(**base, model="convaiinnovations/laya"),
        PredictContext(**base, model="multilingual"),
        PredictContext(**base, max_len=128),
        PredictContext(**base, head_max_len=32),
        PredictContext(**base, max_len=128, head_max_len=32),
    ]


def test_the_four_cache_keys_agree() -> None:
    keys = {
        "docs/hooks/api.md": page_key("api.md"),
        "docs/hooks/patterns.md": page_key("patterns.md"),
        "docs/hooks/examples.md": page_key("examples.md"),
        "examples/hooks/cache.py": script_key(),
    }
    contexts = key_contexts()
    for ctx in contexts:
        for index in range(len(ctx.states)):
            computed = {where: key(ctx, index) for where, key in keys.items()}
            assert len(set(computed.values())) == 1, computed
    # and the shared key separates everything the answer depends on
    key = keys["docs/hooks/api.md"]
    distinct = {key(ctx, i) for ctx in contexts for i in range(len(ctx.states))}
    assert len(distinct) == 2 * len(contexts)
