"""Architectural promises, checked by parsing the code: nothing outside the two registries
(annotation/protocols/ and evaluation/families/) branches on a protocol or family name."""
import ast
from pathlib import Path

from annotation.protocols import all_protocols
from evaluation.families import all_families

ROOT = Path(__file__).resolve().parents[2]
REGISTRIES = ("annotation/protocols/", "evaluation/families/")
CHECKED = ("annotation", "evaluation", "config")


def _modules():
    for package in CHECKED:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if "/migrations/" in relative or relative.startswith(REGISTRIES):
                continue
            yield relative, ast.parse(path.read_text(encoding="utf-8"))


def _registered_names() -> set[str]:
    return {p.name for p in all_protocols()} | {f.name for f in all_families()} | {p.family for p in all_protocols()}


def _strings(node) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _branches(tree: ast.AST, names: set[str]) -> list[str]:
    """Comparisons, prefix tests and dictionary keys that involve a protocol or family name or `.family`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(isinstance(o, ast.Attribute) and o.attr == "family" for o in operands):
                found.append(f"line {node.lineno}: compares .family")
            found += [f"line {node.lineno}: compares {s!r}" for o in operands for s in _strings(o) if s in names]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("startswith", "endswith")):
            found += [f"line {node.lineno}: {node.func.attr}({s!r})" for a in node.args for s in _strings(a)
                      if any(name.startswith(s) or name.endswith(s) for name in names)]
        elif isinstance(node, ast.Dict):
            found += [f"line {node.lineno}: keyed by {k.value!r}" for k in node.keys
                      if isinstance(k, ast.Constant) and k.value in names]
        elif isinstance(node, ast.Match):
            found += [f"line {node.lineno}: match on {s!r}" for case in node.cases for s in _strings(case.pattern)
                      if s in names]
    return found


def test_no_protocol_or_family_name_is_compared_outside_the_registries():
    names = _registered_names()
    assert {"adequacy", "pairwise-fluency", "direct-assessment", "pairwise"} <= names
    offences = {path: found for path, tree in _modules() if (found := _branches(tree, names))}
    assert offences == {}


def test_the_check_catches_what_it_is_for():
    """The scanner flags the forms of branching it forbids (so an empty result above means something)."""
    names = _registered_names()
    code = ast.parse('if campaign.protocol_spec.family == "pairwise": pass\n'
                     'ANALYSES = {"direct-assessment": 1}\n'
                     'ok = protocol.startswith("pairwise")\n'
                     'other = name in ("adequacy", "fluency")\n')
    found = _branches(code, names)
    assert len(found) == 6, found
