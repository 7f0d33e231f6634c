"""MQM side by side, `mqm-sxs` (Google's Anthea MQM-SxS; Song et al. 2025; docs/methods.md#side-by-side).

Two to `sxs_columns` translations of the same segment in columns, each in its own document, each with MQM
spans (category and severity, as the MQM screen); no 0–100 score: the MQM score comes from the spans. It is
contrastive ESA's screen and storage with MQM's spans, so it lives here beside them as one more protocol
object (the error-span family reads it as a contrastive MQM campaign), not as a package of its own.

The screen's consistency aid: when the judge marks words that also occur, unmarked, in another column, that
column says so ("the same words in B are unmarked"); nothing is forced. The answer records each hint shown:
`{"item", "candidates": {"<key>": {"spans": [...]}}, "hints": [{"from", "column", "text", "start", "end",
"shown", "action"}]}`: the column marked (`from`), the column hinted at and the words' offsets there, the
seconds after the item appeared, and what the judge then did (`marked` them there too, `dismissed` the hint,
or `none`). Every part is checked against the item (a 400 names the first fault; nothing is stored).
"""
from __future__ import annotations

import random

from annotation.building.candidates import answers_every_key
from annotation.building.hit_layout import HitPlanError
from annotation.building.spans import SpanError, check_spans
from annotation.protocols.base import JudgmentError, Screen, require_item_id, require_number, require_only
from annotation.protocols.options import Option

from .contrastive_strategy import ContrastiveEsa
from .span_options import MQM_OPTIONS
from .strategy import SPAN_EDITOR_SCRIPTS
from .sxs_planner import plan_sxs_hits

SXS_OPTIONS = (
    *MQM_OPTIONS,
    Option("sxs_columns", "int", 2, "Translations side by side on one screen (2 to 8); with more systems, each "
           "document is shown in random groups of this many.", minimum=2, maximum=8, target="options"),
)
HINT_KEYS = {"from", "column", "text", "start", "end", "shown", "action"}
ACTIONS = ("marked", "dismissed", "none")
MAX_HINTS = 500


class MqmSxs(ContrastiveEsa):
    """MQM spans in every column of a side-by-side screen, with the consistency hints recorded."""

    screen = Screen("error_spans/mqm_sxs.html", (*SPAN_EDITOR_SCRIPTS, "error_spans/mqm_sxs.js"))
    export_columns = ("spans", "columns", "answer")
    export_payload_keys = ("candidates",)

    def __init__(self, name: str, label: str, statement: str):
        super().__init__(name, label, statement)
        self.mqm = True
        self.own_options = SXS_OPTIONS

    def check_options(self, options: dict, system_names: set[str], hit_size: int) -> list[str]:
        options.setdefault("sxs_columns", 2)
        return super().check_options(options, system_names, hit_size)

    def plan_hits(self, content, hit_size, options, rng: random.Random):
        self.check_prefilled(content, options)
        if self.expected_answers(content, options):  # refused, not silently left unchecked
            raise HitPlanError("'expected' answers on tutorial lines are not offered for mqm-sxs (its tutorial "
                               "screens are shown without checks); use esa, mqm or contrastive-esa")
        return plan_sxs_hits(content, hit_size, options.get("sxs_columns", 2), options["perturbation_rate"], rng)

    def item_payload(self, item) -> dict:
        payload = super().item_payload(item)
        payload["categories"] = self.categories(item.hit.campaign.options or {})
        return payload

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        require_only(body, {"item", "candidates", "hints"}, '{"item", "candidates": {"<key>": {"spans"}}, "hints"}')
        given = body.get("candidates")
        if not isinstance(given, dict) or not given:
            raise JudgmentError("'candidates' must be an object of candidate key to {\"spans\"}")
        if len(given) > 50:
            raise JudgmentError(f"'candidates' holds {len(given)} entries; a screen has at most 50")
        spans = {}
        for key, answer in given.items():
            if not isinstance(answer, dict) or sorted(set(answer) - {"spans"}):
                raise JudgmentError(f"the answer for {key[:20]!r} must be {{\"spans\": [...]}}")
            spans[key] = answer.get("spans", [])
        hints = body.get("hints", [])
        if not isinstance(hints, list) or len(hints) > MAX_HINTS:
            raise JudgmentError(f"'hints' must be a list of at most {MAX_HINTS} hint objects")
        return {"scores": {}, "spans": spans, "answer": {"hints": [_parse_hint(h, i) for i, h in enumerate(hints)]}}

    def check_answer(self, item, fields: dict) -> None:
        keys = answers_every_key(item, fields["spans"], "its spans (an empty list for none)")
        texts = {c["key"]: c["text"] for c in self.item_payload(item)["candidates"]}
        options = item.hit.campaign.options or {}
        by_key = {}
        for key in keys:
            try:
                by_key[key] = check_spans(fields["spans"].get(key, []), texts[key], self.severities(options),
                                          self.categories(options))
            except SpanError as exc:
                raise JudgmentError(f"{key[:20]!r}: {exc}") from None
        fields["spans"] = [{**span, "candidate": key} for key in keys for span in by_key[key]]
        _check_hints(fields["answer"]["hints"], texts, by_key)

    def export_values(self, payload: dict, options: dict, row: dict) -> dict:
        """`columns`: each candidate key's system (the degraded copy's named `<system> (degraded)`)."""
        candidates = payload.get("candidates") or []
        return {"columns": {c["key"]: c["name"] + (" (degraded)" if c.get("kind") == "bad" else "")
                            for c in candidates if isinstance(c, dict) and "key" in c}}


def _parse_hint(hint, index: int) -> dict:
    """One hint's shape: the keys, types and ranges that do not depend on the item."""
    if not isinstance(hint, dict) or set(hint) != HINT_KEYS:
        raise JudgmentError(f"hint {index}: must be an object with exactly {', '.join(sorted(HINT_KEYS))}")
    for name in ("from", "column", "text"):
        if not isinstance(hint[name], str) or not hint[name] or len(hint[name]) > 1000:
            raise JudgmentError(f"hint {index}: '{name}' must be a non-empty string")
    for name in ("start", "end"):
        if isinstance(hint[name], bool) or not isinstance(hint[name], int) or not 0 <= hint[name] <= 100_000:
            raise JudgmentError(f"hint {index}: '{name}' must be a character offset")
    try:
        shown = require_number(hint, "shown", 0, 86_400)
    except JudgmentError as exc:
        raise JudgmentError(f"hint {index}: {exc} (seconds after the item appeared)") from None
    if hint["action"] not in ACTIONS:
        raise JudgmentError(f"hint {index}: 'action' must be one of {', '.join(ACTIONS)}")
    return {**hint, "shown": shown}


def _check_hints(hints: list[dict], texts: dict[str, str], spans: dict[str, list[dict]]) -> None:
    """Each hint against the item: known and different columns, the words at those offsets of the hinted column
    and present in the marked one, each hint once, and `marked` exactly when the hinted column's answer has a
    span over those words."""
    seen = set()
    for index, hint in enumerate(hints):
        source, column, start, end = hint["from"], hint["column"], hint["start"], hint["end"]
        if source not in texts or column not in texts:
            unknown = source if source not in texts else column
            raise JudgmentError(f"hint {index}: unknown candidate key {unknown[:20]!r}")
        if source == column:
            raise JudgmentError(f"hint {index}: 'from' and 'column' must be two different columns")
        text = texts[column]
        if not start < end <= len(text) or text[start:end] != hint["text"]:
            raise JudgmentError(f"hint {index}: [{start}, {end}) of that column is not {hint['text'][:40]!r}")
        if hint["text"] not in texts[source]:
            raise JudgmentError(f"hint {index}: the words do not occur in the column marked ('from')")
        key = (source, column, start, end)
        if key in seen:
            raise JudgmentError(f"hint {index}: the same hint is listed twice")
        seen.add(key)
        covered = any(s["start"] < end and start < s["end"] for s in spans[column])
        if covered != (hint["action"] == "marked"):
            raise JudgmentError(f"hint {index}: action {hint['action']!r}, but the words are "
                                f"{'marked' if covered else 'unmarked'} in that column's answer")


MQM_SXS = MqmSxs(
    "mqm-sxs", "MQM side by side: mark errors in two or more translations at once",
    "Mark every error in each translation: select it, choose its category and its severity ([missing] for omitted "
    "content). Judge the translations against each other: the same words with the same problem get the same mark.",
)
