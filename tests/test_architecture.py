"""The package's shape, read from its source: composition, and no reaching into private state.

See docs/architecture.md: every runtime mixes in ``HookRegistry`` (the one mixin the hooks
contract names) and composes everything else; no module reads or writes another object's
private attributes.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import laya

PACKAGE = Path(laya.__file__).parent
# Operators whose public name starts with an underscore (``torch.ops.mkldnn._linear_pointwise``),
# and the helpers LangChain's Runnable documents for its subclasses to implement invoke and batch
# with callbacks (laya.integrations.runnables calls them on itself).
PUBLIC_BY_CONTRACT = ("torch.ops.", "self._call_with_config", "self._batch_with_config")


def modules() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def laya_classes() -> set[str]:
    return {
        node.name
        for _, tree in modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
    }


def defined_names(cls: ast.ClassDef) -> set[str]:
    """Methods, class attributes and ``self.x = ...`` targets of one class body."""
    names = set()
    for node in ast.walk(cls):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            names.add(node.attr)
    return names


def is_own(base: ast.expr) -> bool:
    """``self``, ``cls`` or ``super()``: the object whose class is being defined."""
    if isinstance(base, ast.Name):
        return base.id in ("self", "cls")
    return (
        isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "super"
    )


def private_reaches(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """``X._name`` where X is not self/cls/super() of a class that defines ``_name``."""

    def visit(node: ast.AST, own: set[str] | None) -> Iterator[tuple[int, str]]:
        if isinstance(node, ast.ClassDef):
            own = defined_names(node)
        if isinstance(node, ast.Attribute):
            name = node.attr
            private = name.startswith("_") and not name.startswith("__")
            text = ast.unparse(node)
            allowed = (is_own(node.value) and own is not None and name in own) or text.startswith(
                PUBLIC_BY_CONTRACT
            )
            if private and not allowed:
                yield node.lineno, text
        for child in ast.iter_child_nodes(node):
            yield from visit(child, own)

    yield from visit(tree, None)


def test_no_module_reaches_into_another_objects_private_attributes():
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: {text}"
        for path, tree in modules()
        for line, text in private_reaches(tree)
    ]
    assert found == []


def test_classes_compose_and_mix_in_only_hook_registry():
    """At most one base from laya per class, and none beside HookRegistry where a class mixes
    it in: a runner's other methods are composed (its decision methods are the functions of
    laya.typed, set in its body), not inherited."""
    ours = laya_classes()
    crowded = []
    for path, tree in modules():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
            from_laya = [b for b in bases if b in ours]
            if len(from_laya) > 1:
                crowded.append(f"{path.relative_to(PACKAGE)}: {node.name}({', '.join(bases)})")
    assert crowded == []


def test_the_checker_sees_a_reach_and_a_crowded_class():
    """The two rules above find what they look for (so an empty result means something)."""
    reach = ast.parse("class A:\n    def f(self, b):\n        return b._x + self._y\n")
    assert [text for _, text in private_reaches(reach)] == ["b._x", "self._y"]
    own = ast.parse("class A:\n    def f(self):\n        self._y = 1\n        return self._y\n")
    assert list(private_reaches(own)) == []


def test_few_top_level_modules_and_one_stem_per_job():
    """At most seven modules at the top of the package; every other module sits in a subpackage
    named for its job, and no two modules share a file name (docs/architecture.md)."""
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 7, top
    stems = [p.stem for p in PACKAGE.rglob("*.py") if p.name != "__init__.py"]
    assert sorted(s for s in set(stems) if stems.count(s) > 1) == []


def is_module(parts: list[str]) -> bool:
    """``laya.x.y`` names a module or package (not a name defined in a package's __init__)."""
    path = PACKAGE.parent.joinpath(*parts)
    return path.is_dir() or path.with_suffix(".py").exists()


def test_lower_packages_never_import_higher_ones():
    """Data flows one way: the floors below, each importing only its own floor or lower ones."""
    floors = {
        "errors": 0, "version": 0, "hooks": 0, "lang": 0, "commands": 1, "files": 1, "checkpoint": 2,
        "engine": 3, "request": 3, "typed": 4, "run_modes": 4, "runtime": 5, "onnx": 6, "router": 6,
        "training": 7, "server": 7, "mcp": 8, "ray": 8, "integrations": 8, "cli": 9, "evals": 9, "__main__": 10,
        "compat": 11, "__init__": 12,
    }  # fmt: skip
    upward = []
    for path, tree in modules():
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        package = parts[:-1]  # what a relative import starts from (a package's own __init__ too)
        me = parts[1]
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not node.level:
                continue
            base = package[: len(package) - node.level + 1]
            targets = (
                [[*base, node.module]]
                if node.module
                else [[*base, a.name] if is_module([*base, a.name]) else base for a in node.names]
            )
            for target in targets:
                name = ".".join(target).split(".")
                their = name[1] if len(name) > 1 else "__init__"
                if floors[their] > floors[me]:
                    upward.append(f"{rel}: {'.'.join(name)}")
    assert upward == []


def imported_modules(path: Path, tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Every module a file imports, absolute names, and every ``laya.*`` string it imports
    by name (``import_module("laya.x")``, the lazy tables of the package root)."""
    package = list(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            yield node.lineno, module
            yield from ((node.lineno, f"{module}.{alias.name}") for alias in node.names)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith("laya.")
            and " " not in node.value
        ):
            yield node.lineno, node.value


def test_nothing_in_the_core_imports_the_published_surface():
    """laya.compat (the published module paths, views and internals) sits on the core and is
    never below it: only the package root imports it, to install it (docs/architecture.md,
    "The published surface")."""
    compat = PACKAGE / "compat"
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: {name}"
        for path, tree in modules()
        if compat not in path.parents
        for line, name in imported_modules(path, tree)
        if name == "laya.compat" or name.startswith("laya.compat.")
    ]
    assert [f for f in found if not f.startswith("__init__.py:")] == []  # only the root
    assert found  # which does install it


def test_the_compat_rule_sees_an_import():
    """The rule above finds a relative, an absolute and a by-name import of laya.compat."""
    tree = ast.parse(
        "from ..compat import adapters\nimport laya.compat.laya_agent\n"
        "import_module('laya.compat.laya_common')\n"
    )
    names = [name for _, name in imported_modules(PACKAGE / "engine" / "x.py", tree)]
    assert {"laya.compat", "laya.compat.laya_agent", "laya.compat.laya_common"} <= set(names)
