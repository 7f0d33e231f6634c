"""The layouts of WMT's published ranking files (docs/api.md §5.3; the `wmt-rank` format is formats.py): WMT08's
comma-separated rows, WMT09's tab-separated ones with or without a header, and WMT10–16's named columns.
`layout_for(first line, row type)` chooses one; its `read(fields, row type)` turns a line into a ranking row (or
None for a row of another type, or with no ranked slot), and a ValueError says what is wrong with it."""
from __future__ import annotations

import abc
import re

from annotation.building.judgment_files import JudgmentRow, text_field
from annotation.building.text_lines import csv_fields

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


def listed(values: list[str]) -> str:
    """Every task of the file, so the caller can choose any of them."""
    return ", ".join(v[:40] for v in values)


def layout_for(first: str, row_type: str) -> _Layout:
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
