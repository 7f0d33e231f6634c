"""The review stage's results (docs/methods.md "Review of error spans"), computed by hand for one first pass of four
MQM spans reviewed through the annotator API: scores from the reviewed spans beside the first pass's, change counts
by category and severity, exact and lenient precision and recall, the later of a reviewer's two judgments winning;
offered by the API endpoint and the CSV downloads from any stage of the task."""
import json

import numpy as np
import pytest
import scipy.stats as sps
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from annotation.models import Assignment, Campaign, Hit, HitItem, Judgment, new_token
from annotation.protocols import get_protocol
from annotation.services.campaign_import import import_campaign
from evaluation.analyses import compute_results
from evaluation.families import family_of
from evaluation.models import CampaignResults
from evaluation.services.results_read import freshness, stored_rows

from .conftest import post_answer, start
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
        {"system": "alpha", "score_name": "mqm", "reviews": 2, "items": 2, "first_pass_score": -6.0,
         "reviewed_score": -5.5, "rank": None, "rank_range": None, "cluster": None}]  # below WMT24's 100 items
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


SYSTEMS = ("alpha", "beta", "gamma")


def _reviewed_score(system: str, segment: int) -> float:
    """alpha far above; beta and gamma close, each better on some segments (no ties within a pair)."""
    return {"alpha": 80.0 + segment, "beta": 50.0 + (segment * 7) % 5, "gamma": 50.5 + (segment * 3) % 5}[system]


def _ranked_review_task(django_capture_on_commit_callbacks, preset: str, judge_first: bool = True, news: int = 8):
    """An ESA task whose file's automatic spans are reviewed: 3 systems × 16 segments in two domains (the first
    `news` segments news, the others speech), one reviewer scoring every review by `_reviewed_score`; with
    `judge_first`, one HIT of the first stage judged too."""
    lines = [json.dumps({"doc_id": f"d{int(seg >= news)}", "seg_id": seg + 1, "source": f"Quelle {seg}.",
                         "domain": ("news", "speech")[int(seg >= news)],
                         "systems": {name: f"The {name} translation {seg} reads well." for name in SYSTEMS},
                         "error_spans": {name: [{"start": 4, "end": 9, "severity": "minor"}] for name in SYSTEMS}})
             for seg in range(16)]
    parsed = get_protocol("esa").parse_options({"segments_per_hit": 16, "seed": 1, "perturbation_rate": 0.0,
                                                "review": "prefilled", "review_items_per_hit": 48, "min_items": 0,
                                                "statistics_preset": preset})
    campaign = import_campaign([(line + "\n").encode() for line in lines], name="ranked review", protocol="esa",
                               parsed=parsed).campaign
    stage = Campaign.objects.get(stage_input=campaign)
    if judge_first:  # one HIT of the first stage judged (the task's results are stored with its first stage)
        judge = Client()
        first = start(judge, campaign, "judge-1")
        while not (state := judge.get(f"/api/hit/{first}/").json()).get("done"):
            assert post_answer(judge, first, {"item": state["item"]["id"], "spans": [], "score": 50}).status_code == 201
    client, token = reviewing(stage)
    with django_capture_on_commit_callbacks(execute=True):
        while not (state := client.get(f"/api/hit/{token}/").json()).get("done"):
            item = HitItem.objects.select_related("output__system", "segment").get(pk=state["item"]["id"])
            seg = int(item.output.text.split()[3])
            body = {"review": [{"action": "kept"}], "added": [],
                    "score": _reviewed_score(item.output.system.name, seg)}
            assert post_answer(client, token, {"item": item.pk, **body}).status_code == 201
    family_of(stage).compute(stage)
    return campaign


@pytest.mark.parametrize("preset", ["wmt24-esa", "wmt25-esa"])
def test_reviewed_scores_get_the_presets_test_and_clusters_against_scipy(django_capture_on_commit_callbacks, preset):
    campaign = _ranked_review_task(django_capture_on_commit_callbacks, preset)
    scores = {name: np.array([_reviewed_score(name, seg) for seg in range(16)]) for name in SYSTEMS}
    p = {(r["system"], r["opponent"]): r for r in stored_rows(campaign, "review_significance")}
    for a in SYSTEMS:
        for b in SYSTEMS:
            if a == b:
                continue
            d = scores[a] - scores[b]
            if preset == "wmt24-esa":  # per domain two-sided Wilcoxon, Stouffer: z = Σ Φ⁻¹(1 − p_d) / √k
                p_d = [sps.wilcoxon(d[k:k + 8], zero_method="wilcox", correction=False).pvalue for k in (0, 8)]
                want = 1 - sps.norm.cdf(sum(sps.norm.ppf(1 - x) for x in p_d) / np.sqrt(2))
            else:  # one-sided Wilcoxon that a scores higher, on the shared items
                want = sps.wilcoxon(d, zero_method="wilcox", correction=False, alternative="greater").pvalue
            assert p[(a, b)]["p_value"] == pytest.approx(want, rel=1e-9)
            assert p[(a, b)]["shared_items"] == 16 and p[(a, b)]["method"] == preset.split("-")[0]
    systems = {r["system"]: r for r in stored_rows(campaign, "review_systems")}
    assert systems["alpha"]["reviewed_score"] == pytest.approx(scores["alpha"].mean())
    assert systems["alpha"]["items"] == 16 and systems["alpha"]["rank"] == 1
    assert systems["alpha"]["cluster"] == 1 and systems["alpha"]["rank_range"] == [1, 1]
    assert {systems["beta"]["cluster"], systems["gamma"]["cluster"]} == {2}  # beta and gamma not separated
    assert sorted([systems["beta"]["rank_range"], systems["gamma"]["rank_range"]]) == [[2, 3], [2, 3]]


def test_prefilled_review_results_without_any_first_pass_judgment(django_capture_on_commit_callbacks):
    """Issue 27: a `prefilled` review of automatic spans is results on its own; nobody need judge the first stage."""
    campaign = _ranked_review_task(django_capture_on_commit_callbacks, "wmt25-esa", judge_first=False)
    assert not Judgment.objects.filter(campaign=campaign).exists()
    systems = {r["system"]: r for r in stored_rows(campaign, "review_systems")}
    assert set(systems) == set(SYSTEMS) and systems["alpha"]["reviews"] == 16
    alpha = np.mean([_reviewed_score("alpha", seg) for seg in range(16)])
    assert systems["alpha"]["reviewed_score"] == pytest.approx(alpha)
    assert systems["alpha"]["first_pass_score"] is None  # automatic spans have no first-pass score
    assert stored_rows(campaign, "review_significance") and stored_rows(campaign, "systems") == []
    owner = get_user_model().objects.create_user("owner", password="x", is_staff=True)
    Campaign.objects.filter(pk=campaign.pk).update(owner=owner)
    client = Client()
    client.force_login(owner)
    assert client.get(f"/api/campaigns/{campaign.slug}/review/").json()["systems"]
    page = client.get(f"/results/{campaign.slug}/")
    assert page.status_code == 200 and "alpha" in page.content.decode().split('id="review"')[1]


@pytest.mark.parametrize("preset", ["wmt24-esa", "wmt25-esa"])
def test_reviewed_score_follows_the_presets_average(django_capture_on_commit_callbacks, preset):
    """Issue 27: WMT24 macro-averages over domains (4 news, 12 speech segments), WMT25 the plain mean, for the
    reviewed score as for the first pass's; the rows are ordered by that score."""
    campaign = _ranked_review_task(django_capture_on_commit_callbacks, preset, news=4)
    rows = stored_rows(campaign, "review_systems")
    for row in rows:
        scores = np.array([_reviewed_score(row["system"], seg) for seg in range(16)])
        want = (scores[:4].mean() + scores[4:].mean()) / 2 if preset == "wmt24-esa" else scores.mean()
        assert row["reviewed_score"] == pytest.approx(want, rel=1e-12)
    assert [r["reviewed_score"] for r in rows] == sorted((r["reviewed_score"] for r in rows), reverse=True)
    beta = np.array([_reviewed_score("beta", seg) for seg in range(16)])
    assert (beta[:4].mean() + beta[4:].mean()) / 2 != pytest.approx(beta.mean())  # the two conventions differ here


def test_a_review_only_task_counts_its_review_stage_in_progress(django_capture_on_commit_callbacks):
    """A `prefilled` review nobody judged the first stage of: the progress chart, "over N judgments" and freshness
    count the review stage's judgments (the first stage had no stage name, so the task looked like one stage and
    the chart said "No judgments yet")."""
    campaign = _ranked_review_task(django_capture_on_commit_callbacks, "wmt25-esa", judge_first=False)
    stage = Campaign.objects.get(stage_input=campaign)
    reviews = Judgment.objects.filter(campaign=stage).count()
    assert reviews == 48 and campaign.stage_name == "annotate"
    compute_results(stage)
    header = CampaignResults.objects.get(campaign=campaign)
    assert header.progress["judgments"][-1] == header.judgments == reviews
    assert header.progress["hits_done"][-1] == 1 and freshness(campaign).new == 0
    owner = get_user_model().objects.create_user("owner", password="x", is_staff=True)
    Campaign.objects.filter(pk__in=[campaign.pk, stage.pk]).update(owner=owner)
    client = Client()
    client.force_login(owner)
    page = client.get(f"/results/{campaign.slug}/").content.decode()
    chart = page.split('id="progress"')[1].split("</section>")[0]
    assert "No judgments yet" not in chart and "in every stage of the task" in chart
    assert f"over <strong>{reviews}</strong> judgment" in page
