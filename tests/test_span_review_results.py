"""The review stage's results (docs/methods.md "Review of error spans"), computed by hand for one first pass of four
MQM spans reviewed through the annotator API: scores from the reviewed spans beside the first pass's, change counts
by category and severity, exact and lenient precision and recall, the later of a reviewer's two judgments winning;
offered by the API endpoint and the CSV downloads from any stage of the task."""
import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from annotation.models import Assignment, Campaign, Hit, HitItem, Judgment, new_token
from evaluation.families import family_of
from evaluation.services.results_read import stored_rows

from .conftest import post_answer
from .test_span_review import FIRST, TEXTS, first_pass, review_campaign, reviewing, span

pytestmark = pytest.mark.django_db


def reviewed_task(django_capture_on_commit_callbacks):
    campaign = review_campaign()
    stage = Campaign.objects.get(stage_input=campaign)
    with django_capture_on_commit_callbacks(execute=True):
        first_pass(campaign)
    client, token = reviewing(stage)
    text = TEXTS[0]
    while not (state := client.get(f"/api/hit/{token}/").json()).get("done"):
        item = state["item"]
        if item["candidate"] == text:
            body = {"review": [{"action": "changed", "span": span(text, "old bridge", "major")}, {"action": "deleted"},
                               {"action": "kept"}], "added": [span(text, "spring", "major", "Accuracy/Omission")],
                    "score": 40}
        else:
            body = {"review": [{"action": "kept"}], "added": [], "score": 70}
        assert post_answer(client, token, {"item": item["id"], **body}).status_code == 201
    return campaign, stage


def test_review_results_by_hand(django_capture_on_commit_callbacks):
    campaign, stage = reviewed_task(django_capture_on_commit_callbacks)
    # A later judgment of the same reviewer on the short text's first pass (another HIT holding the same review, as
    # a re-run review would store it): it deletes the span, and it is the one that counts.
    short = Judgment.objects.get(campaign=stage, answer__first_rater="judge-1", score=70)
    hit = Hit.objects.create(campaign=stage, number=99, size=1, exposure=short.item.hit.exposure)
    item = HitItem.objects.create(hit=hit, position=0, set_index=0, item_type="system", segment=short.item.segment,
                                  output=short.item.output, payload=short.item.payload)
    again = Assignment.objects.create(campaign=stage, hit=hit, annotator=short.annotator, token=new_token(),
                                      status=Assignment.Status.COMPLETED, position=1, completed_at=timezone.now())
    Judgment.objects.create(campaign=stage, assignment=again, annotator=short.annotator, item=item, score=90,
                            spans=[], answer={**short.answer, "review": [{"action": "deleted",
                                                                          "from": FIRST[TEXTS[1]][0]}]})
    family_of(stage).compute(stage)  # a review stage computes its task's results, on the first stage
    # MQM (Google weights): first pass -(5 + 1 + 1) and -5; reviewed -(5 + 1 + 5) and 0 (the later judgment).
    assert stored_rows(campaign, "review_systems") == [
        {"system": "alpha", "score_name": "mqm", "reviews": 2, "first_pass_score": -6.0, "reviewed_score": -5.5}]
    changes = {(r["category"], r["severity"]): (r["kept"], r["changed"], r["deleted"])
               for r in stored_rows(campaign, "review_changes")}
    assert changes == {("Accuracy/Mistranslation", "major"): (0, 1, 0), ("Accuracy/Mistranslation", "minor"): (0, 0, 1),
                       ("Style", "minor"): (1, 0, 0), ("Terminology", "major"): (0, 0, 1)}
    [rater] = stored_rows(campaign, "review_raters")
    # exact: only "cars" survives as it was (1 of 4 first-pass spans, 1 of 3 reviewed ones); lenient: "bridge"
    # [8, 14) shares 6 of the 10 characters of "old bridge" [4, 14), "old" only 3 (2 of 4, 2 of 3).
    assert rater == {"first_rater": "judge-1", "reviews": 2, "first_pass_spans": 4, "reviewed_spans": 3, "added": 1,
                     "precision_exact": 0.25, "recall_exact": pytest.approx(1 / 3), "precision_lenient": 0.5,
                     "recall_lenient": pytest.approx(2 / 3)}
    # the API and the downloads answer for the whole task from the review stage's slug too
    owner = get_user_model().objects.create_user("owner", password="x", is_staff=True)
    Campaign.objects.filter(pk__in=[campaign.pk, stage.pk]).update(owner=owner)
    client = Client()
    client.force_login(owner)
    answer = client.get(f"/api/campaigns/{stage.slug}/review/", {"table": "raters"})
    assert answer.status_code == 200, answer.content
    assert answer.json()["raters"][0]["precision_lenient"] == 0.5
    assert client.get(f"/api/campaigns/{stage.slug}/review/", {"table": "nonsense"}).status_code == 400
    systems = client.get(f"/api/campaigns/{stage.slug}/systems/").json()["results"]
    assert [(r["system"], r["score_name"]) for r in systems] == [("alpha", "mqm")]  # the first pass's, as for MQM
    csv = client.get(f"/results/{campaign.slug}/review_changes.csv")
    assert csv.status_code == 200 and b"first_rater,category,severity" in csv.content
    page = client.get(f"/results/{campaign.slug}/")
    assert page.status_code == 200
    section = page.content.decode().split('id="review"')[1].split("</section>")[0]
    assert "Review of the first pass" in section and "judge-1" in section and "50%" in section
