"""Campaign import (docs/api.md §2-§4): good files, every kind of bad file, three entry points."""
import io
import json
from collections import Counter

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Campaign, Document, Hit, HitItem, Segment, System, SystemOutput
from annotation.services.campaign_import import CampaignFileError, import_campaign

from .conftest import as_bytes, campaign_lines

pytestmark = pytest.mark.django_db


def test_good_file_is_imported_with_its_hits():
    lines = campaign_lines(70, systems=("A", "B", "C"))
    result = import_campaign(as_bytes(lines), name="News de-en", protocol="adequacy", redundancy=3, seed=1)
    campaign = result.campaign
    assert campaign.slug == "news-de-en" and campaign.redundancy == 3 and campaign.seed == 1
    assert Document.objects.filter(campaign=campaign).count() == 5
    assert Segment.objects.filter(campaign=campaign).count() == 70
    assert set(System.objects.filter(campaign=campaign).values_list("name", flat=True)) == {"A", "B", "C"}
    assert SystemOutput.objects.filter(campaign=campaign).count() == 210
    assert result.hits == Hit.objects.filter(campaign=campaign).count() == 3  # 210 outputs / 70 per HIT
    assert Counter(HitItem.objects.filter(hit__campaign=campaign).values_list("item_type", flat=True)) == {
        "system": 210, "bad_ref": 30, "repeat": 30, "reference": 30}
    # documents keep the file's order, segments are ordered by seg_id within them
    assert list(Document.objects.filter(campaign=campaign).values_list("doc_id", flat=True)) == [
        f"doc-{i}" for i in range(5)]


def test_same_seed_gives_the_same_hits():
    lines = as_bytes(campaign_lines(35))
    a = import_campaign(lines, name="a", protocol="fluency", seed=9).campaign
    b = import_campaign(lines, name="b", protocol="fluency", seed=9).campaign

    def layout(c):
        return list(HitItem.objects.filter(hit__campaign=c).order_by("hit__number", "position").values_list(
            "item_type", "segment__seg_id", "segment__document__doc_id", "output__system__name", "text"))
    assert layout(a) == layout(b)


def test_names_get_unique_slugs():
    lines = as_bytes(campaign_lines(35))
    first = import_campaign(lines, name="Same", protocol="fluency").campaign
    second = import_campaign(lines, name="Same", protocol="fluency").campaign
    assert (first.slug, second.slug) == ("same", "same-2")


def test_a_slug_never_takes_a_word_a_fixed_route_uses():
    campaign = import_campaign(as_bytes(campaign_lines(35)), name="Compare", protocol="fluency").campaign
    assert campaign.slug == "compare-2"  # /results/compare/ is the test-set comparison page


def refused(lines, **kwargs) -> CampaignFileError:
    options = {"name": "bad", "protocol": "adequacy", **kwargs}
    with pytest.raises(CampaignFileError) as info:
        import_campaign([line.encode() if isinstance(line, str) else line for line in lines], **options)
    assert Campaign.objects.count() == 0 and Segment.objects.count() == 0 and HitItem.objects.count() == 0
    return info.value


def good(i=0, **changes):
    record = json.loads(campaign_lines(1)[0])
    record["seg_id"] = i + 1
    record.update(changes)
    return record


def file_with(bad_line: str, at: int = 3, total: int = 70) -> list[str]:
    lines = [json.dumps(good(i)) for i in range(total)]
    lines[at - 1] = bad_line
    return lines


@pytest.mark.parametrize("bad_line,reason", [
    ('{"doc_id": "d", "seg_id": 1,', "invalid JSON"),
    ('[1, 2, 3]', "each line must be a JSON object"),
    (json.dumps({k: v for k, v in good(2).items() if k != "source"}), "missing field 'source'"),
    (json.dumps({k: v for k, v in good(2).items() if k != "reference"}), "missing field 'reference'"),
    (json.dumps({k: v for k, v in good(2).items() if k != "seg_id"}), "missing field 'seg_id'"),
    (json.dumps({k: v for k, v in good(2).items() if k != "systems"}), "missing field 'systems'"),
    (json.dumps(good(2, seg_id="three")), "'seg_id' must be an integer"),
    (json.dumps(good(2, source="   ")), "'source' is empty"),
    (json.dumps(good(2, systems={"sys-A": "", "sys-B": "x y z"})), "the translation of system 'sys-A' is empty"),
    (json.dumps(good(2, systems={"sys-A": "one two three"})), "segment lacks systems: sys-B"),
    (json.dumps(good(2, systems={})), "'systems' must be a non-empty object"),
    (json.dumps(good(0)), "duplicate segment doc_id='doc-0' seg_id=1 (first on line 1)"),
])
def test_bad_line_is_refused_with_line_and_reason(bad_line, reason):
    error = refused(file_with(bad_line, at=3))
    assert (3, reason) in [(line, r[:len(reason)]) for line, r in error.errors], error.errors
    assert f"line 3: {reason}" in str(error)


def test_every_problem_is_listed_not_only_the_first():
    lines = file_with("not json", at=2)
    lines[9] = json.dumps(good(9, source=""))
    error = refused(lines)
    assert [line for line, _ in error.errors] == [2, 10]


def test_invalid_utf8_empty_file_and_bad_options():
    assert refused([b"\xff\xfe garbage\n"]).errors[0] == (1, "not valid UTF-8")
    assert refused([]).errors == [(0, "the file has no segments")]
    assert "unknown protocol 'nonsense'" in str(refused(campaign_lines(70), protocol="nonsense"))
    assert "multiple of 20" in str(refused(campaign_lines(70), hit_size=50))
    assert "redundancy" in str(refused(campaign_lines(70), redundancy=0))
    assert "at least 70 system outputs" in str(refused(campaign_lines(10)))


def test_fluency_does_not_need_a_reference_but_adequacy_does():
    lines = [json.dumps({k: v for k, v in good(i).items() if k != "reference"}) for i in range(70)]
    assert "missing field 'reference'" in str(refused(lines))
    with pytest.raises(CampaignFileError):  # fluency still needs references for its reference items
        import_campaign([line.encode() for line in lines], name="f", protocol="fluency")


def test_command_prints_one_json_line(tmp_path):
    path = tmp_path / "campaign.jsonl"
    path.write_text("\n".join(campaign_lines(70)) + "\n")
    out = io.StringIO()
    call_command("import_campaign", str(path), "--name", "CLI campaign", "--protocol", "fluency",
                 "--redundancy", "2", "--seed", "4", stdout=out)
    assert json.loads(out.getvalue()) == {"campaign": "cli-campaign", "hits": 2}
    campaign = Campaign.objects.get(slug="cli-campaign")
    assert (campaign.protocol, campaign.redundancy, campaign.seed) == ("fluency", 2, 4)


def test_command_refuses_a_bad_file_with_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(file_with("{oops", at=5)) + "\n")
    with pytest.raises(CommandError, match="line 5: invalid JSON"):
        call_command("import_campaign", str(path), "--name", "x", "--protocol", "adequacy")
    assert Campaign.objects.count() == 0


def upload(lines, name="campaign.jsonl"):
    handle = io.BytesIO("\n".join(lines).encode())
    handle.name = name
    return handle


def test_api_import(api):
    response = api.post("/api/campaigns/", {"file": upload(campaign_lines(70)), "name": "API campaign",
                                            "protocol": "source-adequacy", "redundancy": 3, "seed": 5,
                                            "target_language": "de"}, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json() == {"campaign": "api-campaign", "hits": 2}
    campaign = Campaign.objects.get(slug="api-campaign")
    assert (campaign.protocol, campaign.redundancy, campaign.target_language) == ("source-adequacy", 3, "de")


def test_api_import_refuses_a_bad_file(api):
    response = api.post("/api/campaigns/", {"file": upload(file_with("{", at=4)), "name": "x",
                                            "protocol": "adequacy"}, format="multipart")
    assert response.status_code == 400
    assert response.json()["errors"][0]["line"] == 4
    assert Campaign.objects.count() == 0
