"""The `wmt-rank` format of judgments collected elsewhere (docs/api.md §5.3): WMT's published relative-ranking
files (docs/methods.md §8), in the layout the first line shows:

- WMT08: comma-separated `TASK,TYPE,ITEM_ID,ANNOTATOR_ID,TIME,SYSTEM_0,SCORE_0_A,SCORE_0_B,SYSTEM_1,…`, with
  that header line or without one;
- WMT09: the same fields tab-separated, with extra columns (a judgment id, free text). With a header the
  columns are read by name; without one, TYPE is the first all-capitals field among the first four that an
  integer ITEM_ID follows, TASK the field before it, and the system groups (SYSTEM, SCORE_A, SCORE_B) run
  until one whose scores are not empty or integers: from there on the columns are extra;
- WMT10–16: header `srclang,trglang,srcIndex,documentId,segmentId,judgeId,system1Number,system1Id,…,
  system1rank,…`, columns read by name (their order varies between years), extra columns ignored.

One ranking row is one judgment of one item (item type `system`, the row's segment): the item lists the ranked
slots as candidates `{"key": "<slot, 1-based>", "kind": "system"|"reference", "system": <index among the
campaign's systems sorted by name>, "name"}` and the judgment's `ranks` maps each key to its rank (or, for
CONSTITUENT_ACCEPT rows, to the acceptance code 1–3). What real files hold and is kept: rows of fewer outputs
(even one), ranks above the number of outputs, the same judge ranking the same item again, exact duplicate
lines (published agreement counts them), a TIME that is neither seconds nor a duration (WMT09 holds a task name
there on one RANK row: TIME enters no figure, so it is stored as missing and the result warns with the lines;
docs/methods.md §8). Anything that would change a figure still refuses the whole file. An unranked slot (rank
-1 or empty, system `blank` or empty) is dropped, and a row left with no ranked slot is skipped. `_ref`, the
human reference, stays a pseudo-system of kind "reference".
"""
from __future__ import annotations

import abc
import re
from collections.abc import Iterable

from annotation.building.campaign_files import CampaignFileError, Problems
from annotation.building.judgment_files import (
    JudgmentFormat,
    JudgmentRow,
    ParsedJudgments,
    lines_warning,
    text_field,
)
from annotation.building.text_lines import csv_fields, numbered_lines

#: WMT08's row types (the `rows` option) and the protocol each is imported as.
ROW_TYPES = {"RANK": "ranking", "CONSTITUENT": "ranking-constituent",
             "CONSTITUENT_ACCEPT": "constituent-acceptance"}
ACCEPT = "CONSTITUENT_ACCEPT"
ACCEPT_CODES = (1, 3)
#: Ranks are kept as given (only their order matters), up to this bound.
MAX_RANK = 1000
#: Outputs one row may rank.
MAX_SLOTS = 100
BLANK = "blank"
REFERENCE = "_ref"
MAX_NAME, MAX_WORKER, MAX_TASK, MAX_ID = 200, 255, 200, 200
SEGMENT_LIMIT = 2**31
WMT10_REQUIRED = ("srclang", "trglang", "srcIndex", "documentId", "segmentId", "judgeId")
WMT08_FIELDS = ("TASK", "TYPE", "ITEM_ID", "ANNOTATOR_ID", "TIME")
_TYPE = re.compile(r"[A-Z][A-Z_]*")
_INTEGER = re.compile(r"[+-]?\d+")
_DURATION = re.compile(r"(?:(\d{1,4}):)?(\d{1,2}):(\d{1,2}(?:\.\d+)?)")


def parse_wmt_rank(lines: Iterable[bytes | str], rows: str = "RANK", pair: str | None = None) -> ParsedJudgments:
    """Validate a WMT ranking file. `rows`: the WMT08/09 row type imported (RANK, CONSTITUENT or
    CONSTITUENT_ACCEPT; other rows are skipped). `pair`: the language pair (WMT10–16, `srclang-trglang`) or TASK
    (WMT08/09) imported when the file holds several; without it, a file of several gives a list, one
    `ParsedJudgments` per task (sorted by name), read in one pass."""
    row_type = rows.strip().upper() if isinstance(rows, str) else ""
    if row_type not in ROW_TYPES:
        raise CampaignFileError([(0, f"rows: one of {', '.join(ROW_TYPES)}, not {str(rows)[:40]!r}")])
    if pair is not None and (not isinstance(pair, str) or not pair.strip() or len(pair) > MAX_TASK):
        raise CampaignFileError([(0, f"pair: a language pair or task of at most {MAX_TASK} characters")])
    problems = Problems()
    layout = None
    judged: list[JudgmentRow] = []
    languages: dict[str, tuple[str, str]] = {}
    unread: dict[str, list[int]] = {}
    for number, text in numbered_lines(lines, problems):
        text = text.rstrip("\r\n")
        if not text.strip():
            continue
        try:
            if layout is None:
                layout = _layout(text, row_type)
                if layout.header:
                    continue
            row = layout.read(layout.split(text), row_type)
        except ValueError as exc:
            problems.append((number, str(exc)))
            if layout is None:
                break
            continue
        if row is not None:
            judged.append(row)
            languages.setdefault(row.hit, layout.languages)
            if row.unread:
                unread.setdefault(row.hit, []).append(number)
    if layout is None and not problems:
        problems.append((0, "the file is empty"))
    if problems:
        raise problems.refuse()
    pairs = sorted({row.hit for row in judged})
    if pair is not None:
        pair = pair.strip()
        if pair not in pairs:
            raise CampaignFileError([(0, f"pair: {pair[:40]!r} is not in the file; it holds {_listed(pairs)}")])
        pairs = [pair]
    if not judged:
        raise CampaignFileError([(0, f"the file has no {row_type} rows with a ranked output")])
    by_task: dict[str, list[JudgmentRow]] = {task: [] for task in pairs}
    for row in judged:
        if row.hit in by_task:
            by_task[row.hit].append(row)
    parsed = [_task(task, rows_of, layout.name, row_type, languages.get(task, ("", "")), unread.get(task))
              for task, rows_of in by_task.items()]
    return parsed[0] if len(parsed) == 1 else parsed


def _task(task: str, judged: list[JudgmentRow], layout: str, row_type: str, languages: tuple[str, str],
          unread: list[int] | None) -> ParsedJudgments:
    """One task's campaign: its systems indexed by name, its languages (a WMT08/09 task's from its name)."""
    names = sorted({c["name"] for row in judged for c in row.payload["candidates"]})
    index = {name: i for i, name in enumerate(names)}
    for row in judged:
        for candidate in row.payload["candidates"]:
            candidate["system"] = index[candidate["name"]]
    if any(languages):  # WMT10–16 name them ("Czech", "English" in the published files): their codes
        source, target = (LANGUAGE_CODES.get(lang.lower(), lang) for lang in languages)
    else:
        source, target = task_languages(task)
    options = {"layout": layout, "rows": row_type, "pair": task}
    warnings = [lines_warning("TIME is neither seconds nor [H:]MM:SS and enters no figure: stored as missing",
                              unread)] if unread else []
    return ParsedJudgments(rows=judged, protocol=ROW_TYPES[row_type], source_language=source[:16],
                           target_language=target[:16], options=options, warnings=warnings)


#: The language names WMT's files use (WMT08/09 TASK "News German-English", WMT10–16 srclang "Czech"), and their
#: ISO 639-1 codes.
LANGUAGE_CODES = {"czech": "cs", "english": "en", "french": "fr", "german": "de", "hungarian": "hu",
                  "spanish": "es", "italian": "it", "russian": "ru", "hindi": "hi", "finnish": "fi",
                  "romanian": "ro", "turkish": "tr"}
_TASK_PAIR = re.compile(r"([A-Za-z]+)-([A-Za-z]+)\s*$")


def task_languages(task: str) -> tuple[str, str]:
    """A WMT08/09 TASK's source and target codes from its last word ("News German-English" -> de, en); empty
    when the name holds no known pair."""
    found = _TASK_PAIR.search(task)
    if not found:
        return "", ""
    source, target = (LANGUAGE_CODES.get(w.lower()) for w in found.groups())
    return (source, target) if source and target else ("", "")


def _listed(values: list[str]) -> str:
    """Every task of the file, so the caller can choose any of them."""
    return ", ".join(v[:40] for v in values)


def _layout(first: str, row_type: str) -> _Layout:
    """The layout the first line shows: a WMT10–16 or WMT08/09 header, or a WMT08/09 row without one."""
    separator = "\t" if "\t" in first else ","
    fields = _splitter(separator)(first)
    lowered = {f.lower() for f in fields}
    if "srclang" in lowered or "judgeid" in lowered:
        if row_type != "RANK":
            raise ValueError(f"rows: a WMT10–16 file holds only RANK rows, not {row_type}")
        return _Wmt10(fields, separator)
    if {"TYPE", "ITEM_ID"} <= {f.upper() for f in fields}:
        return _Wmt08Named(fields, separator)
    return _Wmt08Positional(fields, separator)


def _splitter(separator: str):
    if separator == "\t":
        return lambda text: [f.strip() for f in text.split("\t")]
    return csv_fields


class _Layout(abc.ABC):
    name = ""
    header = True
    languages = ("", "")

    def __init__(self, separator: str):
        self.split = _splitter(separator)

    @abc.abstractmethod
    def read(self, fields: list[str], row_type: str) -> JudgmentRow | None:
        """The ranking a line holds, or None for a line of another row type."""


class _Wmt10(_Layout):
    """WMT10–16: one ranking a row, columns found by name (case does not matter)."""

    name = "wmt10-16"

    def __init__(self, header: list[str], separator: str):
        super().__init__(separator)
        where = {h.lower(): i for i, h in reversed(list(enumerate(header)))}
        missing = [c for c in WMT10_REQUIRED if c.lower() not in where]
        if missing:
            raise ValueError("the WMT10–16 header lacks " + ", ".join(missing) + "; it must name "
                             + ",".join(WMT10_REQUIRED) + ",system1Id,…,system1rank,…")
        self.columns = {c: where[c.lower()] for c in WMT10_REQUIRED}
        self.slots: list[tuple[str, int, int]] = []
        while f"system{len(self.slots) + 1}id" in where:
            k = len(self.slots) + 1
            if f"system{k}rank" not in where:
                raise ValueError(f"the header names system{k}Id but no system{k}rank")
            self.slots.append((str(k), where[f"system{k}id"], where[f"system{k}rank"]))
        if not self.slots:
            raise ValueError("the header names no system1Id and system1rank columns")
        if len(self.slots) > MAX_SLOTS:
            raise ValueError(f"the header names more than {MAX_SLOTS} systems")
        self.width = 1 + max(max(self.columns.values()), *(max(s[1], s[2]) for s in self.slots))

    def read(self, fields: list[str], row_type: str) -> JudgmentRow | None:
        if len(fields) < self.width:
            raise ValueError(f"expected {self.width} fields, found {len(fields)}")
        value = {c: fields[i] for c, i in self.columns.items()}
        source = text_field(value["srclang"], "srclang", 16)
        target = text_field(value["trglang"], "trglang", 16)
        segment = _segment(value["srcIndex"], "srcIndex")
        judge = _worker(value["judgeId"], "judgeId")
        doc_id = text_field(value["documentId"], "documentId", MAX_ID)
        seg_text = text_field(value["segmentId"], "segmentId", MAX_ID)
        seg_id = int(seg_text) if _INTEGER.fullmatch(seg_text) and len(seg_text) <= 10 else seg_text
        slots = [(key, fields[system], _rank(fields[rank], f"system{key}rank", False))
                 for key, system, rank in self.slots]
        self.languages = (source, target)
        return _ranking(f"{source}-{target}", judge, segment, None, slots, {"doc_id": doc_id, "seg_id": seg_id})


class _Wmt08Named(_Layout):
    """WMT08/09 with a header: TASK, TYPE, ITEM_ID, ANNOTATOR_ID, TIME (optional) and SYSTEM_k, SCORE_k_A,
    SCORE_k_B (optional) from k = 0, found by name; other columns are ignored."""

    name = "wmt08-09"

    def __init__(self, header: list[str], separator: str):
        super().__init__(separator)
        self.name = "wmt09" if separator == "\t" else "wmt08"
        where = {h.upper(): i for i, h in reversed(list(enumerate(header)))}
        missing = [c for c in WMT08_FIELDS[:4] if c not in where]
        if missing:
            raise ValueError("the WMT08/09 header lacks " + ", ".join(missing) + "; it must name "
                             + ",".join(WMT08_FIELDS) + ",SYSTEM_0,SCORE_0_A,SCORE_0_B,…")
        self.columns = {c: where.get(c) for c in WMT08_FIELDS}
        self.groups: list[tuple[int, int, int | None]] = []
        while f"SYSTEM_{len(self.groups)}" in where:
            k = len(self.groups)
            if f"SCORE_{k}_A" not in where:
                raise ValueError(f"the header names SYSTEM_{k} but no SCORE_{k}_A")
            self.groups.append((where[f"SYSTEM_{k}"], where[f"SCORE_{k}_A"], where.get(f"SCORE_{k}_B")))
        if not self.groups:
            raise ValueError("the header names no SYSTEM_0 and SCORE_0_A columns")
        if len(self.groups) > MAX_SLOTS:
            raise ValueError(f"the header names more than {MAX_SLOTS} systems")

    def read(self, fields: list[str], row_type: str) -> JudgmentRow | None:
        def at(i):
            return fields[i] if i is not None and i < len(fields) else ""

        row = {c: at(i) for c, i in self.columns.items()}
        if len(fields) <= self.columns["TYPE"]:
            raise ValueError(f"expected at least {self.columns['TYPE'] + 1} fields, found {len(fields)}")
        if not _of_type(row["TYPE"], row_type):
            return None
        groups = [(at(s), at(a), at(b)) for s, a, b in self.groups]
        return _wmt08_row(row, groups, row_type)


class _Wmt08Positional(_Layout):
    """WMT08/09 without a header: TYPE located on the first line (see the module's docstring)."""

    header = False

    def __init__(self, first: list[str], separator: str):
        super().__init__(separator)
        self.name = "wmt09" if separator == "\t" else "wmt08"
        self.lenient_tail = separator == "\t"
        found = [t for t in range(1, min(4, len(first) - 1))
                 if _TYPE.fullmatch(first[t]) and _INTEGER.fullmatch(first[t + 1])]
        if not found:
            raise ValueError("not a WMT ranking file: the first line must be a header (WMT10–16: "
                             + ",".join(WMT10_REQUIRED) + ",system1Id,…,system1rank,…; WMT08/09: "
                             + ",".join(WMT08_FIELDS) + ",SYSTEM_0,SCORE_0_A,SCORE_0_B,…) or a WMT08/09 row")
        self.type_at = found[0]

    def read(self, fields: list[str], row_type: str) -> JudgmentRow | None:
        t = self.type_at
        if len(fields) < t + 4:
            raise ValueError(f"expected at least {t + 4} fields ({','.join(WMT08_FIELDS)}, …), found {len(fields)}")
        row = dict(zip(WMT08_FIELDS, fields[t - 1:t + 4], strict=True))
        if not _of_type(row["TYPE"], row_type):
            return None
        rest = fields[t + 4:]
        rest += [""] * (-len(rest) % 3)
        groups = []
        for k in range(0, len(rest), 3):
            system, a, b = rest[k:k + 3]
            if self.lenient_tail and groups and not all(v == "" or _INTEGER.fullmatch(v) for v in (a, b)):
                break  # WMT09's extra columns (free text) follow the groups
            groups.append((system, a, b))
        if len(groups) > MAX_SLOTS:
            raise ValueError(f"more than {MAX_SLOTS} system groups")
        return _wmt08_row(row, groups, row_type)


def _of_type(value: str, row_type: str) -> bool:
    """Whether a WMT08/09 row is of the selected type; another (capitals, e.g. CONSTITUENT) is skipped."""
    if value == row_type:
        return True
    if not _TYPE.fullmatch(value):
        raise ValueError(f"TYPE must be one of {', '.join(ROW_TYPES)} (or another row type in capitals), "
                         f"not {value[:20]!r}")
    return False


def _wmt08_row(row: dict[str, str], groups: list[tuple[str, str, str]], row_type: str) -> JudgmentRow | None:
    task = text_field(row["TASK"], "TASK", MAX_TASK)
    segment = _segment(row["ITEM_ID"], "ITEM_ID")
    judge = _worker(row["ANNOTATOR_ID"], "ANNOTATOR_ID")
    seconds = _seconds(row["TIME"])
    unread = "TIME" if seconds is _UNREAD else ""
    accept = row_type == ACCEPT
    slots = []
    for k, (system, a, b) in enumerate(groups):
        # the rank (or acceptance code) is SCORE_k_A; SCORE_k_B when A is empty
        score, what = (a, f"SCORE_{k}_A") if a or not b else (b, f"SCORE_{k}_B")
        slots.append((str(k + 1), system, _rank(score, what, accept)))
    judgment = _ranking(task, judge, segment, None if unread else seconds, slots, {})
    if judgment is not None:
        judgment.unread = unread
    return judgment


def _ranking(hit: str, judge: str, segment: int, seconds: float | None, slots, payload: dict) -> JudgmentRow | None:
    """The judgment of one row: its ranked slots (system neither empty nor `blank`, a rank given), or None."""
    candidates, ranks = [], {}
    for key, system, rank in slots:
        if rank is None or not system or system == BLANK:
            continue
        text_field(system, f"the system of slot {key}", MAX_NAME)
        candidates.append({"key": key, "kind": "reference" if system == REFERENCE else "system", "system": None,
                           "name": system})
        ranks[key] = rank
    if not candidates:
        return None
    return JudgmentRow(hit=hit, worker=judge, item_type="system", system=None, segment=segment, seconds=seconds,
                       ranks=ranks, payload={"candidates": candidates, **payload})


def _rank(text: str, what: str, accept: bool) -> int | None:
    """A slot's rank (or acceptance code); None when unranked (-1 or empty)."""
    if text in ("", "-1"):
        return None
    if not _INTEGER.fullmatch(text):
        raise ValueError(f"{what} must be an integer, not {text[:20]!r}")
    low, high = ACCEPT_CODES if accept else (1, MAX_RANK)
    value = int(text) if len(text) <= 12 else None
    if value is None or not low <= value <= high:
        raise ValueError(f"{what} must be -1 (unranked) or an integer from {low} to {high}, not {text[:20]}")
    return value


def _segment(text: str, what: str) -> int:
    if not _INTEGER.fullmatch(text) or len(text) > 12 or abs(int(text)) >= SEGMENT_LIMIT:
        raise ValueError(f"{what} must be an integer below 2^31, not {text[:20]!r}")
    return int(text)


def _worker(text: str, what: str) -> str:
    if not text:
        raise ValueError(f"{what} is empty")
    return text_field(text, what, MAX_WORKER)


#: What `_seconds` gives for a TIME it cannot read (WMT09 holds a task name there on one RANK row).
_UNREAD = float("nan")


def _seconds(text: str) -> float | None:
    """TIME in seconds: a number, or a duration [H:]MM:SS; None when empty; `_UNREAD` when it is neither. TIME
    enters no figure, so an unreadable one is stored as missing with a warning (docs/methods.md §8), never refuses
    the file."""
    if not text:
        return None
    duration = _DURATION.fullmatch(text)
    if duration:
        hours, minutes, seconds = duration.groups()
        return int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    return value if 0 <= value <= 1e7 else _UNREAD  # nan and inf are unread too


#: The ranking protocols' judgment format; `rows` picks the protocol of a WMT08/09 file (ROW_TYPES).
WMT_RANK = JudgmentFormat("wmt-rank", parse_wmt_rank, listed=1, protocols=tuple(ROW_TYPES.values()), text_options={
    "rows": "the WMT08/09 rows imported, RANK (default), CONSTITUENT or CONSTITUENT_ACCEPT",
    "pair": "the language pair (srclang-trglang) or TASK to import from a file that holds several (default: "
            "every one, a campaign each)"})
