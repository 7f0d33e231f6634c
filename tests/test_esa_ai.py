"""ESA^AI end to end (docs/methods.md#esa-ai, docs/api.md): outputs the automatic system found error-free are sent
at `ai_error_free_rate` by a seeded draw recorded on the items, the others always; judged through the annotator
API, the system scores are the post-stratified Hájek scores computed by hand from the stored judgments, and the
API, the CSV download and the results page report the interval, the naive score and the budget saved."""
import csv
import io
import json
import random

import numpy as np
import pytest
from django.test import Client

from annotation.models import HitItem, Judgment, SystemOutput
from annotation.protocols import get_protocol
from annotation.protocols.options import OptionError
from evaluation.families import family_of

from .conftest import post_answer, start
from .test_error_span_protocols import SYSTEMS, span_campaign

pytestmark = pytest.mark.django_db

QUALITY = {"alpha": 90.0, "beta": 75.0, "gamma": 60.0}


def ai_lines(documents=4, per_doc=5, domains=("news",)) -> list[str]:
    """Every output has an AI verdict except segment 1 of each document: gamma's always flagged, alpha's and
    beta's error-free on most segments; one tutorial line. Document d is in domain `domains[d % len(domains)]`."""
    lines = []
    for d in range(documents):
        for s in range(per_doc):
            record = {"doc_id": f"doc-{d}", "seg_id": s + 1, "source": f"Quelle {d}.{s} mit Wörtern.",
                      "domain": domains[d % len(domains)],
                      "systems": {n: f"The {n} translation of {d}.{s} with words." for n in SYSTEMS}}
            if s > 0:
                minor, major = {"start": 4, "end": 8, "severity": "minor"}, {"start": 0, "end": 3, "severity": "major"}
                record["error_spans"] = {"alpha": [], "beta": [] if s % 2 else [minor], "gamma": [major]}
            lines.append(json.dumps(record))
    lines.append(json.dumps({"doc_id": "tutorial", "seg_id": 1, "source": "Ein Beispiel.", "tutorial": True,
                             "systems": {n: "An example." for n in SYSTEMS}}))
    return lines


def system_items(campaign):
    return list(HitItem.objects.filter(hit__campaign=campaign, item_type="system").select_related("output__system"))


def test_the_planner_sends_ai_clean_outputs_at_the_rate_and_records_the_draw():
    campaign = span_campaign(lines=ai_lines(documents=6), ai_error_free_rate=0.4, perturbation_rate=0.0)
    clean = set(SystemOutput.objects.filter(campaign=campaign, spans=[]).values_list("pk", flat=True))
    tutorial_segments = set(HitItem.objects.filter(hit__campaign=campaign, item_type="tutorial")
                            .values_list("segment_id", flat=True))
    others = set(SystemOutput.objects.filter(campaign=campaign).exclude(pk__in=clean)
                 .exclude(segment_id__in=tutorial_segments).values_list("pk", flat=True))
    items = system_items(campaign)
    sent = {i.output_id for i in items}
    assert others <= sent  # AI-flagged outputs and outputs without a verdict: always sent
    sent_clean = sent & clean
    assert 0 < len(sent_clean) < len(clean)  # 36 AI-clean outputs at 0.4
    assert all(i.payload == {"ai_error_free": True, "inclusion": 0.4} for i in items if i.output_id in clean)
    assert all(i.payload == {} for i in items if i.output_id not in clean)
    again = span_campaign(lines=ai_lines(documents=6), ai_error_free_rate=0.4, perturbation_rate=0.0)
    same = {(i.output.segment.seg_id, i.output.segment.document.doc_id, i.output.system.name) for i in items}
    assert same == {(i.output.segment.seg_id, i.output.segment.document.doc_id, i.output.system.name)
                    for i in system_items(again)}  # the campaign's seed reproduces the draw


def test_rate_one_leaves_the_layout_as_before_and_bad_rates_are_refused():
    off = span_campaign(lines=ai_lines(), ai_error_free_rate=1.0)
    default = span_campaign(lines=ai_lines())
    layout = [(i.hit.number, i.position, i.item_type, i.output.segment.seg_id, i.output.system.name)
              for i in HitItem.objects.filter(hit__campaign=off).order_by("hit__number", "position")]
    assert layout == [(i.hit.number, i.position, i.item_type, i.output.segment.seg_id, i.output.system.name)
                      for i in HitItem.objects.filter(hit__campaign=default).order_by("hit__number", "position")]
    for bad in (0, -0.5, 1.5, "lots"):
        with pytest.raises(OptionError, match="ai_error_free_rate"):
            get_protocol("esa").parse_options({"ai_error_free_rate": bad})
    with pytest.raises(OptionError, match="ai_error_free_rate"):  # one screen holds every system: not offered
        get_protocol("contrastive-esa").parse_options({"ai_error_free_rate": 0.5})


def test_api_refuses_a_bad_rate_with_a_400_and_creates_nothing(api):
    from annotation.models import Campaign

    body = {"file": io.BytesIO("\n".join(ai_lines()).encode()), "name": "bad rate", "protocol": "esa",
            "source_language": "de", "ai_error_free_rate": "0"}
    body["file"].name = "c.jsonl"
    response = api.post("/api/campaigns/", body, format="multipart")
    assert response.status_code == 400 and "ai_error_free_rate" in response.content.decode()
    assert not Campaign.objects.filter(name="bad rate").exists()


def judge_all(campaign, workers=2, seed=5):
    rng = random.Random(seed)
    for w in range(workers):
        client = Client()
        for _ in range(campaign.hits.count()):
            if client.get(f"/c/{campaign.slug}/start/", {"worker_id": f"w{w}"}).status_code != 302:
                break
            token = start(client, campaign, f"w{w}")
            while not (state := client.get(f"/api/hit/{token}/").json()).get("done"):
                item = HitItem.objects.select_related("output__system").get(pk=state["item"]["id"])
                score = QUALITY[item.output.system.name] + rng.gauss(0, 6) - (25 if item.output.spans else 0)
                answer = {"item": item.pk, "score": max(0, min(100, round(score))), "spans": []}
                assert post_answer(client, token, answer).status_code == 201


def test_scores_are_corrected_and_reported_in_the_api_csv_and_page(api, researcher):
    campaign = span_campaign(lines=ai_lines(documents=5), ai_error_free_rate=0.5, perturbation_rate=0.0,
                             min_items=1, redundancy=2)
    campaign.owner = researcher
    campaign.save()
    judge_all(campaign)
    assert family_of(campaign).compute(campaign) is not None

    # by hand: per system, the item means (two judges), unsent AI-clean outputs imputed with the judged ones' mean
    scores: dict[tuple, list[float]] = {}
    for system, segment, score in Judgment.objects.filter(campaign=campaign, item__item_type="system").values_list(
            "item__output__system__name", "item__segment_id", "score"):
        scores.setdefault((system, segment), []).append(score)
    tutorial = HitItem.objects.filter(hit__campaign=campaign, item_type="tutorial").values("segment_id")
    expected, naive, not_sent, total = {}, {}, 0, 0
    for name in SYSTEMS:
        outputs = SystemOutput.objects.filter(campaign=campaign, system__name=name).exclude(segment_id__in=tutorial)
        flagged = [sum(v) / len(v) for (s, seg), v in scores.items() if s == name
                   and not outputs.filter(segment_id=seg, spans=[]).exists()]
        clean_judged = [sum(v) / len(v) for (s, seg), v in scores.items() if s == name
                        and outputs.filter(segment_id=seg, spans=[]).exists()]
        n_clean = outputs.filter(spans=[]).count()
        imputed = sum(clean_judged) / len(clean_judged) * n_clean if clean_judged else 0
        expected[name] = (sum(flagged) + imputed) / (len(flagged) + (n_clean if clean_judged else 0))
        naive[name] = (sum(flagged) + sum(clean_judged)) / (len(flagged) + len(clean_judged))
        not_sent += n_clean - len(clean_judged)
        total += outputs.count()
    assert not_sent > 0

    body = api.get(f"/api/campaigns/{campaign.slug}/systems/").json()["results"]
    rows = {r["system"]: r for r in body}
    for name in SYSTEMS:
        assert rows[name]["score"] == pytest.approx(expected[name], abs=1e-9)
        assert rows[name]["naive_score"] == pytest.approx(naive[name], abs=1e-9)
        assert rows[name]["score_low"] < rows[name]["score"] < rows[name]["score_high"]
    assert [r["system"] for r in body] == ["alpha", "beta", "gamma"]
    figures = {r["measure"]: r["value"] for r in
               api.get(f"/api/campaigns/{campaign.slug}/ai_assist/").json()["results"]}
    assert figures["not_sent"] == not_sent and figures["would_send"] == total
    assert figures["budget_saved"] == pytest.approx(not_sent / total)
    assert figures["kendall_tau_vs_naive"] == pytest.approx(1.0) and figures["ai_error_free_rate"] == 0.5
    significance = api.get(f"/api/campaigns/{campaign.slug}/significance/").json()["results"]
    assert {r["method"] for r in significance} == {"esa-ai-z"}

    browser = Client()
    browser.force_login(researcher)
    table = list(csv.DictReader(io.StringIO(browser.get(f"/results/{campaign.slug}/systems.csv").content
                                            .decode("utf-8-sig"))))
    assert float(table[0]["naive_score"]) == pytest.approx(naive[table[0]["system"]])
    saved = list(csv.reader(io.StringIO(browser.get(f"/results/{campaign.slug}/ai_assist.csv").content
                                        .decode("utf-8-sig"))))
    assert saved[0] == ["measure", "value"] and ["budget_saved", str(not_sent / total)] in saved
    page = browser.get(f"/results/{campaign.slug}/").content.decode()
    assert 'id="ai-assist-table"' in page and f"{round(100 * not_sent / total)}%" in page
    assert "Significance: paired z-test of the ESA^AI scores" in page


def hajek_by_hand(campaign, name: str, domain: str | None = None) -> float:
    """One system's post-stratified Hájek mean over its outputs (of one domain): judged items averaged over their
    judges; unsent AI-clean outputs imputed with the mean of the judged AI-clean ones."""
    outputs = SystemOutput.objects.filter(campaign=campaign, system__name=name).exclude(
        segment_id__in=HitItem.objects.filter(hit__campaign=campaign, item_type="tutorial").values("segment_id"))
    if domain is not None:
        outputs = outputs.filter(segment__document__domain=domain)
    judged: dict[int, list[float]] = {}
    for segment, score in Judgment.objects.filter(campaign=campaign, item__item_type="system", item__output__in=outputs
                                                  ).values_list("item__segment_id", "score"):
        judged.setdefault(segment, []).append(score)
    clean = set(outputs.filter(spans=[]).values_list("segment_id", flat=True))
    means = {seg: sum(v) / len(v) for seg, v in judged.items()}
    flagged = [m for seg, m in means.items() if seg not in clean]
    clean_judged = [m for seg, m in means.items() if seg in clean]
    n_clean = len(clean) if clean_judged else 0
    imputed = sum(clean_judged) / len(clean_judged) * n_clean if clean_judged else 0.0
    return (sum(flagged) + imputed) / (len(flagged) + n_clean)


@pytest.fixture
def two_domains(researcher):
    """An ESA^AI campaign (rate 0.5) of 30 segments in two domains, judged by two workers, results computed."""
    campaign = span_campaign(lines=ai_lines(documents=6, domains=("news", "speech")), ai_error_free_rate=0.5,
                             perturbation_rate=0.0, min_items=1, redundancy=2)
    campaign.owner = researcher
    campaign.save()
    judge_all(campaign)
    assert family_of(campaign).compute(campaign) is not None
    return campaign


def test_scores_per_domain_are_the_hajek_mean_within_the_domain(api, two_domains):
    campaign = two_domains
    domains = {(r["system"], r["domain"]): r["score"] for r in
               api.get(f"/api/campaigns/{campaign.slug}/domains/").json()["results"]}
    systems = {r["system"]: r["score"] for r in api.get(f"/api/campaigns/{campaign.slug}/systems/").json()["results"]}
    for name in SYSTEMS:
        for domain in ("news", "speech"):
            assert domains[(name, domain)] == pytest.approx(hajek_by_hand(campaign, name, domain), abs=1e-9)
        # WMT24's macro average: the system score is the mean of its domains' Hájek means
        assert systems[name] == pytest.approx((domains[(name, "news")] + domains[(name, "speech")]) / 2, abs=1e-9)


def test_the_stability_bootstrap_scores_with_the_corrected_estimator(api, two_domains):
    from evaluation.families.error_spans.stability import stability_data
    from evaluation.stats import stability as core

    campaign = two_domains
    stored = {r["system"]: r for r in api.get(f"/api/campaigns/{campaign.slug}/systems/").json()["results"]}
    last = Judgment.objects.filter(campaign=campaign).order_by("-pk").values_list("pk", flat=True).first()
    data = stability_data(campaign, "all", "z", last)
    assert data.strata is not None and data.n_segments == 30  # every non-tutorial segment is drawn, judged or not
    observed, _, _ = core.weighted_scores(data, np.ones((1, data.n_workers)), np.ones((1, data.n_segments)))
    for k, name in enumerate(data.systems):  # the bootstrap's full-data scores are the stored corrected ones
        assert observed[0, k] == pytest.approx(stored[name]["score"], abs=1e-9)
        if stored[name]["ai_clean"] > stored[name]["ai_clean_judged"]:  # not the naive mean the core gave before
            assert observed[0, k] != pytest.approx(stored[name]["naive_score"], abs=1e-6)
