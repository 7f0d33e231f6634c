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
human reference, stays a pseudo-system of kind "reference". The layouts are read in wmt_rank_layouts.py.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from annotation.building.campaign_files import CampaignFileError, Problems
from annotation.building.judgment_files import (
    JudgmentFormat,
    JudgmentRow,
    ParsedJudgments,
    lines_warning,
)
from annotation.building.text_lines import numbered_lines

from .wmt_rank_layouts import MAX_TASK, ROW_TYPES, layout_for, listed


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
                layout = layout_for(text, row_type)
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
            raise CampaignFileError([(0, f"pair: {pair[:40]!r} is not in the file; it holds {listed(pairs)}")])
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


#: The ranking protocols' judgment format; `rows` picks the protocol of a WMT08/09 file (ROW_TYPES).
WMT_RANK = JudgmentFormat("wmt-rank", parse_wmt_rank, listed=1, protocols=tuple(ROW_TYPES.values()), text_options={
    "rows": "the WMT08/09 rows imported, RANK (default), CONSTITUENT or CONSTITUENT_ACCEPT",
    "pair": "the language pair (srclang-trglang) or TASK to import from a file that holds several (default: "
            "every one, a campaign each)"})
