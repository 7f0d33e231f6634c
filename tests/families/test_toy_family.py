"""A family written inside the test suite needs only its module and its template to appear in the
API, the results page, the CSV and LaTeX downloads and the admin."""
import random

import pytest
from django.db.models import Avg, Count
from django.test import Client

from annotation import protocols
from annotation.building.degradation import degrade_adequacy
from annotation.models import Judgment
from annotation.protocols.direct_assessment import DirectAssessment
from evaluation import families
from evaluation.analyses import compute_results
from evaluation.families import Family, Table
from evaluation.models import WorkerResult
from evaluation.services.latex import booktabs
from evaluation.services.results_read import stored_rows
from evaluation.services.storing import replace_results

from ..simulation import Behaviour, complete_hit

pytestmark = pytest.mark.django_db
QUALITY = {"sys-A": 80.0, "sys-B": 40.0}


class ToyFamily(Family):
    """Mean raw score per system and per worker, nothing else."""

    name = "toy"
    label = "Toy means"
    template = "toy_family.html"
    sections = (("toy", "Toy means"),)
    endpoints = ("best",)

    def compute(self, campaign):
        judgments = Judgment.objects.filter(campaign=campaign, item__item_type="system")
        systems = judgments.values("item__output__system__name").annotate(score=Avg("score"), n=Count("id"))
        rows = sorted(({"system": r["item__output__system__name"], "score": r["score"], "score_name": "mean_raw",
                        "n": r["n"]} for r in systems), key=lambda r: -r["score"])
        for rank, row in enumerate(rows, 1):
            row.update(rank=rank, rank_range=[rank, rank], cluster=rank)
        workers = [WorkerResult(campaign=campaign, annotator_id=r["annotator"], worker=r["annotator__external_id"],
                                hits=1, judgments=r["n"], pairs=0, test="none", reliable=True)
                   for r in judgments.values("annotator", "annotator__external_id").annotate(n=Count("id"))]
        return replace_results(campaign, {WorkerResult: workers}, {"seconds": 0.0, "judgments": judgments.count(),
                                                                    "summary": {"workers": len(workers),
                                                                                "reliable_workers": len(workers)}},
                               tables={"systems": rows})

    def best(self, campaign, params):
        rows = stored_rows(campaign, "systems")
        return {"best": rows[0]["system"] if rows else None}

    def page_context(self, campaign, header, workers, request):
        return {"toy_rows": stored_rows(campaign, "systems")}

    def tables(self):
        latex = lambda campaign, params: booktabs(  # noqa: E731
            [("System", "system", "l"), ("Mean", "score", "r")], stored_rows(campaign, "systems"), group="cluster")
        return [Table("workers", self.workers_table), Table("systems", self.stored_table("systems"), latex=latex)]


TEMPLATE = """<section class="card" id="toy"><h2>Toy means</h2><ol>
{% for r in toy_rows %}<li class="toy-row">{{ r.system }}: {{ r.score|floatformat:1 }}</li>{% endfor %}
</ol></section>"""


@pytest.fixture
def toy(monkeypatch, settings, tmp_path, make_campaign):
    (tmp_path / "toy_family.html").write_text(TEMPLATE)
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [*settings.TEMPLATES[0]["DIRS"], tmp_path]}]
    protocol = DirectAssessment("toy-rating", "Toy rating", "reference", degrade_adequacy, "the text is good.")
    protocol.family = "toy"
    monkeypatch.setitem(protocols._REGISTRY, protocol.name, protocol)
    monkeypatch.setitem(families._REGISTRY, "toy", ToyFamily())
    campaign = make_campaign(protocol="toy-rating", systems=tuple(QUALITY), redundancy=2, name="Toy campaign")
    client = Client()
    for worker in ("w-1", "w-2"):
        complete_hit(client, campaign.slug, worker, Behaviour("diligent"), QUALITY, random.Random(worker))
    compute_results(campaign)
    return campaign


def test_the_toy_family_answers_the_api(toy, api):
    body = api.get(f"/api/campaigns/{toy.slug}/systems/").json()
    assert [r["system"] for r in body["results"]] == ["sys-A", "sys-B"]
    assert {"system", "score", "score_name", "n", "rank", "rank_range", "cluster"} <= set(body["results"][0])
    assert body["results"][0]["score"] > body["results"][1]["score"]
    workers = api.get(f"/api/campaigns/{toy.slug}/workers/").json()["results"]
    assert sorted(w["worker"] for w in workers) == ["w-1", "w-2"]
    assert api.get(f"/api/campaigns/{toy.slug}/best/").json() == {"best": "sys-A"}
    assert api.get(f"/api/campaigns/{toy.slug}/significance/").status_code == 400  # another family's table
    assert api.get(f"/api/campaigns/{toy.slug}/no-such-table/").status_code == 404


def test_the_toy_family_shows_on_the_results_page_and_downloads(toy, researcher):
    client = Client()
    client.force_login(researcher)
    html = client.get(f"/results/{toy.slug}/").content.decode()
    assert html.count('class="toy-row"') == 2 and "sys-A: " in html and 'href="#toy"' in html
    systems_csv = client.get(f"/results/{toy.slug}/systems.csv").content.decode().splitlines()
    assert systems_csv[0].split(",")[:2] == ["system", "score"] and systems_csv[1].startswith("sys-A,")
    workers_csv = client.get(f"/results/{toy.slug}/workers.csv").content.decode()
    assert "w-1" in workers_csv and "w-2" in workers_csv
    latex = client.get(f"/results/{toy.slug}/systems.tex").content.decode()
    assert r"\toprule" in latex and "sys-A" in latex and latex.count(r"\midrule") == 2  # header, cluster rule
    assert client.get(f"/results/{toy.slug}/significance.csv").status_code == 404


def test_the_toy_family_shows_in_the_admin(toy, django_user_model):
    admin_user = django_user_model.objects.create_superuser("boss", password="pw")
    client = Client()
    client.force_login(admin_user)
    listing = client.get("/admin/evaluation/campaignstatistics/").content.decode()
    assert "Toy campaign" in listing and "2 / 2" in listing
    page = client.get(f"/admin/evaluation/campaignstatistics/{toy.pk}/change/").content.decode()
    assert "sys-A" in page and "w-1" in page and "mean_raw" in page


def test_tables_download_from_the_api_too(toy, api):
    listing = api.get(f"/api/campaigns/{toy.slug}/tables/").json()["tables"]
    names = [t["name"] for t in listing]
    assert names[:2] == ["workers", "systems"] and {"progress", "cost", "approvals"} <= set(names)
    systems = next(t for t in listing if t["name"] == "systems")
    assert systems["latex"].endswith("/tables/systems/?format=latex")
    latex = api.get(f"/api/campaigns/{toy.slug}/tables/systems/?format=latex")
    assert latex["Content-Type"].startswith("application/x-tex") and r"\bottomrule" in latex.content.decode()
    csv_body = api.get(f"/api/campaigns/{toy.slug}/tables/systems/").content
    rows = api.get(f"/api/campaigns/{toy.slug}/tables/systems/?format=json").json()["rows"]
    assert csv_body.decode().splitlines()[1].startswith(rows[0]["system"] + ",")
    assert api.get(f"/api/campaigns/{toy.slug}/tables/workers/?format=latex").status_code == 400
    assert api.get(f"/api/campaigns/{toy.slug}/tables/nothing/").status_code == 404
