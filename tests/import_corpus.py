"""The hostile files of tests/test_import_fuzz_corpus.py: for every import format, a small valid file and the
same hostile variants of it (long fields, NUL, lone surrogates, invalid UTF-8, huge and non-finite numbers in
every numeric field, empty and header-only files, binary and compressed garbage, a wrong delimiter, UTF-16).

A format is a `Spec`: how its valid file is written with some fields of its second line replaced, which of
those fields hold text and which numbers, and how each front end (service, API, command) is told the format.
Judgment formats come from the registry (`JUDGMENT_FORMATS`), so a new format without a spec fails the tests."""
from __future__ import annotations

import copy
import gzip
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from annotation.services.judgment_import import JUDGMENT_FORMATS

#: The line of every file that carries the hostile field.
HOSTILE_LINE = 2


class Raw(bytes):
    """Bytes written into the file as they are: a number token, or bytes that are not UTF-8."""


@dataclass
class Spec:
    id: str
    #: The judgment format, or None for a campaign file.
    fmt: str | None
    #: overrides {field: str | Raw} of the second line -> the whole file.
    render: Callable[[dict], bytes]
    texts: list[str]
    numbers: list[str]
    header: bool = True
    #: (delimiter, a wrong one) of delimited formats.
    delimiter: tuple[str, str] | None = None
    protocol: str = ""
    #: Format options: for the service (keywords), the API (form fields) and the command (flags).
    service: dict = field(default_factory=dict)
    form: dict = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    #: Numeric fields checked only when the HITs are planned: refused naming the segment, not the line.
    planned: bool = False


@dataclass
class Case:
    id: str
    data: bytes
    #: The line the refusal names: HOSTILE_LINE, 1 or 0 (the file as a whole), or None (any line).
    line: int | None
    #: Text the refusal must contain, if any.
    says: str = ""
    #: Whether `line` is the only line refused, or the first (the file cannot be read further).
    only: bool = True


def _encode(value) -> bytes:
    return bytes(value) if isinstance(value, Raw) else value.encode("utf-8", "surrogatepass")


def delimited(header: list[str] | None, rows: list[list[str]], sep: str) -> Callable[[dict], bytes]:
    """A file of `header` (or none) and `rows` joined by `sep`; overrides replace columns of line HOSTILE_LINE."""
    columns = header or []

    def render(overrides: dict) -> bytes:
        lines = [list(line) for line in ([header] if header else []) + rows]
        for name, value in overrides.items():
            lines[HOSTILE_LINE - 1][columns.index(name) if header else int(name)] = value
        return b"".join(_encode(sep).join(_encode(v) for v in line) + b"\n" for line in lines)
    return render


def json_lines(records: list[dict]) -> Callable[[dict], bytes]:
    """A JSON Lines file; overrides replace (dotted paths of) the second record's fields; a Raw value is written
    as it is, in place of the JSON value."""
    def render(overrides: dict) -> bytes:
        chosen = copy.deepcopy(records)
        raws = {}
        for path, value in overrides.items():
            *parents, last = path.split(".")
            target = chosen[HOSTILE_LINE - 1]
            for key in parents:
                target = target[int(key)] if isinstance(target, list) else target[key]
            if isinstance(value, Raw):
                raws[f"@@raw{len(raws)}@@"] = value
                value = f"@@raw{len(raws) - 1}@@"
            if isinstance(target, list):
                target[int(last)] = value
            else:
                target[last] = value
        data = b"".join(json.dumps(r).encode() + b"\n" for r in chosen)
        for marker, value in raws.items():
            data = data.replace(f'"{marker}"'.encode(), value)
        return data
    return render


WMT_DA = "HITId WorkerId Input.src Input.trg Input.item hit sys_id rid type sid score time".split()
WMT08 = "TASK,TYPE,ITEM_ID,ANNOTATOR_ID,TIME,SYSTEM_0,SCORE_0_A,SCORE_0_B,SYSTEM_1,SCORE_1_A,SCORE_1_B".split(",")
WMT10 = ("srclang,trglang,srcIndex,documentId,segmentId,judgeId,system1Number,system1Id,system1rank,"
         "system2Number,system2Id,system2rank").split(",")
MQM = "system doc doc_id seg_id rater source target category severity".split()
PAIRWISE = "rater,criterion,unit,item,choice,spam".split(",")


def _esa(system: str) -> dict:
    return {"system": system, "doc_id": "d1", "seg_id": 1, "rater": "r1", "score": 70,
            "spans": [{"start": 0, "end": 4, "severity": "minor"}], "source": "Das ist gut.",
            "target": "That is good."}


def _campaign(n: int = 35, **extra) -> list[dict]:
    words = "the quick brown fox jumps over a lazy dog".split()
    records = []
    for i in range(n):
        text = " ".join(words[(i + k) % len(words)] for k in range(6))
        record = {"doc_id": f"doc-{i % 5}", "seg_id": i // 5 + 1, "source": f"Quelle {i}: {text}",
                  "reference": f"{text} ref", "systems": {"sys-A": f"{text} A{i}", "sys-B": f"{text} B{i}"},
                  "domain": "news", "gold": f"{text} gold"}
        records.append({**record, **copy.deepcopy(extra)})
    return records


def _battle(winner: str) -> dict:
    return {"model_a": "gpt-4", "model_b": "claude-2", "winner": winner, "judge": "arena_user_1",
            "tstamp": 1700000000.5, "turn": 1, "question_id": "q1", "language": "English"}


def _pearmut(user: str) -> dict:
    return {"user_id": user, "item_i": 0, "item": [{"src": "Das ist gut.", "tgt": {"GPT-4": "That is good."}}],
            "annotation": [{"GPT-4": {"score": 80, "error_spans": [{"start_i": 0, "end_i": 3, "severity": "minor",
                                                                    "category": None}]}}]}


def _appraise(annotator: str) -> dict:
    return {"annotator": annotator, "target_id": "sysA", "document_id": "d1", "item_id": 1, "item_type": "TGT",
            "source_text": "Das ist gut.", "target_text": "That is good.", "score": 70,
            "mqm_annotations": json.dumps([{"start_i": 0, "end_i": 3, "severity": "minor"}])}


def _anthea(rater: str) -> dict:
    return {"raterId": rater, "parameters": {"source_language": "de", "target_language": "en"},
            "parsedDocSys": [{"doc": "d1", "sys": "sysA", "srcSegments": ["Das ist gut."],
                              "tgtSegments": ["That is good."]}],
            "results": [{"visited": True, "prior_rater": "r0", "errors": [
                {"location": "translation", "prefix": "", "selected": "That", "type": "Accuracy",
                 "subtype": "Mistranslation", "severity": "minor"}]}]}



def _pearmut_da(user: str) -> dict:
    return {"user_id": user, "item_i": 0, "annotation": [{"Gemini": {"score": 85}, "Llama": {"score": 60}}]}


JUDGMENT_SPECS = {
    "pearmut-da": [Spec(
        "pearmut-da", "pearmut-da", json_lines([_pearmut_da("carol"), _pearmut_da("david")]),
        texts=["user_id", "item_i"], numbers=["annotation.0.Gemini.score"], header=False)],
    "appraise-da-csv": [Spec(
        "appraise-da-csv", "appraise-da-csv", delimited(None, [
            "u1,sysA,12,TGT,eng,ces,71,1700000000,1700000012".split(","),
            "u2,sysA,12,BAD,eng,ces,20,1700000013,1700000020".split(",")], ","),
        texts=["0", "1", "3", "4"], numbers=["2", "6", "7", "8"], header=False, delimiter=(",", ";"))],
    "arena": [Spec(
        "arena", "arena", json_lines([_battle("model_a"), _battle("tie (bothbad)")]),
        texts=["judge", "model_a", "model_b", "question_id", "language", "winner"], numbers=["tstamp", "turn"],
        header=False)],
    "pearmut": [Spec(
        "pearmut", "pearmut", json_lines([_pearmut("alice"), _pearmut("bob")]),
        texts=["user_id", "item.0.src", "item.0.tgt.GPT-4", "annotation.0.GPT-4.error_spans.0.severity"],
        numbers=["item_i", "annotation.0.GPT-4.score", "annotation.0.GPT-4.error_spans.0.start_i",
                 "annotation.0.GPT-4.error_spans.0.end_i"], header=False)],
    "appraise": [Spec(
        "appraise", "appraise", json_lines([_appraise("a1"), _appraise("a2")]),
        texts=["annotator", "target_id", "document_id", "source_text", "target_text", "mqm_annotations"],
        numbers=["item_id", "score"], header=False)],
    "anthea": [Spec(
        "anthea", "anthea", json_lines([_anthea("r1"), _anthea("r2")]),
        texts=["raterId", "parsedDocSys.0.doc", "parsedDocSys.0.sys", "parsedDocSys.0.srcSegments.0",
               "parsedDocSys.0.tgtSegments.0", "results.0.prior_rater", "results.0.errors.0.type"],
        numbers=[], header=False)],
    "wmt-da": [Spec(
        "wmt-da", "wmt-da", delimited(WMT_DA, [
            "H1 w1 de en 1 1 sysA 1 SYSTEM 4 60 10".split(), "H1 w1 de en 1 1 sysA 1 BAD_REF 4 20 10".split()], " "),
        texts=["WorkerId", "HITId", "sys_id", "Input.src", "Input.trg", "type"], numbers=["sid", "score", "time"],
        delimiter=(" ", ","))],
    "pairwise-csv": [Spec(
        "pairwise-csv", "pairwise-csv", delimited(PAIRWISE, [
            "r1,adequacy,sentence,s-1,A,".split(","), "r2,adequacy,sentence,s-2,tie,".split(",")], ","),
        texts=["rater", "item", "criterion", "unit", "choice", "spam"], numbers=[], delimiter=(",", ";"),
        service={"systems": ["A", "B"]}, form={"systems": "A,B"}, flags=["--systems", "A,B"])],
    "wmt-rank": [
        Spec("wmt-rank-wmt08", "wmt-rank", delimited(WMT08, [
            "Europarl de-en,RANK,10,judge1,45,uedin,1,,limsi,2,".split(","),
            "Europarl de-en,RANK,11,judge2,30,uedin,2,,limsi,1,".split(",")], ","),
            # TIME enters no figure: an unreadable one is stored as missing with a warning (docs/methods.md §8)
            texts=["ANNOTATOR_ID", "TASK", "SYSTEM_0", "TYPE"], numbers=["ITEM_ID", "SCORE_0_A"],
            delimiter=(",", ";")),
        Spec("wmt-rank-wmt09", "wmt-rank", delimited(None, [
            "Europarl de-en\tRANK\t10\tjudge1\t45\tuedin\t1\t\tlimsi\t2\t".split("\t"),
            "Europarl de-en\tRANK\t11\tjudge2\t30\tuedin\t2\t\tlimsi\t1\t".split("\t")], "\t"),
            texts=["3", "5", "0", "1"], numbers=["2", "6"], header=False, delimiter=("\t", ";")),  # 4: TIME
        Spec("wmt-rank-wmt10", "wmt-rank", delimited(WMT10, [
            "de,en,12,doc-a,3,j7,11,dfki,2,12,_ref,1".split(","),
            "de,en,13,doc-a,4,j8,11,dfki,1,12,_ref,2".split(",")], ","),
            texts=["judgeId", "documentId", "system1Id", "srclang", "trglang", "segmentId"],
            numbers=["srcIndex", "system1rank"],
            delimiter=(",", ";")),
    ],
    "mqm-tsv": [Spec(
        "mqm-tsv", "mqm-tsv", delimited(MQM, [
            "sysA\td1\t1\t101\tr1\tDas ist gut.\tThat <v>is</v> good.\tAccuracy\tMajor".split("\t"),
            "sysB\td1\t1\t101\tr1\tDas ist gut.\tThis <v>is</v> good.\tFluency\tMinor".split("\t")], "\t"),
        texts=["rater", "system", "source", "category", "doc", "target", "severity"], numbers=["doc_id", "seg_id"],
        delimiter=("\t", ","))],
    "esa-jsonl": [Spec(
        "esa-jsonl", "esa-jsonl", json_lines([_esa("sysA"), _esa("sysB")]),
        texts=["rater", "system", "doc_id", "target", "source", "domain", "spans.0.severity"],
        numbers=["seg_id", "score", "spans.0.start", "spans.0.end"], header=False)],
}

CAMPAIGN_SPECS = [
    Spec("campaign", None, json_lines(_campaign()), protocol="adequacy", header=False,
         texts=["source", "reference", "systems.sys-A", "doc_id", "domain", "gold"],
         numbers=["seg_id", "doc_id", "tutorial"]),
    Spec("campaign-error-spans", None, json_lines(_campaign(
        error_spans={"sys-A": [{"start": 0, "end": 3, "severity": "minor"}]})), protocol="esa", header=False,
         texts=["error_spans.sys-A.0.severity"],
         numbers=["error_spans.sys-A.0.start", "error_spans.sys-A.0.end"]),
    Spec("campaign-constituent", None, json_lines(_campaign(
        constituent={"source": [0, 3], "systems": {"sys-A": [0, 3], "sys-B": [1, 4]}})),
         protocol="ranking-constituent", header=False, texts=[],
         numbers=["constituent.source.0", "constituent.systems.sys-B.1"], planned=True),
]


def _missing(fmt: str) -> Spec:
    def render(overrides):
        raise AssertionError(f"format {fmt!r} is registered but tests/import_corpus.py has no hostile corpus "
                             "for it: add its Spec to JUDGMENT_SPECS")
    return Spec(fmt, fmt, render, texts=[], numbers=[])


#: Every spec: each registered judgment format's (a registered format without one fails), then campaign files.
SPECS = [spec for fmt in sorted(JUDGMENT_FORMATS) for spec in JUDGMENT_SPECS.get(fmt, [_missing(fmt)])]
SPECS += CAMPAIGN_SPECS

KB = 1024
NUMBERS = {"huge-int": Raw(b"9" * 400), "nan": Raw(b"NaN"), "infinity": Raw(b"Infinity"),
           "minus-infinity": Raw(b"-Infinity"), "overflow": Raw(b"1e400")}


def cases(spec: Spec, every_field: bool = True) -> list[Case]:
    """The hostile variants of `spec`'s valid file; without `every_field`, the long text and NUL only in the first
    text field and the non-finite numbers only in the first numeric field (the huge integer stays in every one)."""
    good = spec.render({})
    found = []
    for name in spec.texts if every_field else spec.texts[:1]:
        found.append(Case(f"field-128k-{name}", spec.render({name: "x" * (130 * KB)}), HOSTILE_LINE))
        found.append(Case(f"nul-{name}", spec.render({name: "a\x00b"}), HOSTILE_LINE))
    if spec.texts:
        first = spec.texts[0]
        json_like = spec.delimiter is None
        found += [
            Case("field-2mb", spec.render({first: "y" * (2 * KB * KB + 100)}), HOSTILE_LINE),
            Case("lone-surrogate", spec.render({first: "a\ud800b"}), HOSTILE_LINE),
            Case("invalid-utf8", spec.render({first: Raw(b'"a\xed\xa0\x80b"' if json_like else b"a\xed\xa0\x80b")}),
                 HOSTILE_LINE, "UTF-8"),
            Case("invalid-utf8-ff", spec.render({first: Raw(b'"a\xffb"' if json_like else b"a\xffb")}),
                 HOSTILE_LINE, "UTF-8"),
        ]
    for index, name in enumerate(spec.numbers):
        for kind, value in NUMBERS.items() if every_field or index == 0 else [("huge-int", NUMBERS["huge-int"])]:
            token = value if spec.delimiter is None else Raw(bytes(value).replace(b"NaN", b"nan"))
            found.append(Case(f"{kind}-{name}", spec.render({name: token}), None if spec.planned else HOSTILE_LINE,
                              "seg_id=" if spec.planned else ""))
    found += [
        Case("empty", b"", 0),
        Case("blank-lines", b"\n \n\r\n", None if spec.header else 0),
        Case("binary", random.Random(7).randbytes(4000), None),
        Case("gzip-bomb", gzip.compress(b"\0" * 10_000_000), None),
        Case("utf16-bom", b"\xff\xfe" + good.decode().encode("utf-16-le"), 1, "UTF-8", only=False),
    ]
    if spec.header:
        found.append(Case("header-only", good.split(b"\n", 1)[0] + b"\n", 0))
    if spec.delimiter is not None:
        right, wrong = (d.encode() for d in spec.delimiter)
        found.append(Case("wrong-delimiter", good.replace(right, wrong), 1))
    return found
