"""The error-span formats of judgments collected elsewhere (docs/api.md §5.4, §5.5): `mqm-tsv` (Google's MQM
layout) and `esa-jsonl` — what is stored (texts without marks, code-point offsets, source-side spans, No-error
rows, errors without a span), malformed files refused whole with line and reason, the export in the same
formats (and spans in the csv/json export), and the round trip: an export re-imports to the same judgments and
the same MQM and ESA system scores of the statistics core."""
import csv
import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.models import (
    Annotator,
    Assignment,
    Campaign,
    Document,
    Hit,
    HitItem,
    Judgment,
    Segment,
    SystemOutput,
)
from annotation.protocols import get_protocol
from annotation.protocols.error_spans.esa_jsonl import parse_esa_jsonl
from annotation.protocols.error_spans.mqm_tsv import parse_mqm_tsv, strip_marks
from annotation.services.campaign_import import CampaignFileError, import_campaign
from annotation.services.judgment_import import JUDGMENT_FORMATS, import_judgments
from evaluation.stats.error_spans import GOOGLE, error_weights, item_means, mqm_segment_scores, system_means

pytestmark = pytest.mark.django_db

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment"
SMILE = "\U0001F600"  # astral: one code point, two UTF-16 units
MQM_ROWS = [
    # line 2: a target span after an astral character and an accented one
    f"sysA\td1\t1\t101\tr1\tDas ist gut.\t{SMILE} Thé <v>is</v> good.\tAccuracy/Mistranslation\tMajor\t",
    # line 3: the same judgment, a source-side span
    f"sysA\td1\t1\t101\tr1\t<v>Das</v> ist gut.\t{SMILE} Thé is good.\tSource error\tminor\tsee the source",
    # line 4: another rater finds nothing wrong
    f"sysA\td1\t1\t101\tr2\tDas ist gut.\t{SMILE} Thé is good.\tNo-error\tNo-error\t",
    # line 5: an error without marks (an omission): a zero-length span at the end of the translation
    "sysA\td1\t2\t102\tr1\tZweiter Satz, „ja“.\tSecond sentence.\tAccuracy/Omission\tMAJOR\t",
    # lines 6-7: overlapping spans by one rater are kept
    "sysB\td1\t1\t101\tr1\tDas ist gut.\tThat <v>is</v> fine.\tFluency/Punctuation\tMinor\t",
    "sysB\td1\t1\t101\tr1\tDas ist gut.\t<v>That is</v> fine.\tStyle/Awkward\tMinor\t",
    # line 8: the whole translation marked
    "sysB\td1\t2\t102\tr2\tZweiter Satz, „ja“.\t<v>Zweiter Satz, ja.</v>\tNon-translation!\tMajor\t",
    # line 9: quotes are ordinary characters; a Neutral severity
    'sysA\td2\t1\t201\tr2\t"Zitat" hier\t"Quote" <v>here</v>\tFluency/Grammar\tNeutral\t',
]


def mqm_file(rows=MQM_ROWS, header=HEADER) -> list[bytes]:
    return [(line + "\n").encode() for line in (header, *rows)]


def esa_record(**given) -> dict:
    record = {"system": "sysA", "doc_id": "d1", "seg_id": 1, "rater": "r1", "score": 70, "spans": [],
              "domain": "news", "source": "Das ist gut.", "target": f"{SMILE} That is good."}
    record.update(given)
    return {k: v for k, v in record.items() if v is not None}


ESA_RECORDS = [
    esa_record(spans=[{"start": 7, "end": 9, "severity": "major", "category": "Accuracy"},
                      {"start": 2, "end": 6, "severity": "minor"}]),
    esa_record(rater="r2", score=100, domain=None, source=None, target=None),  # texts from line 1
    esa_record(seg_id=2, source="Noch einer.", target="One more.", score=35.5,
               spans=[{"start": 9, "end": 9, "severity": "major"}]),  # an omission at the end
    esa_record(system="sysB", target="Thät is fine.", score=88, spans=[{"start": 0, "end": 4, "severity": "minor"}]),
    esa_record(system="sysB", doc_id="d2", seg_id=1, domain="speech", source="Hallo.", target="Hello.", score=95,
               rater="r2"),
    # no target anywhere: the span's bounds cannot be checked, the text is stored empty
    esa_record(system="sysC", doc_id="d2", seg_id=1, source="Hallo.", target=None, domain=None, score=20,
               spans=[{"start": 0, "end": 3, "severity": "major"}]),
]


def esa_file(records=ESA_RECORDS) -> list[bytes]:
    return [(json.dumps(r, ensure_ascii=False) + "\n").encode() for r in records]


def judgments_of(campaign) -> dict[tuple, dict]:
    """(system, doc, seg_id, rater) -> {score, spans, global seg_id} of each judgment."""
    rows = Judgment.objects.filter(campaign=campaign).values_list(
        "item__output__system__name", "item__segment__document__doc_id", "item__segment__seg_id",
        "annotator__external_id", "score", "spans", "item__payload")
    found = {}
    for system, doc, seg, rater, score, spans, payload in rows:
        key = (system, doc, seg, rater)
        assert key not in found
        found[key] = {"score": score, "spans": spans, "payload": payload}
    return found


def texts_of(campaign) -> dict[tuple, tuple]:
    return {(o.system.name, o.segment.document.doc_id, o.segment.seg_id): (o.segment.source, o.text)
            for o in SystemOutput.objects.filter(campaign=campaign).select_related("system", "segment__document")}


def nothing_stored() -> bool:
    return not Campaign.objects.exists() and not Judgment.objects.exists() and not Segment.objects.exists()


# --------------------------------------------------------------------------- what is stored


def test_the_formats_are_registered():
    assert JUDGMENT_FORMATS["mqm-tsv"] is parse_mqm_tsv and JUDGMENT_FORMATS["esa-jsonl"] is parse_esa_jsonl


def test_strip_marks_gives_code_point_offsets():
    assert strip_marks(f"{SMILE}a<v>bc</v>d") == (f"{SMILE}abcd", [(2, 4)])
    assert strip_marks("no marks") == ("no marks", [])
    assert strip_marks("end<v></v>") == ("end", [(3, 3)])


def test_an_mqm_file_is_stored_with_texts_spans_and_raters():
    result = import_judgments(mqm_file(), fmt="mqm-tsv", name="MQM en-de", pair="de-en")
    campaign = result.campaign
    assert result.judgments == 6
    assert campaign.protocol == "mqm" and campaign.analysis_only and campaign.status == "closed"
    assert (campaign.source_language, campaign.target_language) == ("de", "en")
    assert campaign.options["imported_format"] == "mqm-tsv" and campaign.options["mqm_weights"] == "google"
    assert list(Document.objects.filter(campaign=campaign).values_list("doc_id", "position", "domain")) == [
        ("d1", 0, ""), ("d2", 1, "")]
    texts = texts_of(campaign)
    assert texts[("sysA", "d1", 1)] == ("Das ist gut.", f"{SMILE} Thé is good.")  # marks removed
    assert texts[("sysB", "d1", 2)] == ("Zweiter Satz, „ja“.", "Zweiter Satz, ja.")
    assert texts[("sysA", "d2", 1)] == ('"Zitat" hier', '"Quote" here')
    judged = judgments_of(campaign)
    assert judged[("sysA", "d1", 1, "r1")] == {"score": None, "payload": {"seg_id": 101}, "spans": [
        {"start": 6, "end": 8, "severity": "major", "category": "Accuracy/Mistranslation"},
        {"start": 0, "end": 3, "severity": "minor", "category": "Source error", "side": "source"}]}
    assert judged[("sysA", "d1", 1, "r2")]["spans"] == []  # No-error: rated, nothing wrong
    assert judged[("sysA", "d1", 2, "r1")]["spans"] == [
        {"start": 16, "end": 16, "severity": "major", "category": "Accuracy/Omission"}]
    assert judged[("sysB", "d1", 1, "r1")]["spans"] == [
        {"start": 5, "end": 7, "severity": "minor", "category": "Fluency/Punctuation"},
        {"start": 0, "end": 7, "severity": "minor", "category": "Style/Awkward"}]
    assert judged[("sysB", "d1", 2, "r2")]["spans"] == [
        {"start": 0, "end": 17, "severity": "major", "category": "Non-translation!"}]
    assert judged[("sysA", "d2", 1, "r2")]["spans"] == [
        {"start": 8, "end": 12, "severity": "neutral", "category": "Fluency/Grammar"}]
    assert texts[("sysA", "d1", 1)][1][6:8] == "is"
    # one completed assignment (and HIT) per rater, an item per judgment
    assignments = Assignment.objects.filter(campaign=campaign)
    assert sorted(assignments.values_list("annotator__external_id", flat=True)) == ["r1", "r2"]
    assert all(a.status == "completed" for a in assignments)
    assert sorted(Hit.objects.filter(campaign=campaign).values_list("external_id", flat=True)) == ["r1", "r2"]
    assert set(HitItem.objects.filter(hit__campaign=campaign).values_list("item_type", flat=True)) == {"system"}


def test_the_comment_column_is_optional_and_columns_are_read_by_name():
    header = "rater\tsystem\tdoc\tdoc_id\tseg_id\tsource\ttarget\tseverity\tcategory"
    rows = ["r1\tsysA\td1\t1\t1\tQuelle\tA <v>target</v>\tMinor\tFluency/Spelling"]
    campaign = import_judgments(mqm_file(rows, header), fmt="mqm-tsv", name="No comment").campaign
    assert judgments_of(campaign)[("sysA", "d1", 1, "r1")]["spans"] == [
        {"start": 2, "end": 8, "severity": "minor", "category": "Fluency/Spelling"}]


def test_an_esa_file_is_stored_with_domains_texts_and_scores():
    result = import_judgments(esa_file(), fmt="esa-jsonl", name="ESA")
    campaign = result.campaign
    assert result.judgments == 6 and campaign.protocol == "esa"
    assert dict(Document.objects.filter(campaign=campaign).values_list("doc_id", "domain")) == {
        "d1": "news", "d2": "speech"}
    texts = texts_of(campaign)
    assert texts[("sysA", "d1", 1)] == ("Das ist gut.", f"{SMILE} That is good.")
    assert texts[("sysC", "d2", 1)] == ("Hallo.", "")
    judged = judgments_of(campaign)
    assert judged[("sysA", "d1", 1, "r1")] == {"score": 70, "payload": {}, "spans": [
        {"start": 2, "end": 6, "severity": "minor"},
        {"start": 7, "end": 9, "severity": "major", "category": "Accuracy"}]}  # in offset order
    assert texts[("sysA", "d1", 1)][1][7:9] == "is"
    assert judged[("sysA", "d1", 1, "r2")] == {"score": 100, "payload": {}, "spans": []}
    assert judged[("sysA", "d1", 2, "r1")]["spans"] == [{"start": 9, "end": 9, "severity": "major"}]
    assert judged[("sysA", "d1", 2, "r1")]["score"] == 35.5
    assert judged[("sysC", "d2", 1, "r1")]["spans"] == [{"start": 0, "end": 3, "severity": "major"}]


def test_a_rater_with_many_judgments_gets_several_hits():
    rows = [f"sysA\td1\t{n}\t{n}\tr1\tQuelle {n}\tTarget {n}\tNo-error\tNo-error\t" for n in range(1, 2502)]
    campaign = import_judgments(mqm_file(rows), fmt="mqm-tsv", name="Many").campaign
    assert list(Hit.objects.filter(campaign=campaign).values_list("size", flat=True)) == [1000, 1000, 501]
    assert Assignment.objects.filter(campaign=campaign).count() == 3
    assert Judgment.objects.filter(campaign=campaign).count() == 2501


# --------------------------------------------------------------------------- malformed files

GOOD = MQM_ROWS[0]


@pytest.mark.parametrize("rows, header, line, reason", [
    ([GOOD], HEADER.replace("doc_id", "docid"), 1, "the header must name the tab-separated columns"),
    ([GOOD], HEADER + "\trater", 1, "the header names a column twice: rater"),
    ([GOOD, "sysA\td1\t1\t101\tr1\tDas ist gut.\tThat"], HEADER, 3, "expected 10 tab-separated fields, found 7"),
    ([GOOD, GOOD.replace("\t1\t101\t", "\tone\t101\t")], HEADER, 3, "doc_id must be an integer below 2^31"),
    ([GOOD, GOOD.replace("\t101\t", "\t" + "9" * 5000 + "\t")], HEADER, 3, "seg_id must be an integer below 2^31"),
    ([GOOD, GOOD.replace("\tr1\t", "\tr\x001\t")], HEADER, 3, "rater must not contain NUL"),
    ([GOOD, GOOD.replace("Das ist", "Das</v> ist")], HEADER, 3, "source: a </v> closes no <v>"),
    ([GOOD, GOOD.replace("<v>is</v>", "<v><v>is</v></v>")], HEADER, 3, "target: a <v> opens inside another"),
    ([GOOD, GOOD.replace("good.", "bad.")], HEADER, 3, "the translation differs from the one on line 2"),
    ([GOOD, GOOD.replace("Das ist gut.", "Das war gut.")], HEADER, 3, "the source differs from the one on line 2"),
    ([GOOD, GOOD.replace("\t101\t", "\t102\t")], HEADER, 3, "seg_id is 102 here but 101 on line 2"),
    ([GOOD, GOOD.replace("\tr1\t", "\t\t")], HEADER, 3, "rater is empty"),
    ([GOOD, GOOD.replace("\tMajor\t", "\t\t")], HEADER, 3, "severity is empty"),
    ([GOOD, GOOD.replace("Accuracy/Mistranslation", "C" * 101)], HEADER, 3, "category must be at most 100"),
    ([], HEADER, 0, "the file has no judgments"),
])
def test_malformed_mqm_files_are_refused_whole(rows, header, line, reason):
    with pytest.raises(CampaignFileError) as refused:
        import_judgments(mqm_file(rows, header), fmt="mqm-tsv", name="Bad")
    assert any(at == line and text.startswith(reason) for at, text in refused.value.errors), refused.value.errors
    assert nothing_stored()


def test_an_empty_or_non_utf8_mqm_file_is_refused():
    with pytest.raises(CampaignFileError) as refused:
        import_judgments([], fmt="mqm-tsv", name="Empty")
    assert refused.value.errors == [(0, "the file is empty")]
    with pytest.raises(CampaignFileError) as refused:
        import_judgments(mqm_file()[:2] + [b"sysA\td1\t3\t1\tr1\t\xff\tx\tNo-error\tNo-error\t\n"], fmt="mqm-tsv",
                         name="Latin-1")
    assert (3, "not valid UTF-8") in refused.value.errors
    assert nothing_stored()


def esa_line(**given) -> str:
    return json.dumps(esa_record(**given), ensure_ascii=False)


@pytest.mark.parametrize("bad, line, reason", [
    ("{not json", 2, "not valid JSON"),
    ('["a", "list"]', 2, "a line must be a JSON object"),
    (esa_line(score=101), 2, "'score' must lie between 0 and 100"),
    (esa_line(score=-1), 2, "'score' must lie between 0 and 100"),
    (esa_line(score="50"), 2, "'score' must be a number"),
    (esa_line(score=True), 2, "'score' must be a number"),
    (esa_line().replace('"score": 70', '"score": NaN'), 2, "not valid JSON: NaN is not a number"),
    (esa_line().replace('"score": 70', '"score": ' + "9" * 5000), 2, "a number has more than 4300 digits"),
    (esa_line().replace('"score": 70', '"score": 1e999'), 2, "'score' must lie between 0 and 100"),
    (esa_line(seg_id="x"), 2, "'seg_id' must be an integer below 2^31"),
    (esa_line(seg_id=2**40), 2, "'seg_id' must be an integer below 2^31"),
    (esa_line(rater="r\u00001"), 2, "'rater' must not contain NUL"),
    (esa_line(rater=""), 2, "'rater' is empty"),
    (esa_line(rater=None), 2, "'rater' is missing"),
    (esa_line(lang="de"), 2, "unexpected field 'lang'"),
    (esa_line(spans=[{"start": 10, "end": 40, "severity": "minor"}]), 2, "span 0: [10, 40) is out of bounds"),
    (esa_line(spans=[{"start": 0, "end": 5, "severity": "minor"}, {"start": 3, "end": 8, "severity": "major"}]), 2,
     "spans 0 and 1 overlap"),
    (esa_line(spans=[{"start": 0, "end": 5, "severity": "neutral"}]), 2, "span 0: unknown severity 'neutral'"),
    (esa_line(spans=[{"start": 0, "end": 5, "severity": "minor", "category": 7}]), 2,
     "span 0: 'category' must be a text"),
    (esa_line(spans=[{"start": 0, "end": 5, "severity": "minor", "note": "x"}]), 2, "span 0: unexpected field"),
    (esa_line(spans=[{"start": 2, "end": 2, "severity": "minor"}]), 2, "span 0: an empty span marks an omission"),
    (esa_line(spans="none"), 2, "'spans' must be a list"),
    (esa_line(target="Another text."), 2, "the translation differs from the one on line 1"),
    (esa_line(source="Andere Quelle."), 2, "the source differs from the one on line 1"),
    (esa_line(domain="speech"), 2, "document 'd1' is in domain 'news' on an earlier line and in 'speech' here"),
    ("[" * 50 + "]" * 50, 2, "the JSON nests too deep"),
])
def test_malformed_esa_files_are_refused_whole(bad, line, reason):
    lines = [(esa_line() + "\n").encode(), (bad + "\n").encode()]
    with pytest.raises(CampaignFileError) as refused:
        import_judgments(lines, fmt="esa-jsonl", name="Bad")
    assert any(at == line and text.startswith(reason) for at, text in refused.value.errors), refused.value.errors
    assert nothing_stored()


def test_esa_spans_are_checked_against_a_target_given_on_a_later_line():
    lines = [esa_line(target=None, spans=[{"start": 0, "end": 30, "severity": "minor"}]), esa_line(rater="r2")]
    with pytest.raises(CampaignFileError) as refused:
        import_judgments([(x + "\n").encode() for x in lines], fmt="esa-jsonl", name="Late text")
    assert refused.value.errors[0][0] == 1 and "[0, 30) is out of bounds" in refused.value.errors[0][1]
    assert nothing_stored()


def test_a_pair_that_is_not_two_languages_is_refused():
    with pytest.raises(CampaignFileError) as refused:
        import_judgments(esa_file(), fmt="esa-jsonl", name="Pair", pair="english")
    assert refused.value.errors[0][1].startswith("pair: the languages as source-target")
    assert nothing_stored()


# --------------------------------------------------------------------------- scores and the round trip


def mqm_system_scores(campaign) -> dict[str, float]:
    """Per system: the mean over its rated segments of the MQM segment score (−sum of a rater's error weights,
    averaged over raters), with Google's weights (evaluation/stats/error_spans.py)."""
    rows = list(Judgment.objects.filter(campaign=campaign).values_list(
        "item__output_id", "item__output__system__name", "annotator__external_id", "spans"))
    outputs = sorted({r[0] for r in rows})
    out_code = {o: i for i, o in enumerate(outputs)}
    systems = sorted({r[1] for r in rows})
    raters = sorted({r[2] for r in rows})
    item_system = np.zeros(len(outputs), dtype=np.int64)
    rated_item, rated_rater, error_item, error_rater, cats, sevs, sides = [], [], [], [], [], [], []
    for output, system, rater, spans in rows:
        item_system[out_code[output]] = systems.index(system)
        rated_item.append(out_code[output])
        rated_rater.append(raters.index(rater))
        for span in spans:
            error_item.append(out_code[output])
            error_rater.append(raters.index(rater))
            cats.append(span["category"])
            sevs.append(span["severity"])
            sides.append(span.get("side") == "source")
    cat_names, sev_names = sorted(set(cats)), sorted(set(sevs))
    weights = error_weights(cat_names, sev_names, [cat_names.index(c) for c in cats],
                            [sev_names.index(s) for s in sevs], sides, GOOGLE)
    segment = mqm_segment_scores(rated_item, rated_rater, error_item, error_rater, weights, len(outputs))
    return dict(zip(systems, system_means(item_system, segment, len(systems)).tolist(), strict=True))


def esa_system_scores(campaign) -> dict[str, float]:
    rows = list(Judgment.objects.filter(campaign=campaign).values_list("item__output_id",
                                                                       "item__output__system__name", "score"))
    outputs = sorted({r[0] for r in rows})
    systems = sorted({r[1] for r in rows})
    item_system = np.zeros(len(outputs), dtype=np.int64)
    for output, system, _ in rows:
        item_system[outputs.index(output)] = systems.index(system)
    means = item_means([outputs.index(r[0]) for r in rows], [r[2] for r in rows], len(outputs))
    return dict(zip(systems, system_means(item_system, means, len(systems)).tolist(), strict=True))


def family_scores(campaign) -> dict[str, float]:
    """The systems' scores as the error-spans result family computes and stores them (the results page, the API)."""
    from evaluation.families import family_of
    from evaluation.services.results_read import stored_rows

    family_of(campaign).compute(campaign)
    return {r["system"]: r["score"] for r in stored_rows(campaign, "systems")}


def exported(api, campaign, fmt: str) -> bytes:
    response = api.get(f"/api/campaigns/{campaign.slug}/judgments/", {"format": fmt})
    assert response.status_code == 200 and response.streaming, response
    return b"".join(response.streaming_content)


def test_mqm_scores_by_hand():
    """sysA: d1/1 r1 major 5 + minor 1 (source side) = −6, r2 0: −3; d1/2 major omission −5; d2/1 a Neutral
    error weighs 0: mean (−3 − 5 + 0) / 3. sysB: d1/1 minor Fluency/Punctuation 0.1 + minor 1 = −1.1."""
    campaign = import_judgments(mqm_file(), fmt="mqm-tsv", name="MQM").campaign
    scores = mqm_system_scores(campaign)
    assert scores["sysA"] == pytest.approx(-8 / 3)
    rows = [r for r in MQM_ROWS if r.startswith("sysB\td1\t1")]
    alone = import_judgments(mqm_file(rows), fmt="mqm-tsv", name="sysB alone").campaign
    assert mqm_system_scores(alone) == {"sysB": pytest.approx(-1.1)}


def test_an_mqm_export_re_imports_to_the_same_judgments_and_scores(api, researcher):
    original = import_judgments(mqm_file(), fmt="mqm-tsv", name="MQM original", owner=researcher).campaign
    tsv = exported(api, original, "mqm-tsv")
    lines = tsv.decode().splitlines()
    assert lines[0] == HEADER
    assert f"sysA\td1\t1\t101\tr1\t<v>Das</v> ist gut.\t{SMILE} Thé is good.\tSource error\tminor\t" in lines
    assert f"sysA\td1\t1\t101\tr2\tDas ist gut.\t{SMILE} Thé is good.\tNo-error\tNo-error\t" in lines
    assert "sysA\td1\t2\t102\tr1\tZweiter Satz, „ja“.\tSecond sentence.\tAccuracy/Omission\tmajor\t" in lines
    again = import_judgments(io.BytesIO(tsv), fmt="mqm-tsv", name="MQM again", owner=researcher).campaign
    assert judgments_of(again) == judgments_of(original)
    assert texts_of(again) == texts_of(original)
    assert mqm_system_scores(again) == mqm_system_scores(original)
    assert family_scores(again) == family_scores(original) == pytest.approx(mqm_system_scores(original))
    assert exported(api, again, "mqm-tsv") == tsv  # and the export of the re-import is the same file


def test_an_esa_export_re_imports_to_the_same_judgments_and_means(api, researcher):
    original = import_judgments(esa_file(), fmt="esa-jsonl", name="ESA original", owner=researcher).campaign
    jsonl = exported(api, original, "esa-jsonl")
    records = [json.loads(line) for line in jsonl.decode().splitlines()]
    assert len(records) == 6
    assert records[0] == {"system": "sysA", "doc_id": "d1", "seg_id": 1, "rater": "r1", "score": 70.0,
                          "spans": [{"start": 2, "end": 6, "severity": "minor"},
                                    {"start": 7, "end": 9, "severity": "major", "category": "Accuracy"}],
                          "domain": "news", "source": "Das ist gut.", "target": f"{SMILE} That is good."}
    again = import_judgments(io.BytesIO(jsonl), fmt="esa-jsonl", name="ESA again").campaign
    assert judgments_of(again) == judgments_of(original)
    assert texts_of(again) == texts_of(original)
    assert dict(Document.objects.filter(campaign=again).values_list("doc_id", "domain")) == {
        "d1": "news", "d2": "speech"}
    scores = esa_system_scores(original)
    assert scores == esa_system_scores(again)
    assert family_scores(again) == family_scores(original)
    assert scores["sysA"] == pytest.approx((85 + 35.5) / 2)  # d1/1 (70 + 100) / 2, d1/2 35.5


def test_the_span_formats_are_refused_for_other_protocols(api, researcher, campaign):
    response = api.get(f"/api/campaigns/{campaign.slug}/judgments/", {"format": "mqm-tsv"})
    assert response.status_code == 400 and "format mqm-tsv writes campaigns of protocol mqm" in response.json()[
        "detail"]
    esa = import_judgments(esa_file(), fmt="esa-jsonl", name="ESA", owner=researcher).campaign
    response = api.get(f"/api/campaigns/{esa.slug}/judgments/", {"format": "mqm-tsv"})
    assert response.status_code == 400 and "this one is esa" in response.json()["detail"]
    mqm = import_judgments(mqm_file(), fmt="mqm-tsv", name="MQM", owner=researcher).campaign
    assert api.get(f"/api/campaigns/{mqm.slug}/judgments/", {"format": "esa-jsonl"}).status_code == 400


def test_csv_and_json_exports_carry_the_spans(api, researcher):
    mqm = import_judgments(mqm_file(), fmt="mqm-tsv", name="MQM", owner=researcher).campaign
    text = exported(api, mqm, "csv").decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 6 and {"spans", "prefilled_kept"} <= set(rows[0])
    first = next(r for r in rows if r["worker"] == "r1" and r["system"] == "sysA" and r["seg_id"] == "1")
    assert json.loads(first["spans"])[1] == {"start": 0, "end": 3, "severity": "minor", "category": "Source error",
                                             "side": "source"}
    assert first["prefilled_kept"] == "" and first["score"] == ""
    records = json.loads(exported(api, mqm, "json"))
    assert sorted(len(r["spans"]) for r in records) == [0, 1, 1, 1, 2, 2]


def test_a_formula_in_a_category_is_neutralised_in_the_csv(api, researcher):
    rows = ["sysA\td1\t1\t1\t=cmd()\tQuelle\tA <v>target</v>\t=HYPERLINK(1)\tMinor\t"]
    campaign = import_judgments(mqm_file(rows), fmt="mqm-tsv", name="Formula", owner=researcher).campaign
    row = next(csv.DictReader(io.StringIO(exported(api, campaign, "csv").decode())))
    assert row["worker"] == "'=cmd()" and json.loads(row["spans"])[0]["category"] == "=HYPERLINK(1)"


# --------------------------------------------------------------------------- campaigns annotated here


def _judge(campaign, item, worker: str, **fields) -> Judgment:
    annotator = Annotator.objects.create(external_id=worker)
    assignment = Assignment.objects.create(campaign=campaign, hit=item.hit, annotator=annotator,
                                           status=Assignment.Status.COMPLETED, completed_at=timezone.now())
    return Judgment.objects.create(campaign=campaign, assignment=assignment, annotator=annotator, item=item,
                                   **fields)


def _span_campaign(protocol: str, researcher, prefill=None) -> Campaign:
    lines = []
    for s in range(3):
        record = {"doc_id": "doc-1", "seg_id": s + 1, "source": f"Quelle {s} hier.", "domain": "news",
                  "systems": {"alpha": f"The alpha translation {s} here.", "beta": f"Beta's output {s} there."}}
        if prefill and s == 0:
            record["error_spans"] = {"alpha": prefill}
        lines.append((json.dumps(record) + "\n").encode())
    parsed = get_protocol(protocol).parse_options({"segments_per_hit": 12, "seed": 3, "perturbation_rate": 0})
    return import_campaign(lines, name=f"{protocol} here", protocol=protocol, parsed=parsed,
                           owner=researcher).campaign


def test_what_the_judge_did_with_prefilled_spans(api, researcher):
    prefilled = [{"start": 0, "end": 3, "severity": "minor"}, {"start": 4, "end": 9, "severity": "major"},
                 {"start": 10, "end": 21, "severity": "minor"}]
    campaign = _span_campaign("esa", researcher, prefilled)
    item = HitItem.objects.get(hit__campaign=campaign, item_type="system", output__system__name="alpha",
                               segment__seg_id=1)
    answer = [{"start": 0, "end": 3, "severity": "minor"},  # kept
              {"start": 4, "end": 9, "severity": "minor"},  # changed (severity)
              {"start": 24, "end": 28, "severity": "major"}]  # added; [10, 21) deleted
    _judge(campaign, item, "w1", score=55, spans=answer)
    other = HitItem.objects.get(hit__campaign=campaign, item_type="system", output__system__name="beta",
                                segment__seg_id=1)
    _judge(campaign, other, "w2", score=80, spans=[])
    rows = {r["worker"]: r for r in csv.DictReader(io.StringIO(exported(api, campaign, "csv").decode()))}
    assert json.loads(rows["w1"]["prefilled_kept"]) == [prefilled[0]]
    assert json.loads(rows["w1"]["prefilled_changed"]) == [{"from": prefilled[1], "to": answer[1]}]
    assert json.loads(rows["w1"]["prefilled_deleted"]) == [prefilled[2]]
    assert json.loads(rows["w1"]["spans"]) == answer
    assert rows["w2"]["prefilled_kept"] == "" and rows["w2"]["spans"] == "[]"  # nothing was prefilled for beta
    # an ESA campaign annotated here exports as esa-jsonl and re-imports
    records = [json.loads(x) for x in exported(api, campaign, "esa-jsonl").decode().splitlines()]
    assert {(r["system"], r["rater"], r["score"]) for r in records} == {("alpha", "w1", 55.0), ("beta", "w2", 80.0)}
    assert records[0]["target"] == "The alpha translation 0 here." and records[0]["domain"] == "news"
    again = import_judgments(exported(api, campaign, "esa-jsonl").splitlines(keepends=True), fmt="esa-jsonl",
                             name="Again").campaign
    assert judgments_of(again)[("alpha", "doc-1", 1, "w1")]["spans"] == answer


def test_mqm_annotated_here_exports_with_campaign_segment_numbers(api, researcher):
    campaign = _span_campaign("mqm", researcher)
    item = HitItem.objects.get(hit__campaign=campaign, item_type="system", output__system__name="beta",
                               segment__seg_id=3)
    _judge(campaign, item, "w1", score=40, spans=[{"start": 0, "end": 4, "severity": "major", "category": "Style"}])
    lines = exported(api, campaign, "mqm-tsv").decode().splitlines()
    assert lines[1:] == ["beta\tdoc-1\t3\t3\tw1\tQuelle 2 hier.\t<v>Beta</v>'s output 2 there.\tStyle\tmajor\t"]


def test_contrastive_esa_exports_a_line_per_candidate(api, researcher):
    campaign = _span_campaign("contrastive-esa", researcher)
    item = HitItem.objects.filter(hit__campaign=campaign, item_type="system").order_by("pk").first()
    keys = {c["name"]: c["key"] for c in item.payload["candidates"]}
    _judge(campaign, item, "w1", scores={keys["alpha"]: 60, keys["beta"]: 90},
           spans=[{"start": 0, "end": 3, "severity": "minor", "candidate": keys["alpha"]}])
    records = [json.loads(x) for x in exported(api, campaign, "esa-jsonl").decode().splitlines()]
    by_system = {r["system"]: r for r in records}
    assert set(by_system) == {"alpha", "beta"}
    assert by_system["alpha"]["score"] == 60 and by_system["alpha"]["spans"] == [
        {"start": 0, "end": 3, "severity": "minor"}]
    assert by_system["beta"]["spans"] == [] and by_system["beta"]["target"].startswith("Beta's output")
    assert api.get(f"/api/campaigns/{campaign.slug}/judgments/", {"format": "mqm-tsv"}).status_code == 400


# --------------------------------------------------------------------------- command and API


def test_the_command_imports_both_formats(tmp_path):
    path = tmp_path / "mqm.tsv"
    path.write_bytes(b"".join(mqm_file()))
    out = io.StringIO()
    call_command("import_judgments", str(path), "--format", "mqm-tsv", "--name", "MQM command", "--pair", "de-en",
                 stdout=out)
    assert json.loads(out.getvalue()) == {"campaign": "mqm-command", "judgments": 6}
    path = tmp_path / "esa.jsonl"
    path.write_bytes(b"".join(esa_file()))
    out = io.StringIO()
    call_command("import_judgments", str(path), "--format", "esa-jsonl", "--name", "ESA command", stdout=out)
    assert json.loads(out.getvalue()) == {"campaign": "esa-command", "judgments": 6}


def test_the_api_imports_both_formats_and_refuses_bad_files(api):
    for fmt, content, name, count in (("mqm-tsv", mqm_file(), "MQM via API", 6),
                                      ("esa-jsonl", esa_file(), "ESA via API", 6)):
        handle = io.BytesIO(b"".join(content))
        handle.name = "judgments.txt"
        response = api.post("/api/campaigns/import-judgments/", {"file": handle, "format": fmt, "name": name},
                            format="multipart")
        assert response.status_code == 201, response.content
        assert response.json()["judgments"] == count
    handle = io.BytesIO(b"".join(mqm_file([GOOD.replace("<v>is", "is")])))
    handle.name = "bad.tsv"
    response = api.post("/api/campaigns/import-judgments/", {"file": handle, "format": "mqm-tsv", "name": "Bad"},
                        format="multipart")
    assert response.status_code == 400
    assert response.json()["errors"] == [{"line": 2, "reason": "target: a </v> closes no <v>"}]
    handle = io.BytesIO((esa_line(score=120) + "\n").encode())
    handle.name = "bad.jsonl"
    response = api.post("/api/campaigns/import-judgments/", {"file": handle, "format": "esa-jsonl", "name": "Bad"},
                        format="multipart")
    assert response.status_code == 400
    assert response.json()["errors"] == [{"line": 1, "reason": "'score' must lie between 0 and 100, not 120"}]
    assert Campaign.objects.filter(name="Bad").count() == 0


def test_compute_results_json_on_an_imported_mqm_campaign():
    """The command prints every family endpoint it can answer without parameters (one document needs some)."""
    from django.core.management import call_command

    campaign = import_judgments(mqm_file(), fmt="mqm-tsv", name="MQM command").campaign
    out = io.StringIO()
    call_command("compute_results", campaign.slug, "--json", stdout=out)
    body = json.loads(out.getvalue())
    assert {r["system"] for r in body["systems"]["all"]} == {"sysA", "sysB"}
    assert "breakdown" in body and "document" not in body
    assert Judgment.objects.filter(campaign=campaign, ranks__isnull=True, scores__isnull=True).count() == \
        Judgment.objects.filter(campaign=campaign).count()  # SQL NULL, not JSON null, on every database


def test_a_row_marking_two_spans_is_one_error_with_its_first_target_span():
    """Published files have a few rows with marks in both source and target: one error, weighed once."""
    row = GOOD.replace("Das ist", "<v>Das</v> ist")
    campaign = import_judgments(mqm_file([row]), fmt="mqm-tsv", name="Two marks").campaign
    (spans,) = Judgment.objects.filter(campaign=campaign).values_list("spans", flat=True)
    assert len(spans) == 1 and spans[0].get("side") != "source"
