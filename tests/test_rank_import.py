"""The `wmt-rank` format: WMT's published relative-ranking files in their three layouts (docs/api.md §5.3)."""
import io
import json

import pytest
from django.core.management import call_command

from annotation.models import Assignment, Campaign, HitItem, Judgment, System
from annotation.protocols.ranking.formats import parse_wmt_rank
from annotation.services.campaign_import import CampaignFileError
from annotation.services.judgment_import import JUDGMENT_FORMATS, import_judgments

WMT13_HEADER = ("srclang,trglang,srcIndex,documentId,segmentId,judgeId,system1Number,system1Id,system2Number,"
                "system2Id,system3Number,system3Id,system4Number,system4Id,system5Number,system5Id,system1rank,"
                "system2rank,system3rank,system4rank,system5rank")
WMT13_ROWS = [
    # _ref ties with online-B, slot 5 is blank: 4 ranked
    "cze,eng,1,-1,1,judge1,-1,uedin,-1,online-B,-1,_ref,-1,cu-bojar,-1,blank,2,1,1,4,-1",
    # the same line again (kept: published agreement counts it)
    "cze,eng,1,-1,1,judge1,-1,uedin,-1,online-B,-1,_ref,-1,cu-bojar,-1,blank,2,1,1,4,-1",
    # ranks above N (kept as given), a real system unranked (-1): 2 ranked
    "cze,eng,2,-1,2,judge2,-1,uedin,-1,online-B,-1,cu-bojar,-1,blank,-1,blank,7,3,-1,-1,-1",
    # nothing ranked: skipped
    "cze,eng,3,-1,3,judge2,-1,uedin,-1,blank,-1,blank,-1,blank,-1,blank,-1,-1,-1,-1,-1",
    # one output only
    "cze,eng,4,-1,4,judge3,-1,online-B,-1,blank,-1,blank,-1,blank,-1,blank,1,-1,-1,-1,-1",
    # the same judge ranks item 1 again, differently
    "cze,eng,1,-1,1,judge1,-1,cu-bojar,-1,uedin,-1,blank,-1,blank,-1,blank,1,2,-1,-1,-1",
]
# WMT10's column order: each system's number, id and rank together, an extra column at the end.
WMT10_HEADER = ("srclang,trglang,srcIndex,documentId,segmentId,judgeId,system1Number,system1Id,system1rank,"
                "system2Number,system2Id,system2rank,system3Number,system3Id,system3rank,notes")
WMT10_ROWS = [
    "de,en,12,doc-a,3,j7,11,dfki,2,12,_ref,1,13,jhu,2,",
    "de,en,13,doc-a,4,j7,11,dfki,1,12,jhu,-1,13,blank,-1,late",
]
WMT08_HEADER = ("TASK,TYPE,ITEM_ID,ANNOTATOR_ID,TIME,SYSTEM_0,SCORE_0_A,SCORE_0_B,SYSTEM_1,SCORE_1_A,SCORE_1_B,"
                "SYSTEM_2,SCORE_2_A,SCORE_2_B")
WMT08_ROWS = [
    "Europarl German-English,RANK,10,judge1,45,uedin,1,,limsi,2,,_ref,1,",
    "Europarl German-English,RANK,10,judge1,45,uedin,1,,limsi,2,,_ref,1,",  # duplicate: kept
    "Europarl German-English,RANK,11,judge2,30,uedin,5,,limsi,,,,,",  # one output (limsi unranked)
    "Europarl German-English,CONSTITUENT,10,judge1,12,uedin,2,,limsi,1,,_ref,1,",
    "Europarl German-English,CONSTITUENT_ACCEPT,10,judge2,8,uedin,1,,limsi,3,,_ref,-1,",
    "Europarl German-English,ADEQUACY_FLUENCY,10,judge2,8,uedin,4,3,limsi,2,2,,,",  # another task: skipped
]


def lines(header: str | None, rows: list[str], separator: str = "\n") -> list[bytes]:
    return [(line + "\n").encode() for line in ([header] if header else []) + rows]


def items_of(campaign):
    return list(HitItem.objects.filter(hit__campaign=campaign).order_by("hit__number", "position"))


def test_wmt_rank_is_registered():
    assert JUDGMENT_FORMATS["wmt-rank"] is parse_wmt_rank


@pytest.mark.django_db
def test_wmt13_layout_keeps_short_rows_duplicates_repeats_and_the_reference():
    result = import_judgments(lines(WMT13_HEADER, WMT13_ROWS), fmt="wmt-rank", name="WMT13 cs-en")
    campaign = result.campaign
    assert result.judgments == 5 and Judgment.objects.filter(campaign=campaign).count() == 5
    assert campaign.protocol == "ranking" and campaign.analysis_only
    assert (campaign.source_language, campaign.target_language) == ("cze", "eng")
    assert campaign.options == {"layout": "wmt10-16", "rows": "RANK", "pair": "cze-eng"}
    names = list(System.objects.filter(campaign=campaign).order_by("pk").values_list("name", flat=True))
    assert names == ["_ref", "cu-bojar", "online-B", "uedin"]  # `_ref` is a pseudo-system; `blank` is not one
    items = items_of(campaign)
    assert len(items) == 5
    assert [len(i.payload["candidates"]) for i in items] == [4, 4, 2, 2, 1]  # judge1's three, judge2's, judge3's
    first = items[0]
    assert first.item_type == "system" and first.output_id is None and first.segment.seg_id == 1
    assert first.payload == {"doc_id": "-1", "seg_id": 1, "candidates": [
        {"key": "1", "kind": "system", "system": 3, "name": "uedin"},
        {"key": "2", "kind": "system", "system": 2, "name": "online-B"},
        {"key": "3", "kind": "reference", "system": 0, "name": "_ref"},
        {"key": "4", "kind": "system", "system": 1, "name": "cu-bojar"}]}
    ranks = [j.ranks for j in Judgment.objects.filter(campaign=campaign).order_by("item__hit__number",
                                                                                  "item__position")]
    assert ranks == [{"1": 2, "2": 1, "3": 1, "4": 4}, {"1": 2, "2": 1, "3": 1, "4": 4}, {"1": 1, "2": 2},
                     {"1": 7, "2": 3}, {"1": 1}]
    judgment = Judgment.objects.filter(campaign=campaign).first()
    assert judgment.score is None and judgment.choice == "" and judgment.seconds is None
    assert sorted(Assignment.objects.filter(campaign=campaign).values_list("annotator__external_id", flat=True)) == [
        "judge1", "judge2", "judge3"]
    for item in items:  # every candidate's index names its system among the campaign's, sorted by name
        assert all(names[c["system"]] == c["name"] for c in item.payload["candidates"])


@pytest.mark.django_db
def test_wmt10_columns_are_read_by_name_in_any_order():
    campaign = import_judgments(lines(WMT10_HEADER, WMT10_ROWS), fmt="wmt-rank", name="WMT10").campaign
    items = items_of(campaign)
    assert [i.payload for i in items] == [
        {"doc_id": "doc-a", "seg_id": 3, "candidates": [
            {"key": "1", "kind": "system", "system": 1, "name": "dfki"},
            {"key": "2", "kind": "reference", "system": 0, "name": "_ref"},
            {"key": "3", "kind": "system", "system": 2, "name": "jhu"}]},
        {"doc_id": "doc-a", "seg_id": 4, "candidates": [
            {"key": "1", "kind": "system", "system": 1, "name": "dfki"}]}]
    assert [i.segment.seg_id for i in items] == [12, 13]
    assert [j.ranks for j in Judgment.objects.filter(campaign=campaign).order_by("item__position")] == [
        {"1": 2, "2": 1, "3": 2}, {"1": 1}]


@pytest.mark.django_db
@pytest.mark.parametrize("header", [WMT08_HEADER, None], ids=["with-header", "no-header"])
def test_wmt08_rank_rows_with_or_without_header(header):
    campaign = import_judgments(lines(header, WMT08_ROWS), fmt="wmt-rank", name="WMT08").campaign
    assert campaign.protocol == "ranking"
    assert campaign.options == {"layout": "wmt08", "rows": "RANK", "pair": "Europarl German-English"}
    judgments = list(Judgment.objects.filter(campaign=campaign).order_by("item__hit__number", "item__position"))
    assert [j.ranks for j in judgments] == [{"1": 1, "2": 2, "3": 1}, {"1": 1, "2": 2, "3": 1}, {"1": 5}]
    assert [j.seconds for j in judgments] == [45, 45, 30]
    assert [j.item.segment.seg_id for j in judgments] == [10, 10, 11]
    assert judgments[0].item.payload == {"candidates": [
        {"key": "1", "kind": "system", "system": 2, "name": "uedin"},
        {"key": "2", "kind": "system", "system": 1, "name": "limsi"},
        {"key": "3", "kind": "reference", "system": 0, "name": "_ref"}]}
    assert System.objects.filter(campaign=campaign).count() == 3
    assert Assignment.objects.filter(campaign=campaign).count() == 2  # judge1 and judge2 on the one task


def test_wmt08_constituent_rows_give_their_own_protocols():
    constituent = parse_wmt_rank(lines(WMT08_HEADER, WMT08_ROWS), rows="CONSTITUENT")
    assert constituent.protocol == "ranking-constituent"
    assert [(r.ranks, r.seconds) for r in constituent.rows] == [({"1": 2, "2": 1, "3": 1}, 12)]
    accept = parse_wmt_rank(lines(None, WMT08_ROWS), rows="constituent_accept")
    assert accept.protocol == "constituent-acceptance" and accept.options["rows"] == "CONSTITUENT_ACCEPT"
    assert [r.ranks for r in accept.rows] == [{"1": 1, "2": 3}]  # the acceptance codes; _ref left blank
    assert [c["name"] for c in accept.rows[0].payload["candidates"]] == ["uedin", "limsi"]


@pytest.mark.django_db
def test_wmt08_constituent_rows_import_as_their_protocols():
    for rows, protocol, ranks in (("CONSTITUENT", "ranking-constituent", {"1": 2, "2": 1, "3": 1}),
                                  ("CONSTITUENT_ACCEPT", "constituent-acceptance", {"1": 1, "2": 3})):
        campaign = import_judgments(lines(WMT08_HEADER, WMT08_ROWS), fmt="wmt-rank", name=rows, rows=rows).campaign
        assert campaign.protocol == protocol
        assert [j.ranks for j in Judgment.objects.filter(campaign=campaign)] == [ranks]


def test_wmt09_tab_separated_with_extra_columns():
    headerless = [
        "1001\tNews German-English\tRANK\t7\tj1\t30\tgoogle\t1\t\tuedin\t2\t\trbmt\t-1\t\tA comment, with words",
        "1002\tNews German-English\tRANK\t8\tj2\t01:05\tgoogle\t2\t\t_ref\t1\t\tfree text\tmore text",
        "1003\tNews German-English\tCONSTITUENT\t8\tj2\t5\tgoogle\t2\t\t_ref\t1\t",
    ]
    parsed = parse_wmt_rank(lines(None, headerless))
    assert parsed.options["layout"] == "wmt09"
    assert [(r.worker, r.segment, r.seconds, r.ranks) for r in parsed.rows] == [
        ("j1", 7, 30, {"1": 1, "2": 2}), ("j2", 8, 65, {"1": 2, "2": 1})]
    header = "JUDGMENT_ID\tTASK\tTYPE\tITEM_ID\tANNOTATOR_ID\tTIME\tSYSTEM_0\tSCORE_0_A\tSCORE_0_B\tSYSTEM_1\t" \
             "SCORE_1_A\tSCORE_1_B\tCOMMENT"
    named = parse_wmt_rank(lines(header, ["5\tNews\tRANK\t3\tj9\t\tgoogle\t1\t\tuedin\t1\t\tboth fine, really"]))
    assert [(r.worker, r.segment, r.seconds, r.ranks) for r in named.rows] == [("j9", 3, None, {"1": 1, "2": 1})]


def test_a_file_of_several_language_pairs_gives_one_parse_each_or_the_pair_chosen():
    rows = [*WMT13_ROWS, "deu,eng,1,-1,1,judge4,-1,uedin,-1,kit,-1,blank,-1,blank,-1,blank,1,2,-1,-1,-1"]
    assert [p.options["pair"] for p in parse_wmt_rank(lines(WMT13_HEADER, rows))] == ["cze-eng", "deu-eng"]
    parsed = parse_wmt_rank(lines(WMT13_HEADER, rows), pair="deu-eng")
    assert [r.worker for r in parsed.rows] == ["judge4"] and parsed.source_language == "deu"
    assert [c["system"] for c in parsed.rows[0].payload["candidates"]] == [1, 0]  # kit, uedin among this pair's
    with pytest.raises(CampaignFileError, match="'fra-eng' is not in the file"):
        parse_wmt_rank(lines(WMT13_HEADER, rows), pair="fra-eng")


def _row(**changes) -> str:
    fields = dict(zip(WMT13_HEADER.split(","), WMT13_ROWS[0].split(","), strict=True))
    fields.update(changes)
    return ",".join(fields.values())


@pytest.mark.django_db
@pytest.mark.parametrize("content,options,where,reason", [
    (["srclang,trglang,index,judge\n"], {}, 1, "the WMT10–16 header lacks srcIndex, documentId, segmentId, judgeId"),
    (["foo,bar,baz\n", "1,2,3\n"], {}, 1, "not a WMT ranking file: the first line must be a header"),
    ([WMT08_HEADER.replace("SYSTEM_0", "SYS_0") + "\n"], {}, 1, "the header names no SYSTEM_0"),
    (lines(WMT13_HEADER, [WMT13_ROWS[0], _row(system2rank="two")]), {}, 3, "system2rank must be an integer"),
    (lines(WMT13_HEADER, [_row(system1rank="2.5")]), {}, 2, "system1rank must be an integer"),
    (lines(WMT13_HEADER, [_row(system1rank="0")]), {}, 2, "system1rank must be -1 (unranked) or an integer"),
    (lines(WMT13_HEADER, [_row(system3rank="9" * 40)]), {}, 2, "system3rank must be -1 (unranked) or an integer"),
    (lines(WMT13_HEADER, [_row(srcIndex="99999999999")]), {}, 2, "srcIndex must be an integer below 2^31"),
    (lines(WMT13_HEADER, [_row(judgeId="ju\x00dge")]), {}, 2, "judgeId must not contain NUL"),
    (lines(WMT13_HEADER, [_row(system2Id="x" * 201)]), {}, 2, "the system of slot 2 must be at most 200"),
    (lines(WMT13_HEADER, [_row(judgeId="")]), {}, 2, "judgeId is empty"),
    (lines(WMT13_HEADER, [_row(system1Id="x" * 200_000)]), {}, 2, "a field is longer than 128 KB"),
    (lines(WMT13_HEADER, ["cze,eng,1,-1,1,judge1,-1,uedin"]), {}, 2, "expected 21 fields, found 8"),
    (lines(WMT13_HEADER, WMT13_ROWS[:1]) + [b"cze,eng,\xff\n"], {}, 3, "not valid UTF-8"),
    (lines(WMT13_HEADER, WMT13_ROWS), {"rows": "CONSTITUENT"}, 1, "rows: a WMT10–16 file holds only RANK"),
    (lines(WMT13_HEADER, WMT13_ROWS), {"rows": "BOTH"}, 0, "rows: one of RANK, CONSTITUENT, CONSTITUENT_ACCEPT"),
    (lines(WMT13_HEADER, WMT13_ROWS[3:4]), {}, 0, "the file has no RANK rows with a ranked output"),
    ([], {}, 0, "the file is empty"),
    (lines(None, ["Europarl,RANK,x,j1,4,uedin,1,"]), {}, 1, "not a WMT ranking file"),
    (lines(None, [WMT08_ROWS[0], "Europarl,rank,10,j1,4,uedin,1,"]), {}, 2, "TYPE must be one of RANK"),
    (lines(None, [WMT08_ROWS[0], "Europarl,RANK,10"]), {}, 2, "expected at least 5 fields"),
    (lines(None, WMT08_ROWS[:1] + ["E,CONSTITUENT_ACCEPT,10,j1,4,uedin,4,"]), {"rows": "CONSTITUENT_ACCEPT"}, 2,
     "SCORE_0_A must be -1 (unranked) or an integer from 1 to 3, not 4"),
])
def test_malformed_files_are_refused_whole_with_the_line(content, options, where, reason):
    with pytest.raises(CampaignFileError) as info:
        import_judgments(content, fmt="wmt-rank", name="Bad", **options)
    assert any(line == where and text.startswith(reason) for line, text in info.value.errors), info.value.errors
    assert Campaign.objects.count() == 0 and Judgment.objects.count() == 0


def test_every_bad_line_is_reported_up_to_the_cap():
    bad = [_row(system1rank="x")] * 1500
    with pytest.raises(CampaignFileError) as info:
        parse_wmt_rank(lines(WMT13_HEADER, bad))
    assert len(info.value.errors) == 1000 and info.value.total == 1500
    assert info.value.errors[0] == (2, "system1rank must be an integer, not 'x'")


@pytest.mark.django_db
def test_command_imports_a_file_with_rows_and_pair(tmp_path):
    path = tmp_path / "wmt08.csv"
    path.write_bytes(b"".join(lines(WMT08_HEADER, WMT08_ROWS)))
    out = io.StringIO()
    call_command("import_judgments", str(path), "--format", "wmt-rank", "--name", "WMT08 ranks", "--rows", "RANK",
                 "--pair", "Europarl German-English", stdout=out)
    assert json.loads(out.getvalue()) == {"campaign": "wmt08-ranks", "judgments": 3}


@pytest.mark.django_db
def test_api_imports_a_wmt_rank_file(api):
    handle = io.BytesIO(b"".join(lines(WMT13_HEADER, WMT13_ROWS)))
    handle.name = "wmt13.csv"
    response = api.post("/api/campaigns/import-judgments/", {"file": handle, "format": "wmt-rank", "rows": "RANK",
                                                             "name": "WMT13 via API"}, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json() == {"campaign": "wmt13-via-api", "judgments": 5}
    handle = io.BytesIO(b"".join(lines(WMT13_HEADER, [_row(system1rank="x")])))
    handle.name = "bad.csv"
    response = api.post("/api/campaigns/import-judgments/", {"file": handle, "format": "wmt-rank", "name": "Bad"},
                        format="multipart")
    assert response.status_code == 400
    assert response.json()["errors"] == [{"line": 2, "reason": "system1rank must be an integer, not 'x'"}]


@pytest.mark.django_db
def test_wmt13_file_scores_and_agreement_by_hand(settings):
    """The WMT13 rows above, scored (docs/methods.md §8.2, §8.5). Outcomes: row 1 (twice) gives online-B > uedin,
    _ref > uedin, uedin > cu-bojar, online-B = _ref, online-B > cu-bojar, _ref > cu-bojar; row 3 online-B > uedin;
    row 6 cu-bojar > uedin; the one-output row gives none."""
    from evaluation.analyses import compute_results
    from evaluation.services.results_read import stored_rows

    settings.CELERY_TASK_ALWAYS_EAGER = True
    result = import_judgments(lines(WMT13_HEADER, WMT13_ROWS), fmt="wmt-rank", name="wmt13 hand")
    compute_results(result.campaign)
    rows = {r["system"]: r for r in stored_rows(result.campaign, "systems", "geq_others")}
    assert {name: (r["wins"], r["ties"], r["losses"]) for name, r in rows.items()} == {
        "online-B": (5, 2, 0), "_ref": (4, 2, 0), "uedin": (2, 0, 6), "cu-bojar": (1, 0, 6)}
    assert rows["uedin"]["score"] == pytest.approx(2 / 8) and rows["cu-bojar"]["score"] == pytest.approx(1 / 7)
    ew = {r["system"]: r["score"] for r in stored_rows(result.campaign, "systems", "expected_wins")}
    assert ew == pytest.approx({"online-B": 2 / 3, "_ref": 2 / 3, "uedin": (2 / 3) / 3, "cu-bojar": (1 / 3) / 3})
    compared = {r["system"]: r["score"] for r in stored_rows(result.campaign, "systems", "expected_wins_compared")}
    assert compared["online-B"] == pytest.approx(1.0) and compared["uedin"] == pytest.approx((2 / 3) / 3)
    agreement = {(a["pairing"], a["kind"]): a for a in stored_rows(result.campaign, "agreement")}
    # Segment 1, judge1 only: the duplicate line agrees on its 6 pairs; row 6 disagrees with both on uedin/cu-bojar.
    intra = agreement["wmt08", "intra"]
    assert (intra["comparisons"], intra["agreements"]) == (8, 6)
    assert agreement["wmt08", "inter"]["comparisons"] == 0
