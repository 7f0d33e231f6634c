"""A reference-translation task's results page after a pilot (issue 23): its freshness counts every stage's
judgments (translate and detect-MT) as the page's other counts do, and its "not enough data" line says what
happened to the translators (excluded as machine translation by the detect stage), not that "workers" failed "the
reliability test", which this task does not run."""
import pytest
from django.test import Client

from annotation.models import Judgment
from annotation.services.stages import task_judgments
from evaluation.analyses import compute_results
from evaluation.services.results_read import freshness

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
