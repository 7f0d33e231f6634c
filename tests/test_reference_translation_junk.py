"""Crowd reference translation against "identical junk" (issue 23): a translation that copies its source is refused
with a 400; the same text typed for every sentence, or a source copy kept from older data, is marked per translation
and per translator in the results; BLEU is served as sacrebleu prints it (2 decimals), never 100.00000000000004."""
import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from annotation.models import Campaign, Judgment
from evaluation.families import family_of
from evaluation.services.results_read import stored_rows
from evaluation.stats import crowd_translation as ct

from .conftest import post_answer
from .test_reference_translation import BACKGROUND, TRUE, enter, rt_campaign

pytestmark = pytest.mark.django_db


def test_junk_flags_and_printed_bleu_in_the_core():
    rows = [("a", 1, "same junk", "Quelle 1"), ("a", 2, " same   junk ", "Quelle 2"), ("a", 3, "Quelle 3", "Quelle 3"),
            ("b", 1, "same junk", "Quelle 1"), ("b", 2, "other", "Quelle 2")]
    assert [(f.repeated, f.source_copy) for f in ct.junk_flags(rows)] == [
        (True, False), (True, False), (False, True), (False, False), (False, False)]
    # one sentence translated twice with the same source is not a repeat
    assert not any(f.repeated for f in ct.junk_flags([("a", 1, "x", "s"), ("a", 2, "x", "s")]))
    raw = ct.corpus_bleu(["the cat sat on the mat today"], [["the cat sat on the mat today"]])
    assert raw != 100.0 and ct.printed(raw) == 100.0  # sacrebleu's float noise, printed as sacrebleu prints it
    assert ct.printed(12.3456) == 12.35 and ct.printed(float("nan")) is None


def test_a_source_copy_is_refused_with_a_clear_400():
    campaign = rt_campaign()
    client, token = enter(campaign, "copier")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    n = len(item["source"])
    body = {"item": item["id"], "translations": [f"  {s}  " for s in item["source"]], "pasted": [False] * n,
            "background": BACKGROUND}
    response = post_answer(client, token, body)
    assert response.status_code == 400, response.content
    assert "translation 1 is the source sentence itself" in response.json()["error"]
    assert not Judgment.objects.filter(campaign=campaign).exists()
    body["translations"] = [TRUE[s] for s in item["source"]]
    assert post_answer(client, token, body).status_code == 201


def translate(campaign, worker, text_of):
    client, token = enter(campaign, worker)
    while not (state := client.get(f"/api/hit/{token}/").json()).get("done"):
        item = state["item"]
        body = {"item": item["id"], "translations": [text_of(s) for s in item["source"]],
                "pasted": [False] * len(item["source"])}
        if item["ask_background"]:
            body["background"] = BACKGROUND
        assert post_answer(client, token, body).status_code == 201


def test_repeated_junk_is_marked_and_bleu_is_rounded_in_api_and_csv():
    campaign = rt_campaign()
    translate(campaign, "exact-1", lambda s: TRUE[s])
    translate(campaign, "exact-2", lambda s: TRUE[s])
    translate(campaign, "junk", lambda s: "asdf qwer zxcv")
    # a source copy stored before the refusal existed
    judgment = Judgment.objects.filter(campaign=campaign, annotator__external_id="exact-2").first()
    judgment.answer["translations"][0] = judgment.item.segment.source
    Judgment.objects.filter(pk=judgment.pk).update(answer=judgment.answer)
    family_of(campaign).compute(campaign)
    rows = {r["system"]: r for r in stored_rows(campaign, "systems")}
    assert rows["junk"]["repeated_share"] == 1.0 and rows["junk"]["junk"] is True
    assert rows["exact-1"]["repeated_share"] == 0.0 and rows["exact-1"]["junk"] is False
    assert rows["exact-2"]["source_copy_share"] == pytest.approx(1 / 18) and rows["exact-2"]["junk"] is True
    assert rows["exact-1"]["bleu_vs_professional"] == 100.0  # not 100.00000000000004
    assert all(r["score"] == round(r["score"], 2) for r in rows.values())
    marked = [t for t in stored_rows(campaign, "translations") if t["translator"] == "junk"]
    assert len(marked) == 18 and all(t["repeated"] and not t["source_copy"] for t in marked)
    user = get_user_model().objects.create_user("rt-owner", password="pw", is_staff=True)
    Campaign.objects.filter(pk=campaign.pk).update(owner=user)
    api = APIClient()
    api.force_authenticate(user)
    answer = {r["system"]: r for r in api.get(f"/api/campaigns/{campaign.slug}/translators/").json()["results"]}
    assert answer["exact-1"]["bleu_vs_professional"] == 100.0 and answer["junk"]["junk"] is True
    api.force_login(user)
    csv = api.get(f"/results/{campaign.slug}/translators.csv")
    text = b"".join(csv.streaming_content if csv.streaming else [csv.content]).decode()
    assert "100.00000000000004" not in text and "repeated_share" in text
    html = api.get(f"/results/{campaign.slug}/").content.decode()
    assert "Source copies" in html and "100 %" in html
