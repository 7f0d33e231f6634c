"""Campaign lines no database or parser should meet (issue "Hardening" 8): each is refused with its line and a
precise reason, the API answers 400, and nothing is written. Also: line endings, a byte-order mark, and files
of many bad lines."""
import io
import json

import pytest

from annotation.building import text_lines
from annotation.building.campaign_files import MAX_DEPTH, MAX_KEPT_ERRORS, MAX_TEXT, CampaignFileError, too_deep
from annotation.models import Campaign, Document, HitItem, ImportJob, Segment, SystemOutput
from annotation.services.campaign_import import import_campaign

from .conftest import campaign_lines

pytestmark = pytest.mark.django_db

DEEP = f"JSON nested more than {MAX_DEPTH} levels deep"
UNSTORABLE = "must not contain NUL characters or lone surrogates"


def good(i: int = 2, **changes) -> dict:
    record = json.loads(campaign_lines(1)[0])
    record["seg_id"] = i + 1
    record.update(changes)
    return record


def file_with(bad_line: str, at: int = 3, total: int = 70) -> list[str]:
    lines = [json.dumps(good(i)) for i in range(total)]
    lines[at - 1] = bad_line
    return lines


def nothing_written():
    assert not Campaign.objects.exists() and not Document.objects.exists() and not Segment.objects.exists()
    assert not SystemOutput.objects.exists() and not HitItem.objects.exists()


def refused(lines, **options) -> CampaignFileError:
    with pytest.raises(CampaignFileError) as info:
        import_campaign([line.encode() if isinstance(line, str) else line for line in lines],
                        **{"name": "bad", "protocol": "adequacy", **options})
    nothing_written()
    return info.value


def with_systems(**systems) -> str:
    return json.dumps(good(systems={"sys-A": "one two three", "sys-B": "four five six", **systems}))


BAD_LINES = [
    pytest.param('{"doc_id": "d", "seg_id": 1, "x": ' + "[" * 100 + "]" * 100 + "}", DEEP, id="nested-deep"),
    pytest.param("[" * 200_000, DEEP, id="nested-unclosed"),
    pytest.param('{"doc_id": "d", "extra": ' + '{"a": ' * 30 + "1" + "}" * 30 + "}", DEEP, id="objects-deep"),
    pytest.param('{"doc_id": "d", "seg_id": ' + "7" * 5000 + ', "source": "s"}',
                 "invalid JSON (a number with too many digits)", id="seg_id-5000-digits"),
    pytest.param(json.dumps(good(seg_id=2**31)), "'seg_id' must be an integer between -2147483648 and 2147483647",
                 id="seg_id-2^31"),
    pytest.param(json.dumps(good(seg_id=-(2**31) - 1)),
                 "'seg_id' must be an integer between -2147483648 and 2147483647", id="seg_id-below"),
    pytest.param(json.dumps(good(seg_id=10**40)), "'seg_id' must be an integer between", id="seg_id-huge"),
    pytest.param(json.dumps(good(seg_id=3.0)), "'seg_id' must be an integer between", id="seg_id-float"),
    pytest.param(json.dumps(good(source="a\u0000b")), f"'source' {UNSTORABLE}", id="source-NUL"),
    pytest.param(json.dumps(good(reference="a\ud800b")), f"'reference' {UNSTORABLE}", id="reference-surrogate"),
    pytest.param(json.dumps(good(doc_id="d\u0000")), f"'doc_id' {UNSTORABLE}", id="doc_id-NUL"),
    pytest.param(with_systems(**{"sys-A": "text \udfff here"}), f"the translation of system 'sys-A' {UNSTORABLE}",
                 id="translation-surrogate"),
    pytest.param(with_systems(**{"sys-\u0000": "x y z"}),
                 "system name 'sys-\\x00' must be non-empty, at most 200 characters, without NUL characters",
                 id="system-name-NUL"),
    pytest.param(json.dumps(good(doc_id="d" * 201)), "'doc_id' must be a non-empty string of at most 200 characters",
                 id="doc_id-201"),
    pytest.param(with_systems(**{"s" * 201: "x y z"}), "system name 'sssss", id="system-name-201"),
    pytest.param(json.dumps(good(source="w " * (MAX_TEXT // 2) + "w")),
                 f"'source' must be at most {MAX_TEXT} characters, not {MAX_TEXT + 1}", id="source-too-long"),
    pytest.param(with_systems(**{"sys-B": "x" * (MAX_TEXT + 5)}),
                 f"the translation of system 'sys-B' must be at most {MAX_TEXT} characters, not {MAX_TEXT + 5}",
                 id="translation-too-long"),
    pytest.param(json.dumps(good(reference="r" * (MAX_TEXT + 1))), f"'reference' must be at most {MAX_TEXT}",
                 id="reference-too-long"),
    pytest.param(b'{"doc_id": "d\xff", "seg_id": 1}', "not valid UTF-8", id="latin-1-byte"),
    pytest.param(b'{"doc_id": "\xed\xa0\x80", "seg_id": 1}', "not valid UTF-8", id="utf8-encoded-surrogate"),
    pytest.param('{"doc_id": "d", "seg_id": NaN}', "'seg_id' must be an integer between", id="seg_id-NaN"),
]


@pytest.mark.parametrize("bad_line,reason", BAD_LINES)
def test_a_bad_line_is_refused_with_its_line_and_reason(bad_line, reason):
    lines = file_with("", at=3)
    lines[2] = bad_line
    error = refused(lines)
    assert any(line == 3 and r.startswith(reason) for line, r in error.errors), error.errors
    assert all(line == 3 for line, _ in error.errors), error.errors


@pytest.mark.parametrize("bad_line,reason", BAD_LINES[:12])
def test_the_api_answers_400_with_the_line_and_reason(api, bad_line, reason):
    lines = file_with("", at=5)
    lines[4] = bad_line
    body = ("\n".join(line if isinstance(line, str) else line.decode() for line in lines) + "\n").encode()
    handle = io.BytesIO(body)
    handle.name = "campaign.jsonl"
    response = api.post("/api/campaigns/", {"file": handle, "name": "x", "protocol": "adequacy"}, format="multipart")
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert errors and errors[0]["line"] == 5 and errors[0]["reason"].startswith(reason), errors
    nothing_written()
    assert not ImportJob.objects.exists()


def test_the_limits_themselves_are_accepted():
    lines = [json.dumps(good(i)) for i in range(70)]
    lines[0] = json.dumps(good(0, doc_id="d" * 200, seg_id=2**31 - 1, source="s" * MAX_TEXT))
    lines[1] = json.dumps(good(1, doc_id="d" * 200, seg_id=-(2**31), reference="r " * (MAX_TEXT // 2)))
    lines[2] = json.dumps({**good(2), "extra": json.loads("[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)),
                           "note": "[[[[[[[[[[[[[[[[[[[[[[[[[[ brackets in a string do not nest ]]]"})
    lines[3] = json.dumps(good(3, source="emoji 😀 and astral 𝄞 characters"))  # \ud83d\ude00: a valid pair
    campaign = import_campaign([line.encode() for line in lines], name="limits", protocol="adequacy").campaign
    assert Segment.objects.filter(campaign=campaign, seg_id=2**31 - 1).get().source == "s" * MAX_TEXT
    assert Segment.objects.filter(campaign=campaign, source__startswith="emoji 😀").exists()


def test_too_deep_counts_brackets_outside_strings_only():
    assert not too_deep('{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\"[[[[["}', limit=3)
    # The line's object is the first level.
    assert too_deep('{"a": [[["x"]]]}', limit=3) and not too_deep('{"a": [["x"]], "b": [[1]]}', limit=3)
    assert not too_deep('[1, [2], [3], [4], [5], [6]]', limit=2)


def test_a_line_longer_than_the_limit_is_refused_without_being_held(monkeypatch):
    monkeypatch.setattr(text_lines, "MAX_LINE_BYTES", 10_000)
    lines = file_with(json.dumps(good(seg_id=3, source="long " * 4000)), at=3)
    handle = io.BytesIO(("\n".join(lines) + "\n").encode())
    with pytest.raises(CampaignFileError) as info:
        import_campaign(handle, name="x", protocol="adequacy")
    assert info.value.errors == [(3, text_lines.TOO_LONG)]
    nothing_written()


def test_a_file_of_many_bad_lines_keeps_the_first_problems_and_counts_the_rest():
    lines = ["not json"] * (MAX_KEPT_ERRORS + 500)
    error = refused(lines)
    assert len(error.errors) == MAX_KEPT_ERRORS and error.total == MAX_KEPT_ERRORS + 500
    assert error.errors[0][0] == 1
    assert str(error).endswith(f"; and {MAX_KEPT_ERRORS + 500 - 20} more")


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
def test_any_line_ending_and_a_byte_order_mark(ending):
    body = b"\xef\xbb\xbf" + ending.join(line.encode() for line in campaign_lines(70)) + ending
    handle = io.BytesIO(body)
    result = import_campaign(handle, name=f"endings {ending!r}", protocol="adequacy", seed=1)
    assert Segment.objects.filter(campaign=result.campaign).count() == 70


def test_a_refused_line_cannot_spoil_the_stored_errors(api, settings, tmp_path):
    """Problems quoting names from the file are stored as JSON by a background job: a NUL or a lone surrogate
    in a name is shown escaped, never stored raw."""
    settings.IMPORT_UPLOAD_DIR = str(tmp_path)
    error = refused(file_with(with_systems(**{"\ud800": "x y z"}), at=2))
    assert "'\\ud800'" in error.errors[0][1]
    error.errors[0][1].encode("utf-8")  # storable
