#!/usr/bin/env python3
"""The module import graph of a Python package, and its cycles (the Python side of scripts/import-graph.mjs).

    python3 scripts/py-import-cycles.py sim-bridge/imep_sim_bridge [more package folders …]

Reads every .py file under each package folder with `ast` (nothing is imported or run; standard library only) and
draws an edge A → B for every import in module A that names module B of the same package: module-level imports,
imports inside functions and methods, `if TYPE_CHECKING:` imports and imports under `try:` alike (a cycle hidden
in a function body is still a cycle), absolute (`import pkg.a`, `from pkg import a`) and relative
(`from . import a`, `from ..b import c`). `from X import n` points at the module X.n where that is a module of
the package, else at X. Parent packages that Python also runs (`pkg/__init__.py` before `pkg.a`) get no edge of
their own: the edge names the module the import statement asks for. Imports of other packages are not drawn.

Prints one line per cycle, `cycle: a → b → a`, naming each import of it as file:line, for every strongly connected
group of modules, and exits 1; prints one summary line and exits 0 when there is none. Exit 2 on a bad argument
or a file that does not parse.
"""

from __future__ import annotations

import ast
import sys
import time
from collections import deque
from pathlib import Path


def module_name(package_dir: Path, file: Path) -> str:
    """`pkg/a/b.py` → `pkg.a.b`; `pkg/a/__init__.py` → `pkg.a`."""
    parts = [package_dir.resolve().name, *file.relative_to(package_dir).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def collect_modules(package_dir: Path) -> dict[str, Path]:
    """Every module of the package (name → file), in name order."""
    if not (package_dir / "__init__.py").is_file():
        raise ValueError(f"{package_dir}: not a package folder (no __init__.py)")
    found = {module_name(package_dir, f): f for f in package_dir.rglob("*.py") if "__pycache__" not in f.parts}
    return dict(sorted(found.items()))


def _resolve_from(current: str, is_package: bool, level: int, module: str | None) -> str:
    """The absolute module a `from …` statement names (relative levels resolved against `current`)."""
    if level == 0:
        return module or ""
    base = current.split(".") if is_package else current.split(".")[:-1]
    if level - 1 > len(base) - 1:
        return ""  # beyond the top-level package: not ours
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def imports_of(name: str, file: Path, modules: dict[str, Path]) -> list[tuple[str, int]]:
    """(target module, line) for every import in `file` that names a module of the package, in source order."""
    tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
    is_package = file.name == "__init__.py"
    top = name.partition(".")[0]
    out: list[tuple[str, int]] = []

    def add(target: str, line: int) -> None:
        # the module itself, else the closest enclosing module that exists (`import pkg.a.Klass` is not valid,
        # but `from pkg.a import Klass` names pkg.a)
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != name:
            out.append((target, line))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.partition(".")[0] == top:
                    add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_from(name, is_package, node.level, node.module)
            if not base:
                continue
            for alias in node.names:
                child = f"{base}.{alias.name}"
                add(child if child in modules else base, node.lineno)
    out.sort(key=lambda edge: edge[1])
    return out


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module (a module never imports itself here)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop(0)
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)


def shortest_cycle(graph: dict[str, dict[str, int]], group: list[str], start: str) -> list[str]:
    """The shortest cycle through `start` that stays inside its strongly connected group: [start, …, start]."""
    members = set(group)
    parent: dict[str, str] = {}
    queue = deque([start])
    seen = {start}
    while queue:
        node = queue.popleft()
        for nxt in sorted(graph[node]):
            if nxt not in members:
                continue
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if nxt not in seen:
                seen.add(nxt)
                parent[nxt] = node
                queue.append(nxt)
    raise AssertionError(f"no cycle through {start} inside its strongly connected group")  # unreachable


def cycles_of(graph: dict[str, dict[str, int]], group: list[str]) -> list[list[str]]:
    """Cycles that together pass through every module of a strongly connected group (shortest first per module)."""
    out: list[list[str]] = []
    covered: set[str] = set()
    for start in group:
        if start not in covered:
            cycle = shortest_cycle(graph, group, start)
            covered.update(cycle)
            out.append(cycle)
    return out


def check(package_dir: Path) -> tuple[list[str], int, int]:
    """(one line per cycle, module count, edge count) of one package folder."""
    modules = collect_modules(package_dir)
    graph: dict[str, dict[str, int]] = {}
    for name, file in modules.items():
        edges: dict[str, int] = {}
        for target, line in imports_of(name, file, modules):
            edges.setdefault(target, line)  # the first import of each target names the line
        graph[name] = edges
    lines = []
    for group in strongly_connected(graph):
        for cycle in cycles_of(graph, group):
            where = ", ".join(f"{modules[a].as_posix()}:{graph[a][b]}" for a, b in zip(cycle, cycle[1:]))
            lines.append(f"cycle: {' → '.join(cycle)} (imports at {where})")
    return lines, len(modules), sum(len(e) for e in graph.values())


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python3 scripts/py-import-cycles.py PACKAGE_DIR [PACKAGE_DIR …]", file=sys.stderr)
        return 2
    failed = False
    for arg in argv:
        t0 = time.monotonic()
        try:
            lines, n_modules, n_edges = check(Path(arg))
        except (ValueError, SyntaxError, OSError) as exc:
            print(f"py-import-cycles: {arg}: {exc}", file=sys.stderr)
            return 2
        for line in lines:
            print(f"py-import-cycles: {arg}: {line}")
        ms = (time.monotonic() - t0) * 1000
        if lines:
            failed = True
            print(
                f"py-import-cycles: {arg}: {len(lines)} cycle(s) among {n_modules} modules; "
                "break each by moving what both sides share into a module of its own"
            )
        else:
            print(f"py-import-cycles: {arg}: {n_modules} modules, {n_edges} import edges, no cycle ({ms:.0f} ms)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
