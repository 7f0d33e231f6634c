"""MQM side by side, `mqm-sxs` (docs/methods.md#side-by-side, docs/api.md): the planner's groups and recorded column
order, the answer with its consistency hints (each malformed part a 400 that stores nothing), and the results
by hand: MQM scores per system, win rates per screen, the share of identical words marked alike with and without
the hint, agreement between two judges; the page, the CSV and the MQM TSV and JSON exports."""
import json
import random

import pytest
from django.test import Client

from annotation.models import HitItem, Judgment
from annotation.protocols import get_protocol
from annotation.protocols.error_spans.sxs_planner import system_groups
from annotation.protocols.options import OptionError
from annotation.services.campaign_import import CampaignFileError, import_campaign
from evaluation.families import family_of
from evaluation.services.results_read import stored_rows

from .conftest import post_answer, start

pytestmark = pytest.mark.django_db

SEGMENTS = [
    ("Das Museum öffnet am Samstag seine Türen.",
     {"alpha": "The museum opens its doors on Saturday.", "beta": "The museum opens its gates on Saturday.",
      "gamma": "A museum reopens on Saturday."}),
    ("Der Eintritt ist frei.",
     {"alpha": "Entry is free.", "beta": "Admission costs nothing.", "gamma": "Entry is free."}),
]


def sxs_lines(documents=1):
    return [json.dumps({"doc_id": f"museum-{d}", "seg_id": n, "source": source, "systems": systems},
                       ensure_ascii=False) for d in range(documents) for n, (source, systems) in enumerate(SEGMENTS, 1)]


def sxs_campaign(lines=None, owner=None, **raw):
    options = {"segments_per_hit": 10, "seed": 5, "source_language": "de", "target_language": "en",
               "perturbation_rate": 0.0, "sxs_columns": 3, "min_items": 1, **raw}
    parsed = get_protocol("mqm-sxs").parse_options(options)
    data = [(line + "\n").encode() for line in (lines or sxs_lines())]
    return import_campaign(data, name="SxS test", protocol="mqm-sxs", parsed=parsed, owner=owner).campaign


def span(text, words, severity, category):
    start = text.index(words)
    return {"start": start, "end": start + len(words), "severity": severity, "category": category}


#: The spans each system's column gets, per segment (hand-computed results below).
MARKS = {
    1: {"alpha": [("museum", "minor", "Style"), ("doors", "minor", "Terminology")],
        "beta": [("museum", "minor", "Style")],
        "gamma": [("Saturday", "major", "Accuracy/Mistranslation")]},
    2: {"alpha": [], "beta": [("Admission", "major", "Accuracy/Mistranslation")], "gamma": []},
}


def answer(item, stored, hints=True) -> dict:
    """The MARKS as an answer, and on segment 1 two hints: alpha's "museum" unmarked in gamma (left alone) and
    gamma's "Saturday" unmarked in alpha (dismissed)."""
    seg = stored.segment.seg_id
    by_name = {c["name"]: c for c in stored.payload["candidates"]}
    candidates = {c["key"]: {"spans": [span(c["text"], *m) for m in MARKS[seg][by_name_of(stored, c)]]}
                  for c in item["candidates"]}
    body = {"candidates": candidates}
    if hints and seg == 1:
        alpha, gamma = by_name["alpha"]["key"], by_name["gamma"]["key"]
        text = {c["key"]: c["text"] for c in item["candidates"]}
        at_gamma, at_alpha = text[gamma].index("museum"), text[alpha].index("Saturday")
        body["hints"] = [
            {"from": alpha, "column": gamma, "text": "museum", "start": at_gamma, "end": at_gamma + 6, "shown": 3.5,
             "action": "none"},
            {"from": gamma, "column": alpha, "text": "Saturday", "start": at_alpha, "end": at_alpha + 8,
             "shown": 7.0, "action": "dismissed"}]
    return body


def by_name_of(stored, candidate) -> str:
    return next(c["name"] for c in stored.payload["candidates"] if c["key"] == candidate["key"])


def judge(campaign, worker, hints=True):
    client = Client()
    token = start(client, campaign, worker)
    while not (state := client.get(f"/api/hit/{token}/").json()).get("done"):
        stored = HitItem.objects.select_related("segment").get(pk=state["item"]["id"])
        response = post_answer(client, token, {"item": stored.pk, **answer(state["item"], stored, hints)})
        assert response.status_code == 201, response.content


def test_the_planner_groups_systems_per_document_in_a_recorded_random_order():
    rng = random.Random(1)
    for n_systems, columns in ((3, 2), (5, 2), (4, 3), (3, 8)):
        groups = system_groups(n_systems, columns, rng)
        assert all(len(g) == min(columns, n_systems) and len(set(g)) == len(g) for g in groups)
        assert set().union(*groups) == set(range(n_systems))
    campaign = sxs_campaign(lines=sxs_lines(documents=4), sxs_columns=2)
    items = list(HitItem.objects.filter(hit__campaign=campaign).order_by("hit__number", "position"))
    assert {i.item_type for i in items} == {"system"} and all(i.output_id is None for i in items)
    orders = {}
    for item in items:
        names = [c["name"] for c in item.payload["candidates"]]
        assert len(names) == 2 and len(set(names)) == 2
        assert all(c["kind"] == "system" and names[n] == c["name"] for n, c in enumerate(item.payload["candidates"]))
        orders.setdefault(item.segment.document.doc_id, set()).update(names)
    assert all(shown == {"alpha", "beta", "gamma"} for shown in orders.values())  # every system in every document
    again = sxs_campaign(lines=sxs_lines(documents=4), sxs_columns=2)  # the same seed: the same plan
    plan = [(i.segment.seg_id, [c["name"] for c in i.payload["candidates"]]) for i in items]
    assert plan == [(i.segment.seg_id, [c["name"] for c in i.payload["candidates"]]) for i in
                    HitItem.objects.filter(hit__campaign=again).order_by("hit__number", "position")]
    assert len({tuple(names) for _, names in plan}) > 1  # the column order varies
    for bad in (1, 9):
        with pytest.raises(OptionError):
            get_protocol("mqm-sxs").parse_options({"sxs_columns": bad})
    alone = [json.dumps({**json.loads(line), "systems": {"alpha": "Only one."}}) for line in sxs_lines()]
    with pytest.raises(CampaignFileError, match="at least two systems"):
        sxs_campaign(lines=alone)


def test_every_malformed_answer_is_a_400_and_stores_nothing():
    campaign = sxs_campaign()
    client = Client()
    token = start(client, campaign, "w1")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    assert item["categories"] and item["severities"] == ["minor", "major"] and "score" not in json.dumps(item)
    text = {c["key"]: c["text"] for c in item["candidates"]}
    keys = list(text)
    museum = {k: (text[k].index("museum"), text[k].index("museum") + 6) for k in keys}
    ok = {"from": keys[0], "column": keys[1], "text": "museum", "start": museum[keys[1]][0],
          "end": museum[keys[1]][1], "shown": 1.0, "action": "none"}
    marked = {k: {"spans": [{"start": museum[k][0], "end": museum[k][1], "severity": "minor", "category": "Style"}]
                  if k == keys[0] else []} for k in keys}
    cases = {
        "a column missing": ({"candidates": {keys[0]: {"spans": []}}}, "missing"),
        "a score": ({"candidates": {k: {"spans": [], "score": 5} for k in keys}}, "must be"),
        "no category": ({"candidates": {k: {"spans": [{"start": 0, "end": 3, "severity": "minor"}]} for k in keys}},
                        "category"),
        "hints not a list": ({"candidates": marked, "hints": {}}, "'hints'"),
        "a hint's fields": ({"candidates": marked, "hints": [{**ok, "extra": 1}]}, "exactly"),
        "an unknown column": ({"candidates": marked, "hints": [{**ok, "column": "nope"}]}, "unknown candidate"),
        "the same column": ({"candidates": marked, "hints": [{**ok, "column": keys[0], "start": museum[keys[0]][0],
                                                             "end": museum[keys[0]][1]}]}, "two different"),
        "other words there": ({"candidates": marked, "hints": [{**ok, "start": 0, "end": 6}]}, "is not 'museum'"),
        "a negative time": ({"candidates": marked, "hints": [{**ok, "shown": -1}]}, "'shown'"),
        "an unknown action": ({"candidates": marked, "hints": [{**ok, "action": "ignored"}]}, "'action'"),
        "marked, but not": ({"candidates": marked, "hints": [{**ok, "action": "marked"}]}, "unmarked"),
        "twice": ({"candidates": marked, "hints": [ok, ok]}, "twice"),
    }
    covered = {k: {"spans": [{"start": museum[k][0], "end": museum[k][1], "severity": "minor", "category": "Style"}]
                   if k in keys[:2] else []} for k in keys}
    cases["none, but marked"] = ({"candidates": covered, "hints": [ok]}, "marked in that column")
    for name, (body, reason) in cases.items():
        response = post_answer(client, token, {"item": item["id"], **body})
        assert response.status_code == 400, name
        assert reason in response.json()["error"], (name, response.json())
    assert not Judgment.objects.filter(campaign=campaign).exists()
    response = post_answer(client, token, {"item": item["id"], "candidates": covered,
                                           "hints": [{**ok, "action": "marked"}]})
    assert response.status_code == 201, response.content
    judgment = Judgment.objects.get(campaign=campaign)
    assert judgment.answer == {"hints": [{**ok, "action": "marked"}]} and judgment.scores == {}
    assert [s["candidate"] for s in judgment.spans] == keys[:2]


def test_results_by_hand_win_rates_consistency_and_agreement(api, researcher):
    """Two judges mark the same MARKS; only w1 was shown hints. Per screen (MQM = −penalty): segment 1 alpha −2,
    beta −1, gamma −5; segment 2 alpha 0, beta −5, gamma 0. Identical words with a mark on segment 1: museum in
    alpha–beta (both minor: alike), alpha–gamma, beta–gamma; Saturday in gamma–alpha, gamma–beta: 5 pairs per
    judge, 1 alike. w1's hints cover alpha–gamma museum and gamma–alpha Saturday."""
    campaign = sxs_campaign(owner=researcher, redundancy=2)
    judge(campaign, "w1")
    judge(campaign, "w2", hints=False)
    family_of(campaign).compute(campaign)
    scores = {r["system"]: r["score"] for r in stored_rows(campaign, "systems")}
    assert scores == pytest.approx({"alpha": -1.0, "beta": -3.0, "gamma": -2.5})
    rates = {(r["system"], r["opponent"]): (r["wins"], r["ties"], r["losses"], r["n"], r["win_rate"])
             for r in api.get(f"/api/campaigns/{campaign.slug}/win_rates/").json()["results"]}
    assert rates[("alpha", "beta")] == (2, 0, 2, 4, 0.5)
    assert rates[("alpha", "gamma")] == (2, 2, 0, 4, 0.5)
    assert rates[("gamma", "alpha")] == (0, 2, 2, 4, 0.0)
    assert rates[("beta", "gamma")] == (2, 0, 2, 4, 0.5)
    shares = {r["hint"]: r for r in api.get(f"/api/campaigns/{campaign.slug}/consistency/").json()["results"]}
    assert (shares["all pairs"]["pairs"], shares["all pairs"]["alike"]) == (10, 2)
    assert shares["all pairs"]["share_alike"] == pytest.approx(0.2)
    assert (shares["hint shown"]["pairs"], shares["hint shown"]["alike"]) == (2, 0)
    assert (shares["no hint shown"]["pairs"], shares["no hint shown"]["alike"]) == (8, 2)
    assert shares["no hint shown"]["share_alike"] == pytest.approx(0.25)
    agreement = {r["measure"]: r for r in stored_rows(campaign, "agreement")}
    assert agreement["span F1 (characters)"]["value"] == pytest.approx(1.0)
    assert agreement["span F1 (characters)"]["n"] > 0
    # the page's section and the CSV download
    page = Client()
    page.force_login(researcher)
    html = page.get(f"/results/{campaign.slug}/").content.decode()
    assert 'id="side-by-side"' in html and "hint shown" in html
    download = page.get(f"/results/{campaign.slug}/win_rates.csv")
    csv = (b"".join(download.streaming_content) if download.streaming else download.content).decode()
    assert csv.splitlines()[0].startswith("system,opponent,wins,ties,losses,n,win_rate")


def test_one_document_every_judge_shows_each_column_of_the_side_by_side_screens(api, researcher):
    """Side-by-side items have no output of their own: the document view finds the system's column by its
    candidate key and shows that column's text and spans (it used to say "No judgments of this document")."""
    campaign = sxs_campaign(owner=researcher, redundancy=2)
    judge(campaign, "w1")
    judge(campaign, "w2", hints=False)
    family_of(campaign).compute(campaign)
    view = api.get(f"/api/campaigns/{campaign.slug}/document/", {"document": "museum-0", "system": "gamma"}).json()
    assert [(s["seg_id"], s["target"], len(s["judges"])) for s in view["segments"]] == [
        (1, "A museum reopens on Saturday.", 2), (2, "Entry is free.", 2)]
    first = view["segments"][0]
    assert all([(s["start"], s["end"], s["severity"]) for s in j["spans"]] == [(20, 28, "major")]
               for j in first["judges"])
    assert first["score"] == pytest.approx(-5.0) and view["segments"][1]["score"] == pytest.approx(0.0)
    page = Client()
    page.force_login(researcher)
    html = page.get(f"/results/{campaign.slug}/", {"document": "museum-0", "system": "beta"}).content.decode()
    section = html[html.index('id="document"'):]
    assert "No judgments of this document" not in section
    assert section.count('class="doc-judge"') == 4 and '<mark class="span-major"' in section
    assert "Admission</mark>" in section


def test_the_judgment_export_in_mqm_tsv_and_json(api, researcher):
    campaign = sxs_campaign(owner=researcher)
    judge(campaign, "w1")
    response = api.get(f"/api/campaigns/{campaign.slug}/judgments/", {"format": "mqm-tsv"})
    assert response.status_code == 200, response.content
    rows = [line.split("\t") for line in b"".join(response.streaming_content).decode().splitlines()]
    assert rows[0][:5] == ["system", "doc", "doc_id", "seg_id", "rater"]
    errors = sorted((r[0], r[3], r[6], r[7], r[8]) for r in rows[1:])
    assert errors == sorted([
        ("alpha", "1", "The <v>museum</v> opens its doors on Saturday.", "Style", "minor"),
        ("alpha", "1", "The museum opens its <v>doors</v> on Saturday.", "Terminology", "minor"),
        ("beta", "1", "The <v>museum</v> opens its gates on Saturday.", "Style", "minor"),
        ("gamma", "1", "A museum reopens on <v>Saturday</v>.", "Accuracy/Mistranslation", "major"),
        ("alpha", "2", "Entry is free.", "No-error", "No-error"),
        ("beta", "2", "<v>Admission</v> costs nothing.", "Accuracy/Mistranslation", "major"),
        ("gamma", "2", "Entry is free.", "No-error", "No-error")])
    exported = api.get(f"/api/campaigns/{campaign.slug}/judgments/", {"format": "json"})
    body = json.loads(b"".join(exported.streaming_content))
    first = next(r for r in body if r["seg_id"] == 1)
    assert sorted(first["columns"].values()) == ["alpha", "beta", "gamma"]
    assert [h["action"] for h in first["answer"]["hints"]] == ["none", "dismissed"]
    assert {first["columns"][s["candidate"]] for s in first["spans"]} == {"alpha", "beta", "gamma"}


def test_the_live_gate_reads_the_degraded_columns_penalties():
    """MQM side by side has no scores: the gate compares minus the MQM penalty of the degraded column with its
    original's (it used to read the missing scores, found no pairs and never stopped anyone)."""
    from evaluation.families.error_spans.gate import gate

    campaign = sxs_campaign(lines=sxs_lines(documents=4), perturbation_rate=0.5, gate=True, gate_rule="missed",
                            gate_min_pairs=2, redundancy=2)
    for worker, careful in (("careless", False), ("careful", True)):
        client = Client()
        token = start(client, campaign, worker)
        while not (state := client.get(f"/api/hit/{token}/").json()).get("done"):
            stored = HitItem.objects.get(pk=state["item"]["id"])
            bad = {c["key"] for c in stored.payload["candidates"] if c["kind"] == "bad"}
            omission = {"severity": "major", "category": "Accuracy/Omission"}
            candidates = {c["key"]: {"spans": [{"start": len(c["text"]), "end": len(c["text"]), **omission}]
                                     if careful and c["key"] in bad else []} for c in state["item"]["candidates"]}
            response = post_answer(client, token, {"item": stored.pk, "candidates": candidates})
            assert response.status_code == 201, response.content
        annotator = Judgment.objects.filter(campaign=campaign, annotator__external_id=worker).first().annotator
        verdict = gate(campaign, annotator)
        if careful:
            assert verdict is None
        else:
            assert verdict is not None and verdict.pairs == 4 and "missed 4 of 4" in verdict.reason
