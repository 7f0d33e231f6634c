"""Post-editing for HTER (docs/methods.md §9) run by simulated workers through the annotator API: the verify stage
builds itself from finished edits, an editor who pastes the reference is refused, verifiers reject bad edits, a
verifier never gets their own edits, the HTER ranking recovers the systems' known quality and falls as editors
are added; and the stage builder builds each HIT once however often it runs."""
import json
import random
import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client

from annotation.models import Campaign, Hit, HitItem, Judgment
from annotation.protocols import get_protocol
from annotation.services import stages
from annotation.services.campaign_import import CampaignFileError, import_campaign
from evaluation.families import family_of
from evaluation.services.results_read import stored_rows

from .conftest import post_answer

pytestmark = pytest.mark.django_db

BASES = [
    "the new bridge over the river will open to traffic next spring",
    "the city council approved the budget after a long debate on monday",
    "local shops expect more customers once the old market hall reopens",
    "the museum will show paintings from private collections for the first time",
    "parents asked the school board to keep the library open in the evening",
    "heavy rain flooded several streets in the old town during the night",
]
#: The professional reference translates the same sentence in its own words, so that a minimal edit of an MT
#: output is closer to it than the reference is (as in real post-editing).
PARAPHRASE = {"new": "newly built", "will": "is to", "the": "that", "after": "following", "expect": "hope for",
              "asked": "urged", "several": "a number of", "heavy": "strong"}


def reference_of(base: str) -> str:
    return " ".join(PARAPHRASE.get(w, w) for w in base.split())


#: How many words of the sentence each system gets wrong: the true order is good < fair < poor.
DAMAGE = {"good": 1, "fair": 3, "poor": 6}


def damaged(reference: str, n: int, seed: int) -> str:
    words = reference.split()
    rng = random.Random(seed)
    for k in rng.sample(range(len(words)), min(n, len(words))):
        words[k] = words[k].upper() + "x"
    return " ".join(words)


def lines(documents=2):
    out = []
    for d in range(documents):
        for s, base in enumerate(BASES):
            out.append(json.dumps({"doc_id": f"d{d}", "seg_id": s + 1, "source": f"Quelle {d}.{s}",
                                   "reference": reference_of(base),
                                   "systems": {name: damaged(base, n, d * 100 + s) for name, n in DAMAGE.items()}}))
    return out


def post_edit_campaign(**raw):
    parsed = get_protocol("post-edit").parse_options({"seed": 4, "screens_per_hit": 2, "verifiers": 3,
                                                      "verify_items_per_hit": 6, **raw})
    return import_campaign([(line + "\n").encode() for line in lines()], name="HTER test", protocol="post-edit",
                           parsed=parsed).campaign


def enter(campaign, worker, client=None):
    """Enter as `worker`, in `client` (a new browser when None): a worker id stays with the browser it started in."""
    client = client or Client()
    response = client.get(f"/c/{campaign.slug}/start/", {"worker_id": worker})
    if response.status_code != 302:
        return None, None
    return client, response.url.rstrip("/").split("/")[-1]


def minimal_edit(mt: str, reference: str, rng: random.Random) -> str:
    """An honest editor: mends most damaged words, keeping one slip now and then, and leaves the rest alone."""
    base = next(b for b in BASES if reference_of(b) == reference).split()
    return " ".join(b if (w != b and rng.random() < 0.9) else w for w, b in zip(mt.split(), base, strict=True))


def edit_all(campaign, workers, rng, paste_first=()):
    for worker in workers:
        browser = Client()
        while True:
            client, token = enter(campaign, worker, browser)
            if client is None:
                break
            while not (state := client.get(f"/api/hit/{token}/").json()).get("done"):
                item = state["item"]
                if worker in paste_first:
                    refused = post_answer(client, token, {"item": item["id"], "edits": item["reference"]})
                    assert refused.status_code == 400 and "identical to the reference" in refused.json()["error"]
                    assert not Judgment.objects.filter(item_id=item["id"], annotator__external_id=worker).exists()
                edits = [minimal_edit(mt, ref, rng) for mt, ref in zip(item["outputs"], item["reference"],
                                                                       strict=True)]
                if worker.startswith("vandal"):
                    edits = [f"nonsense {k} words here" for k in range(len(edits))]
                assert post_answer(client, token, {"item": item["id"], "edits": edits}).status_code == 201


def verify_all(stage, workers):
    for worker in workers:
        browser = Client()
        while True:
            client, token = enter(stage, worker, browser)
            if client is None:
                break
            while not (state := client.get(f"/api/hit/{token}/").json()).get("done"):
                item = state["item"]
                good = "nonsense" not in item["candidate"]
                answer = "yes" if good else "no"
                assert post_answer(client, token, {"item": item["id"], "same_meaning": answer,
                                                   "acceptable": answer}).status_code == 201


def test_a_post_edit_campaign_from_edits_to_hter(django_capture_on_commit_callbacks):
    campaign = post_edit_campaign()
    stage = Campaign.objects.get(stage_input=campaign)
    assert (stage.protocol, stage.stage_name, stage.redundancy, stage.hit_size) == ("post-edit-verify", "verify", 3, 6)
    assert campaign.redundancy == 5 and not stage.hits.exists()
    rng = random.Random(7)
    editors = ["ed1", "ed2", "ed3", "ed4", "vandal1"]
    with django_capture_on_commit_callbacks(execute=True):  # what a committed judgment sets off
        edit_all(campaign, editors, rng, paste_first=("ed2",))
    # the verify stage built itself from the finished edit HITs (signal -> Celery task, eager here)
    assert stage.hits.exists()
    n_edits = sum(len(a["edits"]) for a in Judgment.objects.filter(campaign=campaign).values_list("answer", flat=True))
    assert HitItem.objects.filter(hit__campaign=stage).count() == n_edits
    assert stages.build_stages(campaign) == {stage.slug: 0}  # nothing left to build: each HIT built once
    verifiers = ["v1", "v2", "v3", "ed1"]
    verify_all(stage, verifiers)
    # an editor never verifies a HIT holding their own edits
    for hit in Hit.objects.filter(campaign=stage, assignments__annotator__external_id="ed1"):
        authors = set(HitItem.objects.filter(hit=hit).values_list("payload__author", flat=True))
        assert Judgment.objects.filter(campaign=campaign, annotator__external_id="ed1").values_list(
            "annotator_id", flat=True).first() not in authors
    family_of(campaign).compute(campaign)
    systems = stored_rows(campaign, "systems")
    assert [r["system"] for r in systems] == ["good", "fair", "poor"]
    assert all(r["score_name"] == "hter" for r in systems)
    edits = stored_rows(campaign, "edits")
    assert not any(e["passed"] for e in edits if "nonsense" in e["edit"])
    assert all(e["passed"] for e in edits if "nonsense" not in e["edit"] and e["votes"] >= 2)
    curve = {}
    for row in stored_rows(campaign, "curve"):
        curve.setdefault(row["system"], []).append(row["hter"])
    for values in curve.values():
        assert values[-1] < values[0] and all(b <= a + 1e-9 for a, b in zip(values, values[1:], strict=False))
    # per editor: their edited sentences, and reliable when at least half of them passed
    from evaluation.models import WorkerResult

    by_editor = {r["editor"]: [0, 0] for r in edits}
    for r in edits:
        by_editor[r["editor"]][0] += 1
        by_editor[r["editor"]][1] += r["passed"]
    workers = {w.worker: w for w in WorkerResult.objects.filter(campaign=campaign)}
    assert {name: w.judgments for name, w in workers.items()} == {name: n for name, (n, _) in by_editor.items()}
    assert {name: w.reliable for name, w in workers.items()} == {
        name: 2 * ok >= n for name, (n, ok) in by_editor.items()}
    assert not workers["vandal1"].reliable
    # the verify stage's results are its task's
    assert family_of(stage).systems(stage, {})["results"] == family_of(campaign).systems(campaign, {})["results"]
    # the page says that only finished HITs' edits count
    admin = get_user_model().objects.create_superuser("pe-admin", password="pw")
    client = Client()
    client.force_login(admin)
    page = client.get(f"/results/{campaign.slug}/").content.decode()
    assert "outputs edited in finished HITs (an edit counts once its editor finishes the HIT" in page


def test_stage_campaigns_cannot_be_imported_on_their_own():
    with pytest.raises(CampaignFileError) as refused:
        import_campaign([(line + "\n").encode() for line in lines()], name="x", protocol="post-edit-verify")
    assert "is a later stage" in str(refused.value.errors)


def test_an_empty_edit_and_a_wrong_number_of_edits_are_refused():
    campaign = post_edit_campaign()
    client, token = enter(campaign, "w")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    for edits, message in (([""] * len(item["outputs"]), "edit 1 is empty"),
                           (item["outputs"][:-1], "the screen shows"),
                           ("text", "must be a list")):
        response = post_answer(client, token, {"item": item["id"], "edits": edits})
        assert response.status_code == 400 and message in response.json()["error"], response.content
    assert not Judgment.objects.filter(campaign=campaign).exists()


@pytest.mark.django_db(transaction=True)
def test_two_builders_racing_build_the_stage_once():
    if connection.vendor != "postgresql":
        pytest.skip("row locks (select_for_update) need PostgreSQL")
    campaign = post_edit_campaign()
    stage = Campaign.objects.get(stage_input=campaign)
    from annotation.receivers import build_stages_on_judgments
    from annotation.signals import judgments_recorded

    # the edits arrive without their automatic build, which the two racing builders then do
    judgments_recorded.disconnect(build_stages_on_judgments, dispatch_uid="annotation.build_stages_on_judgments")
    try:
        edit_all(campaign, ["a", "b", "c", "d", "e"], random.Random(1))
    finally:
        judgments_recorded.connect(build_stages_on_judgments, dispatch_uid="annotation.build_stages_on_judgments")
    assert not stage.hits.exists()
    built, barrier = [], threading.Barrier(2)

    def build():
        barrier.wait()
        try:
            built.append(stages.build_stage(stage))
        finally:
            connection.close()

    threads = [threading.Thread(target=build) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    n_edits = sum(len(a["edits"]) for a in Judgment.objects.filter(campaign=campaign).values_list("answer", flat=True))
    assert sorted(built)[0] == 0 and sum(built) == stage.hits.count()
    assert HitItem.objects.filter(hit__campaign=stage).count() == n_edits


def test_the_api_and_the_admin_show_the_stages_and_build_them(api, researcher, admin_client):
    campaign = post_edit_campaign()
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    stage = Campaign.objects.get(stage_input=campaign)
    Campaign.objects.filter(pk=stage.pk).update(owner=researcher)
    body = api.get(f"/api/campaigns/{campaign.slug}/").json()
    assert [(s["stage"], s["hits"] > 0, s["waiting_for"]) for s in body["stages"]] == [
        ("edit", True, "workers"), ("verify", False, "output of edit")]
    assert api.get(f"/api/campaigns/{stage.slug}/").json()["stage_input"] == campaign.slug
    edit_all(campaign, ["a", "b", "c", "d", "e"], random.Random(2))  # no automatic build here (no commit)
    assert not stage.hits.exists()
    built = api.post(f"/api/campaigns/{campaign.slug}/build-stages/").json()["built"]
    assert built[stage.slug] == stage.hits.count() > 0
    assert api.post(f"/api/campaigns/{stage.slug}/build-stages/").status_code == 400  # feeds nothing
    page = admin_client.get(f"/admin/annotation/campaign/{campaign.pk}/change/").content.decode()
    assert 'id="campaign-stages"' in page and stage.slug in page


def test_the_judgment_export_carries_the_edits(api, researcher):
    campaign = post_edit_campaign()
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    edit_all(campaign, ["a"], random.Random(1))
    rows = json.loads(b"".join(api.get(f"/api/campaigns/{campaign.slug}/judgments/", {"format": "json"})
                               .streaming_content))
    stored = Judgment.objects.filter(campaign=campaign).order_by("pk").values_list("answer", flat=True)
    assert rows and [row["answer"] for row in rows] == list(stored)
    assert all(row["answer"]["edits"] for row in rows)
    csv_text = b"".join(api.get(f"/api/campaigns/{campaign.slug}/judgments/").streaming_content).decode()
    assert csv_text.splitlines()[0].endswith(",answer") and '""edits""' in csv_text
