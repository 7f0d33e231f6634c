"""The Stages card counts HITs done, not assignments (issue 23): its percentage is HITs done × redundancy of HITs ×
redundancy, as the campaign's progress counts a HIT done elsewhere (`campaign_counts`). With redundancy 2, one
worker finishing a HIT was 50 % of that HIT's assignments but no HIT done; a HIT finished by three workers where two
were asked made up for another HIT nobody finished, and the stage read "complete"."""
import importlib

import pytest
from django.apps import apps
from django.test import Client

from annotation.models import Annotator, Assignment, Campaign
from annotation.services.progress import campaign_counts
from annotation.services.stages import FIRST_STAGE, input_complete, stage_progress, task_campaign_ids

from .pilot import pilot

pytestmark = pytest.mark.django_db


def test_the_stage_percentage_counts_hits_done_times_redundancy(admin_user):
    root = pilot("post-edit", workers=("editor-1",), redundancy=2)[0]
    first = stage_progress(root)[0]
    counts = campaign_counts([root])[root.pk]
    assert (first["redundancy"], first["assignments_done"]) == (2, 1)  # one of the two workers asked finished
    assert first["hits_done"] == counts["hits_done"] == 0
    assert first["percent"] == 0 and not first["complete"]  # the assignments' share was 1 / (2 × HITs)
    page = Client()
    page.force_login(admin_user)
    html = page.get(f"/admin/annotation/campaign/{root.pk}/change/").content.decode()
    assert f"0 / {first['hits']} HITs done (0 %)" in html
    assert f'<progress value="0" max="{first["hits"]}"' in html
    # places, as the campaign page and the campaign list say (docs/api.md): one worker finishing a HIT is one place
    assert (first["places_done"], first["places_total"]) == (counts["places_done"], counts["places_total"]) \
        == (1, 2 * first["hits"])
    card = html.split('class="stage-pipeline"')[1].split("</ol>")[0]
    assert f"<span>1 / {2 * first['hits']} places done ·</span> <span>2 per HIT</span>" in card
    assert "assignment" not in card


def test_an_overfull_hit_does_not_make_up_for_an_unfinished_one():
    """Redundancy 2: the first HIT finished by three workers (one came back after its idle timeout), the last by one,
    every other by two: as many finished assignments as the stage needs, yet one HIT is not done."""
    root = pilot("post-edit", workers=(), redundancy=2)[0]
    hits = list(root.hits.order_by("number"))
    assert len(hits) >= 2
    finished = {hits[0].pk: 3, hits[-1].pk: 1}
    workers = [Annotator.objects.create(external_id=f"w{k}") for k in range(3)]
    Assignment.objects.bulk_create(Assignment(campaign=root, hit=hit, annotator=workers[k],
                                              status=Assignment.Status.COMPLETED)
                                   for hit in hits for k in range(finished.get(hit.pk, 2)))
    first = stage_progress(root)[0]
    assert first["assignments_done"] == first["assignments_needed"] == 2 * len(hits)
    assert first["hits_done"] == campaign_counts([root])[root.pk]["hits_done"] == len(hits) - 1
    assert first["percent"] == round(100 * (len(hits) - 1) / len(hits))
    assert not first["complete"] and not input_complete(root)


def test_the_migration_names_an_unnamed_first_stage_that_feeds_another():
    """Tasks stored before `FIRST_STAGE` (an error-span campaign with a review stage had no stage name): their first
    stage gets it, a one-stage campaign and a named stage keep theirs."""
    root, stage = pilot("post-edit", workers=())[:2]
    alone = pilot("adequacy", workers=())[0]
    Campaign.objects.filter(pk=root.pk).update(stage_name="")
    assert task_campaign_ids(Campaign.objects.get(pk=root.pk)) == [root.pk]  # the task looked like one stage
    importlib.import_module("annotation.migrations.0024_first_stage_named").name_first_stages(apps, None)
    names = dict(Campaign.objects.values_list("pk", "stage_name"))
    assert (names[root.pk], names[stage.pk], names[alone.pk]) == (FIRST_STAGE, stage.stage_name, "")
    assert set(task_campaign_ids(Campaign.objects.get(pk=root.pk))) >= {root.pk, stage.pk}
