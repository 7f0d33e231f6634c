"""The results page's "over N judgments" and its progress chart count the same thing (issue 23): every judgment
stored up to the one the results cover, of every stage of a multi-stage task. Reading comprehension said "over 0
judgments" after its workers had written and voted (it counted graded answers), and post-editing counted the edits
of finished HITs while its chart counted every judgment."""
import re

import pytest
from django.test import Client

from annotation.models import Judgment
from annotation.services.stages import task_stages
from evaluation.analyses import compute_results
from evaluation.models import CampaignResults
from evaluation.services.results_read import freshness

from .pilot import pilot, work

pytestmark = pytest.mark.django_db


def over(html: str) -> int:
    return int(re.search(r"over <strong>([\d,]+)</strong> judgment", html).group(1).replace(",", ""))


@pytest.mark.parametrize("protocol", ["reading-comprehension", "post-edit", "reference-translation", "esa"])
def test_the_sentence_and_the_chart_count_every_judgment_of_the_task(protocol, admin_user):
    campaigns = pilot(protocol)
    root = campaigns[0]
    compute_results(root)
    header = CampaignResults.objects.get(campaign=root)
    stored = Judgment.objects.filter(campaign__in=task_stages(root)).count()
    assert stored > Judgment.objects.filter(campaign=root).count() or len(campaigns) == 1
    assert header.judgments == header.progress["judgments"][-1] == stored > 0
    client = Client()
    client.force_login(admin_user)
    html = client.get(f"/results/{root.slug}/").content.decode()
    assert over(html) == stored
    assert ("in every stage of the task" in html) == (len(campaigns) > 1)
    assert freshness(root).new == 0


def test_a_later_stage_judgment_makes_the_task_results_stale(admin_user):
    """A vote, answer or grade changes a reading-comprehension task's results, so it counts as new since them."""
    write, *later = pilot("reading-comprehension", hits=1)
    compute_results(write)
    work(later[-1], workers=("late-grader",))
    added = Judgment.objects.filter(campaign=later[-1], annotator__external_id="late-grader").count()
    assert added > 0 and freshness(write).new == added
