"""The `esa-jsonl` wave field (issue 25, defect 6; docs/api.md §5.5, docs/methods.md §11): an optional integer
from 1, default 1, kept with each judgment (its item's payload) and written back by the esa-jsonl export, so the
file round-trips; a bad wave refuses the file with its line."""
import io
import json

import pytest

from annotation.models import Campaign, HitItem, Judgment
from annotation.services.campaign_import import CampaignFileError
from annotation.services.judgment_import import import_judgments

pytestmark = pytest.mark.django_db


def record(system: str, seg: int, score: float, wave: int | None = None, rater: str = "r1") -> dict:
    line = {"system": system, "doc_id": "d1", "seg_id": seg, "rater": rater, "score": score, "spans": [],
            "target": f"{system} translation {seg}."}
    return line if wave is None else {**line, "wave": wave}


#: Item 1 rated by r1 in wave 1 and again in wave 2; item 2 only in wave 1 (no field: the default).
RECORDS = [record("A", 1, 70), record("A", 1, 90, wave=2), record("A", 2, 60),
           record("B", 1, 50), record("B", 1, 40, wave=2), record("B", 2, 55, wave=1)]


def encoded(records: list[dict]) -> list[bytes]:
    return [(json.dumps(r) + "\n").encode() for r in records]


def waves_of(campaign) -> list[tuple[str, int, float, int]]:
    rows = Judgment.objects.filter(campaign=campaign).values_list(
        "item__output__system__name", "item__segment__seg_id", "score", "item__payload")
    return sorted((system, seg, score, payload.get("wave", 1)) for system, seg, score, payload in rows)


def test_waves_are_stored_with_each_judgment_default_one():
    campaign = import_judgments(encoded(RECORDS), fmt="esa-jsonl", name="Two waves").campaign
    assert waves_of(campaign) == [("A", 1, 70.0, 1), ("A", 1, 90.0, 2), ("A", 2, 60.0, 1),
                                  ("B", 1, 40.0, 2), ("B", 1, 50.0, 1), ("B", 2, 55.0, 1)]
    # wave 1 is the default: nothing stored for it, as for files without waves
    assert HitItem.objects.filter(hit__campaign=campaign, payload__has_key="wave").count() == 2


def test_the_esa_export_writes_the_waves_back_and_re_imports_the_same(api, researcher):
    original = import_judgments(encoded(RECORDS), fmt="esa-jsonl", name="Waves", owner=researcher).campaign
    response = api.get(f"/api/campaigns/{original.slug}/judgments/", {"format": "esa-jsonl"})
    assert response.status_code == 200
    jsonl = b"".join(response.streaming_content)
    written = [json.loads(line) for line in jsonl.decode().splitlines()]
    assert sorted((r["system"], r["score"], r.get("wave")) for r in written) == [
        ("A", 60.0, None), ("A", 70.0, None), ("A", 90.0, 2), ("B", 40.0, 2), ("B", 50.0, None), ("B", 55.0, None)]
    again = import_judgments(io.BytesIO(jsonl), fmt="esa-jsonl", name="Waves again", owner=researcher).campaign
    assert waves_of(again) == waves_of(original)
    response = api.get(f"/api/campaigns/{again.slug}/judgments/", {"format": "esa-jsonl"})
    assert b"".join(response.streaming_content) == jsonl  # the export of the re-import is the same file


@pytest.mark.parametrize("wave", [0, -1, 1.5, "2", True, None, 2**31])
def test_a_bad_wave_refuses_the_file_with_its_line(wave):
    with pytest.raises(CampaignFileError) as info:
        import_judgments(encoded([RECORDS[0], {**RECORDS[1], "wave": wave}]), fmt="esa-jsonl", name="Bad wave")
    assert [line for line, _ in info.value.errors] == [2]
    assert info.value.errors[0][1].startswith("'wave' must be an integer from 1 below 2^31")
    assert Campaign.objects.count() == 0


def test_wmt25_significance_pairs_item_wave_slots_when_two_waves_rated_an_item():
    """WMT25 compares two systems on the (item, wave) slots both have (docs/methods.md §11.4): 16 slot
    differences here, p equal to scipy's one-sided Wilcoxon on them, where pairing the item means (8
    differences) gives another p. Item 9 has a wave-2 rating of A only: no shared slot, left out."""
    from scipy import stats as sps

    from evaluation.analyses import compute_results
    from evaluation.models import ResultTable

    wave1 = [5, 3, -2, 4, 6, -1, 2, 7]
    wave2 = [-4, 2, 3, -6, 1, 5, -3, 2]
    records = []
    for wave, diffs in ((1, wave1), (2, wave2)):
        for item, diff in enumerate(diffs, start=1):
            a = 60 + 3 * item + wave
            records += [record("A", item, a, wave), record("B", item, a - diff, wave)]
    records.append(record("A", 9, 80, 2))
    campaign = import_judgments(encoded(records), fmt="esa-jsonl", name="WMT25 waves").campaign
    campaign.options = {**campaign.options, "statistics_preset": "wmt25-esa"}
    campaign.save(update_fields=["options"])
    compute_results(campaign)
    rows = [row for table in ResultTable.objects.filter(campaign=campaign, name="significance") for row in table.rows]
    a_over_b = next(row for row in rows if (row["system"], row["opponent"]) == ("A", "B"))
    slots = sps.wilcoxon(wave1 + wave2, zero_method="wilcox", correction=False, alternative="greater",
                         method="auto").pvalue
    item_means = sps.wilcoxon([(x + y) / 2 for x, y in zip(wave1, wave2, strict=True)], zero_method="wilcox",
                              correction=False, alternative="greater", method="auto").pvalue
    assert a_over_b["shared_items"] == 16 and a_over_b["method"] == "wmt25"
    assert a_over_b["p_value"] == pytest.approx(slots, rel=1e-9)
    assert abs(slots - item_means) > 0.01  # the item-mean pairing the platform used before gives another p
