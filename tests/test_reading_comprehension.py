"""Reading comprehension (docs/methods.md §9; Callison-Burch 2009 §5.3) run by simulated workers through the
annotator API: writers write three questions per article from its human translation, voters keep the good ones
and drop a redundant paraphrase and a yes/no question, answerers read one translation of an article each (MT
systems that keep a known share of the facts the questions ask about, and the human translation as a control)
and graders compare the answers with the sample answers. The scores order the systems as built, the human
control on top; no worker ever reads two translations of one article, even when their requests race."""
import json
import re
import threading

import pytest
from django.db import connection
from django.test import Client

from annotation.models import Assignment, Campaign, Hit, HitItem, Judgment, StageExposure
from annotation.protocols import get_protocol
from annotation.protocols import reading_comprehension as rc  # noqa: F401  (registers the protocols)
from annotation.services import assignment as assigning
from annotation.services import stages
from annotation.services.campaign_import import CampaignFileError, import_campaign
from evaluation.families import get_family

from .conftest import post_answer

pytestmark = pytest.mark.django_db


def _family():
    from evaluation.families import reading_comprehension  # noqa: F401  (registers the family)

    return get_family("reading-comprehension")


THINGS = ["bakery", "library", "bridge", "school", "harbour"]
CAUSES = [["heavy floods", "a fire", "new rules", "a strike", "low demand"],
          ["a storm", "old wiring", "a lawsuit", "the heat", "rising rents"],
          ["a landslide", "rats", "a bank crisis", "the drought", "a virus"]]
ARTICLES = len(CAUSES)


def sentence(d: int, f: int, cause: str) -> str:
    return f"In town {d}, the {THINGS[f]} closed because of {cause}."


def question(d: int, f: int) -> str:
    return f"Why did the {THINGS[f]} in town {d} close?"


#: Which facts (0-3, the ones the kept questions ask about) each system loses: good keeps 3 of 4, fair 2, poor 1.
LOST = {"good": lambda d, f: f == d % 4, "fair": lambda d, f: f in (d % 4, (d + 1) % 4),
        "poor": lambda d, f: f != d % 4}
EXPECTED = {"human translation": 1.0, "good": 0.75, "fair": 0.5, "poor": 0.25}


def lines(articles=ARTICLES):
    out = []
    for d in range(articles):
        for f, cause in enumerate(CAUSES[d]):
            out.append(json.dumps({"doc_id": f"town{d}", "seg_id": f + 1, "source": f"Quelle {d}.{f}",
                                   "reference": sentence(d, f, cause),
                                   "systems": {name: sentence(d, f, "some reason" if lost(d, f) else cause)
                                               for name, lost in LOST.items()}}))
    return out


def rc_campaign(articles=ARTICLES, **raw):
    parsed = get_protocol("reading-comprehension").parse_options(
        {"seed": 3, "redundancy": 2, "voters": 3, "answerers": 2, "graders": 3, "grade_items_per_hit": 10, **raw})
    return import_campaign([(line + "\n").encode() for line in lines(articles)], name="RC test",
                           protocol="reading-comprehension", parsed=parsed).campaign


def stage(campaign, name):
    return Campaign.objects.get(stage_name=name, name__startswith=campaign.name)


#: Each worker's browser: a worker id is held by the browser it is used in (docs/api.md §8.1).
BROWSERS: dict[str, Client] = {}


def enter(campaign, worker):
    client = BROWSERS.setdefault(worker, Client())
    response = client.get(f"/c/{campaign.slug}/start/", {"worker_id": worker})
    if response.status_code != 302:
        return None, None
    return client, response.url.rstrip("/").split("/")[-1]


def work(campaign, workers, answer_of):
    """Each worker takes HITs until none is left for them, answering each item with `answer_of(worker, item)`."""
    for worker in workers:
        while True:
            client, token = enter(campaign, worker)
            if client is None:
                break
            while not (state := client.get(f"/api/hit/{token}/").json()).get("done"):
                item = state["item"]
                response = post_answer(client, token, {"item": item["id"], **answer_of(worker, item)})
                assert response.status_code == 201, response.content


def town_of(article: list[str]) -> int:
    return int(re.match(r"In town (\d+),", article[0]).group(1))


def write(worker, item):
    """w1 asks about facts 0-2; w2 paraphrases fact 1 (redundant), asks about fact 3, and asks a yes/no question."""
    assert item["protocol"] == "reading-comprehension" and len(item["article"]) == len(THINGS)
    d = town_of(item["article"])
    if worker == "w1":
        questions = [{"question": question(d, f), "answer": CAUSES[d][f]} for f in range(3)]
    else:
        questions = [{"question": f"What made the {THINGS[1]} of town {d} shut?", "answer": CAUSES[d][1]},
                     {"question": question(d, 3), "answer": CAUSES[d][3]},
                     {"question": f"Did the {THINGS[4]} in town {d} close?", "answer": "Yes."}]
    return {"questions": questions}


def vote(worker, item):
    assert set(item) == {"id", "protocol", "article", "question", "others"}
    q = item["question"]
    if q["question"].startswith("Did "):
        return {"good": "no", "redundant_with": None}
    if q["question"].startswith("What made"):
        original = next(o for o in item["others"] if o["question"].startswith(f"Why did the {THINGS[1]}"))
        return {"good": "yes", "redundant_with": original["id"]}
    return {"good": "yes", "redundant_with": None}


def answer(worker, item):
    """Finds the cause the question asks about in the translation shown; "some reason" is no answer."""
    assert set(item) == {"id", "protocol", "article", "questions"}  # no system, no sample answers
    out = {}
    for q in item["questions"]:
        thing, town = re.match(r"Why did the (\w+) in town (\d+) close\?", q["question"]).groups()
        line = next(s for s in item["article"] if f"the {thing} closed" in s)
        cause = line.split("because of ", 1)[1].rstrip(".")
        out[q["id"]] = "" if cause == "some reason" and worker.endswith("1") else cause
    return {"answers": out}


def grade(worker, item):
    assert set(item) == {"id", "protocol", "question", "sample_answer", "answer"}
    return {"correct": "yes" if item["answer"].casefold() == item["sample_answer"].casefold() else "no"}


def test_a_reading_comprehension_task_from_questions_to_scores(django_capture_on_commit_callbacks, api, researcher):
    campaign = rc_campaign()
    Campaign.objects.filter(name__startswith=campaign.name).update(owner=researcher)
    vote_stage, answer_stage, grade_stage = (stage(campaign, n) for n in ("vote", "answer", "grade"))
    assert (vote_stage.protocol, vote_stage.stage_input, vote_stage.redundancy) == (
        "reading-comprehension-vote", campaign, 3)
    assert (answer_stage.stage_input, answer_stage.redundancy) == (vote_stage, 2)
    assert (grade_stage.stage_input, grade_stage.redundancy, grade_stage.hit_size) == (answer_stage, 3, 10)
    assert campaign.hits.count() == ARTICLES and not vote_stage.hits.exists()
    built = lambda: django_capture_on_commit_callbacks(execute=True)  # noqa: E731  (a judgment's after-commit work)
    with built():
        # a bad answer first: two equal questions are refused
        client, token = enter(campaign, "w1")
        item = client.get(f"/api/hit/{token}/").json()["item"]
        same = {"question": "Why?", "answer": "because"}
        refused = post_answer(client, token, {"item": item["id"], "questions": [same, same, same]})
        assert refused.status_code == 400 and "repeats" in refused.json()["error"]
        assert post_answer(client, token, {"item": item["id"], **write("w1", item)}).status_code == 201
        work(campaign, ["w1", "w2"], write)
    assert vote_stage.hits.count() == ARTICLES and not answer_stage.hits.exists()
    flags = [p["flags"] for p in HitItem.objects.filter(hit__campaign=vote_stage).values_list("payload", flat=True)]
    assert flags.count(["yes-no"]) == ARTICLES  # flagged, not refused
    with built():
        work(vote_stage, ["w1", "v1", "v2", "v3"], vote)
    assert not Judgment.objects.filter(campaign=vote_stage, annotator__external_id="w1").exists()  # own questions
    assert answer_stage.hits.count() == ARTICLES * 4  # three systems and the human translation
    items = list(HitItem.objects.filter(hit__campaign=answer_stage).values_list("payload", flat=True))
    assert all(len(p["questions"]) == 4 for p in items)
    kept = {q["question"] for p in items for q in p["questions"]}
    assert not any(q.startswith(("Did ", "What made")) for q in kept)
    answerers = [f"a{k}" for k in range(1, 13)]
    with built():
        work(answer_stage, ["w1", "v1", *answerers], answer)
    assert not Judgment.objects.filter(campaign=answer_stage, annotator__external_id__in=["w1", "v1"]).exists()
    assert Assignment.objects.filter(campaign=answer_stage, status="completed").count() == ARTICLES * 4 * 2
    assert grade_stage.hits.exists()
    work(grade_stage, ["a2", "g1", "g2", "g3"], grade)
    # no one read two translations of an article; no one graded their own answers
    for worker in answerers:
        docs = list(HitItem.objects.filter(hit__campaign=answer_stage, hit__assignments__annotator__external_id=worker)
                    .values_list("payload__doc", flat=True))
        assert len(docs) == len(set(docs))
        assert StageExposure.objects.filter(campaign=answer_stage, annotator__external_id=worker).count() == len(docs)
    a2 = Judgment.objects.filter(campaign=answer_stage, annotator__external_id="a2").values_list("annotator_id",
                                                                                               flat=True).first()
    for hit in Hit.objects.filter(campaign=grade_stage, assignments__annotator__external_id="a2"):
        assert a2 not in hit.exposure["authors"]
    assert stages.build_stages(answer_stage) == {grade_stage.slug: 0}  # each HIT built once

    family = _family()
    family.compute(grade_stage)  # any stage computes its task's results
    systems = family.systems(campaign, {})["results"]
    assert [r["system"] for r in systems] == ["human translation", "good", "fair", "poor"]
    assert systems[0]["is_control"] and not any(r["is_control"] for r in systems[1:])
    for r in systems:
        assert r["score_name"] == "correct" and r["n"] == ARTICLES * 4 * 2
        assert r["score"] == pytest.approx(EXPECTED[r["system"]])
        assert r["low"] <= r["score"] <= r["high"] and r["rank_range"][0] <= r["rank"] <= r["rank_range"][1]
    assert systems[0]["rank"] == 1 and systems[-1]["cluster"] > systems[0]["cluster"]
    questions = family.questions(answer_stage, {})["results"]
    assert len(questions) == ARTICLES * 6 and sum(q["kept"] for q in questions) == ARTICLES * 4
    redundant = [q for q in questions if q["question"].startswith("What made")]
    assert all(q["redundant"] == 3 and not q["kept"] and q["share_good"] == 1 for q in redundant)
    for q in questions:
        if q["kept"]:
            f = THINGS.index(q["question"].split()[3])
            d = int(q["question"].split()[6])
            kept_by = sum(not lost(d, f) for lost in LOST.values())
            assert q["difficulty"] == pytest.approx(kept_by / 3) and q["human_correct"] == 1
    assert {t.name for t in family.tables()} >= {"systems", "questions", "answers"}
    # the API, the results page and the CSVs
    assert api.get(f"/api/campaigns/{campaign.slug}/systems/").json()["results"] == systems
    assert len(api.get(f"/api/campaigns/{answer_stage.slug}/questions/").json()["results"]) == ARTICLES * 6
    assert len(api.get(f"/api/campaigns/{campaign.slug}/answers/").json()["results"]) == ARTICLES * 4 * 4 * 2
    page = Client()
    page.force_login(researcher)
    html = page.get(f"/results/{campaign.slug}/").content.decode()
    assert "Questions answered correctly" in html and "human translation" in html and "(control)" in html
    csv = page.get(f"/results/{campaign.slug}/questions.csv")
    assert csv.status_code == 200 and "difficulty" in b"".join(csv.streaming_content if csv.streaming else
                                                              [csv.content]).decode()


def test_the_researcher_keeps_or_drops_a_question_by_hand(django_capture_on_commit_callbacks):
    campaign = rc_campaign(articles=1)
    vote_stage, answer_stage = stage(campaign, "vote"), stage(campaign, "answer")
    with django_capture_on_commit_callbacks(execute=True):
        work(campaign, ["w1", "w2"], write)
    bad = HitItem.objects.get(hit__campaign=vote_stage, text__startswith="Did ").payload["question"]
    dropped = HitItem.objects.get(hit__campaign=vote_stage, text=question(0, 0)).payload["question"]
    rc.set_override(vote_stage, bad, True)
    rc.set_override(vote_stage, dropped, False)
    with django_capture_on_commit_callbacks(execute=True):
        work(vote_stage, ["v1", "v2", "v3"], vote)
    ids = [q["id"] for q in HitItem.objects.filter(hit__campaign=answer_stage).first().payload["questions"]]
    assert bad in ids and dropped not in ids and len(ids) == 4


def test_bad_answers_are_refused():
    campaign = rc_campaign(articles=1)
    client, token = enter(campaign, "w")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    good = {"question": "Why did it close?", "answer": "a fire"}
    for questions, message in (([good, good], "list of 3"),
                               ([good, {"question": "  ", "answer": "x"}, {"question": "How?", "answer": "y"}],
                                "question 2 is empty"),
                               ([good, {"question": "Why did it close ?", "answer": "x"},
                                 {"question": "How?", "answer": "y"}], "repeats"),
                               ([good, {"question": "Why?" * 200, "answer": "x"}, {"question": "How?", "answer": "y"}],
                                "at most")):
        response = post_answer(client, token, {"item": item["id"], "questions": questions})
        assert response.status_code == 400 and message in response.json()["error"], response.content
    assert rc.answer_flags("No") == ["yes-no"] and rc.answer_flags("1,200") == ["number"]
    assert rc.answer_flags("12 May 2009") == [] and rc.answer_flags("a fire") == []
    assert not Judgment.objects.filter(campaign=campaign).exists()


def test_stage_campaigns_cannot_be_imported_on_their_own():
    with pytest.raises(CampaignFileError):
        import_campaign([(line + "\n").encode() for line in lines(1)], name="x",
                        protocol="reading-comprehension-answer")


def test_question_selection():
    order = ["a", "b", "c", "d"]
    votes = {"a": [(True, None), (True, None), (False, None)], "b": [(True, "a"), (True, "a"), (True, None)],
             "c": [(True, "d"), (False, None)], "d": [(False, None), (False, "a")]}
    chosen = rc.select_questions(order, votes, 0.5)
    assert [q for q in order if chosen[q]["kept"]] == ["a", "c"]  # b redundant with a; c names d, not kept earlier
    assert chosen["b"]["redundant_with"] == "a"
    assert [q for q in order if rc.select_questions(order, votes, 0.5, {"d": True, "a": False})[q]["kept"]] == \
        ["b", "c", "d"]


@pytest.mark.django_db(transaction=True)
def test_racing_requests_never_give_a_worker_two_translations_of_an_article():
    if connection.vendor != "postgresql":
        pytest.skip("concurrent transactions need PostgreSQL")
    campaign = rc_campaign(articles=1, answerers=3)
    work(campaign, ["w1", "w2"], write)
    stages.build_stages(campaign)
    vote_stage, answer_stage = stage(campaign, "vote"), stage(campaign, "answer")
    work(vote_stage, ["v1", "v2", "v3"], vote)
    stages.build_stages(vote_stage)
    assert answer_stage.hits.count() == 4  # four translations of the one article
    for attempt in range(3):
        worker = assigning.crowd_annotator(f"racer{attempt}", "crowd")
        got, barrier = [], threading.Barrier(8)

        def take(k, worker=worker, got=got, barrier=barrier):
            barrier.wait()
            try:
                got.append(assigning.assign(Campaign.objects.get(pk=answer_stage.pk), worker,
                                            browser=f"browser-{k}-{'x' * 32}").hit_id)
            except assigning.NoHitAvailable:
                got.append(None)
            finally:
                connection.close()

        threads = [threading.Thread(target=take, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        hits = {h for h in got if h is not None}
        assert len(hits) == 1, got
        assert Assignment.objects.filter(campaign=answer_stage, annotator=worker).count() == 1
        assert StageExposure.objects.filter(campaign=answer_stage, annotator=worker).count() == 1
    # and through the crowd entry, many requests of one worker at once
    got, barrier = [], threading.Barrier(6)

    def enter_at_once():
        barrier.wait()
        try:
            response = Client().get(f"/c/{answer_stage.slug}/start/", {"worker_id": "racer-web"})
            got.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=enter_at_once) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert Assignment.objects.filter(campaign=answer_stage, annotator__external_id="racer-web").count() == 1


def test_the_admin_curates_the_questions(django_capture_on_commit_callbacks, admin_client):
    campaign = rc_campaign(articles=1)
    vote_stage, answer_stage = stage(campaign, "vote"), stage(campaign, "answer")
    with django_capture_on_commit_callbacks(execute=True):
        work(campaign, ["w1", "w2"], write)
    page = admin_client.get(f"/admin/annotation/campaign/{vote_stage.pk}/change/").content.decode()
    assert 'id="curate-link"' in page
    assert admin_client.get(f"/admin/annotation/campaign/{campaign.pk}/curate/").status_code == 404
    listing = admin_client.get(f"/admin/annotation/campaign/{vote_stage.pk}/curate/").content.decode()
    dropped = HitItem.objects.get(hit__campaign=vote_stage, text=question(0, 0)).payload["question"]
    assert dropped in listing and "Did " in listing
    response = admin_client.post(f"/admin/annotation/campaign/{vote_stage.pk}/curate/",
                                 {"key": dropped, "choice": "drop"})
    assert response.status_code == 302
    assert admin_client.post(f"/admin/annotation/campaign/{vote_stage.pk}/curate/",
                             {"key": "no-such-question", "choice": "keep"}).status_code == 302
    vote_stage.refresh_from_db()
    assert vote_stage.options["question_overrides"] == {dropped: False}
    with django_capture_on_commit_callbacks(execute=True):
        work(vote_stage, ["v1", "v2", "v3"], vote)
    ids = [q["id"] for q in HitItem.objects.filter(hit__campaign=answer_stage).first().payload["questions"]]
    assert dropped not in ids
    listing = admin_client.get(f"/admin/annotation/campaign/{vote_stage.pk}/curate/").content.decode()
    assert "(by hand)" in listing
