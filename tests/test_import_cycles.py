"""No import cycles among the project's modules (issue 24, docs/architecture.md): every module of the checked
packages is parsed with `ast`, imports inside functions and under `if TYPE_CHECKING` count, relative imports are
resolved, and the test fails listing every cycle, so that a cycle cannot come back hidden in a function.

A package's `__init__` is not counted as imported by its submodules' importers (Python runs it first, but that
is no cycle of the code's own making); `lint-imports` (.importlinter) checks the layers on the same graph.
"""
import ast
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The packages whose modules are checked. `annotation` joins when its protocol packages land (issue 24).
PACKAGES = ["annotation", "evaluation", "config"]


def module_files(root: Path, packages: list[str]) -> dict[str, Path]:
    """Dotted module name -> file, for every module of `packages` under `root` (migrations left out)."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if "migrations" in parts:
                continue
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The dotted names an import statement names, relative imports resolved against `module`."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[:len(package) - (node.level - 1)]
        base = ".".join([*package, base] if base else package)
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def import_graph(root: Path, packages: list[str]) -> dict[str, set[str]]:
    """Module -> the checked modules it imports anywhere in its code (the longest known prefix of each name)."""
    files = module_files(root, packages)
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            targets = _targets(name, path.name == "__init__.py", node)
            if isinstance(node, ast.ImportFrom):
                # `from package import name` imports the submodule `package.name` when there is one, else a name
                # of `package` itself.
                base, names = targets[0], targets[1:]
                targets = [t if t in files else base for t in names]
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of two or more modules that import one another, directly or not (Tarjan, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)


def a_cycle(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """One shortest cycle through the group's first module, as the path of imports that closes it."""
    members, start = set(group), group[0]
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(graph[node] & members):
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [start, *reversed(path[:-1]), start]
            if child not in came_from:
                came_from[child] = node
                queue.append(child)
    return group


def describe(graph: dict[str, set[str]], groups: list[list[str]]) -> str:
    return "\n".join(f"{len(g)} modules: {', '.join(g)}\n    e.g. {' -> '.join(a_cycle(graph, g))}" for g in groups)


def test_no_import_cycles():
    graph = import_graph(ROOT, PACKAGES)
    assert len(graph) > 100, "the checker found too few modules to mean anything"
    groups = strongly_connected(graph)
    assert not groups, (f"{len(groups)} import cycles join {sum(map(len, groups))} modules (imports inside functions "
                        f"count):\n{describe(graph, groups)}")


def _package(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_checker_finds_a_cycle_hidden_in_a_function(tmp_path):
    """A cycle closed by an import inside a function, through a relative import two levels up, is found; a
    one-way chain beside it is not."""
    _package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from .sub import b\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/b.py": "def f():\n    from ..a import thing\n    return thing\n",
        "pkg/c.py": "import pkg.d\n",
        "pkg/d.py": "from pkg.sub import b  # one way: b does not import c or d\n",
    })
    graph = import_graph(tmp_path, ["pkg"])
    assert graph["pkg.sub.b"] == {"pkg.a"}
    assert graph["pkg.a"] == {"pkg.sub.b"}
    groups = strongly_connected(graph)
    assert groups == [["pkg.a", "pkg.sub.b"]]
    assert a_cycle(graph, groups[0]) == ["pkg.a", "pkg.sub.b", "pkg.a"]
    assert "pkg.a -> pkg.sub.b -> pkg.a" in describe(graph, groups)


def test_the_checker_follows_package_inits_and_longer_cycles(tmp_path):
    """`from . import x` in a package's `__init__` and a three-module ring under TYPE_CHECKING are found too."""
    _package(tmp_path, {
        "ring/__init__.py": "from . import one\n",
        "ring/one.py": "from ring.two import X\n",
        "ring/two.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import three\nX = 1\n",
        "ring/three.py": "class C:\n    def m(self):\n        import ring\n",
    })
    graph = import_graph(tmp_path, ["ring"])
    assert strongly_connected(graph) == [["ring", "ring.one", "ring.three", "ring.two"]]
