"""Training with feedback and attention checks (docs/api.md §3 "Training", docs/methods.md §12.5).

A tutorial line of the campaign file may carry an expected answer per system, `"expected": {"<system>":
{"spans": [{"start", "end", "severity"?, "category"?}], "score": [low, high]}}` (Direct Assessment: the score range
only). `expected_answers` reads them for any protocol; the answer to such an item is checked on the server
against it (`check_tutorial`; contrastive ESA: one expected answer per candidate column, `check_candidates`); the
expected answer reaches the judge's browser only after a wrong answer, in loud mode (`feedback`).
Loud mode: a wrong answer is stored as a try and the judge tries again, until right or until `tutorial_tries`
tries; silent mode: the answer is scored, stored and nothing is shown.
A failed tutorial, or too many failed silent checks (`checks_max_failed`), keeps the judge out through the live
reliability gate (evaluation/services/training_gate.py). Pure functions here, and the options; no database.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from annotation.protocols.options import Option

from .hit_layout import CampaignContent, HitPlanError

LOUD, SILENT = "loud", "silent"
DEFAULT_TRIES, DEFAULT_OVERLAP, DEFAULT_MAX_FAILED = 3, 0.5, 2.0

TRAINING_OPTIONS = (
    Option("tutorial_mode", "choice", None, "Tutorial lines with an expected answer (docs/api.md#training): loud — "
           "after a wrong answer the judge sees what was missed and tries again, up to tutorial_tries; silent — "
           "attention checks: the answer is scored and kept, nothing is shown.",
           choices=((LOUD, "loud: feedback and retries"), (SILENT, "silent: attention checks")), target="options",
           default_text=LOUD),
    Option("tutorial_tries", "int", None, "Loud tutorials: tries per tutorial item; a judge still wrong at the last "
           "one fails the training and is kept out of the campaign.", minimum=1, maximum=20, target="options",
           default_text=str(DEFAULT_TRIES)),
    Option("tutorial_overlap", "float", None, "An expected span counts as found when one of the judge's spans covers "
           "at least this share of its characters.", minimum=0.01, maximum=1.0, target="options",
           default_text=str(DEFAULT_OVERLAP)),
    Option("checks_max_failed", "float", None, "Silent checks: a judge is kept out after this many failed checks "
           "(a whole number, 1 or more), or once this share of their checks failed (a number below 1).",
           minimum=0.01, maximum=1000, target="options", default_text="2 (failed checks)"),
)

#: The training options of a protocol whose answer is a score alone (Direct Assessment): no spans to overlap.
SCORE_TRAINING_OPTIONS = tuple(o for o in TRAINING_OPTIONS if o.name != "tutorial_overlap")


def mode(options: dict) -> str:
    return (options or {}).get("tutorial_mode") or LOUD


def tries_allowed(options: dict) -> int:
    return int((options or {}).get("tutorial_tries") or DEFAULT_TRIES)


def min_overlap(options: dict) -> float:
    return float((options or {}).get("tutorial_overlap") or DEFAULT_OVERLAP)


def max_failed(options: dict) -> float:
    return float((options or {}).get("checks_max_failed") or DEFAULT_MAX_FAILED)


def checks_fail(failed: int, checked: int, limit: float) -> bool:
    """True when `failed` of `checked` silent checks reach the limit: a count when it is 1 or more, else a share."""
    if limit >= 1:
        return failed >= limit
    return checked > 0 and failed / checked >= limit


class ExpectedError(ValueError):
    """A campaign file's expected answer that cannot be checked; the message says why."""


def parse_expected(value, text: str, severities: Sequence[str] | None, categories: Sequence[str] | None) -> dict:
    """One system's expected answer, checked against the translation `text`: `{"spans": [...], "score"?: [lo,
    hi]}`, each span in bounds with an optional severity (one of `severities`) and category (one of
    `categories`; MQM). `severities` None: a protocol without spans (Direct Assessment), `{"score": [lo, hi]}`."""
    if severities is None:
        if not isinstance(value, dict) or set(value) != {"score"}:
            raise ExpectedError("must be {\"score\": [low, high]}: this protocol's answer is a score, without spans")
    elif not isinstance(value, dict) or not value or set(value) - {"spans", "score"}:
        raise ExpectedError("must be an object with 'spans' and/or 'score'")
    spans = value.get("spans", [])
    if not isinstance(spans, list) or len(spans) > 50:
        raise ExpectedError("'spans' must be a list of at most 50 {\"start\", \"end\", \"severity\"?} objects")
    checked = []
    for i, span in enumerate(spans):
        if not isinstance(span, dict) or set(span) - {"start", "end", "severity", "category"}:
            raise ExpectedError(f"span {i}: must be an object with 'start', 'end', and optionally 'severity', "
                                "'category'")
        start, end = span.get("start"), span.get("end")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)) or not (
                0 <= start < end <= len(text)):
            raise ExpectedError(f"span {i}: needs integer offsets with 0 ≤ start < end ≤ {len(text)}")
        if "severity" in span and span["severity"] not in severities:
            raise ExpectedError(f"span {i}: severity must be one of {', '.join(severities)}")
        if "category" in span and (categories is None or span["category"] not in categories):
            raise ExpectedError(f"span {i}: category must be one of the campaign's taxonomy" if categories
                                else f"span {i}: this protocol takes no category")
        checked.append({k: span[k] for k in ("start", "end", "severity", "category") if k in span})
    result: dict = {} if severities is None else {"spans": sorted(checked, key=lambda s: (s["start"], s["end"]))}
    if "score" in value:
        score = value["score"]
        if (not isinstance(score, list) or len(score) != 2
                or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in score)
                or not 0 <= score[0] <= score[1] <= 100):
            raise ExpectedError("'score' must be [low, high] with 0 ≤ low ≤ high ≤ 100")
        result["score"] = [score[0], score[1]]
    return result


def expected_answers(content: CampaignContent, parse_one: Callable[[object, str], dict]
                     ) -> dict[int, dict[int, dict]]:
    """The campaign file's expected answers (`expected` on tutorial lines), each read by `parse_one(value, the
    system's translation)` (e.g. `parse_expected` with the campaign's severities): per segment index, per system
    index. A bad one refuses the file (HitPlanError), naming the document, the segment and the system."""
    found: dict[int, dict[int, dict]] = {}
    if content.record is None:
        return found
    names = content.system_names
    for segment in content.segments:
        record = content.record(segment.index)
        if "expected" not in record:
            continue
        where = f"document {segment.doc_id!r}, segment {segment.seg_id}: 'expected'"
        given = record["expected"]
        if not record.get("tutorial"):
            raise HitPlanError(f"{where} needs \"tutorial\": true on the same line")
        if not isinstance(given, dict) or not given or set(given) - set(names):
            raise HitPlanError(f"{where} must be an object from system name to its expected answer")
        for system, value in given.items():
            try:
                answer = parse_one(value, record["systems"][system])
            except ExpectedError as exc:
                raise HitPlanError(f"{where} of {system[:40]!r}: {exc}") from None
            found.setdefault(segment.index, {})[names.index(system)] = answer
    return found


@dataclass
class Check:
    """The verdict on one answer: `passed`, and what was missed (for loud feedback and the stored try). With
    candidate columns (contrastive ESA) each missed span names its `candidate`, and `scores_wrong` the columns
    whose score is outside its range."""

    passed: bool
    missed: list[dict] = field(default_factory=list)
    score_wrong: bool = False
    scores_wrong: list[str] = field(default_factory=list)


def _overlap(a: dict, b: dict) -> int:
    return max(0, min(a["end"], b["end"]) - max(a["start"], b["start"]))


def check_expected(expected: dict, spans: list[dict], score: float | None, share: float) -> Check:
    """Check an answer against an expected one. An expected span is found when the judge's span overlapping it
    most covers at least `share` of its characters; its severity (category), when given, must then be that
    span's. The score, when a range is expected, must lie in it (ends included). Extra spans are not faults."""
    missed = []
    for want in expected.get("spans", []):
        length = want["end"] - want["start"]
        best = max(spans, key=lambda s: _overlap(want, s), default=None)
        covered = _overlap(want, best) if best is not None else 0
        if covered < share * length - 1e-9:
            missed.append({**want, "problem": "not found"})
        elif "severity" in want and best.get("severity") != want["severity"]:
            missed.append({**want, "problem": "severity", "given": best.get("severity")})
        elif "category" in want and best.get("category") != want["category"]:
            missed.append({**want, "problem": "category", "given": best.get("category")})
    low_high = expected.get("score")
    score_wrong = low_high is not None and (score is None or not low_high[0] <= score <= low_high[1])
    return Check(passed=not missed and not score_wrong, missed=missed, score_wrong=score_wrong)


def check_candidates(expected: dict[str, dict], spans: list[dict], scores: dict[str, float], share: float) -> Check:
    """Check an answer of several candidate columns (contrastive ESA): each column with an expected answer (by
    candidate key) as `check_expected` checks one translation, against its own spans (`span["candidate"]`) and
    score; the answer passes when every such column does. Columns without an expected answer are not checked."""
    missed, wrong = [], []
    for key, want in expected.items():
        own = [s for s in spans if s.get("candidate") == key]
        check = check_expected(want, own, scores.get(key), share)
        missed += [{**miss, "candidate": key} for miss in check.missed]
        if check.score_wrong:
            wrong.append(key)
    return Check(passed=not missed and not wrong, missed=missed, score_wrong=bool(wrong), scores_wrong=wrong)


def check_tutorial(item, spans: list[dict], score: float | None) -> Check | None:
    """A tutorial item's answer checked against the expected answer in its payload (the one translation's spans
    and score; at the campaign's `tutorial_overlap`); None for any other item. The protocols' `check_expected`."""
    expected = (item.payload or {}).get("expected")
    if item.item_type != "tutorial" or not expected:
        return None
    return check_expected(expected, spans, score, min_overlap(item.hit.campaign.options))


def _problems(check: Check, expected: dict, where: str = "") -> list[str]:
    parts = []
    for miss in check.missed:
        if miss["problem"] == "not found":
            parts.append(f"an error you did not mark{where} (highlighted)")
        else:
            parts.append(f"an error{where} marked with the wrong {miss['problem']} (expected "
                         f"{miss[miss['problem']]}, not {miss.get('given') or 'none'})")
    if check.score_wrong and "spans" not in expected:  # a slider without numbers (Direct Assessment)
        parts.append("a rating in another part of the line (below)")
    elif check.score_wrong:
        parts.append(f"a score between {expected['score'][0]:g} and {expected['score'][1]:g}{where}")
    return parts


def feedback(expected: dict, check: Check, tries: int, limit: int, columns: Sequence[str] = ()) -> dict:
    """What a loud tutorial shows after a wrong answer: the whole expected answer, what was missed, tries left.
    Candidate columns (`expected["candidates"]`, by key): each problem names its column as the screen letters it,
    translation A, B, … in the order of `columns` (the item's candidate keys)."""
    left = max(0, limit - tries)
    if "candidates" in expected:
        parts = []
        letters = {key: chr(ord("A") + i) for i, key in enumerate(columns)}
        for key, want in expected["candidates"].items():
            own = Check(False, [m for m in check.missed if m.get("candidate") == key], key in check.scores_wrong)
            parts += _problems(own, want, f" in translation {letters.get(key, key)}")
    else:
        parts = _problems(check, expected)
    message = "The expected answer has " + "; ".join(parts) + "."
    message += f" Try again ({left} {'try' if left == 1 else 'tries'} left)." if left else ""
    shown = {"passed": False, "tries": tries, "tries_left": left, "expected": expected, "missed": check.missed,
             "score_wrong": check.score_wrong, "message": message}
    if "candidates" in expected:
        shown["scores_wrong"] = check.scores_wrong
    return shown
