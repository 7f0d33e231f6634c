"""Campaign set-up without the command line (issue 5): import in the admin with every setting,
preview a built HIT, publish/pause/close; instructions, qualification, blocking, completion codes."""
import io

import pytest
from django.test import Client

from annotation.models import Annotator, Assignment, Campaign
from annotation.services import assignment as assigning

from .conftest import campaign_lines, post_answer, start

pytestmark = pytest.mark.django_db
IMPORT_URL = "/admin/annotation/campaign/import/"


def upload(lines, name="campaign.jsonl"):
    handle = io.BytesIO(("\n".join(lines) + "\n").encode())
    handle.name = name
    return handle


def form(lines, **changes):
    data = {"file": upload(lines), "name": "Admin campaign", "protocol": "adequacy", "source_language": "de",
            "target_language": "en", "statement": "", "instructions": "", "redundancy": 2, "hit_size": 100,
            "seed": 3, "qc_test": "paired-t", "qc_threshold": 0.05, "systems": "", "unit": "document",
            "docs_per_hit": 10, "spam_rate_document": 0.09, "spam_rate_sentence": 0.13, "max_spam_miss_rate": 0.2,
            "payment_per_hit": "1.50", "hit_timeout_minutes": 30, "completion_code": ""}
    data.update(changes)
    return data


@pytest.fixture
def admin_client(client, researcher):
    researcher.is_superuser = True
    researcher.save()
    client.force_login(researcher)
    return client


def test_admin_import_creates_a_draft_and_shows_the_preview(admin_client):
    response = admin_client.post(IMPORT_URL, form(campaign_lines(70), qc_test="wilcoxon", statement="Is it good?"))
    campaign = Campaign.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"/{campaign.pk}/preview/")
    assert campaign.status == "draft" and campaign.qc_test == "wilcoxon" and str(campaign.payment_per_hit) == "1.50"
    assert campaign.hit_timeout_minutes == 30 and campaign.statement == "Is it good?"
    preview = admin_client.get(response["Location"]).content.decode()
    assert "70 translations to judge" in preview and "10 bad-reference checks" in preview
    assert "10 repeat checks" in preview and "10 human references" in preview
    assert preview.count('<td class="type-') == 100
    # a draft serves nobody
    assert Client().get(f"/c/{campaign.slug}/start/", {"worker_id": "early"}).status_code == 403


def test_publish_pause_close(admin_client):
    admin_client.post(IMPORT_URL, form(campaign_lines(70)))
    campaign = Campaign.objects.get()
    url = f"/admin/annotation/campaign/{campaign.pk}/status/"
    for i, (status, crowd_status) in enumerate((("active", 302), ("paused", 403), ("closed", 403), ("active", 302))):
        assert admin_client.post(url, {"status": status}).status_code == 302
        campaign.refresh_from_db()
        assert campaign.status == status
        assert Client().get(f"/c/{campaign.slug}/start/", {"worker_id": f"w-{i}"}).status_code == crowd_status
    assert admin_client.post(url, {"status": "bogus"}).status_code == 302
    campaign.refresh_from_db()
    assert campaign.status == "active"
    response = admin_client.post("/admin/annotation/campaign/", {"action": "pause", "_selected_action": [campaign.pk]})
    assert response.status_code == 302 and Campaign.objects.get().status == "paused"


def test_file_errors_show_next_to_the_file_field_with_line_numbers(admin_client):
    lines = campaign_lines(70)
    lines[3] = '{"doc_id": "<b>x</b>"'
    response = admin_client.post(IMPORT_URL, form(lines))
    page = response.content.decode()
    assert response.status_code == 200 and Campaign.objects.count() == 0
    field = page[page.index("field-file"):page.index("field-name")]
    assert "line 4: invalid JSON" in field
    assert "nothing was imported" in page
    assert "<b>x</b>" not in page


def test_pairwise_settings_through_the_admin(admin_client):
    lines = campaign_lines(40, systems=("human", "mt"), docs=8)
    response = admin_client.post(IMPORT_URL, form(lines, protocol="pairwise-adequacy", systems="mt,human",
                                                  unit="both", docs_per_hit=2, spam_rate_sentence=0.25))
    assert response.status_code == 302, response.content
    campaign = Campaign.objects.get()
    assert campaign.options["systems"] == ["mt", "human"] and campaign.options["unit"] == "both"
    assert campaign.options["spam_rates"]["sentence"] == 0.25
    assert b"spam" in admin_client.get(response["Location"]).content
    bad = admin_client.post(IMPORT_URL, form(lines, name="Bad", protocol="pairwise-adequacy", systems="mt"))
    assert b"compare two different systems" in bad.content


def test_instructions_are_markdown_rendered_safely(client, make_campaign):
    campaign = make_campaign(instructions="# Welcome\n\nRate **carefully**.\n\n<script>alert(1)</script>"
                                          "<a href='javascript:alert(1)' onclick='x()'>link</a>")
    page = client.get(f"/hit/{start(client, campaign, 'reader')}/").content.decode()
    assert "<h1>Welcome</h1>" in page and "<strong>carefully</strong>" in page
    assert "<script>alert(1)</script>" not in page and "onclick" not in page and "javascript:" not in page


def test_qualification_is_asked_once_and_stored(client, make_campaign):
    campaign = make_campaign(require_qualification=True, required_native_language="English")
    url = f"/c/{campaign.slug}/start/?worker_id=q1"
    asked = client.get(url)
    assert asked.status_code == 200 and b'name="native_language"' in asked.content
    assert client.post(url, {"native_language": "", "country": "UK"}).status_code == 200  # both are required
    response = client.post(url, {"native_language": "english", "country": "UK"})
    assert response.status_code == 302 and response["Location"].startswith("/hit/")
    worker = Annotator.objects.get(external_id="q1")
    assert (worker.native_language, worker.country) == ("en", "UK")  # the name is stored as its code
    assert client.get(url).status_code == 302  # not asked again
    client.post(f"/c/{campaign.slug}/start/?worker_id=q2", {"native_language": "German", "country": "AT"})
    refused = client.get(f"/c/{campaign.slug}/start/?worker_id=q2")
    assert refused.status_code == 403 and b"native speakers of English" in refused.content
    assert not Assignment.objects.filter(annotator__external_id="q2").exists()


def test_a_blocked_worker_gets_no_more_work_and_keeps_their_judgments(client, make_campaign):
    campaign = make_campaign(redundancy=2)
    token = start(client, campaign, "spammer")
    state = client.get(f"/api/hit/{token}/").json()
    post_answer(client, token, {"item": state["item"]["id"], "score": 50})
    assert assigning.block(campaign, Annotator.objects.get(external_id="spammer")) == 1
    assert client.get(f"/c/{campaign.slug}/start/", {"worker_id": "spammer"}).status_code == 403
    assert client.get(f"/api/hit/{token}/").status_code == 410
    assert campaign.judgments.count() == 1
    assert client.get(f"/c/{campaign.slug}/start/", {"worker_id": "someone-else"}).status_code == 302


def test_block_from_the_admin(admin_client, campaign):
    token = start(Client(), campaign, "bad-worker")
    assignment = Assignment.objects.get(token=token)
    response = admin_client.post("/admin/annotation/assignment/", {"action": "block_workers",
                                                                  "_selected_action": [assignment.pk]})
    assert response.status_code == 302
    assert campaign.blocked_annotators.filter(external_id="bad-worker").exists()


def test_one_completion_code_for_everyone_or_one_per_hit(client, make_campaign):
    def finish(campaign, worker):
        token = start(client, campaign, worker)
        state = client.get(f"/api/hit/{token}/").json()
        while not state["done"]:
            state = post_answer(client, token, {"item": state["item"]["id"], "score": 60}).json()
        return state["completion_code"]

    prolific = make_campaign(name="Prolific", completion_code="C1A2B3", redundancy=2)
    assert finish(prolific, "p1") == finish(prolific, "p2") == "C1A2B3"
    own = make_campaign(name="Own codes", redundancy=2)
    first, second = finish(own, "o1"), finish(own, "o2")
    assert first != second and len(first) == len(second) == 10
    assert Assignment.objects.get(annotator__external_id="o1", campaign=own).completion_code == first
