"""The result families come from `settings.MTEVAL_RESULT_FAMILIES` (dotted paths, docs/architecture.md): a family
defined outside evaluation/ joins through the setting alone, with its declared presets; the shipped families keep
their order; and what a family offers is declared on it, never probed by endpoint name or `getattr`."""
import ast
import os
import re
import subprocess
import sys
from pathlib import Path

from django.conf import settings
from django.test import override_settings

from evaluation import presets
from evaluation.families import Family, all_families, get_family
from evaluation.families.base import NoFamily, Offers
from evaluation.presets import Preset

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ["ranking", "acceptance", "direct-assessment", "error-spans", "pairwise", "post-edit",
           "reading-comprehension", "reference-translation"]


class SettingFamily(Family):
    name = "setting-toy"
    label = "Setting toy"
    presets = (Preset(name="setting-toy-default", label="Toy default", family="setting-toy", test="paired-t",
                      threshold=0.05, threshold_rule="lt", cluster_rule="wmt", win_rule="higher", scope="campaign",
                      default=True),)


FAMILY = SettingFamily()


def test_the_shipped_families_in_their_order():
    assert [f.name for f in all_families()] == SHIPPED
    assert [p.name for p in presets._presets().all()] == ["wmt21-da", "appraise", "crowd-alone", "wmt24-esa",
                                                          "esa-stouffer", "wmt25-esa"]


def test_a_family_joins_through_the_setting_with_its_presets_and_leaves_with_it():
    with override_settings(MTEVAL_RESULT_FAMILIES=[*settings.MTEVAL_RESULT_FAMILIES, f"{__name__}.FAMILY"]):
        assert get_family("setting-toy") is FAMILY
        assert [f.name for f in all_families()] == [*SHIPPED, "setting-toy"]
        assert presets.default_preset("setting-toy").name == "setting-toy-default"
        assert presets.get_preset("setting-toy-default").label == "Toy default"
    assert isinstance(get_family("setting-toy"), NoFamily)
    assert presets.presets_of("setting-toy") == []


def test_the_setting_alone_decides_which_families_exist():
    with override_settings(MTEVAL_RESULT_FAMILIES=["evaluation.families.pairwise.FAMILY"]):
        assert [f.name for f in all_families()] == ["pairwise"]
        assert isinstance(get_family("ranking"), NoFamily)
        assert presets.presets_of("direct-assessment") == []
    assert get_family("ranking").name == "ranking"


def test_a_starting_worker_knows_the_families_tasks():
    """A Celery worker loads Django and the apps' tasks modules, nothing else, before it takes tasks: the families
    (ranking's TrueSkill bootstrap subtasks) must be imported by then, or their tasks arrive unregistered."""
    code = ("import django; django.setup()\nfrom config.celery import app\napp.loader.import_default_modules()\n"
            "print(sorted(app.tasks))")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "evaluation.families.ranking.bootstrap.trueskill_runs" in out.stdout
    assert "evaluation.families.common.bradley_terry.bradley_terry_runs" in out.stdout


def test_capabilities_are_declared_with_defaults():
    assert Family.offers == Offers(power=False, calibration=False, reference_ranking=False)
    assert Family.stability_scores == ("z", "raw") and Family.presets == ()
    offers = {f.name: f.offers for f in all_families()}
    assert offers["direct-assessment"] == Offers(power=True, calibration=True)
    assert offers["ranking"] == Offers(reference_ranking=True,
                                       parts=("instruction-following", "media-split", "training", "bradley_terry"))
    assert "bradley_terry" in offers["pairwise"].parts and "bradley_terry" not in offers["direct-assessment"].parts
    assert get_family("error-spans").stability_scores == ("z",)


def _python(*packages):
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts and "stats" not in path.relative_to(ROOT).parts[:2]:
                yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _probes(tree) -> list[str]:
    """`getattr(<family or protocol spec>, "<name>", ...)` and `"<name>" in <x>.endpoints`."""
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                and node.args and re.search(r"famil|protocol_spec|\bspec\b", ast.unparse(node.args[0]))):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif (isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)
              and isinstance(node.left, ast.Constant) and any(
                  isinstance(c, ast.Attribute) and c.attr == "endpoints" for c in node.comparators)):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_no_capability_is_probed():
    offences = {path: found for path, tree in _python("evaluation") if (found := _probes(tree))}
    templates = {path.relative_to(ROOT).as_posix(): line for path in sorted((ROOT / "templates").rglob("*.html"))
                 for line in path.read_text(encoding="utf-8").splitlines() if re.search(r"in \w+\.endpoints", line)}
    assert offences == {} and templates == {}


def test_the_probe_scan_catches_what_it_is_for():
    code = ast.parse('x = getattr(campaign.protocol_spec, "mqm", False)\ny = getattr(family_of(c), "calibrates", 0)\n'
                     'z = "spearman" in family.endpoints\nw = getattr(view, "action", None)\n')
    assert len(_probes(code)) == 3
