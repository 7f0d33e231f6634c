"""Published files import as published (issue 25, defect 8; docs/methods.md §8, §11): a field that enters no
figure and cannot be read (WMT09's TIME holding a task name) is stored as missing, an unclosed `<v>` of Google's
MQM TSVs runs to the end of the text; both with a warning naming the lines, shown by the command and the API.
Whatever would change a figure still refuses the whole file. The files are the smallest such, written here."""
import io
import json

import pytest
from django.core.management import call_command

from annotation.models import Campaign, Judgment
from annotation.services.campaign_import import CampaignFileError
from annotation.services.judgment_import import import_judgments

pytestmark = pytest.mark.django_db

# WMT09's layout: tab-separated, no header; line 2's TIME holds a task name, as line 16,635 of the published file
WMT09 = [
    "1001\tNews German-English\tRANK\t7\tj1\t30\tgoogle\t1\t\tuedin\t2\t\tA comment",
    "1002\tNews German-English\tRANK\t8\tj2\tNews German-English\tgoogle\t2\t\tuedin\t1\t\t",
    "1003\tNews German-English\tRANK\t9\tj2\t01:05\tgoogle\t1\t\tuedin\t1\t\t",
]
TIME_WARNING = "TIME is neither seconds nor [H:]MM:SS and enters no figure: stored as missing on line 2"

MQM_HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity"
MQM = [
    "sysA\td1\t1\t1\tr1\tDas ist gut.\tThat <v>is</v> good.\tAccuracy/Mistranslation\tMajor",
    # line 3: a <v> never closed, as one row in each of Google's TED files
    "sysA\td1\t2\t2\tr1\tNoch einer.\tAnother <v>one here.\tFluency/Grammar\tMinor",
]
MQM_WARNING = "a <v> is never closed by </v>: its span runs to the end of the text on line 3"


def encoded(rows: list[str]) -> list[bytes]:
    return [(row + "\n").encode() for row in rows]


def test_a_wmt09_time_holding_a_task_name_is_stored_as_missing_with_a_warning():
    result = import_judgments(encoded(WMT09), fmt="wmt-rank", name="WMT09")
    assert result.judgments == 3 and result.warnings == [TIME_WARNING]
    stored = Judgment.objects.filter(campaign=result.campaign).order_by("item__hit__number", "item__position")
    assert sorted((j.item.segment.seg_id, j.seconds, j.ranks["1"], j.ranks["2"]) for j in stored) == [
        (7, 30.0, 1, 2), (8, None, 2, 1), (9, 65.0, 1, 1)]


def test_a_field_that_changes_a_figure_still_refuses_the_file():
    bad_rank = WMT09 + ["1004\tNews German-English\tRANK\t10\tj3\t5\tgoogle\tfirst\t\tuedin\t1\t\t"]
    with pytest.raises(CampaignFileError) as info:
        import_judgments(encoded(bad_rank), fmt="wmt-rank", name="WMT09")
    assert [line for line, _ in info.value.errors] == [4]
    assert Campaign.objects.count() == 0 and Judgment.objects.count() == 0


def test_an_unclosed_mark_runs_to_the_end_of_the_text_with_a_warning():
    result = import_judgments(encoded([MQM_HEADER, *MQM]), fmt="mqm-tsv", name="TED", pair="de-en")
    assert result.judgments == 2 and result.warnings == [MQM_WARNING]
    spans = {j.item.segment.seg_id: j.spans for j in Judgment.objects.filter(campaign=result.campaign)}
    assert spans[1] == [{"start": 5, "end": 7, "severity": "major", "category": "Accuracy/Mistranslation"}]
    assert spans[2] == [{"start": 8, "end": len("Another one here."), "severity": "minor",
                         "category": "Fluency/Grammar"}]


def test_a_closing_mark_without_an_opening_one_still_refuses_the_file():
    with pytest.raises(CampaignFileError) as info:
        import_judgments(encoded([MQM_HEADER, MQM[0].replace("<v>is", "is")]), fmt="mqm-tsv", name="TED")
    assert info.value.errors == [(2, "target: a </v> closes no <v>")]
    assert Campaign.objects.count() == 0


def test_the_command_shows_the_warnings(tmp_path):
    for fmt, rows, name, warning in (("wmt-rank", WMT09, "WMT09 cli", TIME_WARNING),
                                     ("mqm-tsv", [MQM_HEADER, *MQM], "TED cli", MQM_WARNING)):
        path = tmp_path / f"{fmt}.txt"
        path.write_bytes(b"".join(encoded(rows)))
        out = io.StringIO()
        call_command("import_judgments", str(path), "--format", fmt, "--name", name, stdout=out)
        shown = json.loads(out.getvalue())
        assert shown["warnings"] == [warning] and shown["judgments"] in (2, 3)


def test_the_api_shows_the_warnings(api):
    for fmt, rows, name, warning in (("wmt-rank", WMT09, "WMT09 api", TIME_WARNING),
                                     ("mqm-tsv", [MQM_HEADER, *MQM], "TED api", MQM_WARNING)):
        handle = io.BytesIO(b"".join(encoded(rows)))
        handle.name = "published.txt"
        response = api.post("/api/campaigns/import-judgments/", {"file": handle, "format": fmt, "name": name},
                            format="multipart")
        assert response.status_code == 201, response.content
        assert response.json()["warnings"] == [warning]


@pytest.mark.django_db(transaction=True)  # the job starts when the upload's transaction commits
def test_a_background_import_shows_the_warnings_in_its_result(api, settings, tmp_path):
    """A file above IMPORT_INLINE_MAX_BYTES is imported by a job (docs/api.md §4): its result carries them too."""
    from .test_import_jobs import accepted, wait_for_job

    settings.IMPORT_UPLOAD_DIR = str(tmp_path / "imports")
    settings.IMPORT_INLINE_MAX_BYTES = 100
    handle = io.BytesIO(b"".join(encoded(WMT09)))
    handle.name = "wmt09.tsv"
    response = api.post("/api/campaigns/import-judgments/", {"file": handle, "format": "wmt-rank",
                                                             "name": "WMT09 job"}, format="multipart")
    status = wait_for_job(api, accepted(response))
    assert status["status"] == "done", status
    assert status["result"] == {"campaign": "wmt09-job", "judgments": 3, "warnings": [TIME_WARNING]}


def test_imported_error_span_campaigns_report_the_presets_reliability_test():
    """Defect 11: the workers' test of an imported ESA or MQM campaign is its preset's Wilcoxon (docs/methods.md
    §11.2), not the model's default paired t-test."""
    from evaluation.analyses import compute_results
    from evaluation.models import CampaignResults, WorkerResult

    esa = [json.dumps({"system": system, "doc_id": "d1", "seg_id": seg, "rater": "r1", "score": score})
           for system, seg, score in (("A", 1, 70), ("B", 1, 60), ("A", 2, 80), ("B", 2, 65))]
    for fmt, rows in (("esa-jsonl", esa), ("mqm-tsv", [MQM_HEADER, *MQM])):
        campaign = import_judgments(encoded(rows), fmt=fmt, name=f"Imported {fmt}").campaign
        assert (campaign.qc_test, campaign.qc_threshold) == ("wilcoxon", 0.05)
        compute_results(campaign)
        summary = CampaignResults.objects.get(campaign=campaign).summary
        assert summary["conventions"]["test"] == "wilcoxon"
        assert summary["conventions"]["differs_from_preset"] == []
        assert set(WorkerResult.objects.filter(campaign=campaign).values_list("test", flat=True)) == {"wilcoxon"}
