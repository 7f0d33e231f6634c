"""The live reliability gate (docs/methods.md §12.1) for error spans (ESA, MQM, contrastive ESA: the perturbation
test on one worker's perturbed copies) and relative ranking (the gold check on one worker's gold screens), through
the family plugin and the common machinery: a random clicker is stopped within their first HIT or two, diligent
workers are not, a stopped worker's unfinished HIT goes to another worker, and with the gate off nothing happens.
Tasks run eagerly here (settings_test: GATE_INLINE_WHEN_EAGER); the after-commit signal fires inside
`django_capture_on_commit_callbacks(execute=True)`. The last test runs the gate in a real Celery worker."""
import itertools
import random

import numpy as np
import pytest
from django.test import Client
from scipy import stats as st

from annotation.models import Annotator, Assignment
from annotation.protocols import get_protocol
from annotation.protocols.direct_assessment import DA_OPTIONS
from annotation.services.campaign_import import CampaignFileError, import_campaign
from evaluation.families import family_of
from evaluation.families.error_spans.gate import paired_test, worker_pairs
from evaluation.families.ranking.gate import gold_screens
from evaluation.models import WorkerGate
from evaluation.services.results_read import stored_rows
from evaluation.stats import ranking as rk
from evaluation.stats.gold_chance import above_chance, chance_right

from .conftest import as_bytes
from .conftest import campaign_lines as da_lines
from .gate_simulation import Judge, complete_ranking_hit, complete_span_hit, diligent_crowd
from .ranking_simulation import campaign_lines as ranking_lines
from .test_e2e_celery import running_worker, wait_for

SPAN_QUALITY = {"sys-A": 78.0, "sys-B": 70.0, "sys-C": 62.0}
RANKING_QUALITY = {"sys-A": 78.0, "sys-B": 70.0, "sys-C": 62.0, "sys-D": 54.0, "sys-E": 46.0}
GATE = {"gate": True, "gate_min_pairs": 5}
SPAN_PROTOCOLS = ("esa", "mqm", "contrastive-esa")


def gated(campaign, worker: str) -> WorkerGate | None:
    return WorkerGate.objects.filter(campaign=campaign, annotator__external_id=worker).first()


def span_campaign(protocol: str = "esa", redundancy: int = 4, **options):
    """40 segments in 4 documents of 10, three systems; HITs of 2 documents (20 segments) with 10 perturbed copies
    (ESA, MQM: 30 items; contrastive: 20 screens, 10 with a bad column)."""
    parsed = get_protocol(protocol).parse_options({"segments_per_hit": 20, "perturbation_rate": 0.5, "seed": 7,
                                                   "redundancy": redundancy, **GATE, **options})
    lines = as_bytes(da_lines(40, tuple(SPAN_QUALITY), docs=4))
    return import_campaign(lines, name=f"{protocol} gate", protocol=protocol, parsed=parsed).campaign


def ranking_campaign(redundancy: int = 10, **options):
    """64 segments of five systems: 64 screens of N = 5 in 4 HITs of 16, half of them gold (best-worst), so 8
    gold screens per HIT, and the gate judges a worker from 8 on. The protocol's own hand-out check is set out of
    reach (min_gold) to test the gate alone."""
    parsed = get_protocol("ranking").parse_options({"screens_per_hit": 16, "screen_size": 5, "gold": "best-worst",
                                                    "gold_rate": 0.5, "min_gold": 1000, "seed": 7,
                                                    "redundancy": redundancy, **GATE, "gate_min_pairs": 8,
                                                    **options})
    lines = as_bytes(ranking_lines(64, list(RANKING_QUALITY), seed=3))
    return import_campaign(lines, name="ranking gate", protocol="ranking", parsed=parsed).campaign


def finisher(campaign, django_capture_on_commit_callbacks):
    """Finish one HIT of `campaign` as a worker, then run what its commits set off (the gate)."""
    complete = complete_ranking_hit if campaign.protocol == "ranking" else complete_span_hit
    quality = RANKING_QUALITY if campaign.protocol == "ranking" else SPAN_QUALITY

    def finish(client, worker: str, judge: Judge, rng, stop_after=None):
        with django_capture_on_commit_callbacks(execute=True):
            return complete(client, campaign.slug, worker, judge, quality, rng, stop_after=stop_after)
    return finish


def hits_until_refused(finish, client, worker: str, judge: Judge, rng) -> int:
    """Finish HITs as `worker` until none is given; how many were finished."""
    done = 0
    while finish(client, worker, judge, rng):
        done += 1
    return done


# The options and the pure parts ---------------------------------------------------------------------------------


def test_the_gate_options_are_direct_assessments_own():
    da = {o.name: o for o in DA_OPTIONS}
    for protocol in (*SPAN_PROTOCOLS, "ranking"):
        options = {o.name: o for o in get_protocol(protocol).option_fields()}
        for name in ("gate", "gate_rule", "gate_min_pairs", "gate_max_missed", "qc_threshold"):
            assert options[name] is da[name], (protocol, name)
    assert "gate" not in {o.name for o in get_protocol("ranking-constituent").option_fields()}


def test_a_gate_without_control_items_is_refused_at_import(db):
    with pytest.raises(CampaignFileError, match="gate: .*gold"):
        ranking_campaign(gold="none")
    with pytest.raises(CampaignFileError, match="gate: .*perturbation_rate"):
        span_campaign(perturbation_rate=0.0)


def test_chance_is_a_random_orders_and_the_test_is_the_exact_binomial_tail():
    # chance by enumerating every order of N outputs (gold = output 0, known-bad = output 1)
    for n in (3, 4, 5, 6):
        orders = np.array(list(itertools.permutations(range(1, n + 1))))
        best = np.mean(orders[:, 0] == 1)
        both = np.mean(rk.gold_correct(orders[:, 0], orders[:, 1], np.full(len(orders), n)))
        assert chance_right([n, n], [False, True]) == pytest.approx([best, both], abs=1e-12)
    # one chance: scipy's binomial test, one-sided (greater)
    for k, n, p in ((4, 5, 0.2), (0, 7, 0.25), (7, 7, 0.1), (3, 10, 0.2)):
        correct = np.arange(n) < k
        assert above_chance(correct, np.full(n, p)) == pytest.approx(
            st.binomtest(k, n, p, alternative="greater").pvalue, rel=1e-12)
    # screens of different N: the Poisson-binomial tail by enumerating every outcome
    chance = np.array([0.2, 0.2, 1 / 3, 0.25, 1 / 3])
    correct = np.array([True, False, True, True, False])
    outcomes = np.array(list(itertools.product((0, 1), repeat=5)))
    weight = np.prod(np.where(outcomes == 1, chance, 1 - chance), axis=1)
    assert above_chance(correct, chance) == pytest.approx(weight[outcomes.sum(axis=1) >= 3].sum(), rel=1e-12)
    assert above_chance(np.zeros(0, bool), np.zeros(0)) == 1.0


# Error spans ----------------------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("protocol", SPAN_PROTOCOLS)
def test_span_random_clickers_are_stopped_within_two_hits(protocol, django_capture_on_commit_callbacks):
    campaign = span_campaign(protocol, redundancy=10)
    finish, rng, client = finisher(campaign, django_capture_on_commit_callbacks), random.Random(11), Client()
    hits_done = []
    for i in range(8):
        worker = f"random-{i}"
        hits_done.append(hits_until_refused(finish, client, worker, Judge("random"), rng))
        gate = gated(campaign, worker)
        assert gate is not None and gate.rule == "test" and gate.test == "wilcoxon", worker
        assert gate.pairs >= 5 and "perturbation test" in gate.reason
    assert max(hits_done) <= 2, hits_done


@pytest.mark.django_db
@pytest.mark.parametrize("protocol, workers", [("esa", 40), ("mqm", 12), ("contrastive-esa", 12)])
def test_span_diligent_workers_are_not_stopped(protocol, workers, django_capture_on_commit_callbacks):
    """Diligent workers with their own bias, scale, noise and recall, each through the gate after every HIT: the
    observed false-gate rate (0 of 40 ESA, 0 of 12 MQM and contrastive here)."""
    campaign = span_campaign(protocol, redundancy=workers)
    finish, rng, client = finisher(campaign, django_capture_on_commit_callbacks), random.Random(2026), Client()
    for i, judge in enumerate(diligent_crowd(rng, workers)):
        assert finish(client, f"diligent-{i}", judge, rng)
    false_gates = WorkerGate.objects.filter(campaign=campaign).count()
    print(f"{protocol} false-gate rate: {false_gates} of {workers}")
    assert false_gates == 0
    assert campaign.judgments.count() == workers * campaign.hits.get(number=1).items.count()


@pytest.mark.django_db
@pytest.mark.parametrize("protocol", SPAN_PROTOCOLS)
def test_the_gates_test_is_the_results_perturbation_test(protocol, django_capture_on_commit_callbacks):
    """The gate's one-worker load and test give each worker the p-value and pairs the family's results give them."""
    campaign = span_campaign(protocol, redundancy=3, gate=False)
    finish, rng, client = finisher(campaign, django_capture_on_commit_callbacks), random.Random(4), Client()
    judges = {"careful": Judge("diligent", noise=15, recall=0.5), "clicker": Judge("random")}
    for worker, judge in judges.items():
        assert finish(client, worker, judge, rng)
    assert family_of(campaign).compute(campaign) is not None
    results = {row["worker"]: row for row in stored_rows(campaign, "perturbation")}
    for worker in judges:
        bad, original = worker_pairs(campaign, Annotator.objects.get(external_id=worker).pk)
        p, pairs = paired_test("wilcoxon", bad, original, 0.05)
        assert pairs == results[worker]["pairs"] == 10
        assert p == pytest.approx(results[worker]["p_value"], rel=1e-12)


@pytest.mark.django_db
@pytest.mark.parametrize("protocol", ("esa", "mqm"))
def test_the_span_missed_rule(protocol, django_capture_on_commit_callbacks):
    campaign = span_campaign(protocol, redundancy=2, gate_rule="missed", gate_max_missed=0.5)
    finish, rng, client = finisher(campaign, django_capture_on_commit_callbacks), random.Random(3), Client()
    assert finish(client, "flat", Judge("constant"), rng)
    assert finish(client, "careful", Judge("diligent"), rng)
    gate = gated(campaign, "flat")
    assert gate.rule == "missed" and gate.missed_share == 1.0 and gate.pairs == 10 and gate.p_value is None
    assert ("larger MQM penalty" if protocol == "mqm" else "score them below") in gate.reason
    assert gated(campaign, "careful") is None


@pytest.mark.django_db
def test_a_test_that_needs_repeats_gives_no_verdict_on_error_spans(django_capture_on_commit_callbacks):
    """Welch's test needs exact repeats, which error-span HITs do not have: no worker gets a p-value, and the gate
    stops only the one whose pairs all differ alike (every copy scored like its original)."""
    campaign = span_campaign("esa", redundancy=2, qc_test="welch")
    finish, rng, client = finisher(campaign, django_capture_on_commit_callbacks), random.Random(3), Client()
    assert finish(client, "clicker", Judge("random"), rng)
    assert finish(client, "flat", Judge("constant"), rng)
    assert gated(campaign, "clicker") is None
    assert "no p-value" in gated(campaign, "flat").reason


@pytest.mark.django_db
@pytest.mark.parametrize("scope", ["study", "campaign"])
def test_span_pairs_add_up_over_the_study_with_study_scope(scope, django_capture_on_commit_callbacks):
    """One HIT (10 perturbed copies) in each of two ESA campaigns of one study, a gate that needs 15 pairs: the
    second HIT's gate counts 20 with reliability_scope study, 10 with scope campaign."""
    first, second = (span_campaign("esa", redundancy=1, study="Study S", reliability_scope=scope,
                                   gate_min_pairs=15, gate_rule="missed") for _ in range(2))
    rng, client = random.Random(6), Client()
    assert finisher(first, django_capture_on_commit_callbacks)(client, "flat", Judge("constant"), rng)
    assert gated(first, "flat") is None
    assert finisher(second, django_capture_on_commit_callbacks)(client, "flat", Judge("constant"), rng)
    gate = gated(second, "flat")
    assert (gate is not None) == (scope == "study")
    if gate is not None:
        assert gate.pairs == 20 and "in the study" in gate.reason


@pytest.mark.django_db
def test_a_stopped_span_worker_gets_the_polite_page_and_their_unfinished_hit_goes_to_another(
        django_capture_on_commit_callbacks):
    campaign = span_campaign("esa", redundancy=1)
    rng, client = random.Random(5), Client()
    # The gate's task runs after the first HIT commits; meanwhile the worker has opened their next HIT.
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        code = complete_span_hit(client, campaign.slug, "clicker", Judge("random"), SPAN_QUALITY, rng)
    assert code
    assert complete_span_hit(client, campaign.slug, "clicker", Judge("random"), SPAN_QUALITY, rng, stop_after=3) is None
    open_hit = Assignment.objects.get(campaign=campaign, annotator__external_id="clicker",
                                      status=Assignment.Status.ACTIVE)
    for callback in callbacks:
        callback()
    assert gated(campaign, "clicker") is not None
    open_hit.refresh_from_db()
    assert open_hit.status == Assignment.Status.ABANDONED
    assert campaign.judgments.filter(annotator__external_id="clicker").count() == 33  # judgments stay
    page = client.get(f"/c/{campaign.slug}/start/", {"worker_id": "clicker"})
    assert page.status_code == 403 and b"Thank you" in page.content and code.encode() in page.content
    taken = Client().get(f"/c/{campaign.slug}/start/", {"worker_id": "next-worker"})
    assert taken.status_code == 302
    assert Assignment.objects.get(token=taken["Location"].rstrip("/").split("/")[-1]).hit_id == open_hit.hit_id


# Ranking --------------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_ranking_random_clickers_are_stopped_within_two_hits(django_capture_on_commit_callbacks):
    campaign = ranking_campaign(redundancy=10)
    finish, rng, client = finisher(campaign, django_capture_on_commit_callbacks), random.Random(11), Client()
    hits_done = []
    for i in range(10):
        worker = f"random-{i}"
        hits_done.append(hits_until_refused(finish, client, worker, Judge("random"), rng))
        gate = gated(campaign, worker)
        assert gate is not None and gate.rule == "test" and gate.test == "gold-binomial", worker
        assert gate.pairs >= 8 and gate.p_value >= 0.05 and "gold screens right" in gate.reason
    assert max(hits_done) <= 2, hits_done


@pytest.mark.django_db
def test_ranking_diligent_workers_are_not_stopped(django_capture_on_commit_callbacks):
    """40 careful rankers with their own noise: the observed false-gate rate (0 of 40 here)."""
    campaign = ranking_campaign(redundancy=10)
    finish, rng, client = finisher(campaign, django_capture_on_commit_callbacks), random.Random(2026), Client()
    crowd = diligent_crowd(rng, 40)
    for i, judge in enumerate(crowd):
        assert finish(client, f"diligent-{i}", judge, rng)
    false_gates = WorkerGate.objects.filter(campaign=campaign).count()
    print(f"ranking false-gate rate: {false_gates} of {len(crowd)}")
    assert false_gates == 0
    # what the gate read: every worker's 5 gold screens, by the protocol's rule
    correct, n, best_worst = gold_screens(campaign, Annotator.objects.get(external_id="diligent-0").pk)
    assert correct.size == 8 and set(n) == {5} and best_worst.all()


@pytest.mark.django_db
def test_the_ranking_missed_rule(django_capture_on_commit_callbacks):
    campaign = ranking_campaign(redundancy=2, gate_rule="missed", gate_max_missed=0.5)
    finish, rng, client = finisher(campaign, django_capture_on_commit_callbacks), random.Random(3), Client()
    assert finish(client, "ties", Judge("constant"), rng)  # everything ranked 1: the known-bad is never last
    assert finish(client, "careful", Judge("diligent"), rng)
    gate = gated(campaign, "ties")
    assert gate.rule == "missed" and gate.missed_share == 1.0 and gate.pairs == 8 and gate.p_value is None
    assert gated(campaign, "careful") is None


@pytest.mark.django_db
def test_a_stopped_ranker_gets_the_polite_page_and_their_unfinished_hit_goes_to_another(
        django_capture_on_commit_callbacks):
    campaign = ranking_campaign(redundancy=1)
    rng, client = random.Random(5), Client()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        code = complete_ranking_hit(client, campaign.slug, "clicker", Judge("random"), RANKING_QUALITY, rng)
    assert code
    assert complete_ranking_hit(client, campaign.slug, "clicker", Judge("random"), RANKING_QUALITY, rng,
                                stop_after=2) is None
    open_hit = Assignment.objects.get(campaign=campaign, annotator__external_id="clicker",
                                      status=Assignment.Status.ACTIVE)
    for callback in callbacks:
        callback()
    assert gated(campaign, "clicker") is not None
    open_hit.refresh_from_db()
    assert open_hit.status == Assignment.Status.ABANDONED
    page = client.get(f"/c/{campaign.slug}/start/", {"worker_id": "clicker"})
    assert page.status_code == 403 and b"Thank you" in page.content and code.encode() in page.content
    taken = Client().get(f"/c/{campaign.slug}/start/", {"worker_id": "next-worker"})
    assert Assignment.objects.get(token=taken["Location"].rstrip("/").split("/")[-1]).hit_id == open_hit.hit_id


@pytest.mark.django_db
def test_the_admin_lists_gated_rankers_and_span_workers(admin_client, django_capture_on_commit_callbacks):
    """Nothing family-specific is needed: the common WorkerGate inline and list show them with their test."""
    rng = random.Random(5)
    for campaign, worker in ((ranking_campaign(redundancy=1), "ties"), (span_campaign(redundancy=1), "flat")):
        assert finisher(campaign, django_capture_on_commit_callbacks)(Client(), worker, Judge("constant"), rng)
        assert gated(campaign, worker) is not None
        page = admin_client.get(f"/admin/evaluation/campaignstatistics/{campaign.pk}/change/")
        assert page.status_code == 200 and b"Gated workers" in page.content and worker.encode() in page.content
    listing = admin_client.get("/admin/evaluation/workergate/")
    assert b"exact binomial" in listing.content and b"wilcoxon perturbation test" in listing.content


# Gate off -------------------------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("make", [span_campaign, ranking_campaign], ids=["esa", "ranking"])
def test_gate_off_changes_nothing(make, django_capture_on_commit_callbacks):
    campaign = make(redundancy=1, gate=False)
    assert not campaign.options.get("gate")
    finish, rng, client = finisher(campaign, django_capture_on_commit_callbacks), random.Random(5), Client()
    assert finish(client, "clicker", Judge("random"), rng)
    assert finish(client, "clicker", Judge("random"), rng)
    assert not WorkerGate.objects.exists() and not campaign.blocked_annotators.exists()


# Through a real Celery worker -----------------------------------------------------------------------------------


@pytest.fixture
def gate_worker(transactional_db, tmp_path):
    """A real Celery worker (as tests/test_e2e_celery.py starts one); yields the path of its log."""
    log_path = tmp_path / "celery-worker.log"
    with running_worker("gate", log_path, purpose="the live gate test"):
        yield log_path


@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
def test_the_gate_runs_in_a_real_worker_and_the_next_request_is_refused(gate_worker):
    """A worker finishes a HIT through the annotator API; the commit's signal queues the gate on the broker, the
    worker process runs it, and the worker's next request gets the polite page; the same for a ranker."""
    rng = random.Random(9)
    spans, ranking = span_campaign("esa", redundancy=1), ranking_campaign(redundancy=1)
    client = Client()
    span_code = complete_span_hit(client, spans.slug, "flat", Judge("constant"), SPAN_QUALITY, rng)
    ranking_code = complete_ranking_hit(client, ranking.slug, "clicker", Judge("random"), RANKING_QUALITY, rng)
    assert span_code and ranking_code
    span_gate = wait_for(lambda: gated(spans, "flat"), timeout=60)
    ranking_gate = wait_for(lambda: gated(ranking, "clicker"), timeout=60)
    assert span_gate.rule == "test" and span_gate.p_value is None and "no p-value" in span_gate.reason
    assert ranking_gate.test == "gold-binomial" and ranking_gate.p_value >= 0.05
    for campaign, worker, code in ((spans, "flat", span_code), (ranking, "clicker", ranking_code)):
        page = client.get(f"/c/{campaign.slug}/start/", {"worker_id": worker})
        assert page.status_code == 403 and b"Thank you" in page.content and code.encode() in page.content
    log = gate_worker.read_text()
    assert log.count("evaluation.tasks.run_gate") >= 2 and "'gated': True" in log  # the worker ran the gate
