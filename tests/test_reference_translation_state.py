"""A reference-translation task's results page after a pilot (issue 23): its freshness counts every stage's
judgments (translate and detect-MT) as the page's other counts do, and its "not enough data" line says what
happened to the translators (excluded as machine translation by the detect stage), not that "workers" failed "the
reliability test", which this task does not run."""
import pytest
from django.test import Client

from annotation.models import Judgment
from annotation.services.stages import task_judgments
from evaluation.analyses import compute_results
from evaluation.services.results_read import freshness, stored_rows

from .pilot import pilot, work

pytestmark = pytest.mark.django_db


def test_freshness_counts_both_stages_and_the_state_says_the_translators_were_excluded(admin_user):
    root, detect = pilot("reference-translation")
    work(detect, ("judge-1", "judge-2", "judge-3", "judge-4"), hits=20)  # every translation judged
    # every detect judge marks every candidate machine-made: each translator's judged translations are flagged
    for judgment in Judgment.objects.filter(campaign=detect).select_related("item"):
        judgment.answer = {"machine": sorted(c["key"] for c in judgment.item.payload["candidates"])}
        judgment.save(update_fields=["answer"])
    compute_results(root)
    fresh = freshness(root)
    assert task_judgments(root).count() > root.judgments.count() > 0  # the detect stage's count too
    assert (fresh.judgments_covered, fresh.new) == (task_judgments(root).count(), 0)
    missing = fresh.state["missing"]
    assert [m["what"] for m in missing] == ["accepted"]
    text = missing[0]["text"]
    assert "excluded as machine translation" in text and "detect-MT" in text
    assert "reliability test" not in text and "workers" not in text
    work(detect, ("late-judge",), items=1)  # a later detect-stage judgment is new, on either stage's page
    assert freshness(root).new == 1
    page = Client()
    page.force_login(admin_user)
    html = page.get(f"/results/{detect.slug}/", follow=True).content.decode()
    assert "1 new judgment since" in html and "excluded as machine translation" in html


def test_one_of_two_translators_excluded_is_not_ready_and_says_why(admin_user):
    """Two translators, the detect judges mark only the second's translations machine-made: the first, the one
    accepted, has no other accepted translator to be scored against, so the state is not "ready"."""
    root, detect = pilot("reference-translation", workers=("honest", "paster"))
    work(detect, ("judge-1", "judge-2", "judge-3"), hits=20)
    by_paster = set(Judgment.objects.filter(campaign=root, annotator__external_id="paster")
                    .values_list("pk", flat=True))
    for judgment in Judgment.objects.filter(campaign=detect).select_related("item"):
        candidates = judgment.item.payload["candidates"]
        judgment.answer = {"machine": sorted(c["key"] for c in candidates if c.get("judgment") in by_paster)}
        judgment.save(update_fields=["answer"])
    compute_results(root)
    rows = {r["system"]: r for r in stored_rows(root, "systems")}
    assert (rows["honest"]["excluded"], rows["paster"]["excluded"]) == (False, True)
    assert rows["honest"]["score"] is None and rows["honest"]["n"] == 0  # nobody accepted to compare against
    state = freshness(root).state
    assert state["status"] == "not_enough_data" and [m["what"] for m in state["missing"]] == ["references"]
    text = state["missing"][0]["text"]
    assert "only one of the 2 translators is accepted" in text and "leave-one-out BLEU" in text
    page = Client()
    page.force_login(admin_user)
    assert "only one of the 2 translators is accepted" in page.get(f"/results/{root.slug}/").content.decode()
