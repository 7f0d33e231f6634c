"""A multi-stage task is one unit (docs/api.md §9): imported as a draft, Publish on its first stage opens every
stage, a later stage without HITs tells a crowd worker it waits for the earlier stage and hands out work as soon as
its input has built some; Pause and Close act on every stage from the API, the admin's buttons and its list
actions; the researcher's instructions reach every stage; a later stage's results page leads to the task's
results, and a later stage's judgments queue the task's recompute."""
import random

import pytest
from django.core.cache import cache
from django.test import Client

from annotation.models import Campaign
from annotation.protocols import get_protocol
from annotation.services.campaign_import import import_campaign
from evaluation import tasks
from evaluation.families import family_of
from evaluation.tasks import _queued_key

from .test_post_edit import edit_all, verify_all
from .test_post_edit import lines as post_edit_lines
from .test_reading_comprehension import lines as rc_lines
from .test_reading_comprehension import work, write
from .test_reference_translation import lines as rt_lines
from .test_reference_translation import translate_all

pytestmark = pytest.mark.django_db

INSTRUCTIONS = "Read the **whole** sentence before you answer."

TASKS = {
    "post-edit": (post_edit_lines, {"screens_per_hit": 2, "verifiers": 3, "verify_items_per_hit": 6}),
    "reference-translation": (rt_lines, {"screens_per_hit": 3, "detectors": 3, "detect_items_per_hit": 6}),
    "reading-comprehension": (rc_lines, {"redundancy": 2, "voters": 3, "answerers": 2, "graders": 3,
                                         "grade_items_per_hit": 10}),
}


def draft_task(protocol: str, owner) -> list[Campaign]:
    """The task imported as a draft with the researcher's instructions; its stages, first stage first."""
    lines, raw = TASKS[protocol]
    parsed = get_protocol(protocol).parse_options({"seed": 3, "publish": False, "instructions": INSTRUCTIONS, **raw})
    first = import_campaign([(line + "\n").encode() for line in lines()], name=f"Task {protocol}",
                            protocol=protocol, parsed=parsed, owner=owner).campaign
    stages = [first]
    while follower := Campaign.objects.filter(stage_input=stages[-1]).order_by("pk").first():
        stages.append(follower)
    return stages


def statuses(stages) -> set[str]:
    return set(Campaign.objects.filter(pk__in=[s.pk for s in stages]).values_list("status", flat=True))


def crowd_entry(campaign, worker="early-bird"):
    return Client().get(f"/c/{campaign.slug}/start/", {"worker_id": worker})


def do_first_stage(protocol: str, first: Campaign) -> None:
    if protocol == "post-edit":
        edit_all(first, ["ed1", "ed2", "ed3", "ed4", "ed5"], random.Random(2))
    elif protocol == "reference-translation":
        translate_all(first, ["h-close", "h-mid", "h-loose", "p-a", "p-b"])
    else:
        work(first, ["w1", "w2"], write)


@pytest.mark.parametrize("protocol", list(TASKS))
def test_publish_opens_every_stage_and_a_later_stage_takes_workers_once_its_input_exists(
        protocol, api, researcher, django_capture_on_commit_callbacks):
    stages = draft_task(protocol, researcher)
    first, second = stages[0], stages[1]
    assert len(stages) == (4 if protocol == "reading-comprehension" else 2)
    assert statuses(stages) == {"draft"}
    assert all(s.instructions == INSTRUCTIONS for s in stages)  # carried to every stage
    assert crowd_entry(second).status_code == 403  # a draft refuses workers

    response = api.post(f"/api/campaigns/{first.slug}/status/", {"status": "active"}, format="json")
    assert response.status_code == 200 and response.json()["status"] == "active"
    assert statuses(stages) == {"active"}
    waiting = crowd_entry(second)  # open, but nothing to do yet: a clear page, not 403 "not accepting"
    assert waiting.status_code == 200
    assert b"Waiting for the earlier stage" in waiting.content and b"not accepting" not in waiting.content
    assert not second.hits.exists()

    with django_capture_on_commit_callbacks(execute=True):  # each judgment's after-commit work builds the stage
        do_first_stage(protocol, first)
    assert second.hits.exists()
    entered = crowd_entry(second, "late-comer")
    assert entered.status_code == 302 and entered.url.startswith("/hit/")
    shown = Client(HTTP_COOKIE=entered.cookies.output(header="", sep=";")).get(entered.url)
    assert shown.status_code == 200 and b'id="instructions"' in shown.content
    assert b"<strong>whole</strong>" in shown.content  # the researcher's Markdown, on the later stage's page


@pytest.mark.parametrize("protocol", list(TASKS))
def test_pause_and_close_act_on_every_stage_from_any_stage(protocol, api, researcher, admin_client):
    stages = draft_task(protocol, researcher)
    first, last = stages[0], stages[-1]
    # the API on a later stage
    assert api.post(f"/api/campaigns/{last.slug}/status/", {"status": "active"}, format="json").status_code == 200
    assert statuses(stages) == {"active"}
    assert api.post(f"/api/campaigns/{last.slug}/status/", {"status": "paused"}, format="json").status_code == 200
    assert statuses(stages) == {"paused"}
    assert b"is paused" in crowd_entry(first).content and b"is paused" in crowd_entry(last).content
    # the admin's buttons on the campaign page
    page = admin_client.post(f"/admin/annotation/campaign/{first.pk}/status/", {"status": "active"}, follow=True)
    assert statuses(stages) == {"active"}
    assert f"{first.name} is now active, with every stage of its task" in page.content.decode()
    admin_client.post(f"/admin/annotation/campaign/{last.pk}/status/", {"status": "closed"})
    assert statuses(stages) == {"closed"}
    # the list's actions, one task chosen through two of its stages
    listed = admin_client.post("/admin/annotation/campaign/", {
        "action": "pause", "_selected_action": [first.pk, last.pk]}, follow=True)
    assert statuses(stages) == {"paused"}
    assert f"{len(stages)} campaign(s) now paused, {len(stages) - 1} of them later stages" in listed.content.decode()
    # a bad status changes nothing
    assert api.post(f"/api/campaigns/{last.slug}/status/", {"status": "open"}, format="json").status_code == 400
    assert statuses(stages) == {"paused"}
    # every stage's admin page shows the task as a pipeline: each stage with its status and progress
    page = admin_client.get(f"/admin/annotation/campaign/{last.pk}/change/").content.decode()
    assert page.count('class="stage ') + page.count('class="stage"') == len(stages)
    for stage in stages:
        assert f'data-campaign="{stage.slug}"' in page
    assert page.count('class="stage-status status-paused"') == len(stages)
    assert f"0 / {first.hits.count()} HITs done" in page and "waiting for output of" in page


def test_a_later_stage_results_page_leads_to_the_task_results(researcher, django_capture_on_commit_callbacks,
                                                                client, settings):
    settings.RESULTS_AUTO_RECOMPUTE = True
    settings.RESULTS_DEBOUNCE_SECONDS = 3600  # the queued run stays far off: the flag says which campaign it is for
    first, verify = draft_task("post-edit", researcher)
    Campaign.objects.filter(pk__in=[first.pk, verify.pk]).update(status="active")
    with django_capture_on_commit_callbacks(execute=True):
        edit_all(first, ["ed1", "ed2", "ed3", "ed4", "ed5"], random.Random(2))
    cache.delete(_queued_key(first.pk))
    cache.delete(_queued_key(verify.pk))
    tasks._covered_until.clear()  # nothing remembered as queued
    with django_capture_on_commit_callbacks(execute=True):
        verify_all(verify, ["v1", "v2", "v3"])
    # the verify stage's judgments change the task's results: its recompute is queued on the first stage
    assert cache.get(_queued_key(first.pk)) is not None and cache.get(_queued_key(verify.pk)) is None
    cache.delete(_queued_key(first.pk))
    family_of(first).compute(first)

    client.force_login(researcher)
    response = client.get(f"/results/{verify.slug}/", follow=True)
    html = response.content.decode()
    assert response.redirect_chain == [(f"/results/{first.slug}/", 302)]
    assert "No results computed yet" not in html and "Results computed" in html
    assert "the verify stage of this task" in html and 'id="stages"' in html
    assert 'class="stage-pipeline"' in html and f'data-campaign="{verify.slug}"' in html


@pytest.mark.parametrize("protocol", list(TASKS))
def test_every_later_stage_page_leads_to_the_task_results(protocol, researcher, client):
    stages = draft_task(protocol, researcher)
    client.force_login(researcher)
    for stage in stages[1:]:
        response = client.get(f"/results/{stage.slug}/", follow=True)
        html = response.content.decode()
        assert response.redirect_chain == [(f"/results/{stages[0].slug}/", 302)]
        assert f"the {stage.stage_name} stage of this task" in html
        assert html.count('class="stage ') + html.count('class="stage"') == len(stages)
    assert client.get(f"/results/{stages[0].slug}/").status_code == 200  # the first stage's page is the task's
