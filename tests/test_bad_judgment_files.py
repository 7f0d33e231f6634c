"""Judgment files with what no database can store are refused whole, line and reason, never a 500 (and
nothing is written): over-long ids, a huge sid, NUL bytes, and a HITId that COPY would read as NULL."""
import pytest

from annotation.models import Campaign, Judgment
from annotation.services.campaign_import import CampaignFileError
from annotation.services.judgment_import import import_judgments

pytestmark = pytest.mark.django_db
HEADER = "HITId WorkerId Input.src Input.trg Input.item hit sys_id rid type sid score time"


def wmt(*rows: str) -> list[bytes]:
    return [(line + "\n").encode() for line in (HEADER, *rows)]


@pytest.mark.parametrize("row, reason", [
    ("H1 " + "w" * 300 + " de en 1 1 sysA 1 SYSTEM 3 50 10", "WorkerId must be at most 255"),
    ("H1 w1 de en 1 1 " + "s" * 201 + " 1 SYSTEM 3 50 10", "sys_id must be at most 200"),
    ("H" * 101 + " w1 de en 1 1 sysA 1 SYSTEM 3 50 10", "HITId must be at most 100"),
    ("H1 w1 de en 1 1 sysA 1 SYSTEM " + "9" * 5000 + " 50 10", "sid must be an integer below 2^31"),
    ("H1 w1 de en 1 1 sysA 1 SYSTEM 3 " + "9" * 400 + " 10", "score must lie between 0 and 100"),
    ("H1 w\x00x de en 1 1 sysA 1 SYSTEM 3 50 10", "WorkerId must not contain NUL"),
])
def test_bad_wmt_da_lines_are_refused_whole(row, reason):
    good = "H1 w1 de en 1 1 sysA 1 SYSTEM 4 60 10"
    with pytest.raises(CampaignFileError) as refused:
        import_judgments(wmt(good, row), fmt="wmt-da", name="Bad")
    assert any(line == 3 and reason in text for line, text in refused.value.errors), refused.value.errors
    assert not Campaign.objects.exists() and not Judgment.objects.exists()


def test_a_hit_id_spelled_like_copys_null_is_kept_as_text():
    lines = wmt(r"\N w1 de en 1 1 sysA 1 SYSTEM 4 60 10", r"\N w1 de en 1 1 sysA 1 BAD_REF 4 20 10")
    campaign = import_judgments(lines, fmt="wmt-da", name="Null-looking").campaign
    assert list(campaign.hits.values_list("external_id", flat=True)) == [r"\N"]
    assert Judgment.objects.filter(campaign=campaign).count() == 2


def test_bad_pairwise_csv_lines_are_refused_whole():
    lines = [b"rater,criterion,unit,item,choice,spam\n", ("r" * 300 + ",adequacy,sentence,s-1,A,\n").encode(),
             b"r\x00,adequacy,sentence,s-2,A,\n"]
    with pytest.raises(CampaignFileError) as refused:
        import_judgments(lines, fmt="pairwise-csv", name="Bad pairwise", systems=["A", "B"])
    reasons = dict(refused.value.errors)
    assert "rater must be at most 255" in reasons[2] and "NUL" in reasons[3]
    assert not Campaign.objects.exists()
