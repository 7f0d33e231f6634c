"""The toy thumbs protocol and its family (tests/toy/protocol.py, family.py) work end to end once the settings
name them, with nothing else edited: the import front-ends show their options, the API imports a campaign,
a worker rates a HIT in Chromium, a bad answer is refused with nothing stored, and the results reach the API,
the page, the CSV and LaTeX downloads and the judgment export (docs/architecture.md, "How to add a protocol")."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command, load_command_class
from django.core.management.base import CommandError
from django.test import Client, override_settings

from annotation.models import Campaign, HitItem, Judgment
from evaluation.families import get_family

from ..conftest import post_answer, start
from .fixtures import TOY_SETTINGS, thumbs_lines

pytestmark = pytest.mark.django_db
@pytest.fixture(autouse=True)
def toy_registered():
    with override_settings(**TOY_SETTINGS):
        yield


@pytest.fixture
def imported(api):
    """A campaign imported through the API: 12 translations in HITs of 12, confidence out of 4, two workers."""
    upload = io.BytesIO(b"".join(thumbs_lines()))
    upload.name = "thumbs.jsonl"
    response = api.post("/api/campaigns/", {"file": upload, "name": "Toy thumbs", "protocol": "toy-thumbs",
                                            "thumbs_per_hit": "12", "confidence_levels": "4", "redundancy": "2"},
                        format="multipart")
    assert response.status_code == 201, response.content
    assert response.json()["hits"] == 1
    return Campaign.objects.get(slug=response.json()["campaign"])


def rate_all(client, campaign, worker: str, thumb_of) -> int:
    """A worker rates every item of their HIT; `thumb_of(system)` says their thumb. Returns the items rated."""
    token = start(client, campaign, worker)
    done = 0
    while True:
        state = client.get(f"/api/hit/{token}/").json()
        if state["done"]:
            return done
        item = HitItem.objects.get(pk=state["item"]["id"])
        answer = {"item": item.pk, "thumb": thumb_of(item.output.system.name), "confidence": 2}
        assert post_answer(client, token, answer).status_code == 201
        done += 1


def test_the_command_and_the_admin_form_show_its_options_and_import_its_files(tmp_path, django_user_model):
    command = load_command_class("annotation", "import_campaign")
    help_text = command.create_parser("manage.py", "import_campaign").format_help()
    assert "--confidence-levels" in help_text and "--thumbs-per-hit" in help_text and "toy-thumbs" in help_text
    path = tmp_path / "thumbs.jsonl"
    path.write_bytes(b"".join(thumbs_lines()))
    out = io.StringIO()
    call_command("import_campaign", str(path), "--name", "Toy CLI", "--protocol", "toy-thumbs",
                 "--thumbs-per-hit", "5", "--confidence-levels", "5", stdout=out)
    campaign = Campaign.objects.get(slug=json.loads(out.getvalue())["campaign"])
    assert campaign.options["confidence_levels"] == 5 and campaign.hits.count() == 3  # 12 translations, 5 a HIT
    items = HitItem.objects.filter(hit__campaign=campaign)
    assert items.count() == 12 and {i.payload["levels"] for i in items} == {5}
    assert [i.payload["question"] for i in items if "question" in i.payload] == ["Would you publish this?"] * 2

    path.write_bytes(b"".join(thumbs_lines(question=7)))  # its own campaign-file field, checked
    with pytest.raises(CommandError, match="thumbs_question"):
        call_command("import_campaign", str(path), "--name", "Toy bad", "--protocol", "toy-thumbs", stdout=out)
    assert not Campaign.objects.filter(name="Toy bad").exists()

    judgments = tmp_path / "thumbs.tsv"
    judgments.write_text("w1\tsys-good\t1\tup\t4\nw1\tsys-poor\t1\tdown\t3\nw2\tsys-good\t1\tup\t2\n")
    out = io.StringIO()
    call_command("import_judgments", str(judgments), "--format", "thumbs-tsv", "--name", "Toy judged",
                 "--levels", "4", stdout=out)
    judged = Campaign.objects.get(name="Toy judged")
    assert judged.protocol == "toy-thumbs" and judged.options == {"confidence_levels": 4}
    assert sorted(Judgment.objects.filter(campaign=judged).values_list("choice", "score")) == [
        ("down", 3.0), ("up", 2.0), ("up", 4.0)]

    admin = django_user_model.objects.create_superuser("boss", password="pw")
    client = Client()
    client.force_login(admin)
    form = client.get("/admin/annotation/campaign/import/").content.decode()
    assert 'value="toy-thumbs"' in form and 'name="confidence_levels"' in form and 'name="thumbs_per_hit"' in form
    assert "Toy thumbs: how many confidence buttons" in form


def test_answers_are_validated_and_a_bad_one_stores_nothing(imported):
    client = Client()
    token = start(client, imported, "w-check")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    assert item["levels"] == 4 and item["protocol"] == "toy-thumbs" and set(item) >= {"source", "candidate"}
    for bad in ({"item": item["id"], "thumb": "sideways", "confidence": 1},
                {"item": item["id"], "thumb": "up", "confidence": 5},  # above the campaign's 4 levels
                {"item": item["id"], "thumb": "up", "confidence": True},
                {"item": item["id"], "thumb": "up", "confidence": 1, "score": 50},
                {"item": item["id"], "thumb": "up"}):
        response = post_answer(client, token, bad)
        assert response.status_code == 400, bad
        assert response.json()["error"]
    assert not Judgment.objects.filter(campaign=imported).exists()
    response = post_answer(client, token, {"item": item["id"], "thumb": "down", "confidence": 4})
    assert response.status_code == 201
    assert list(Judgment.objects.filter(campaign=imported).values_list("choice", "score")) == [("down", 4.0)]


def test_results_reach_the_api_the_page_the_downloads_and_the_export(imported, api, researcher):
    client = Client()
    for worker in ("w-1", "w-2"):
        assert rate_all(client, imported, worker, lambda system: "up" if system == "sys-good" else "down") == 12
    assert api.post(f"/api/campaigns/{imported.slug}/compute/").status_code in (200, 202)
    assert get_family("toy-thumbs").name == "toy-thumbs"
    rows = api.get(f"/api/campaigns/{imported.slug}/systems/").json()["results"]
    assert [(r["system"], r["score"], r["n"], r["rank"]) for r in rows] == [("sys-good", 100.0, 12, 1),
                                                                            ("sys-poor", 0.0, 12, 2)]
    assert 0 < rows[0]["low"] < 100 == rows[0]["high"] and rows[1]["low"] == 0 < rows[1]["high"] < 100

    page = Client()
    page.force_login(researcher)
    html = page.get(f"/results/{imported.slug}/").content.decode()
    assert html.count('class="thumbs-row"') == 2 and 'href="#toy-thumbs"' in html and "100.0%" in html
    csv_lines = page.get(f"/results/{imported.slug}/systems.csv").content.decode().splitlines()
    assert csv_lines[0].startswith("system,score,score_name,n,low,high") and csv_lines[1].startswith("sys-good,100")
    latex = page.get(f"/results/{imported.slug}/systems.tex").content.decode()
    assert r"\toprule" in latex and "Thumbs up" in latex and "sys-poor" in latex

    export = api.get(f"/api/campaigns/{imported.slug}/judgments/?format=json")
    exported = json.loads(b"".join(export.streaming_content))
    assert len(exported) == 24 and {r["levels"] for r in exported} == {4} and {r["score"] for r in exported} == {2}
    assert {(r["system"], r["choice"]) for r in exported} == {("sys-good", "up"), ("sys-poor", "down")}
    csv_export = b"".join(api.get(f"/api/campaigns/{imported.slug}/judgments/").streaming_content).decode()
    assert csv_export.splitlines()[0].endswith(",created_at,levels") and len(csv_export.splitlines()) == 25


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_api_imports_judgments_in_its_format_and_refuses_a_bad_file(api):
    good = io.BytesIO(b"w1\tsys-good\t1\tup\t2\nw2\tsys-poor\t1\tdown\t1\n")
    good.name = "thumbs.tsv"
    response = api.post("/api/campaigns/import-judgments/", {"file": good, "format": "thumbs-tsv",
                                                            "name": "Toy API judged", "levels": "2"},
                        format="multipart")
    assert response.status_code == 201, response.content
    judged = Campaign.objects.get(name="Toy API judged")
    assert judged.protocol == "toy-thumbs" and judged.judgments.count() == 2
    bad = io.BytesIO(b"w1\tsys-good\t1\tsideways\t2\n")
    bad.name = "bad.tsv"
    response = api.post("/api/campaigns/import-judgments/", {"file": bad, "format": "thumbs-tsv",
                                                            "name": "Toy API bad"}, format="multipart")
    assert response.status_code == 400 and response.json()["errors"][0]["line"] == 1
    assert not Campaign.objects.filter(name="Toy API bad").exists()
