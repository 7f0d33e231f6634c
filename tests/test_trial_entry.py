""""Try as a worker" (issue 23, defect 7): the owner of a campaign tries it alone as a fresh test worker each time,
without the crowd limits that stop one person behind one address (open HITs per address, browser binding), a draft
too; the trial is named on the results page; nobody else may use it; the crowd link keeps every limit, and its
409/429 pages say what a researcher can change."""
import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from annotation.models import Annotator, Assignment, Campaign, Judgment
from annotation.services.trials import TRIAL_SOURCE
from evaluation.analyses import compute_results

from .conftest import post_answer
from .test_annotator_fuzz_corpus import VALID

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner_client(researcher_browser):
    return researcher_browser


def try_it(client, campaign):
    return client.post(f"/c/{campaign.slug}/try/")


@override_settings(CROWD_MAX_OPEN_HITS_PER_IP=1, CROWD_BIND_BROWSER=True)
def test_each_try_is_a_fresh_trial_worker_past_the_crowd_limits(make_campaign, owner_client):
    campaign = make_campaign(redundancy=4, status=Campaign.Status.DRAFT)
    tokens = []
    for _ in range(3):  # three open HITs from one address and one browser: the crowd link would allow one
        response = try_it(owner_client, campaign)
        assert response.status_code == 302 and "/hit/" in response.url, response.content[:300]
        tokens.append(response.url.rstrip("/").split("/")[-1])
    trials = Assignment.objects.filter(token__in=tokens).select_related("annotator")
    workers = {a.annotator.external_id for a in trials}
    assert len(workers) == 3 and all(w.startswith("trial-") for w in workers)
    assert {a.annotator.source for a in trials} == {TRIAL_SOURCE} and all(a.entry == {} for a in trials)
    banner = owner_client.get(f"/hit/{tokens[0]}/").content.decode()
    assert 'id="trial-banner"' in banner and trials.get(token=tokens[0]).annotator.external_id in banner
    crowd = Client()  # the crowd link from the same address still meets the cap: 429 with the researcher's way out
    campaign.status = Campaign.Status.ACTIVE
    campaign.save(update_fields=["status"])
    entered = crowd.get(f"/c/{campaign.slug}/start/", {"worker_id": "crowd-0"})  # one open HIT from this address
    assert entered.status_code == 302 and 'id="trial-banner"' not in crowd.get(entered.url).content.decode()
    refused = crowd.get(f"/c/{campaign.slug}/start/", {"worker_id": "crowd-1"})
    assert refused.status_code == 429
    assert "Try as a worker" in refused.content.decode() and "lab" in refused.content.decode()


def test_a_trial_is_named_on_the_results_page(make_campaign, owner_client):
    campaign = make_campaign(status=Campaign.Status.ACTIVE)
    token = try_it(owner_client, campaign).url.rstrip("/").split("/")[-1]
    state = owner_client.get(f"/api/hit/{token}/").json()
    response = post_answer(owner_client, token, {"item": state["item"]["id"], **VALID["adequacy"](state["item"])})
    assert response.status_code == 201
    worker = Annotator.objects.get(assignments__token=token).external_id
    compute_results(campaign)
    html = owner_client.get(f"/results/{campaign.slug}/").content.decode()
    assert 'id="trial-notice"' in html and worker in html and "1 judgment by 1 test worker" in html


def test_only_the_owner_may_try_and_only_by_post(make_campaign, owner_client):
    campaign = make_campaign()
    other = get_user_model().objects.create_user("other", password="pw", is_staff=True)
    campaign.shared_with.add(other)
    stranger = Client()
    stranger.force_login(other)
    assert try_it(stranger, campaign).status_code == 404  # shared with them: they may read, not add judgments
    assert try_it(Client(), campaign).status_code == 302  # to the login page
    assert owner_client.get(f"/c/{campaign.slug}/try/").status_code == 405
    campaign.status = Campaign.Status.CLOSED
    campaign.save(update_fields=["status"])
    assert try_it(owner_client, campaign).status_code == 403
    assert not Assignment.objects.filter(campaign=campaign).exists()


def test_the_campaign_page_offers_the_try(make_campaign, admin_client):
    campaign = make_campaign()
    html = admin_client.get(f"/admin/annotation/campaign/{campaign.pk}/change/").content.decode()
    assert 'id="try-as-worker"' in html and f'action="/c/{campaign.slug}/try/"' in html


@override_settings(CROWD_BIND_BROWSER=True)
def test_the_in_use_page_says_what_a_researcher_can_change(make_campaign):
    campaign = make_campaign(status=Campaign.Status.ACTIVE)
    assert Client().get(f"/c/{campaign.slug}/start/", {"worker_id": "w1"}).status_code == 302
    refused = Client().get(f"/c/{campaign.slug}/start/", {"worker_id": "w1"})
    assert refused.status_code == 409 and "Try as a worker" in refused.content.decode()


def test_a_draft_is_tried_to_the_end_and_a_crowd_hit_in_a_draft_is_still_held(make_campaign, owner_client):
    """"A draft campaign can be tried before Publish" (services/trials.py): the trial's HIT is served and its
    answers stored (once), up to the end; the same HIT of a crowd worker in a draft (put back to draft after it was
    handed out) stays held, as for a paused campaign."""
    campaign = make_campaign(status=Campaign.Status.DRAFT)
    token = try_it(owner_client, campaign).url.rstrip("/").split("/")[-1]
    state = owner_client.get(f"/api/hit/{token}/")
    assert state.status_code == 200, state.content
    for _ in range(state.json()["total"]):
        item = state.json()["item"]
        state = post_answer(owner_client, token, {"item": item["id"], **VALID["adequacy"](item)})
        assert state.status_code == 201, state.content
    assert state.json()["done"] and Judgment.objects.filter(assignment__token=token).count() == state.json()["total"]
    crowd = Assignment.objects.get(token=token)
    Annotator.objects.filter(pk=crowd.annotator_id).update(source="crowd")
    Assignment.objects.filter(pk=crowd.pk).update(status=Assignment.Status.ACTIVE, position=0)
    Judgment.objects.filter(assignment=crowd).delete()
    assert Client().get(f"/api/hit/{token}/").status_code == 423


@pytest.mark.parametrize("limits", ["crowd", "lab"])
def test_the_crowd_link_never_enters_as_a_trial_worker(make_campaign, owner_client, limits):
    """A trial worker's id (shown on the results page, to the researchers it is shared with too) does not open the
    trial's HIT through the crowd link: that would let anyone add judgments as the owner's test worker."""
    campaign = make_campaign(status=Campaign.Status.ACTIVE, entry_limits=limits)
    token = try_it(owner_client, campaign).url.rstrip("/").split("/")[-1]
    trial = Assignment.objects.get(token=token).annotator.external_id
    refused = Client().get(f"/c/{campaign.slug}/start/", {"worker_id": trial})
    assert refused.status_code == 400 and token not in refused.content.decode()
    assert Assignment.objects.filter(campaign=campaign).count() == 1
