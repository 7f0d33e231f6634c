"""Imported (analysis-only) campaigns take their statistics options (issue 25, defect 7): at import from the CLI
and the API, afterwards by `PATCH /api/campaigns/<slug>/` (then a recompute), all from `Protocol.analysis_options`;
a bad value is a 400 naming the option and changes nothing; the string "false" is False."""
import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Campaign
from annotation.services.judgment_import import import_judgments
from evaluation.analyses import compute_results
from evaluation.families.error_spans.presets import SPAN_RULES
from evaluation.models import CampaignResults

pytestmark = pytest.mark.django_db

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment"
ROWS = [
    "sysA\td1\t1\t101\tr1\tDas ist gut.\tThis <v>is</v> good.\tAccuracy/Mistranslation\tMajor\t",
    "sysB\td1\t1\t101\tr1\tDas ist gut.\tThat is good.\tNo-error\tNo-error\t",
    "sysA\td1\t2\t102\tr1\tJa.\t<v>Yes</v>.\tFluency/Punctuation\tMinor\t",
    "sysB\td1\t2\t102\tr1\tJa.\tYes.\tNo-error\tNo-error\t",
]
RANK = ("srclang,trglang,srcIndex,documentId,segmentId,judgeId,system1Number,system1Id,system2Number,system2Id,"
        "system3Number,system3Id,system4Number,system4Id,system5Number,system5Id,system1rank,system2rank,"
        "system3rank,system4rank,system5rank")

RANK_LINE = "en,de,1,d1,1,j1,0,A,1,B,2,_ref,-1,x,-1,x,1,2,1,-1,-1"


def mqm_bytes() -> bytes:
    return "\n".join([HEADER, *ROWS, ""]).encode()


def upload(data: bytes, name: str):
    handle = io.BytesIO(data)
    handle.name = name
    return handle


def test_the_cli_sets_the_preset_weights_and_test_at_import(tmp_path):
    path = tmp_path / "mqm.tsv"
    path.write_bytes(mqm_bytes())
    out = io.StringIO()
    call_command("import_judgments", str(path), format="mqm-tsv", name="CLI MQM", stdout=out,
                 **{"analysis_statistics_preset": "wmt25-esa", "analysis_mqm_weights": "score-mqm",
                    "analysis_min_items": "3"})
    campaign = Campaign.objects.get(slug=json.loads(out.getvalue())["campaign"])
    assert campaign.options["statistics_preset"] == "wmt25-esa"
    assert campaign.options["mqm_weights"] == "score-mqm" and campaign.options["min_items"] == 3
    assert campaign.qc_test == "wilcoxon"  # the preset's test follows, as for a campaign import


def test_the_cli_refuses_a_bad_value_naming_the_option_and_stores_nothing(tmp_path):
    path = tmp_path / "mqm.tsv"
    path.write_bytes(mqm_bytes())
    with pytest.raises(CommandError, match="mqm_weights"):
        call_command("import_judgments", str(path), format="mqm-tsv", name="Bad", analysis_mqm_weights="heavy")
    assert not Campaign.objects.exists()


def test_the_api_sets_options_at_import(api):
    response = api.post("/api/campaigns/import-judgments/", {
        "file": upload(mqm_bytes(), "mqm.tsv"), "format": "mqm-tsv", "name": "API MQM",
        "mqm_weights": "wmt23-marot", "significance_test": "randomization"}, format="multipart")
    assert response.status_code == 201, response.content
    campaign = Campaign.objects.get(slug=response.json()["campaign"])
    assert campaign.options["mqm_weights"] == "wmt23-marot"
    assert campaign.options["significance_test"] == "randomization"


@pytest.mark.parametrize("field, value", [("mqm_weights", "heavy"), ("min_items", "-1"),
                                          ("include_reference", "perhaps")])
def test_the_api_import_refuses_a_bad_value_with_a_400_naming_it(api, field, value):
    response = api.post("/api/campaigns/import-judgments/", {
        "file": upload(mqm_bytes(), "mqm.tsv"), "format": "mqm-tsv", "name": "Bad", field: value},
        format="multipart")
    assert response.status_code == 400 and field in response.content.decode()
    assert not Campaign.objects.exists()


def test_an_option_of_another_family_is_refused_naming_it(api):
    response = api.post("/api/campaigns/import-judgments/", {
        "file": upload(mqm_bytes(), "mqm.tsv"), "format": "mqm-tsv", "name": "Foreign", "include_reference": "no"},
        format="multipart")
    assert response.status_code == 400 and "include_reference" in response.content.decode()
    assert not Campaign.objects.exists()


def test_false_as_a_string_is_false_at_import(researcher, tmp_path):
    path = tmp_path / "rank.csv"
    path.write_bytes((RANK + "\n" + RANK_LINE + "\n").encode())
    out = io.StringIO()
    call_command("import_judgments", str(path), format="wmt-rank", name="Rank", stdout=out,
                 analysis_include_reference="false")
    campaign = Campaign.objects.get(slug=json.loads(out.getvalue())["campaign"])
    assert campaign.options["include_reference"] is False


def test_a_patch_changes_the_preset_and_the_next_compute_uses_it(researcher, api):
    campaign = import_judgments(mqm_bytes().splitlines(keepends=True), fmt="mqm-tsv", name="Patch",
                                owner=researcher).campaign
    compute_results(campaign)
    assert CampaignResults.objects.get(campaign=campaign).summary["rules"] == SPAN_RULES["wmt24-esa"].__dict__
    response = api.patch(f"/api/campaigns/{campaign.slug}/", {"options": {
        "statistics_preset": "wmt25-esa", "mqm_weights": "score-mqm"}}, format="json")
    assert response.status_code == 200, response.content
    # the rules that only followed the old preset follow the new one (cluster rule, scope, …)
    assert {"mqm_weights", "statistics_preset", "cluster_rule"} <= set(response.json()["changed"])
    assert response.json()["recompute_queued"] is True
    campaign.refresh_from_db()
    compute_results(campaign)
    summary = CampaignResults.objects.get(campaign=campaign).summary
    assert summary["rules"] == SPAN_RULES["wmt25-esa"].__dict__ and summary["mqm_weights"] == "score-mqm"


def test_a_bad_patch_is_a_400_naming_the_option_and_changes_nothing(researcher, api):
    campaign = import_judgments(mqm_bytes().splitlines(keepends=True), fmt="mqm-tsv", name="Patch",
                                owner=researcher).campaign
    before = (dict(campaign.options), campaign.qc_test)
    response = api.patch(f"/api/campaigns/{campaign.slug}/", {"options": {
        "statistics_preset": "wmt25-esa", "min_items": "many"}}, format="json")
    assert response.status_code == 400 and "min_items" in response.json()["options"]
    campaign.refresh_from_db()
    assert (campaign.options, campaign.qc_test) == before


def test_a_ranking_campaign_takes_include_reference_false_as_a_string(researcher, api):
    campaign = import_judgments([(RANK + "\n").encode(), (RANK_LINE + "\n").encode()], fmt="wmt-rank", name="Rank",
                                owner=researcher).campaign
    response = api.patch(f"/api/campaigns/{campaign.slug}/", {"options": {"include_reference": "false"}},
                         format="json")
    assert response.status_code == 200, response.content
    campaign.refresh_from_db()
    assert campaign.options["include_reference"] is False


def test_the_admin_changes_the_options_of_a_stored_campaign(researcher, admin_client):
    campaign = import_judgments(mqm_bytes().splitlines(keepends=True), fmt="mqm-tsv", name="Admin",
                                owner=researcher).campaign
    page = admin_client.get(f"/admin/annotation/campaign/{campaign.pk}/options/")
    assert page.status_code == 200 and 'name="mqm_weights"' in page.content.decode()
    bad = admin_client.post(f"/admin/annotation/campaign/{campaign.pk}/options/",
                            {"statistics_preset": "wmt25-esa", "min_items": "many", "mqm_weights": "google"})
    assert bad.status_code == 200 and "must be" in bad.content.decode()
    campaign.refresh_from_db()
    assert "statistics_preset" not in campaign.options
    good = admin_client.post(f"/admin/annotation/campaign/{campaign.pk}/options/",
                             {"statistics_preset": "wmt25-esa", "mqm_weights": "score-mqm", "min_items": ""})
    assert good.status_code == 302
    campaign.refresh_from_db()
    assert campaign.options["statistics_preset"] == "wmt25-esa" and campaign.options["mqm_weights"] == "score-mqm"
    assert campaign.qc_test == "wilcoxon"
