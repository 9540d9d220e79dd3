"""The layers are visible from the folder listing, and the import graph keeps to them.

commands -> adapters / runs -> benchmarks -> core (data, leaderboard and plots beside the adapters).
Every import counts, also one inside a function: an import hidden there is still a circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = "medhorizon_tasks"

# what the package top level may hold besides its sub-packages: the documented shims
TOP_LEVEL_FILES = {"__init__.py", "__main__.py", "extract.py"}
MAX_LINES = 700


def _modules() -> dict[str, Path]:
    out = {}
    for p in SRC.rglob("*.py"):
        parts = list(p.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


MODULES = _modules()


def _imports(mod: str, path: Path) -> set[str]:
    """Every module of the package that ``mod`` imports, at any depth of its code."""
    pkg = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            targets = [f"{name}.{a.name}" if f"{name}.{a.name}" in MODULES else name for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        for t in targets:
            while t not in MODULES and "." in t:
                t = t.rsplit(".", 1)[0]
            if t in MODULES and t != mod and t.startswith(PKG + ".") and t != PKG:
                found.add(t)
    return found


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def _layer(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_the_package_top_level_holds_only_sub_packages_and_the_documented_shims():
    files = {p.name for p in (SRC / PKG).iterdir() if p.is_file() and p.suffix == ".py"}
    assert files <= TOP_LEVEL_FILES, sorted(files - TOP_LEVEL_FILES)


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_no_file_holds_several_jobs(path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(SRC)} has {n} lines (> {MAX_LINES}): split it by responsibility"


def test_no_import_circle_even_through_an_import_inside_a_function():
    index, low, stack, on, circles, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in GRAPH:
        if v not in index:
            visit(v)
    assert not circles, circles


def test_core_imports_nothing_of_the_package_outside_core():
    bad = {m: sorted(d for d in deps if _layer(d) != "core")
           for m, deps in GRAPH.items() if _layer(m) == "core"}
    assert not {m: d for m, d in bad.items() if d}


@pytest.mark.parametrize("layer, forbidden", [
    ("benchmarks", {"adapters", "commands", "runs", "leaderboard", "plots", "data"}),
    ("data", {"adapters", "commands", "runs", "leaderboard", "plots"}),
    ("leaderboard", {"adapters", "commands", "runs", "plots"}),
    ("plots", {"adapters", "commands", "runs", "leaderboard"}),
    ("runs", {"adapters", "commands"}),
    ("adapters", {"commands"}),
])
def test_dependencies_point_down(layer, forbidden):
    bad = {m: sorted(d for d in deps if _layer(d) in forbidden)
           for m, deps in GRAPH.items() if _layer(m) == layer}
    assert not {m: d for m, d in bad.items() if d}


def test_only_adapters_import_a_framework():
    bad = []
    for mod, path in MODULES.items():
        if _layer(mod) == "adapters":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            bad += [f"{mod}: {n}" for n in names if n.split(".")[0] in {"lmms_eval", "vlmeval"}]
    assert not bad, bad
