"""The protocol interface is declared on the base class, role by role, with defaults (annotation/protocols/base.py):
a protocol that leaves a capability out gets its default, and nothing in annotation probes a protocol for a hook
with getattr."""
import ast
from pathlib import Path

from annotation.models import HitItem
from annotation.protocols import all_protocols
from annotation.protocols.base import Protocol

ROOT = Path(__file__).resolve().parent.parent
DECLARED = {name for name in dir(Protocol) if not name.startswith("_")}


class Bare(Protocol):
    """A protocol that declares only what every protocol must."""

    name = "bare"
    label = "Bare"


def test_a_bare_protocol_has_every_declared_capability_with_its_default():
    bare = Bare()
    assert (bare.criterion, bare.mqm, bare.contrastive, bare.curated, bare.stage_only) == ("", False, False, "", False)
    assert bare.categories({"taxonomy": ["Style"]}) is None
    assert bare.export_values({}, {}, {}) == {} and bare.next_stages({}) == []


def test_the_default_preview_names_the_system_of_the_items_output(make_campaign):
    campaign = make_campaign(systems=("sys-A",), hit_size=40)
    item = HitItem.objects.filter(hit__campaign=campaign, item_type="system").select_related("output__system").first()
    assert Bare().preview_systems(item, {}) == "sys-A"
    no_output = HitItem(output=None)
    assert Bare().preview_systems(no_output, {}) == ""


def test_every_shipped_protocol_declares_nothing_the_base_lacks_among_its_capabilities():
    for protocol in all_protocols():
        assert isinstance(protocol, Protocol)
        assert isinstance(protocol.criterion, str) and isinstance(protocol.mqm, bool)


def _probes(path: Path) -> list[str]:
    """`getattr(x, "<a declared Protocol member>", ...)` calls in `path`: a capability probed instead of declared."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value in DECLARED:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.func.id}(…, {node.args[1].value!r})")
    return found


def test_nothing_in_annotation_probes_a_protocol_for_a_hook():
    probes = [p for path in sorted((ROOT / "annotation").rglob("*.py")) if "migrations" not in path.parts
              for p in _probes(path)]
    assert probes == []
