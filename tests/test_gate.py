"""The live reliability gate (docs/methods.md §12.1): a worker who fails their reliability test after a finished HIT
gets no further HIT, their unfinished HIT goes to others, the API and the admin list them, and a researcher can
lift the gate. Tasks run eagerly here (settings_test: GATE_INLINE_WHEN_EAGER); the after-commit signal fires
inside `django_capture_on_commit_callbacks(execute=True)`."""
import json
import random

import pytest
from django.test import Client

from annotation.models import Annotator, Assignment, HitItem
from annotation.services import assignment as assigning
from evaluation.models import WorkerGate

from .simulation import Behaviour, complete_hit

QUALITY = {"sys-A": 78.0, "sys-B": 70.0, "sys-C": 62.0}
GATE = {"gate": True, "gate_min_pairs": 5}


def gated(campaign, worker: str) -> WorkerGate | None:
    return WorkerGate.objects.filter(campaign=campaign, annotator__external_id=worker).first()


def answer_some(client, slug: str, worker: str, n: int, rng) -> Assignment:
    """Start a HIT and answer its first `n` items at random; the open assignment."""
    response = client.get(f"/c/{slug}/start/", {"worker_id": worker})
    assert response.status_code == 302, response.content
    token = response["Location"].rstrip("/").split("/")[-1]
    state = client.get(f"/api/hit/{token}/").json()
    for _ in range(n):
        client.post(f"/api/hit/{token}/", json.dumps({"item": state["item"]["id"], "score": rng.uniform(0, 100)}),
                    content_type="application/json")
        state = client.get(f"/api/hit/{token}/").json()
    return Assignment.objects.get(token=token)


@pytest.fixture
def finish(django_capture_on_commit_callbacks):
    """complete_hit, then what its commits set off (the callbacks run when the capture ends, so one per HIT)."""
    def run(client, campaign, worker, behaviour, rng):
        with django_capture_on_commit_callbacks(execute=True):
            return complete_hit(client, campaign.slug, worker, behaviour, QUALITY, rng)
    return run


@pytest.fixture
def gated_campaign(make_campaign):
    return make_campaign(n_segments=70, systems=tuple(QUALITY), redundancy=1, options=dict(GATE))


def test_a_random_clicker_is_stopped_and_their_unfinished_hit_goes_to_another(
        gated_campaign, django_capture_on_commit_callbacks):
    campaign, rng, client = gated_campaign, random.Random(5), Client()
    assert campaign.options["gate"] is True and campaign.hits.count() >= 2
    # The gate's task runs after the first HIT commits; meanwhile the worker has opened their next HIT.
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        code = complete_hit(client, campaign.slug, "clicker", Behaviour("random"), QUALITY, rng)
    assert code
    open_hit = answer_some(client, campaign.slug, "clicker", 3, rng)
    for callback in callbacks:
        callback()
    gate = gated(campaign, "clicker")
    assert gate is not None and gate.rule == "test" and gate.pairs >= 5 and gate.p_value >= 0.05
    assert "paired-t" in gate.reason and gate.lifted_at is None
    open_hit.refresh_from_db()
    assert open_hit.status == Assignment.Status.ABANDONED
    assert campaign.judgments.filter(annotator__external_id="clicker").count() == 103  # judgments stay
    # The worker comes back: a polite page with the code of the HIT they finished, no new HIT.
    page = client.get(f"/c/{campaign.slug}/start/", {"worker_id": "clicker"})
    assert page.status_code == 403 and b"Thank you" in page.content and code.encode() in page.content
    # Their unfinished HIT is served to the next worker.
    taken = answer_some(client, campaign.slug, "next-worker", 0, rng)
    assert taken.hit_id == open_hit.hit_id


def test_random_clickers_are_stopped_within_two_hits(make_campaign, finish):
    campaign = make_campaign(n_segments=70, systems=tuple(QUALITY), redundancy=12, options=dict(GATE))
    rng, client = random.Random(11), Client()
    hits_done = []
    for i in range(12):
        worker = f"random-{i}"
        done = 0
        while finish(client, campaign, worker, Behaviour("random"), rng):
            done += 1
        hits_done.append(done)
        assert gated(campaign, worker) is not None, worker
    assert max(hits_done) <= 2, hits_done


def test_diligent_workers_are_not_stopped(make_campaign, finish):
    """Diligent workers with their own bias, scale and noise: the observed false-gate rate (0 of 40 here)."""
    campaign = make_campaign(n_segments=70, systems=tuple(QUALITY), redundancy=40, options=dict(GATE))
    rng, client = random.Random(2026), Client()
    workers = [f"diligent-{i}" for i in range(40)]
    for worker in workers:
        behaviour = Behaviour("diligent", bias=rng.uniform(-12, 12), scale=rng.uniform(0.6, 1.2),
                              noise=rng.uniform(4, 12))
        assert finish(client, campaign, worker, behaviour, rng)
    false_gates = WorkerGate.objects.filter(campaign=campaign).count()
    print(f"false-gate rate: {false_gates} of {len(workers)}")
    assert false_gates == 0


def test_the_missed_rule(make_campaign, finish):
    campaign = make_campaign(n_segments=70, systems=tuple(QUALITY), redundancy=3,
                             options={**GATE, "gate_rule": "missed", "gate_max_missed": 0.5})
    rng, client = random.Random(3), Client()
    finish(client, campaign, "flat", Behaviour("constant", constant=60), rng)
    finish(client, campaign, "careful", Behaviour("diligent"), rng)
    gate = gated(campaign, "flat")
    assert gate is not None and gate.rule == "missed" and gate.missed_share == 1.0 and gate.p_value is None
    assert gated(campaign, "careful") is None


def test_the_api_lists_and_lifts_gates(gated_campaign, api, finish):
    campaign, rng, client = gated_campaign, random.Random(5), Client()
    finish(client, campaign, "clicker", Behaviour("random"), rng)
    listed = api.get(f"/api/campaigns/{campaign.slug}/gates/")
    assert listed.status_code == 200
    body = listed.json()
    assert body["gate"] is True
    (row,) = body["results"]
    assert row["worker"] == "clicker" and row["rule"] == "test" and row["p_value"] >= 0.05 and row["pairs"] >= 5
    assert row["reason"] and row["created_at"] and row["lifted_at"] is None
    assert api.post(f"/api/campaigns/{campaign.slug}/gates/lift/", {"worker": "nobody"}, format="json"
                    ).status_code == 400
    Annotator.objects.create(external_id="ungated")
    assert api.post(f"/api/campaigns/{campaign.slug}/gates/lift/", {"worker": "ungated"}, format="json"
                    ).status_code == 400
    lifted = api.post(f"/api/campaigns/{campaign.slug}/gates/lift/", {"worker": "clicker"}, format="json")
    assert lifted.status_code == 200 and lifted.json()["lifted_at"]
    assert api.get(f"/api/campaigns/{campaign.slug}/gates/").json()["results"][0]["lifted_at"]
    # Access restored, and the gate is not applied again after the next HIT.
    assert not assigning.is_blocked(campaign, Annotator.objects.get(external_id="clicker"))
    assert finish(client, campaign, "clicker", Behaviour("random"), rng)
    assert not assigning.is_blocked(campaign, Annotator.objects.get(external_id="clicker"))
    assert api.post(f"/api/campaigns/{campaign.slug}/gates/lift/", {"worker": "clicker"}, format="json"
                    ).status_code == 400


def test_the_admin_lists_and_lifts_gates(gated_campaign, admin_client, finish):
    campaign, rng, client = gated_campaign, random.Random(5), Client()
    finish(client, campaign, "clicker", Behaviour("random"), rng)
    gate = gated(campaign, "clicker")
    page = admin_client.get(f"/admin/evaluation/campaignstatistics/{campaign.pk}/change/")
    assert page.status_code == 200 and b"Gated workers" in page.content and b"clicker" in page.content
    listing = admin_client.get("/admin/evaluation/workergate/")
    assert listing.status_code == 200 and b"clicker" in listing.content and b"paired-t" in listing.content
    response = admin_client.post("/admin/evaluation/workergate/", {"action": "lift_gates",
                                                                   "_selected_action": [gate.pk]})
    assert response.status_code == 302
    gate.refresh_from_db()
    assert gate.lifted_at is not None
    assert not campaign.blocked_annotators.exists()


def test_gate_off_changes_nothing(make_campaign, finish):
    campaign = make_campaign(n_segments=70, systems=tuple(QUALITY), redundancy=1)
    assert "gate" not in campaign.options
    rng, client = random.Random(5), Client()
    assert finish(client, campaign, "clicker", Behaviour("random"), rng)
    assert finish(client, campaign, "clicker", Behaviour("random"), rng)
    assert not WorkerGate.objects.exists() and not campaign.blocked_annotators.exists()


def test_a_judgment_stays_and_the_hit_items_are_untouched(gated_campaign, finish):
    """Gating neither deletes judgments nor changes the HITs: only the block and the record are written."""
    campaign, rng, client = gated_campaign, random.Random(5), Client()
    items = HitItem.objects.filter(hit__campaign=campaign).count()
    finish(client, campaign, "clicker", Behaviour("random"), rng)
    assert gated(campaign, "clicker") is not None
    assert campaign.judgments.count() == 100 and HitItem.objects.filter(hit__campaign=campaign).count() == items


@pytest.mark.parametrize("rule", ["missed", "test"])
@pytest.mark.parametrize("scope", ["study", "campaign"])
def test_with_study_scope_the_pairs_of_the_studys_campaigns_add_up(make_campaign, finish, scope, rule):
    """A worker who scores everything alike, with one HIT (10 bad references) in each of two campaigns of one study
    and a gate that needs 15 pairs: with reliability_scope study the second HIT's gate counts 20 pairs and stops
    them; with scope campaign it counts 10 and does not."""
    options = {**GATE, "gate_min_pairs": 15, "gate_rule": rule, "reliability_scope": scope}
    first, second = (make_campaign(n_segments=70, systems=tuple(QUALITY), name=name, study="Study S",
                                   options=dict(options)) for name in ("First", "Second"))
    assert first.study_id == second.study_id is not None
    rng, client = random.Random(8), Client()
    assert finish(client, first, "flat", Behaviour("constant", constant=60), rng)
    assert gated(first, "flat") is None  # 10 pairs: too few anywhere
    assert finish(client, second, "flat", Behaviour("constant", constant=60), rng)
    gate = gated(second, "flat")
    if scope == "campaign":
        assert gate is None and not second.blocked_annotators.exists()
        return
    assert gate is not None and gate.rule == rule and gate.pairs == 20 and "in the study" in gate.reason
    assert gated(first, "flat") is None  # stopped where they finished the HIT
