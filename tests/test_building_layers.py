"""Layers of the HIT planners and judgment formats, checked by parsing the code (imports inside functions count):
the neutral building blocks (annotation/building/) import no service and no protocol (only the protocol interface);
a protocol package's planner and formats import building blocks, models and their own package only (never
annotation.services, never another protocol); and these modules with the import services above them form no import
cycle."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What a protocol package keeps besides its planner and formats (the strategy and the package's exports).
STRATEGY_FILES = ("strategy.py", "__init__.py")  # and a package's further strategies and their option declarations,
STRATEGY_SUFFIXES = ("_strategy.py", "_options.py")  # `<name>_strategy.py`, `<name>_options.py`
#: The protocol interface, which imports no protocol package: building blocks may use it (e.g. JudgmentError).
INTERFACE = ("annotation.protocols.base", "annotation.protocols.options", "annotation.protocols.common_options")
#: The import services that read the planners and formats.
SERVICES = ("annotation/services/campaign_import.py", "annotation/services/campaign_scan.py",
            "annotation/services/reliability_capacity.py", "annotation/services/judgment_import.py")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module `path` imports, anywhere in it, relative imports resolved (`from x import y` gives x.y too)."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + [node.module or ""]) if node.level \
                else node.module
            base = base.rstrip(".")
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def planners_and_formats() -> list[Path]:
    return sorted(p for p in (ROOT / "annotation" / "protocols").glob("*/*.py")
                  if p.name not in STRATEGY_FILES and not p.name.endswith(STRATEGY_SUFFIXES))


def offences(path: Path, allowed: tuple[str, ...]) -> list[str]:
    return sorted(m for m in imports(path) if m.startswith("annotation") and not m.startswith(allowed))


def test_building_blocks_import_no_protocol_and_no_service():
    modules = sorted((ROOT / "annotation" / "building").glob("*.py"))
    assert {p.stem for p in modules} >= {"hit_layout", "qc_hits", "degradation", "text_lines", "spans", "bulk",
                                         "campaign_files", "judgment_files"}
    found = {module_name(p): offences(p, ("annotation.building", "annotation.models", *INTERFACE)) for p in modules}
    assert {m: bad for m, bad in found.items() if bad} == {}


def test_planners_and_formats_import_building_blocks_models_and_their_own_package_only():
    modules = planners_and_formats()
    assert {p.relative_to(ROOT).as_posix() for p in modules} >= {
        "annotation/protocols/direct_assessment/formats.py", "annotation/protocols/pairwise/planner.py",
        "annotation/protocols/ranking/formats.py", "annotation/protocols/error_spans/esa_jsonl.py"}
    found = {}
    for path in modules:
        own = module_name(path).rsplit(".", 1)[0]
        found[module_name(path)] = offences(path, ("annotation.building", "annotation.models", own))
    assert {m: bad for m, bad in found.items() if bad} == {}


def test_planners_formats_building_blocks_and_import_services_form_no_cycle():
    paths = [*sorted((ROOT / "annotation" / "building").glob("*.py")), *planners_and_formats(),
             *(ROOT / s for s in SERVICES)]
    names = {module_name(p): p for p in paths}
    graph = {m: {t for t in imports(p) if t in names and t != m} for m, p in names.items()}
    assert cycle(graph) is None


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of `graph` as the modules along it, or None (depth-first search)."""
    state: dict[str, int] = {}
    trail: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        trail.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return trail[trail.index(target):] + [target]
            if target not in state and (found := visit(target)):
                return found
        state[node] = 2
        trail.pop()
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_the_cycle_check_finds_a_cycle():
    """So that None above means something."""
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None
