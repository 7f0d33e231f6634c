"""A WMT ranking file of several tasks imports in one pass, one campaign per task (docs/api.md §5.3)."""
import io
import json

import pytest
from django.core.management import call_command

from annotation.models import Campaign
from annotation.protocols.ranking.formats import parse_wmt_rank, task_languages
from annotation.services.campaign_import import CampaignFileError
from annotation.services.judgment_import import import_judgments

HEADER = "TASK,TYPE,ITEM_ID,ANNOTATOR_ID,TIME,SYSTEM_0,SCORE_0_A,SCORE_0_B,SYSTEM_1,SCORE_1_A,SCORE_1_B"
TASKS = ["News Czech-English", "News German-English", "News English-German"]
ROWS = [
    "News Czech-English,RANK,1,j1,10,cu,1,,uedin,2,",
    "News German-English,RANK,1,j2,12,kit,2,,uedin,1,",
    "News Czech-English,RANK,2,j1,11,cu,2,,uedin,1,",
    "News English-German,RANK,1,j3,9,kit,1,,limsi,1,",
    "News German-English,RANK,2,j2,8,kit,1,,uedin,3,",
    "News Czech-English,RANK,1,j4,7,cu,1,,uedin,2,",
]


def lines(rows, header=HEADER):
    return [(line + "\n").encode() for line in [header, *rows]]


class Counted(list):
    """The file's lines, counting how often they are read from the start."""

    passes = 0

    def __iter__(self):
        self.passes += 1
        return super().__iter__()


def test_a_file_of_several_tasks_is_read_once_into_one_parse_per_task():
    file = Counted(lines(ROWS))
    parsed = parse_wmt_rank(file)
    assert file.passes == 1
    assert [p.options["pair"] for p in parsed] == sorted(TASKS)
    assert [(p.source_language, p.target_language) for p in parsed] == [("cs", "en"), ("en", "de"), ("de", "en")]
    assert [len(p.rows) for p in parsed] == [3, 1, 2]


def test_an_unknown_pair_is_refused_listing_every_task():
    """Today the refusal listed ten and "and 8 more": the caller could not see the task to choose."""
    rows = [f"Task{k:02d} German-English,RANK,1,j1,10,kit,1,,uedin,2," for k in range(18)]
    with pytest.raises(CampaignFileError) as info:
        parse_wmt_rank(lines(rows), pair="Task99")
    message = str(info.value)
    assert "more" not in message and all(f"Task{k:02d} German-English" in message for k in range(18))


def test_a_wmt08_task_gives_its_languages():
    """Today a WMT08/09 campaign had an empty source language and target `en`, even for English-German."""
    assert task_languages("News German-English") == ("de", "en")
    assert task_languages("Europarl English-Spanish") == ("en", "es")
    assert task_languages("News") == ("", "")
    parsed = parse_wmt_rank(lines(ROWS), pair="News English-German")
    assert (parsed.source_language, parsed.target_language) == ("en", "de")


def _tables(campaign):
    from evaluation.analyses import compute_results
    from evaluation.services.results_read import stored_rows

    compute_results(campaign)
    return {family: sorted(json.dumps(r, sort_keys=True) for r in stored_rows(campaign, "systems", family))
            for family in ("geq_others", "expected_wins")}


@pytest.mark.django_db
def test_command_makes_one_campaign_per_task_in_a_study_equal_to_each_alone(tmp_path, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    path = tmp_path / "wmt09.csv"
    path.write_bytes(b"".join(lines(ROWS)))
    out = io.StringIO()
    call_command("import_judgments", str(path), "--format", "wmt-rank", "--name", "WMT09",
                 "--study", "WMT09 ranks", stdout=out)
    answer = json.loads(out.getvalue())
    made = answer["campaigns"]
    assert [(c["pair"], c["judgments"]) for c in made] == list(zip(sorted(TASKS), [3, 1, 2], strict=True))
    campaigns = [Campaign.objects.get(slug=c["campaign"]) for c in made]
    assert {c.study.name for c in campaigns} == {"WMT09 ranks"}
    assert [(c.source_language, c.target_language) for c in campaigns] == [("cs", "en"), ("en", "de"),
                                                                             ("de", "en")]
    for campaign in campaigns:
        task = campaign.options["pair"]
        alone = import_judgments(lines(ROWS), fmt="wmt-rank", name=f"alone {task}", pair=task).campaign
        assert _tables(campaign) == _tables(alone)
        assert _tables(campaign)["geq_others"]


@pytest.mark.django_db
def test_api_answers_with_every_campaign_made(api):
    handle = io.BytesIO(b"".join(lines(ROWS)))
    handle.name = "wmt09.csv"
    response = api.post("/api/campaigns/import-judgments/", {"file": handle, "format": "wmt-rank",
                                                             "name": "WMT09 API"}, format="multipart")
    assert response.status_code == 201, response.content
    made = response.json()["campaigns"]
    assert [c["pair"] for c in made] == sorted(TASKS)
    assert Campaign.objects.filter(slug__in=[c["campaign"] for c in made]).count() == 3
    handle = io.BytesIO(b"".join(lines(ROWS)))
    handle.name = "wmt09.csv"
    response = api.post("/api/campaigns/import-judgments/", {"file": handle, "format": "wmt-rank",
                                                             "name": "One", "pair": "News German-English"},
                        format="multipart")
    assert response.status_code == 201 and "campaigns" not in response.json()


def test_wmt13_language_names_become_codes_and_name_the_pair():
    header = "srclang,trglang,srcIndex,documentId,segmentId,judgeId,system1Id,system2Id,system1rank,system2rank"
    rows = ["Czech,English,1,d,1,j1,cu,uedin,1,2", "German,English,1,d,1,j2,kit,uedin,2,1"]
    parsed = parse_wmt_rank(lines(rows, header), pair="Czech-English")
    assert (parsed.source_language, parsed.target_language, len(parsed.rows)) == ("cs", "en", 1)
