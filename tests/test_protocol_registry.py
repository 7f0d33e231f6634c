"""The protocol registry is filled from settings.MTEVAL_PROTOCOLS (docs/architecture.md): the shipped protocols in
their order by default, a deployment's own added by the setting alone; and the layers under it stay one way — the
registry and the models import no protocol package, no protocol package imports another (imports inside functions
count), and the campaign importer and the stage builder do not import each other."""
import ast
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from annotation.protocols import UnknownProtocol, get_protocol, importable_protocol_choices, protocol_choices
from annotation.protocols.pairwise import Pairwise

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = sorted(p.name for p in (ROOT / "annotation" / "protocols").iterdir() if (p / "__init__.py").exists())
SHIPPED = ["fluency", "adequacy", "source-adequacy", "esa", "mqm", "contrastive-esa", "mqm-sxs", "mqm-review",
           "esa-review", "pairwise-adequacy",
           "pairwise-fluency", "ranking", "ranking-constituent", "constituent-acceptance", "post-edit",
           "post-edit-verify", "reading-comprehension", "reading-comprehension-vote", "reading-comprehension-answer",
           "reading-comprehension-grade", "reference-translation", "reference-translation-detect"]

#: A deployment's own protocol, defined here and added by the setting only.
EXTRA = Pairwise("pairwise-clarity", "Pairwise ranking, clarity (test)", "clarity", "Which one is clearer?")


def test_the_default_setting_gives_the_shipped_protocols_in_their_order():
    assert [name for name, _ in protocol_choices()] == SHIPPED
    assert "post-edit-verify" not in dict(importable_protocol_choices())


def test_a_protocol_named_in_the_setting_is_registered_and_dropped_with_it(settings):
    with override_settings(MTEVAL_PROTOCOLS=[*settings.MTEVAL_PROTOCOLS, "tests.test_protocol_registry.EXTRA"]):
        assert get_protocol("pairwise-clarity") is EXTRA
        assert protocol_choices()[-1] == ("pairwise-clarity", EXTRA.label)
        assert "pairwise-clarity" in dict(importable_protocol_choices())
    with pytest.raises(UnknownProtocol, match="unknown protocol 'pairwise-clarity'"):
        get_protocol("pairwise-clarity")
    assert [name for name, _ in protocol_choices()] == SHIPPED


def test_a_path_naming_nothing_is_a_configuration_error():
    with override_settings(MTEVAL_PROTOCOLS=["annotation.protocols.ranking.NOTHING"]), \
            pytest.raises(ImproperlyConfigured, match="MTEVAL_PROTOCOLS: cannot import"):
        get_protocol("ranking")


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, anywhere in it (inside functions too), as absolute dotted names; `from X import
    y` counts as X and X.y."""
    module = _module(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _files(*where: str) -> list[Path]:
    return [p for w in where for p in ((ROOT / w).rglob("*.py") if (ROOT / w).is_dir() else [ROOT / w])]


def _protocol_packages_named(imports: set[str]) -> set[str]:
    return {p for p in PACKAGES for name in imports
            if name == f"annotation.protocols.{p}" or name.startswith(f"annotation.protocols.{p}.")}


@pytest.mark.parametrize("package", PACKAGES)
def test_no_protocol_package_imports_another(package):
    named = set()
    for path in _files(f"annotation/protocols/{package}"):
        named |= _protocol_packages_named(_imports(path))
    assert named <= {package}, f"{package} imports {sorted(named - {package})}"


@pytest.mark.parametrize("path", ["annotation/models.py", "annotation/protocols/__init__.py",
                                  "annotation/protocols/base.py", "annotation/protocols/options.py",
                                  "annotation/building"])
def test_the_models_the_registry_and_the_building_blocks_import_no_protocol_package(path):
    for file in _files(path):
        assert not _protocol_packages_named(_imports(file)), file


def test_the_campaign_importer_and_the_stage_builder_do_not_import_each_other():
    assert "annotation.services.campaign_import" not in _imports(ROOT / "annotation/services/stages.py")
    assert "annotation.services.stages" in _imports(ROOT / "annotation/services/campaign_import.py")
