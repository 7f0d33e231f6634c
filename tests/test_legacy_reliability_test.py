"""Imported error-span campaigns made before imports took their preset's reliability test hold the model's
`paired-t` (issue 25). A `paired-t` chosen since (import option, PATCH, admin) is stored the same way, so no data
migration can tell "left at the old default" from "set on purpose": the results page and `systems/` say so instead,
with how to put the preset's test back; the notice goes once the test is the preset's (docs/api.md)."""
import json

import pytest
from django.test import Client

from annotation.models import Campaign
from annotation.services.judgment_import import import_judgments

pytestmark = pytest.mark.django_db


def esa_file() -> list[bytes]:
    return [(json.dumps({"system": system, "doc_id": "d1", "seg_id": seg, "rater": "r1", "score": score,
                         "spans": [], "target": f"{system} {seg}."}) + "\n").encode()
            for system, base in (("A", 80), ("B", 60)) for seg, score in enumerate([base, base + 2, base - 1], 1)]


def test_an_old_import_holding_paired_t_gets_a_notice_until_its_test_is_the_presets(api, researcher):
    campaign = import_judgments(esa_file(), fmt="esa-jsonl", name="Old ESA import", owner=researcher).campaign
    assert campaign.qc_test == "wilcoxon"  # what an import stores now
    answer = api.get(f"/api/campaigns/{campaign.slug}/systems/").json()
    assert "notices" not in answer
    Campaign.objects.filter(pk=campaign.pk).update(qc_test="paired-t")  # as imports before the fix stored it
    answer = api.get(f"/api/campaigns/{campaign.slug}/systems/").json()
    assert [n["what"] for n in answer["notices"]] == ["qc_test"]
    assert "paired-t" in answer["notices"][0]["text"] and "wmt24-esa tests workers with wilcoxon" in \
        answer["notices"][0]["text"]
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/results/{campaign.slug}/").content.decode()
    assert 'id="settings-notices"' in page and "wmt24-esa tests workers with wilcoxon" in page
    # the researcher follows the notice: the test goes back to the preset's and the notice goes
    changed = api.patch(f"/api/campaigns/{campaign.slug}/", {"options": {"qc_test": None}}, format="json")
    assert changed.status_code == 200, changed.content
    assert Campaign.objects.get(pk=campaign.pk).qc_test == "wilcoxon"
    assert "notices" not in api.get(f"/api/campaigns/{campaign.slug}/systems/").json()
    assert 'id="settings-notices"' not in client.get(f"/results/{campaign.slug}/").content.decode()


def test_no_notice_where_paired_t_is_the_presets_test(api, researcher):
    lines = ["HITId WorkerId Input.src Input.trg Input.item hit sys_id rid type sid score time"] + [
        f"h1 w1 de en 1 1 {system} 1 SYSTEM {sid} {score} 10" for system, base in (("A", 70), ("B", 50))
        for sid, score in enumerate([base, base + 5, base - 5], 1)]
    campaign = import_judgments([(line + "\n").encode() for line in lines], fmt="wmt-da", name="DA import",
                                owner=researcher).campaign
    assert campaign.qc_test == "paired-t"
    assert "notices" not in api.get(f"/api/campaigns/{campaign.slug}/systems/").json()
