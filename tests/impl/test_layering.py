"""impl's layering holds by construction, not by imports hidden in function bodies.

The layers themselves are import-linter contracts (pyproject.toml, ``lint-imports``); these tests
refuse what those cannot see: an import of impl deferred into a function (the way a cycle hides
from a reader and from the import graph's first glance) and any import cycle among impl's modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

import impl

ROOT = Path(impl.__file__).parent
REASON = "# deferred:"  # the comment a deferred import must carry, with why it cannot be at the top


def _in_package(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        return node.level > 0 or module == "impl" or module.startswith("impl.")
    return any(a.name == "impl" or a.name.startswith("impl.") for a in node.names)


def deferred_imports(source: str) -> list[int]:
    """Line numbers of the imports of impl inside a function (or lambda) body that carry no
    ``# deferred: why`` comment on any of their lines."""
    lines = source.splitlines()
    found = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if inside and isinstance(child, (ast.Import, ast.ImportFrom)) and _in_package(child):
                span = lines[child.lineno - 1 : child.end_lineno]
                if not any(REASON in line and line.split(REASON, 1)[1].strip() for line in span):
                    found.append(child.lineno)
            walk(child, inside)

    walk(ast.parse(source), False)
    return found


def test_the_check_finds_a_deferred_import_and_accepts_one_with_its_reason() -> None:
    source = "def f():\n    from impl import dtypes\n\ndef g():\n    from impl import dtypes  # deferred: x\n"
    assert deferred_imports(source) == [2]
    assert deferred_imports("import impl\n\ndef f():\n    import numpy\n") == []


def test_impl_defers_no_import_of_itself_without_a_reason() -> None:
    offenders = [
        f"{path.relative_to(ROOT.parent)}:{line}"
        for path in sorted(ROOT.rglob("*.py"))
        for line in deferred_imports(path.read_text())
    ]
    assert not offenders, f"imports of impl deferred into functions without '{REASON} why': {offenders}"


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def test_impl_has_no_import_cycle() -> None:
    graph = grimp.build_graph("impl", exclude_type_checking_imports=True)
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_one() -> None:
    graph = grimp.ImportGraph()
    for a, b in (("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d")):
        graph.add_import(importer=a, imported=b)
    assert _cycles(graph) == [["p.a", "p.b", "p.c"]]
