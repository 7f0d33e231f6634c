"""Architectural promises, checked by parsing the code: nothing outside the two registries
(annotation/protocols/ and evaluation/families/) branches on a protocol or family name, and no shared template
or script names one."""
import ast
import re
from collections import defaultdict
from pathlib import Path

from django.contrib.staticfiles import finders
from django.template.loader import get_template

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


# Screens: a protocol's screen (its template and scripts, annotation.protocols.base.Screen) and a family's results
# template belong to it; every other template and script is shared, and names no protocol or family.
QUOTED = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'')


def _owned_screen_files() -> set[Path]:
    """The templates and scripts of one family's protocols' screens or of its results page, found as the page
    finds them (template loaders, staticfiles finders)."""
    owners = defaultdict(set)
    for protocol in all_protocols():
        owners[Path(get_template(protocol.screen.template).origin.name)].add(protocol.family)
        for script in protocol.screen.scripts:
            owners[Path(finders.find(script))].add(protocol.family)
    for family in all_families():
        if family.template:
            owners[Path(get_template(family.template).origin.name)].add(family.name)
    return {path.resolve() for path, families in owners.items() if len(families) == 1}


def _shared_screen_files():
    owned = _owned_screen_files()
    folders = [ROOT / "templates", ROOT / "static"]
    for package in CHECKED:
        folders += [p for p in (ROOT / package).rglob("*") if p.is_dir() and p.name in ("templates", "static")
                    and not p.relative_to(ROOT).as_posix().startswith(REGISTRIES)]
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.suffix in (".html", ".js", ".txt") and path.resolve() not in owned:
                yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")


def _named(text: str, names: set[str]) -> list[str]:
    """Quoted strings that are a protocol or family name, or a path with one as a part (…/ranking.js)."""
    spellings = names | {name.replace("-", "_") for name in names}
    found = []
    for match in QUOTED.finditer(text):
        value = match.group(1) if match.group(1) is not None else match.group(2)
        parts = [part.split(".")[0] for part in value.split("/")] if "/" in value or "." in value else []
        if value in spellings or any(part in spellings for part in parts):
            found.append(f"line {text.count(chr(10), 0, match.start()) + 1}: {value!r}")
    return found


def test_no_shared_template_or_script_names_a_protocol_or_family():
    names = _registered_names()
    shared = dict(_shared_screen_files())
    assert {"templates/annotation/hit.html", "static/annotation/hit.js", "static/annotation/choice_rows.js"} <= set(
        shared)
    offences = {path: found for path, text in shared.items() if (found := _named(text, names))}
    assert offences == {}


def test_the_screen_check_catches_what_it_is_for():
    """Names as keys, compared, or as the file a shared page includes are flagged; prose and classes are not."""
    names = _registered_names()
    text = ('hit.register("ranking", screen);\n'
            '{% if protocol.name == "post-edit" %}{% include "annotation/screens/post_edit_verify.html" %}{% endif %}\n'
            "<script src=\"{% static 'annotation/acceptance.js' %}\"></script>\n"
            '<p class="hint">Rank the translations</p>\n')
    assert len(_named(text, names)) == 4, _named(text, names)
