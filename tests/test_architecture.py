"""The import contract: the pipeline reads left to right, imports only point down.

Every module of the package belongs to one layer; a module may import its own
layer's modules and any lower layer, never a higher one. The three consumers
of measures (ranking, challenges, audit) sit side by side and never import each
other. Imports inside functions count too: a deferred import is still a
dependency. ``docs/architecture.md`` draws the same picture.
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "geoeval"

#: Lowest first. A module belongs to the layer of its longest matching prefix.
LAYERS: list[tuple[str, ...]] = [
    ("geoeval._version", "geoeval.errors", "geoeval.validate", "geoeval.encoding", "geoeval.reprs",
     "geoeval.outputs", "geoeval.parallel", "geoeval.heap", "geoeval.arrays", "geoeval.thresholds",
     "geoeval.sums", "geoeval.cancel", "geoeval.streams", "geoeval.progress",
     "geoeval.locations", "geoeval.store_outputs", "geoeval.output_targets"),
    ("geoeval.grid",),
    ("geoeval.objects",),
    ("geoeval.io",),
    ("geoeval.overlap", "geoeval.overlap_rings"),
    ("geoeval.matching",),
    ("geoeval.measures",),
    ("geoeval.engine",),
    ("geoeval.ranking", "geoeval.challenges", "geoeval.audit"),
    ("geoeval.scoring",),
    ("geoeval.report",),
    ("geoeval.api", "geoeval"),
    ("geoeval.cli",),
]
#: Layers whose prefixes must not import one another.
SIDE_BY_SIDE = {("geoeval.ranking", "geoeval.challenges", "geoeval.audit")}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    base = PACKAGE.parent / name.replace(".", "/")
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


@functools.cache
def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of a module's syntax tree (parsed once for all the checks)."""
    return tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def imports(path: Path) -> set[str]:
    """Every ``geoeval`` module ``path`` imports (at any depth of the file)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in nodes(path):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "geoeval")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "geoeval":
                continue
            for alias in node.names:  # `from geoeval import validate` imports a module
                sub = f"{target}.{alias.name}"
                found.add(sub if is_module(sub) else target)
    found.discard(name)
    return found


def layer_of(name: str) -> tuple[int, str]:
    best: tuple[int, str] | None = None
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (name == p or name.startswith(p + ".")) and (best is None or len(p) > len(best[1])):
                best = (i, p)
    assert best is not None, f"{name} is in no layer: add it to LAYERS"
    return best


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def violations(edges: dict[str, set[str]]) -> list[str]:
    bad = []
    for src, targets in edges.items():
        ls, ps = layer_of(src)
        for dst in sorted(targets):
            ld, pd = layer_of(dst)
            upward = ld > ls
            sideways = ld == ls and ps != pd and LAYERS[ls] in SIDE_BY_SIDE
            if upward or sideways:
                bad.append(f"{src} -> {dst}")
    return bad


def test_every_module_has_a_layer():
    for name in graph():
        layer_of(name)


def test_imports_point_down():
    assert violations(graph()) == []


def test_no_cycle_between_stages():
    """Stages (``geoeval.<stage>``) form an acyclic graph."""
    g = nx.DiGraph()
    for src, targets in graph().items():
        a = ".".join(src.split(".")[:2])
        for dst in targets:
            b = ".".join(dst.split(".")[:2])
            if a != b and b != "geoeval":
                g.add_edge(a, b)
    assert list(nx.simple_cycles(g)) == []


@pytest.mark.parametrize("edges, expected", [
    ({"geoeval.overlap": {"geoeval.matching.assignment"}},
     ["geoeval.overlap -> geoeval.matching.assignment"]),                  # upward
    ({"geoeval.audit.figures": {"geoeval.challenges.voc"}},
     ["geoeval.audit.figures -> geoeval.challenges.voc"]),                 # side by side
    ({"geoeval.scoring.scene": {"geoeval.matching", "geoeval.io"}}, []),   # downward
    ({"geoeval.scoring.classes": {"geoeval.scoring.result"}}, []),         # same stage
])
def test_the_checker_catches_what_it_should(edges, expected):
    assert violations(edges) == expected


def test_deferred_and_relative_imports_are_seen(tmp_path, monkeypatch):
    pkg = tmp_path / "geoeval"
    (pkg / "overlap").mkdir(parents=True)
    (pkg / "matching").mkdir()
    (pkg / "matching" / "__init__.py").write_text("")
    (pkg / "matching" / "assignment.py").write_text("")
    (pkg / "overlap" / "__init__.py").write_text(
        "def f():\n    from ..matching import assignment\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    assert imports(pkg / "overlap" / "__init__.py") == {"geoeval.matching.assignment"}


def test_no_cycle_between_modules():
    """Not even inside a stage (type-checking imports count: they are imports too)."""
    g = nx.DiGraph((src, dst) for src, targets in graph().items() for dst in targets)
    assert [c for c in nx.strongly_connected_components(g) if len(c) > 1] == []


def private_reaches(path: Path) -> list[str]:
    """The private names (``_name``, or anything in a private module ``_module``) that
    ``path`` imports from outside the package holding them (``from geoeval.io.vector
    import _check_fields`` in geoeval.engine): a package's private names are for its
    own modules and subpackages; a top-level module (``geoeval.grid``) is a stage of
    its own, its private names its own."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in nodes(path):
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
            continue
        for alias in node.names:
            parts = [*node.module.split("."), alias.name]
            if parts[0] != "geoeval":
                continue
            first = next((i for i, p in enumerate(parts)
                          if p.startswith("_") and not p.startswith("__")), None)
            if first is None:
                continue
            owner = ".".join(parts[:first])  # the package holding it, or a module's
            is_package = (PACKAGE.parent / owner.replace(".", "/") / "__init__.py").exists()
            if not is_package and owner.count(".") > 1:  # package (a top-level module
                owner = owner.rpartition(".")[0]        # such as geoeval.grid: itself)
            if package != owner and not package.startswith(owner + "."):
                found.append(f"{name}: {'.'.join(parts)}")
    return found


def test_no_private_name_crosses_a_package():
    assert [r for p in sorted(PACKAGE.rglob("*.py")) for r in private_reaches(p)] == []


def test_docs_architecture_names_every_module():
    """``docs/architecture.md`` names every module (by its path, or its file name in its
    package's row)."""
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    unnamed = [str(p.relative_to(PACKAGE)) for p in sorted(PACKAGE.rglob("*.py"))
               if p.name not in ("__init__.py", "__main__.py")
               and str(p.relative_to(PACKAGE)) not in text and f"`{p.name}`" not in text
               and f"{p.name}`" not in text]
    assert unnamed == []
