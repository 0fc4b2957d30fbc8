"""The product's import graph has no cycle, as import-linter's grimp sees it (imports at
module level and inside functions, the symlinked core folders included):

- between its parts (``esatui.db``, ``esatui.sim``, ``esatui.registry`` ...), counting every
  import, even one for type annotations only: the registry once imported the simulator,
  which named the registry's types back;
- between modules, counting the imports that run (``if TYPE_CHECKING:`` ones never do: the
  simulator's model classes name each other's types).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import grimp

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                part.append(top)
                if top == node:
                    break
            if len(part) > 1 or node in edges.get(node, ()):
                found.append(sorted(part))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def edges_of(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def part(module: str) -> str:
    """``esatui.db.reading`` -> ``esatui.db``; ``esatui.registry`` stays."""
    return ".".join(module.split(".")[:2])


def test_no_import_cycle_between_the_parts_of_the_product() -> None:
    edges: dict[str, set[str]] = {}
    for module, imported in edges_of(grimp.build_graph("esatui", cache_dir=None)).items():
        targets = edges.setdefault(part(module), set())
        targets |= {part(i) for i in imported} - {part(module)}
    assert {"esatui.db", "esatui.sim", "esatui.registry", "esatui.commands"} <= set(edges)
    assert strongly_connected(edges) == []


def test_no_import_cycle_between_modules_at_run_time() -> None:
    edges = edges_of(
        grimp.build_graph("esatui", exclude_type_checking_imports=True, cache_dir=None)
    )
    assert {"esatui.db.reading", "esatui.screens.catalog", "esatui.collectors.host"} <= set(edges)
    assert strongly_connected(edges) == []


def test_a_cycle_would_be_found() -> None:
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def textual_contract_sources() -> list[str]:
    """The source modules of import-linter's "only the Textual views import Textual"."""
    contracts = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    (contract,) = (c for c in contracts if c.get("forbidden_modules") == ["textual"])
    return list(contract["source_modules"])


def test_the_textual_contract_covers_every_screen_model() -> None:
    """SPEC section 2: only the Textual views import Textual. A screen model that no other
    contracted part happens to import (plot, compare, distribution) was left unchecked."""
    sources = textual_contract_sources()
    graph = grimp.build_graph("esatui", cache_dir=None)
    models = {
        m
        for m in graph.find_descendants("esatui.screens")
        if not m.startswith("esatui.screens.views")
    }
    assert {"esatui.screens.plot", "esatui.screens.compare"} <= models
    uncovered = {m for m in models if not any(m == s or m.startswith(s + ".") for s in sources)}
    assert uncovered == set()
