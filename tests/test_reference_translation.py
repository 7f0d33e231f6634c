"""Crowd reference translations (docs/methods.md §9; Callison-Burch 2009 §5.1) run by simulated workers through the
annotator API: honest translators paraphrase a hidden true translation with small variations, pasters send a
system's output with pasted=true; the detect-MT stage builds itself from the finished translations, never hands a
translator their own translations, and its judges (who recognise machine output by a marker built into the
fixture, with some noise) flag the pasters, who are excluded; leave-one-out BLEU orders the translators (honest
ones by how much they vary, pasters last) and the accepted translations are the honest ones."""
import json
import random

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

import annotation.protocols.reference_translation  # noqa: F401  (registers the protocols)
import evaluation.families.reference_translation  # noqa: F401  (registers the family)
from annotation.models import Campaign, HitItem, Judgment
from annotation.protocols import get_protocol
from annotation.services import stages
from annotation.services.campaign_import import CampaignFileError, import_campaign
from evaluation.families import family_of
from evaluation.models import CampaignResults
from evaluation.services.results_read import stored_rows

from .conftest import post_answer

pytestmark = pytest.mark.django_db

WORDS = ("the river council market museum school library street bridge budget town night rain shop painting "
         "parent evening spring traffic debate collection window garden station harbour").split()
BACKGROUND = {"native_language": "English", "target_language_years": 30, "country": "Ireland"}


def truth(d: int, s: int) -> str:
    rng = random.Random(f"{d}:{s}")
    return " ".join(rng.choice(WORDS) for _ in range(14))


def machine(text: str, share: float, seed: str) -> str:
    """A system's output: the true translation with some words wrong, written in capitals (the marker by which the
    simulated detect judges recognise machine translation)."""
    rng = random.Random(seed)
    return " ".join(w.upper() if rng.random() < share else w for w in text.split())


SYSTEMS = {"mt-a": 0.5, "mt-b": 0.6}
DOCS, SENTENCES = 3, 6


def lines():
    return [json.dumps({"doc_id": f"d{d}", "seg_id": s + 1, "source": f"Quelle {d}.{s}", "reference": truth(d, s),
                        "systems": {name: machine(truth(d, s), share, f"{name}{d}{s}")
                                    for name, share in SYSTEMS.items()}})
            for d in range(DOCS) for s in range(SENTENCES)]


def rt_campaign(**raw):
    parsed = get_protocol("reference-translation").parse_options({
        "seed": 3, "screens_per_hit": 3, "detectors": 3, "detect_items_per_hit": 6, **raw})
    return import_campaign([(line + "\n").encode() for line in lines()], name="Crowd references",
                           protocol="reference-translation", parsed=parsed).campaign


#: Each worker's browser: a worker id is held by the browser it is used in (docs/api.md §8.1).
BROWSERS: dict[str, Client] = {}


def enter(campaign, worker):
    client = BROWSERS.setdefault(worker, Client())
    response = client.get(f"/c/{campaign.slug}/start/", {"worker_id": worker})
    if response.status_code != 302:
        return None, None
    return client, response.url.rstrip("/").split("/")[-1]


TRUE = {f"Quelle {d}.{s}": truth(d, s) for d in range(DOCS) for s in range(SENTENCES)}
MT = {json.loads(line)["source"]: json.loads(line)["systems"] for line in lines()}
#: Honest translators and how many of their words differ from the true translation; pasters and what they paste.
HONEST = {"h-close": 0.03, "h-mid": 0.12, "h-loose": 0.25}
PASTERS = {"p-a": "mt-a", "p-b": "mt-b"}


def honest(text: str, variation: float, rng: random.Random) -> str:
    return " ".join(f"{w}ish" if rng.random() < variation else w for w in text.split())


def translate_all(campaign, workers, refusals=False):
    for worker in workers:
        rng = random.Random(worker)
        while True:
            client, token = enter(campaign, worker)
            if client is None:
                break
            while not (state := client.get(f"/api/hit/{token}/").json()).get("done"):
                item = state["item"]
                assert set(item) == {"id", "protocol", "source", "ask_background"}  # no MT, no reference
                if worker in PASTERS:
                    texts = [MT[s][PASTERS[worker]] for s in item["source"]]
                    pasted = [True] * len(texts)
                else:
                    texts = [honest(TRUE[s], HONEST[worker], rng) for s in item["source"]]
                    pasted = [False] * len(texts)
                body = {"item": item["id"], "translations": texts, "pasted": pasted}
                if item["ask_background"]:
                    if refusals:
                        refused = post_answer(client, token, body)
                        assert refused.status_code == 400 and "'background' is missing" in refused.json()["error"]
                    body["background"] = {**BACKGROUND, "native_language": f"lang-{worker}"}
                elif refusals:
                    refused = post_answer(client, token, {**body, "background": BACKGROUND})
                    assert refused.status_code == 400 and "first screen" in refused.json()["error"]
                response = post_answer(client, token, body)
                assert response.status_code == 201, response.content


def detect_all(stage, workers, noise=0.1):
    rng = random.Random(11)
    judged = {}
    for worker in workers:
        while True:
            client, token = enter(stage, worker)
            if client is None:
                break
            while not (state := client.get(f"/api/hit/{token}/").json()).get("done"):
                item = state["item"]
                assert set(item) == {"id", "protocol", "source", "candidates"}
                assert all(set(c) == {"key", "text"} for c in item["candidates"])
                marked = [c["key"] for c in item["candidates"]
                          if (any(w.isupper() for w in c["text"].split())) != (rng.random() < noise)]
                assert post_answer(client, token, {"item": item["id"], "machine": marked}).status_code == 201
                judged[worker] = judged.get(worker, 0) + 1
    return judged


def test_a_reference_translation_task_from_translations_to_accepted_references(django_capture_on_commit_callbacks):
    campaign = rt_campaign()
    stage = Campaign.objects.get(stage_input=campaign)
    assert campaign.redundancy == 5  # five translators per sentence by default
    assert (stage.protocol, stage.stage_name, stage.redundancy, stage.hit_size) == \
        ("reference-translation-detect", "detect-mt", 3, 6)
    assert not stage.hits.exists()
    translators = [*HONEST, *PASTERS]
    with django_capture_on_commit_callbacks(execute=True):
        translate_all(campaign, translators, refusals=True)
    # the detect stage built itself: one item per sentence, its 5 translations and 2 system outputs shuffled
    items = list(HitItem.objects.filter(hit__campaign=stage))
    assert len(items) == DOCS * SENTENCES and stage.hits.count() == 3
    assert all(len(i.payload["candidates"]) == 5 + len(SYSTEMS) for i in items)
    assert stages.build_stages(campaign) == {stage.slug: 0}  # each HIT built once
    # pasting and copies of the systems' outputs are recorded with the answers
    for answer, worker in Judgment.objects.filter(campaign=campaign).values_list("answer", "annotator__external_id"):
        assert answer["pasted"] == [worker in PASTERS] * len(answer["translations"])
        assert answer["mt_copy"] == [PASTERS.get(worker)] * len(answer["translations"])
    # a translator never gets a detect HIT holding their own translations (here: every HIT holds them)
    assert enter(stage, "h-close") == (None, None)
    judged = detect_all(stage, ["d1", "d2", "d3", "d4"])
    assert sum(judged.values()) == 3 * DOCS * SENTENCES
    family_of(stage).compute(stage)  # the detect stage computes its task's results
    # the page's "over N judgments" counts every stage's judgments the results read (it counted the translations
    # only; found in the Chromium walk)
    assert CampaignResults.objects.get(campaign=campaign).judgments == \
        Judgment.objects.filter(campaign__in=[campaign, stage]).count()
    rows = {r["system"]: r for r in stored_rows(campaign, "systems")}
    assert set(rows) == set(translators)
    assert {t for t, r in rows.items() if r["excluded"]} == set(PASTERS)
    assert all(rows[t]["flagged_share"] >= 0.3 for t in PASTERS)
    assert all(rows[t]["flagged_share"] < 0.3 for t in HONEST)
    assert all(rows[t]["pasted_share"] == 1.0 and rows[t]["mt_copy_share"] == 1.0 for t in PASTERS)
    assert all(rows[t]["pasted_share"] == 0.0 for t in HONEST)
    ranked = [r["system"] for r in stored_rows(campaign, "systems")]
    assert ranked[:3] == ["h-close", "h-mid", "h-loose"] and set(ranked[3:]) == set(PASTERS)
    assert [rows[t]["rank"] for t in ranked[:3]] == [1, 2, 3]
    assert all(r["score_name"] == "bleu" and r["rank_range"] == [r["rank"], r["rank"]] for r in rows.values())
    assert all(r["n"] == DOCS * SENTENCES for r in rows.values())
    professional = [rows[t]["bleu_vs_professional"] for t in HONEST]
    assert professional == sorted(professional, reverse=True) and professional[0] > 70
    assert rows["h-mid"]["native_language"] == "lang-h-mid" and rows["h-mid"]["country"] == "Ireland"
    accepted = stored_rows(campaign, "accepted")
    assert len(accepted) == len(HONEST) * DOCS * SENTENCES
    assert {a["translator"] for a in accepted} == set(HONEST)
    assert set(accepted[0]) == {"doc_id", "seg_id", "translator", "translation"}
    mt = {r["system"]: r for r in stored_rows(campaign, "mt")}
    assert set(mt) == set(SYSTEMS) and all(r["share_marked"] > 0.7 for r in mt.values())
    # the API's endpoints answer for either stage
    family = family_of(campaign)
    assert family.translators(stage, {})["results"] == family.systems(campaign, {})["results"]
    assert family.accepted(campaign, {})["results"] == accepted
    columns, table = dict((t.name, t) for t in family.tables())["accepted"].rows(campaign, {})
    assert columns == ["doc_id", "seg_id", "translator", "translation"] and len(table) == len(accepted)
    # the results page, its CSV and the API
    user = get_user_model().objects.create_user("owner", password="pw", is_staff=True)
    Campaign.objects.filter(pk__in=[campaign.pk, stage.pk]).update(owner=user)
    client = Client()
    client.force_login(user)
    html = client.get(f"/results/{campaign.slug}/").content.decode()
    assert "Accepted translations" in html and "h-close" in html and "excluded" in html
    csv = client.get(f"/results/{campaign.slug}/accepted.csv")
    assert csv.status_code == 200 and b"doc_id,seg_id,translator,translation" in b"".join(csv.streaming_content
                                                                                        if csv.streaming else
                                                                                        [csv.content])
    api = APIClient()
    api.force_authenticate(user)
    for endpoint in ("translators", "accepted", "translations", "mt", "stages", "systems"):
        response = api.get(f"/api/campaigns/{campaign.slug}/{endpoint}/")
        assert response.status_code == 200, (endpoint, response.content)
    assert api.get(f"/api/campaigns/{stage.slug}/accepted/").json()["results"] == accepted


def test_stage_campaigns_cannot_be_imported_on_their_own():
    with pytest.raises(CampaignFileError) as refused:
        import_campaign([(line + "\n").encode() for line in lines()], name="x",
                        protocol="reference-translation-detect")
    assert "is a later stage" in str(refused.value.errors)


def test_malformed_translations_are_refused():
    campaign = rt_campaign()
    client, token = enter(campaign, "w")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    n = len(item["source"])
    good = ["a translation"] * n
    for body, message in (
            ({"translations": [""] * n, "pasted": [False] * n, "background": BACKGROUND}, "translation 1 is empty"),
            ({"translations": good[:-1], "pasted": [False] * (n - 1), "background": BACKGROUND}, "the screen shows"),
            ({"translations": "text", "pasted": [False]}, "must be a list"),
            ({"translations": good, "pasted": [False] * (n - 1)}, "one per translation"),
            ({"translations": good, "pasted": ["no"] * n}, "one per translation"),
            ({"translations": good, "pasted": [False] * n, "background": {**BACKGROUND, "country": ""}},
             "background 'country'"),
            ({"translations": good, "pasted": [False] * n,
              "background": {**BACKGROUND, "target_language_years": -1}}, "from 0 to 100"),
            ({"translations": good, "pasted": [False] * n, "background": {**BACKGROUND, "age": 3}},
             "unexpected background field"),
            ({"translations": good, "pasted": [False] * n, "extra": 1}, "unexpected field 'extra'")):
        response = post_answer(client, token, {"item": item["id"], **body})
        assert response.status_code == 400 and message in response.json()["error"], (message, response.content)
    assert not Judgment.objects.filter(campaign=campaign).exists()
    response = post_answer(client, token, {"item": item["id"], "translations": [f"  spaced   text {k} " for k in
                                                                               range(n)],
                                           "pasted": [True] + [False] * (n - 1), "background": BACKGROUND})
    assert response.status_code == 201
    answer = Judgment.objects.get(campaign=campaign).answer
    assert answer["translations"][0] == "spaced text 0" and answer["pasted"][0] is True
    assert answer["background"] == BACKGROUND and answer["mt_copy"] == [None] * n


def test_malformed_detect_answers_are_refused(django_capture_on_commit_callbacks):
    campaign = rt_campaign()
    stage = Campaign.objects.get(stage_input=campaign)
    with django_capture_on_commit_callbacks(execute=True):
        translate_all(campaign, [*HONEST, *PASTERS])
    client, token = enter(stage, "judge")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    keys = [c["key"] for c in item["candidates"]]
    for machine, message in (("c1", "must be a list"), ([keys[0], keys[0]], "twice"),
                             (["zz"], "not a candidate of this screen"), ([1], "must be a list")):
        response = post_answer(client, token, {"item": item["id"], "machine": machine})
        assert response.status_code == 400 and message in response.json()["error"], response.content
    assert post_answer(client, token, {"item": item["id"], "machine": []}).status_code == 201
    assert Judgment.objects.get(campaign=stage).answer == {"machine": []}


def test_before_the_detect_stage_the_translators_note_has_no_hole(admin_client):
    """Translations only: the note says no detect-MT judgment is in yet, instead of "the judges marked – of the real
    machine translations" (found in the Chromium walk)."""
    campaign = rt_campaign()
    translate_all(campaign, list(HONEST))
    family_of(campaign).compute(campaign)
    html = admin_client.get(f"/results/{campaign.slug}/").content.decode()
    assert "marked – of" not in html and "no detect-MT judgment yet" in html
