"""The admin leads a researcher through a campaign, and small pilots work: one page per campaign (status,
links, progress, actions), the list's progress column, a safe redirect after a status change, sizing
guidance (a HIT size that fits the file; a reliability test that can pass the workers), the pairwise
preview, the read-only results page, errors that name fields and a file kept across a refused submit."""
import io
import random
import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils.html import strip_tags
from scipy import stats as scipy_stats

from annotation.building.hit_layout import HitPlanError
from annotation.building.qc_hits import largest_hit_size
from annotation.import_form import KeptUploads
from annotation.models import Campaign, HitItem
from annotation.protocols import get_protocol
from annotation.protocols import options as option_hooks
from annotation.services.campaign_import import CampaignFileError, import_campaign
from annotation.services.judgment_import import import_judgments
from annotation.services.progress import campaign_counts
from annotation.services.reliability_capacity import reliability_capacity
from evaluation import reliability_tests
from evaluation.analyses import compute_results

from .conftest import as_bytes, campaign_lines, start
from .simulation import Behaviour, complete_hit

pytestmark = pytest.mark.django_db
IMPORT_URL = "/admin/annotation/campaign/import/"
PILOT_SYSTEMS = ("sys-A", "sys-B", "sys-C")


def upload(lines, name="campaign.jsonl"):
    handle = io.BytesIO(("\n".join(lines) + "\n").encode())
    handle.name = name
    return handle


def form(lines, **changes):
    data = {"name": "Admin campaign", "protocol": "adequacy", "source_language": "de", "target_language": "en",
            "redundancy": 1, "hit_size": 100, "seed": 3}
    if lines is not None:
        data["file"] = upload(lines)
    data.update(changes)
    return data


@pytest.fixture
def admin_client(client, researcher):
    researcher.is_superuser = True
    researcher.save()
    client.force_login(researcher)
    return client


def change_url(campaign):
    return f"/admin/annotation/campaign/{campaign.pk}/change/"


def field_row(page: str, name: str) -> str:
    """The HTML of one row of the import form."""
    start_at = page.index(f'form-row field-{name}')
    return page[start_at:page.index('<div class="form-row', start_at + 10)]


def pilot(make_campaign, **settings):
    """5 segments × 3 systems: 15 outputs, two 20-item HITs."""
    return make_campaign(n_segments=5, systems=PILOT_SYSTEMS, hit_size=20, **settings)


# 1. One page per campaign -------------------------------------------------------------------------


def test_the_campaign_page_shows_status_links_progress_and_actions(admin_client, make_campaign):
    campaign = make_campaign(redundancy=2, status=Campaign.Status.DRAFT)
    page = admin_client.get(change_url(campaign)).content.decode()
    assert re.search(r'id="campaign-status"[^>]*>Draft<', page)
    crowd = f"http://testserver/c/{campaign.slug}/start/?worker_id="
    assert f'id="crowd-link" value="{crowd}"' in page and 'id="copy-crowd-link"' in page
    assert "admin_extra/copy-crowd-link.js" in page  # the copy button (a static script: the CSP forbids inline ones)
    assert f'href="/results/{campaign.slug}/"' in page and f'href="/api/campaigns/{campaign.slug}/"' in page
    assert 'id="publish"' in page and 'id="close"' in page and 'id="pause"' not in page
    assert f'href="/admin/annotation/campaign/{campaign.pk}/preview/"' in page
    assert "1 HIT, each done by 2 workers: 2 places in all" in page
    assert "0 of 1 HITs done" in page and "0 of 200" in page  # judgments: 100 items × 2 workers
    # the link is the API's crowd_link
    assert crowd.endswith(admin_client.get(f"/api/campaigns/{campaign.slug}/").json()["crowd_link"].split(
        "testserver")[-1])


def test_the_campaign_page_counts_progress(admin_client, make_campaign):
    campaign = make_campaign(redundancy=2)
    complete_hit(Client(), campaign.slug, "w1", Behaviour("diligent"), {"sys-A": 70, "sys-B": 60}, random.Random(1))
    w2_browser = Client()  # one browser for w2 throughout: its HIT is bound to it
    start(w2_browser, campaign, "w2")
    page = admin_client.get(change_url(campaign)).content.decode()
    # HITs done as the Stages card and the list count them (it said "1 of 2 assignments done (50 %)")
    assert "0 of 1 HITs done (0 %) · places done 1 of 2 · 1 with a worker now" in page
    assert '<progress value="0" max="1"' in page and "HITs done × redundancy of HITs × redundancy" in page
    assert "100 of 200" in page
    assert 'id="pause"' in page and 'id="publish"' not in page
    complete_hit(w2_browser, campaign.slug, "w2", Behaviour("diligent"), {"sys-A": 70, "sys-B": 60}, random.Random(2))
    counts = campaign_counts([campaign])[campaign.pk]
    assert (counts["hits_done"], counts["hits_assigned"], counts["judgments"]) == (1, 0, 200)


def test_the_campaign_list_shows_places_done_next_to_hits_fully_done(admin_client, make_campaign):
    """Redundancy 3, two workers finished the one HIT: no HIT fully done yet, but two of its three places are (the list
    said only "0 / 1 HITs done · 200 judgments")."""
    campaign = make_campaign(name="Places", redundancy=3)
    for n, worker in enumerate(("w1", "w2")):
        complete_hit(Client(), campaign.slug, worker, Behaviour("diligent"), {"sys-A": 70, "sys-B": 60},
                     random.Random(n))
    page = strip_tags(admin_client.get("/admin/annotation/campaign/").content.decode())
    assert "0 / 1 HITs done · places done 2 / 3 · 200 judgments" in page
    assert "0 of 1 HITs done (0 %) · places done 2 of 3" in admin_client.get(change_url(campaign)).content.decode()


def test_an_analysis_only_campaign_has_no_crowd_link_nor_actions(admin_client):
    lines = ["rater,criterion,unit,item,choice,spam", "r1,adequacy,document,d1,MT,"]
    campaign = import_judgments([(line + "\n").encode() for line in lines], fmt="pairwise-csv", name="Imported",
                                systems=["MT", "Human"]).campaign
    page = admin_client.get(change_url(campaign)).content.decode()
    assert 'id="crowd-link"' not in page and 'id="publish"' not in page
    assert f'href="/results/{campaign.slug}/"' in page


def test_progress_counts_take_three_queries_for_any_number_of_campaigns(make_campaign):
    campaigns = [make_campaign(name=f"C{i}", redundancy=2) for i in range(4)]
    start(Client(), campaigns[0], "somebody")
    with CaptureQueriesContext(connection) as queries:
        counts = campaign_counts(campaigns)
    assert len(queries) == 3
    assert counts[campaigns[0].pk]["hits_assigned"] == 1 and counts[campaigns[1].pk]["hits_total"] == 1


def test_the_campaign_list_shows_progress_without_a_query_per_row(admin_client, make_campaign):
    make_campaign(name="First")

    def list_queries():
        with CaptureQueriesContext(connection) as queries:
            response = admin_client.get("/admin/annotation/campaign/")
        return response.content.decode(), len(queries)

    page, one = list_queries()
    assert "0 / 1 HITs done · places done 0 / 1 · 0 judgments" in strip_tags(page) and "column-progress" in page
    for i in range(5):
        make_campaign(name=f"More {i}")
    page, six = list_queries()
    assert page.count("HITs done") == 6 and six == one


def test_publish_from_the_preview_lands_on_the_campaign_page_with_its_links(admin_client):
    response = admin_client.post(IMPORT_URL, form(campaign_lines(70)))
    campaign = Campaign.objects.get()
    preview = admin_client.get(response["Location"]).content.decode()
    assert 'name="next"' not in preview
    response = admin_client.post(f"/admin/annotation/campaign/{campaign.pk}/status/", {"status": "active"},
                                 follow=True)
    assert response.redirect_chain[-1][0] == change_url(campaign)
    page = response.content.decode()
    assert f"{campaign.name} is now active." in page
    assert f'value="http://testserver/c/{campaign.slug}/start/?worker_id="' in page


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/x", "http://testserver.evil/",
                                    "javascript:alert(1)", "evil.example"])
def test_the_status_form_never_redirects_off_site(admin_client, make_campaign, target):
    campaign = make_campaign()
    response = admin_client.post(f"/admin/annotation/campaign/{campaign.pk}/status/",
                                 {"status": "paused", "next": target})
    assert response.status_code == 302 and response["Location"] == change_url(campaign)


def test_the_status_form_may_return_to_a_page_of_the_site(admin_client, make_campaign):
    campaign = make_campaign()
    back = f"/admin/annotation/campaign/{campaign.pk}/preview/"
    response = admin_client.post(f"/admin/annotation/campaign/{campaign.pk}/status/",
                                 {"status": "paused", "next": back})
    assert response["Location"] == back
    campaign.refresh_from_db()
    assert campaign.status == "paused"


# 2. Sizing guidance --------------------------------------------------------------------------------


def test_largest_hit_size_that_a_file_fills():
    assert largest_hit_size(13) is None
    assert largest_hit_size(14) == largest_hit_size(27) == 20
    assert largest_hit_size(69) == 80 and largest_hit_size(70) == 100
    assert largest_hit_size(10_000) == 200


def test_too_few_outputs_names_hit_size_and_the_size_that_fits(make_campaign):
    with pytest.raises(CampaignFileError) as refused:
        make_campaign(n_segments=5, systems=PILOT_SYSTEMS)
    (line, reason), = refused.value.errors
    assert line == 0 and reason.startswith("hit_size: a HIT of 100 items needs at least 70 system outputs")
    assert "the file has 15 (5 segments × 3 systems)" in reason
    assert "The largest HIT size this file fills is 20." in reason
    assert refused.value.suggestions == {"hit_size": 20}
    with pytest.raises(CampaignFileError) as tiny:
        make_campaign(n_segments=3, systems=("a", "b"), hit_size=20)
    assert "too few for any HIT: the smallest, 20 items, needs 14" in tiny.value.errors[0][1]
    assert tiny.value.suggestions == {}


def test_hit_plan_errors_name_their_field():
    from annotation.building.qc_hits import check_hit_size

    with pytest.raises(HitPlanError) as wrong:
        check_hit_size(30)
    assert wrong.value.field == "hit_size"


def test_the_admin_form_shows_the_size_that_fits_next_to_hit_size(admin_client):
    lines = campaign_lines(5, systems=PILOT_SYSTEMS)
    page = admin_client.post(IMPORT_URL, form(lines)).content.decode()
    row = field_row(page, "hit_size")
    assert "needs at least 70 system outputs" in row and "The largest HIT size this file fills is 20." in row
    assert "This file fills HIT sizes up to 20." in row  # the help text, after the error
    assert "needs at least 70" not in field_row(page, "file")
    assert Campaign.objects.count() == 0


def test_min_pairs_and_critical_drop_come_from_the_tests_themselves():
    assert reliability_tests.min_pairs("paired-t", 0.05) == 2
    assert reliability_tests.min_pairs("welch", 0.05) == 2
    assert reliability_tests.min_pairs("wilcoxon", 0.05) == 5  # smallest p = 2^-n
    assert reliability_tests.min_pairs("mann-whitney", 0.05, "lt") == 4  # smallest p = 1/C(2n, n): 1/20 at n = 3
    assert reliability_tests.min_pairs("mann-whitney", 0.05, "le") == 3
    assert reliability_tests.min_pairs("appraise", 0.01, "le") == 5  # 1/70 > 0.01 ≥ 1/252
    assert reliability_tests.min_pairs("no-such-test", 0.05) is None
    for n in (2, 4, 10):  # the paired t-test's critical drop is t(0.95, n - 1)/√n
        expected = scipy_stats.t.ppf(0.95, n - 1) / n ** 0.5
        assert reliability_tests.critical_drop("paired-t", 0.05, "lt", n) == pytest.approx(expected, abs=0.01)
    assert reliability_tests.critical_drop("wilcoxon", 0.05, "lt", 4) is None
    assert option_hooks.provider("min_pairs") is reliability_tests.min_pairs  # filled in by EvaluationConfig.ready


def test_a_pilot_with_the_paired_t_test_is_imported_with_a_warning(make_campaign):
    lines = as_bytes(campaign_lines(5, systems=PILOT_SYSTEMS))
    result = import_campaign(lines, name="Pilot", protocol="adequacy", redundancy=3, seed=2, hit_size=20)
    assert result.hits == 2
    warning, = result.warnings
    assert "a worker gives 2 bad-reference pairs per HIT and at most 4 (2 per HIT × 2 HITs" in warning
    assert "at least 4.46 standard deviations" in warning and "with all 4, 1.18" in warning
    assert "with the 10 pairs of one 100-item HIT, 0.58" in warning
    assert not import_campaign(as_bytes(campaign_lines(70)), name="Full", protocol="adequacy").warnings


def test_a_test_that_can_never_pass_a_worker_is_refused(make_campaign):
    with pytest.raises(CampaignFileError) as refused:
        pilot(make_campaign, qc_test="wilcoxon")
    (_, reason), = refused.value.errors
    assert reason.startswith("qc_test: the reliability test “One-sided Wilcoxon signed-rank” needs at least 5 "
                             "bad-reference pairs per worker to reach p < 0.05")
    assert "at most 4 (2 per HIT × 2 HITs, each done by a worker at most once)" in reason
    assert "every worker would be unreliable" in reason and "(paired-t, welch, mann-whitney)" in reason
    assert Campaign.objects.count() == 0


def test_in_a_study_the_other_campaigns_pairs_count_so_it_is_only_a_warning(make_campaign):
    lines = as_bytes(campaign_lines(5, systems=PILOT_SYSTEMS))
    result = import_campaign(lines, name="Pilot", protocol="adequacy", hit_size=20, qc_test="wilcoxon",
                             study="WMT pilot", options={"reliability_scope": "study"})
    assert "Only the pairs of the study's other campaigns can make a worker reliable." in result.warnings[0]
    with pytest.raises(CampaignFileError):
        import_campaign(lines, name="Alone", protocol="adequacy", hit_size=20, qc_test="wilcoxon",
                        study="WMT pilot", options={"reliability_scope": "campaign"})


def test_the_admin_refuses_the_test_next_to_its_field(admin_client):
    lines = campaign_lines(5, systems=PILOT_SYSTEMS)
    page = admin_client.post(IMPORT_URL, form(lines, hit_size=20, qc_test="wilcoxon")).content.decode()
    assert "every worker would be unreliable" in field_row(page, "qc_test")


def test_the_preview_warns_with_numbers(admin_client, make_campaign):
    campaign = pilot(make_campaign, redundancy=3)
    page = admin_client.get(f"/admin/annotation/campaign/{campaign.pk}/preview/").content.decode()
    warning = page[page.index('id="qc-warning"'):]
    warning = warning[:warning.index("</li>")]
    assert "at most 4" in warning and "4.46" in warning and "1.18" in warning
    full = make_campaign(name="Full")
    assert 'id="qc-warning"' not in admin_client.get(f"/admin/annotation/campaign/{full.pk}/preview/").content.decode()


def test_protocols_without_bad_references_have_no_capacity():
    assert reliability_capacity(get_protocol("pairwise-adequacy"), qc_test="paired-t", qc_threshold=0.05, options={},
                                bad_pairs_per_hit=[0, 0], in_study=False) is None


# 3. The preview ------------------------------------------------------------------------------------


def _preview_cells(page: str) -> list[list[str]]:
    body = page[page.index("<tbody>"):page.index("</tbody>")]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in body.split("<tr>")[1:]]


def test_the_pairwise_preview_shows_sentences_and_which_system_is_on_each_side(admin_client, make_campaign):
    campaign = make_campaign(n_segments=12, systems=("mt", "human"), protocol="pairwise-adequacy",
                             options={"systems": ["mt", "human"], "unit": "document", "docs_per_hit": 2})
    page = admin_client.get(f"/admin/annotation/campaign/{campaign.pk}/preview/").content.decode()
    assert "[&#x27;" not in page and "['" not in page  # no Python lists
    items = {item.position: item for item in HitItem.objects.filter(hit__campaign=campaign, hit__number=1)}
    cells = _preview_cells(page)
    assert len(cells) == len(items)
    for number, *_rest, systems, _segment, shown in cells:
        item = items[int(number) - 1]
        first, second = ("mt", "human") if item.payload["left"] == 0 else ("human", "mt")
        assert systems.startswith(f"A: {first}\nB: {second}")
        assert (f"({item.payload['spam_side']} shuffled)" in systems) == bool(item.payload["spam_side"])
        lines = re.findall(r'<div class="line">(.*?)</div>', shown)
        assert len(lines) == 3 * len(item.payload["source"])  # source, A and B, one sentence a line
        assert '<span class="label">A:</span>' in shown and '<span class="label">B:</span>' in shown


def test_the_da_preview_keeps_its_columns(admin_client, make_campaign):
    campaign = make_campaign()
    page = admin_client.get(f"/admin/annotation/campaign/{campaign.pk}/preview/").content.decode()
    items = {i.position: i for i in HitItem.objects.filter(hit__campaign=campaign).select_related("output__system")}
    for number, _set, _kind, _pair, systems, segment, shown in _preview_cells(page):
        item = items[int(number) - 1]
        assert systems == (item.output.system.name if item.output_id else "")
        assert segment == f"{item.segment.document.doc_id}:{item.segment.seg_id}"
        lines = re.findall(r'<div class="line">(.*?)</div>', shown)
        assert len(lines) == 2 and 'class="block gray"' in shown  # reference in gray, then the candidate


# 4. The results page in the admin ----------------------------------------------------------------


def _simulated_da_results():
    lines = as_bytes(campaign_lines(70))
    campaign = import_campaign(lines, name="Results DA", protocol="adequacy", redundancy=4, seed=5).campaign
    quality = {"sys-A": 70, "sys-B": 55}
    for w in range(4):
        behaviour = Behaviour("diligent") if w < 3 else Behaviour("random")
        complete_hit(Client(), campaign.slug, f"worker-{w}", behaviour, quality, random.Random(w))
    compute_results(campaign)
    return campaign


def test_the_admin_results_page_is_clean_rounded_and_read_only(admin_client):
    campaign = _simulated_da_results()
    url = f"/admin/evaluation/campaignstatistics/{campaign.pk}/change/"
    page = admin_client.get(url).content.decode()
    assert "object (" not in page  # no "WorkerResult object (15)" row titles
    assert 'name="_save"' not in page and 'name="_continue"' not in page
    assert f'id="open-results-page" href="/results/{campaign.slug}/"' in page
    p_values = re.findall(r'<td class="field-p_value_shown">(.*?)</td>', page)
    assert len(p_values) == 4 and all(re.fullmatch(r"–|0|\d\.\d{3,4}|\d\.\de-\d+", p) for p in p_values), p_values
    raw = re.findall(r'<td class="field-mean_raw_shown">(.*?)</td>', page)
    assert raw and all(re.fullmatch(r"\d+\.\d", v) for v in raw), raw
    # "Computed at" formatted, not an ISO timestamp; the conventions shown for Direct Assessment
    assert re.search(r"Computed at.*?<div class=\"readonly\">\w+\.? \d+, \d{4}", page, re.S)
    assert "reliability test" in page and "paired-t" in page and "WMT21 DA" in page
    assert "<th>threshold</th><td>0.05</td>" in page
    assert admin_client.post(url, {}).status_code == 403  # nothing to save


def test_the_admin_results_page_of_a_pairwise_campaign_has_no_da_settings_nor_empty_sections(admin_client):
    lines = ["rater,criterion,unit,item,choice,spam"] + [f"r{i % 3},adequacy,document,d{i},{c}," for i, c in
                                                          enumerate(["MT", "Human", "tie", "Human"] * 5)]
    campaign = import_judgments([(line + "\n").encode() for line in lines], fmt="pairwise-csv", name="Pairwise",
                                systems=["MT", "Human"]).campaign
    compute_results(campaign)
    page = admin_client.get(f"/admin/evaluation/campaignstatistics/{campaign.pk}/change/").content.decode()
    assert "Qc test" not in page and "Qc threshold" not in page and "reliability test" not in page
    assert "Pairwise results" in page and "Worker results" in page and "object (" not in page
    assert 'name="_save"' not in page
    cells = re.findall(r'<td class="field-p_value_shown">(.*?)</td>', page)
    assert cells and all(len(c) <= 6 for c in cells), cells


def test_a_campaign_without_results_shows_no_empty_tables(admin_client, make_campaign):
    campaign = make_campaign()
    page = admin_client.get(f"/admin/evaluation/campaignstatistics/{campaign.pk}/change/").content.decode()
    assert "inline-heading" not in page and "not yet" in page
    assert f'id="open-results-page" href="/results/{campaign.slug}/"' in page


def test_the_results_list_links_to_the_results_pages(admin_client):
    campaign = _simulated_da_results()
    page = admin_client.get("/admin/evaluation/campaignstatistics/").content.decode()
    assert f'href="/results/{campaign.slug}/"' in page


# 5. Errors name fields; the file is kept -----------------------------------------------------------


@pytest.mark.parametrize("changes", [
    {"hit_size": 30}, {"hit_size": 100, "file_lines": 10}, {"redundancy": 0}, {"qc_threshold": 2},
    {"protocol": "pairwise-adequacy", "systems": "mt"}, {"protocol": "pairwise-adequacy", "systems": "x,y"},
    {"protocol": "pairwise-adequacy", "systems": "sys-A,sys-B", "unit": "both", "file_lines": 1},
    {"hit_size": 20, "qc_test": "wilcoxon", "file_lines": 5},
])
def test_admin_errors_name_fields_never_command_line_flags(admin_client, changes):
    changes = dict(changes)
    lines = campaign_lines(changes.pop("file_lines", 70), docs=1 if "unit" in changes else 5)
    page = admin_client.post(IMPORT_URL, form(lines, **changes)).content.decode()
    errors = re.findall(r'<ul class="errorlist[^"]*"[^>]*>(.*?)</ul>', page, re.S)
    assert errors and Campaign.objects.count() == 0
    assert not any(re.search(r"--[a-z]", e) for e in errors), errors


def test_a_refused_submit_keeps_the_file_for_the_next(admin_client, researcher):
    lines = campaign_lines(5, systems=PILOT_SYSTEMS)
    page = admin_client.post(IMPORT_URL, form(lines, name="Pilot", redundancy=3)).content.decode()
    token = re.search(r'name="kept_file" value="([^"]+)"', page).group(1)
    assert "Kept from your last submit: <strong>campaign.jsonl</strong>" in page
    kept = KeptUploads.folder() / token
    assert kept.read_bytes() == ("\n".join(lines) + "\n").encode()
    # the same token from another session finds nothing
    other = Client()
    other.force_login(researcher)
    refused = other.post(IMPORT_URL, form(None, name="Pilot", redundancy=3, hit_size=20, kept_file=token))
    assert refused.status_code == 200 and "This field is required" in field_row(refused.content.decode(), "file")
    # the researcher changes one field and submits again, without choosing the file
    response = admin_client.post(IMPORT_URL, form(None, name="Pilot", redundancy=3, hit_size=20, kept_file=token))
    assert response.status_code == 302, response.content.decode()[:2000]
    campaign = Campaign.objects.get()
    assert (campaign.hit_size, campaign.redundancy, campaign.hits.count()) == (20, 3, 2)
    assert not kept.exists() and KeptUploads(admin_client.session).get(token) is None


def test_a_new_file_replaces_the_kept_one(admin_client):
    page = admin_client.post(IMPORT_URL, form(campaign_lines(10))).content.decode()
    first = re.search(r'name="kept_file" value="([^"]+)"', page).group(1)
    broken = campaign_lines(70)
    broken[2] = "{not json"
    page = admin_client.post(IMPORT_URL, form(broken, kept_file=first)).content.decode()
    second = re.search(r'name="kept_file" value="([^"]+)"', page).group(1)
    assert second != first and not (KeptUploads.folder() / first).exists()
    assert "line 3: invalid JSON" in field_row(page, "file")
    response = admin_client.post(IMPORT_URL, form(campaign_lines(70), kept_file=second))
    assert response.status_code == 302 and not (KeptUploads.folder() / second).exists()


def test_without_a_file_the_form_asks_for_one(admin_client):
    page = admin_client.post(IMPORT_URL, form(None)).content.decode()
    assert "This field is required" in field_row(page, "file")


def test_import_warnings_reach_the_researcher(admin_client):
    lines = campaign_lines(5, systems=PILOT_SYSTEMS)
    response = admin_client.post(IMPORT_URL, form(lines, hit_size=20, redundancy=3), follow=True)
    page = response.content.decode()
    assert page.count("Quality control is weak") == 1  # in the preview the import leads to


def test_import_warnings_reach_the_command_line_and_the_api(api, tmp_path):
    """A weak quality-control set-up is imported with the same warning the admin preview shows."""
    import json as _json

    from django.core.management import call_command

    from .conftest import campaign_lines

    path = tmp_path / "pilot.jsonl"
    path.write_text("\n".join(campaign_lines(5, ("s1", "s2", "s3"))) + "\n")
    out = __import__("io").StringIO()
    call_command("import_campaign", str(path), "--name", "Pilot CLI", "--protocol", "adequacy", "--hit-size", "20",
                 stdout=out)
    printed = _json.loads(out.getvalue())
    assert printed["hits"] >= 1 and printed["warnings"] and "pairs" in printed["warnings"][0]
    with path.open("rb") as handle:
        answer = api.post("/api/campaigns/", {"file": handle, "name": "Pilot API", "protocol": "adequacy",
                                              "hit_size": "20"}, format="multipart")
    assert answer.status_code == 201 and answer.json()["warnings"] == printed["warnings"]
