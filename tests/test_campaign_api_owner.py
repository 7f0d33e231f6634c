"""Issue 24, item 4: annotation owns campaigns. The campaign API (list, detail, imports, status, sharing, blocking,
stages, the judgment export) is annotation's, the results under the same `/api/campaigns/<slug>/` are evaluation's;
ownership is `Campaign.objects.visible_to(user)`; annotation imports no module of evaluation and reads the results
it shows through the results source evaluation installs (annotation/extensions.py)."""
import ast
import csv
import io
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import resolve

from annotation import extensions
from annotation.models import Campaign, Study
from evaluation.analyses import compute_results
from evaluation.models import CampaignStatistics
from evaluation.results_source import StoredResults

from .conftest import post_answer, start

ANNOTATION = Path(__file__).resolve().parent.parent / "annotation"

#: Each campaign route, and the app whose view answers it.
ROUTES = [
    ("/api/campaigns/", "annotation"), ("/api/campaigns/s/", "annotation"),
    ("/api/campaigns/import-judgments/", "annotation"), ("/api/campaigns/s/settings/", "annotation"),
    ("/api/imports/00000000-0000-0000-0000-000000000001/", "annotation"), ("/api/campaigns/s/status/", "annotation"),
    ("/api/campaigns/s/block/", "annotation"), ("/api/campaigns/s/unblock/", "annotation"),
    ("/api/campaigns/s/share/", "annotation"), ("/api/campaigns/s/unshare/", "annotation"),
    ("/api/campaigns/s/build-stages/", "annotation"), ("/api/campaigns/s/judgments/", "annotation"),
    ("/api/campaigns/s/compute/", "evaluation"), ("/api/campaigns/s/workers/", "evaluation"),
    ("/api/campaigns/s/systems/", "evaluation"), ("/api/campaigns/s/tables/", "evaluation"),
    ("/api/campaigns/s/tables/systems/", "evaluation"), ("/api/campaigns/s/significance/", "evaluation"),
    ("/api/campaigns/s/gates/", "evaluation"), ("/api/campaigns/s/gates/lift/", "evaluation"),
    ("/api/campaigns/s/costs/", "evaluation"), ("/api/campaigns/s/approvals/", "evaluation"),
    ("/api/campaigns/s/reference-ranking/", "evaluation"), ("/api/campaigns/s/stability/", "evaluation"),
    ("/api/campaigns/s/adaptive/", "evaluation"), ("/api/studies/", "evaluation"),
]


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports, at the top or inside a function (relative imports resolved)."""
    package = ".".join(path.relative_to(ANNOTATION.parent).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            names.add(".".join(filter(None, [base, node.module or ""])))
    return names


def test_annotation_imports_no_module_of_evaluation():
    found = {str(path.relative_to(ANNOTATION.parent)): sorted(n for n in imported_modules(path)
                                                              if n.split(".")[0] == "evaluation")
             for path in ANNOTATION.rglob("*.py")}
    assert {path: names for path, names in found.items() if names} == {}


@pytest.mark.parametrize("url,app", ROUTES)
def test_each_campaign_route_is_answered_by_the_app_that_owns_it(url, app):
    assert resolve(url).func.__module__.split(".")[0] == app


@pytest.mark.django_db
def test_visible_to_narrows_any_campaign_or_study_queryset(make_campaign, researcher):
    users = get_user_model().objects
    other = users.create_user("other", is_staff=True)
    grouped = users.create_user("grouped", is_staff=True)
    group = Group.objects.create(name="lab")
    grouped.groups.add(group)
    boss = users.create_superuser("boss")
    annotator = users.create_user("annotator")
    mine = make_campaign(name="Mine", study="Mine")
    theirs = make_campaign(name="Theirs", owner=other)
    theirs.shared_with_groups.add(group)

    assert set(Campaign.objects.visible_to(researcher)) == {mine}
    assert set(Campaign.objects.filter(name="Theirs").visible_to(other)) == {theirs}
    assert set(Campaign.objects.filter(name="Mine").visible_to(grouped)) == set()
    assert set(Campaign.objects.visible_to(grouped)) == {theirs}
    assert set(Campaign.objects.visible_to(boss)) == {mine, theirs}
    assert not Campaign.objects.visible_to(annotator).exists()
    # the results admin's proxy model is owned like its campaign
    assert {c.pk for c in CampaignStatistics.objects.visible_to(other)} == {theirs.pk}
    assert set(Study.objects.visible_to(researcher)) == {mine.study}
    assert not Study.objects.visible_to(other).exists()


@pytest.fixture
def judged(client, make_campaign):
    """An adequacy campaign two workers judged with varied scores, its results computed."""
    campaign = make_campaign(redundancy=2)
    for worker, base in (("w1", 20), ("w2", 50)):
        token = start(client, campaign, worker)
        state = client.get(f"/api/hit/{token}/").json()
        for step in range(8):
            state = post_answer(client, token, {"item": state["item"]["id"], "score": base + 5 * step}).json()
    compute_results(campaign)
    return campaign


def z_column(api, campaign) -> list[str]:
    response = api.get(f"/api/campaigns/{campaign.slug}/judgments/", {"format": "csv"})
    assert response.status_code == 200
    return [row["z"] for row in csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode()))]


@pytest.mark.django_db
def test_the_campaign_api_shows_the_results_through_the_installed_results_source(api, judged):
    assert isinstance(extensions.results_source(), StoredResults)  # evaluation installed it in ready()
    detail = api.get(f"/api/campaigns/{judged.slug}/").json()
    assert detail["results_computed_at"] is not None
    zs = z_column(api, judged)
    assert len(zs) == 16 and all(zs)
    installed = extensions.results_source()
    extensions.install_results_source(extensions.ResultsSource())  # a deployment without results
    try:
        assert api.get(f"/api/campaigns/{judged.slug}/").json()["results_computed_at"] is None
        assert api.get("/api/campaigns/").json()["results"][0]["results_computed_at"] is None
        assert z_column(api, judged) == [""] * 16
    finally:
        extensions.install_results_source(installed)


@pytest.mark.django_db
def test_the_api_root_lists_campaigns_and_studies(api):
    response = api.get("/api/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    assert response.json() == {"campaigns": "http://testserver/api/campaigns/",
                               "studies": "http://testserver/api/studies/"}
