"""Judgment-export formats beyond csv and json are declared by the protocols whose campaigns they write
(`Protocol.export_formats`): error spans ship `mqm-tsv` and `esa-jsonl` from their package, and a protocol that declares
a format of its own (a toy one here) brings it to the API and the `campaign export` command with nothing else edited."""
import io

import pytest
from django.core.management import call_command

from annotation.building.judgment_files import ExportFormat
from annotation.protocols import all_protocols, get_protocol
from annotation.services.export import EXPORT_FORMATS, export_format_problem

pytestmark = pytest.mark.django_db


def toy_lines(campaign):
    yield f"toy export of {campaign.slug}\n"


TOY = ExportFormat("toy-txt", toy_lines, "text/plain; charset=utf-8", "txt", lambda spec: spec.name == "fluency")
TOY_PATH = f"{__name__}.TOY"


def test_the_shipped_formats_come_from_their_protocol_packages_in_order():
    assert list(EXPORT_FORMATS) == ["appraise-da-csv", "pearmut-da-jsonl", "mqm-tsv", "esa-jsonl", "pearmut-jsonl",
                                    "appraise-jsonl",
                                    "anthea-jsonl", "mqm-review-tsv", "arena-jsonl"]
    packages = {"arena-jsonl": "pairwise", "appraise-da-csv": "direct_assessment",
                "pearmut-da-jsonl": "direct_assessment"}
    for fmt in EXPORT_FORMATS.values():
        package = packages.get(fmt.name, "error_spans")
        assert fmt.writer.__module__.startswith(f"annotation.protocols.{package}."), fmt.name
    writers = {name: sorted(p.name for p in all_protocols() if fmt.writes(p)) for name, fmt in EXPORT_FORMATS.items()}
    assert writers == {"mqm-tsv": ["mqm", "mqm-review", "mqm-sxs"],
                       "esa-jsonl": ["contrastive-esa", "esa", "esa-review"],
                       "mqm-review-tsv": ["esa-review", "mqm-review"],
                       "pearmut-jsonl": ["esa", "mqm"], "appraise-jsonl": ["esa", "mqm"],
                       "anthea-jsonl": ["mqm"],
                       "appraise-da-csv": ["adequacy", "fluency", "source-adequacy"],
                       "pearmut-da-jsonl": ["adequacy", "fluency", "source-adequacy"],
                       "arena-jsonl": ["pairwise-adequacy", "pairwise-fluency"]}


def test_a_protocol_brings_its_own_export_format_to_the_api_and_the_command(monkeypatch, make_campaign, api):
    fluency = get_protocol("fluency")
    monkeypatch.setattr(fluency, "export_formats", (*fluency.export_formats, TOY_PATH))
    campaign = make_campaign(protocol="fluency")
    response = api.get(f"/api/campaigns/{campaign.slug}/judgments/", {"format": "toy-txt"})
    assert response.status_code == 200, response.content
    assert response["Content-Disposition"] == f'attachment; filename="{campaign.slug}-judgments.txt"'
    assert b"".join(response.streaming_content).decode() == f"toy export of {campaign.slug}\n"
    out = io.StringIO()
    call_command("campaign", "export", campaign.slug, "--format", "toy-txt", stdout=out)
    assert out.getvalue() == f"toy export of {campaign.slug}\n"
    # A campaign of a protocol the format does not write is told which ones it writes.
    other = make_campaign(protocol="adequacy")
    assert export_format_problem(other, "toy-txt") == ("format toy-txt writes campaigns of protocol fluency; this one "
                                                       "is adequacy (use csv or json)")
    assert api.get(f"/api/campaigns/{other.slug}/judgments/", {"format": "toy-txt"}).status_code == 400


def test_without_its_protocol_declaring_it_a_format_is_refused(make_campaign, api):
    campaign = make_campaign(protocol="fluency")
    response = api.get(f"/api/campaigns/{campaign.slug}/judgments/", {"format": "toy-txt"})
    assert response.status_code == 400
    assert response.json()["detail"] == ("format must be one of csv, json, parquet, appraise-da-csv, pearmut-da-jsonl, "
                                         "mqm-tsv, esa-jsonl, pearmut-jsonl, appraise-jsonl, anthea-jsonl, "
                                         "mqm-review-tsv, arena-jsonl")
