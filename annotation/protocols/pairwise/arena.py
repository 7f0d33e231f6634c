"""Arena battles (LMSYS Chatbot Arena's published `clean_battle` files; docs/api.md §5.7): one battle a record,
`{"model_a", "model_b", "winner", "judge", "tstamp", "question_id"?, "language"?, "turn"?, "anony"?}`, with
`winner` one of model_a, model_b, tie, "tie (bothbad)", in a JSON array or as JSON Lines. They make a
`pairwise-adequacy` campaign whose systems are the models: a battle is an item whose payload names its two models
(model_a shown as A), a tie either way is the choice `tie`, and "tie (bothbad)" keeps `bothbad` in the payload.
`arena-jsonl` writes any pairwise campaign's judgments back in the same shape (a two-system campaign's sides
named by its systems), so that the file re-imports to the same judgments."""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from annotation.building.campaign_files import CampaignFileError
from annotation.building.json_records import json_records, string_field
from annotation.building.judgment_files import (
    ExportFormat,
    JudgmentFormat,
    JudgmentImportResult,
    JudgmentRow,
    ParsedJudgments,
    store_parsed,
)
from annotation.building.text_lines import bounded_number
from annotation.models import Campaign, Judgment, System

WINNERS = {"model_a": "A", "model_b": "B", "tie": "tie", "tie (bothbad)": "tie"}
BOTHBAD = "tie (bothbad)"
#: Fields kept as given and written back: the battle's prompt id, its language, turns and anonymity.
EXTRAS = (("question_id", str), ("language", str), ("turn", int), ("anony", bool))
PROTOCOL = "pairwise-adequacy"
#: The latest time a battle may carry (seconds since 1970; year 5138).
MAX_TSTAMP = 1e11


class ArenaJudgments(ParsedJudgments):
    """Parsed battles; stored as `store_parsed` stores rows, with a system for every model named."""

    def store(self, name: str, study: str | None = None, owner=None) -> JudgmentImportResult:
        result = store_parsed(self, name, study, owner)
        System.objects.bulk_create([System(campaign=result.campaign, name=m) for m in self.options["models"]])
        return result


def _battle(record, problems: list[str]) -> JudgmentRow | None:
    if not isinstance(record, dict):
        problems.append(f"a battle must be a JSON object, not {type(record).__name__}")
        return None
    model_a = string_field(record, "model_a", problems, longest=200)
    model_b = string_field(record, "model_b", problems, longest=200)
    judge = string_field(record, "judge", problems)
    if model_a and model_a == model_b:
        problems.append(f"model_a and model_b must differ, both are {model_a[:40]!r}")
    winner = record.get("winner")
    if winner not in WINNERS:
        problems.append(f"winner must be model_a, model_b, tie or tie (bothbad), not {str(winner)[:40]!r}")
    tstamp = record.get("tstamp")
    if tstamp is not None:
        try:
            bounded_number(tstamp, "tstamp", 0, MAX_TSTAMP)
        except ValueError:
            problems.append(f"tstamp must be a number of seconds since 1970, not {str(tstamp)[:40]!r}")
    extras = {}
    for key, kind in EXTRAS:
        value = record.get(key)
        if value is None:
            continue
        if kind is str:
            value = string_field(record, key, problems, longest=200)
        elif not isinstance(value, kind) or (kind is int and (isinstance(value, bool) or not 0 <= value < 2**31)):
            problems.append(f"{key} must be {'an integer below 2^31' if kind is int else 'true or false'}, "
                            f"not {str(value)[:40]!r}")
        extras[key] = value
    if problems:
        return None
    payload = {"unit": "sentence", "criterion": "adequacy", "left": 0, "spam_side": None, "model_a": model_a,
               "model_b": model_b, "bothbad": winner == BOTHBAD, "tstamp": tstamp, **extras}
    return JudgmentRow(hit="arena", worker=judge, item_type="system", system=None, segment=None,
                       choice=WINNERS[winner], payload=payload)


def parse_arena(lines: Iterable[bytes | str]) -> ArenaJudgments:
    """Validate a file of arena battles (a JSON array or JSON Lines); every bad battle is named by its line."""
    errors: list[tuple[int, str]] = []
    rows: list[JudgmentRow] = []
    for number, record in json_records(lines, errors):
        problems: list[str] = []
        row = _battle(record, problems)
        if row is None:
            errors.extend((number, p) for p in problems)
            continue
        # the item's key: the battle's question id where given, else its place in the file
        row.payload["key"] = f"battle:{row.payload.get('question_id') or len(rows) + 1}"
        row.payload["doc_id"] = row.payload["key"][len("battle:"):]
        rows.append(row)
    if not rows and not errors:
        errors.append((0, "the file has no battles"))
    if errors:
        raise CampaignFileError(errors)
    models = sorted({r.payload["model_a"] for r in rows} | {r.payload["model_b"] for r in rows})
    return ArenaJudgments(rows=rows, protocol=PROTOCOL, options={
        "arena": True, "models": models, "unit": "sentence", "criteria": ["adequacy"]})


def arena_jsonl_lines(campaign: Campaign) -> Iterator[str]:
    """Every judged battle of a pairwise campaign (spam items left out) as an arena battle a line."""
    systems = list(campaign.options.get("systems") or [])
    judgments = (Judgment.objects.filter(campaign=campaign).exclude(choice="").exclude(item__item_type="spam")
                 .order_by("pk").values_list("annotator__external_id", "annotator__user__username", "choice",
                                             "created_at", "item__payload").iterator(chunk_size=2000))
    for external_id, username, choice, created_at, payload in judgments:
        yield json.dumps(_battle_record(external_id or username, choice, created_at, payload or {}, systems),
                         ensure_ascii=False) + "\n"


def _battle_record(judge: str, choice: str, created_at, payload: dict, systems: list[str]) -> dict:
    if "model_a" in payload:
        model_a, model_b = payload["model_a"], payload["model_b"]
    else:  # the platform's own two-system campaign: A was the system shown left
        left = int(payload.get("left") or 0)
        model_a, model_b = systems[left], systems[1 - left]
    winner = {"A": "model_a", "B": "model_b"}.get(choice, BOTHBAD if payload.get("bothbad") else "tie")
    tstamp = payload["tstamp"] if "model_a" in payload else created_at.timestamp()
    record = {"model_a": model_a, "model_b": model_b, "winner": winner, "judge": judge, "tstamp": tstamp}
    if "model_a" not in payload:
        record["question_id"] = f"{payload.get('criterion', 'adequacy')}:{payload.get('key', '')}"
    record.update({key: payload[key] for key, _ in EXTRAS if payload.get(key) is not None})
    return record


def _writes_pairwise(spec) -> bool:
    return spec.family == "pairwise"


#: The pairwise protocols' arena format, read (a JSON array or JSON Lines) and written (JSON Lines).
ARENA = JudgmentFormat("arena", parse_arena, listed=5, protocols=(PROTOCOL,))
ARENA_JSONL = ExportFormat("arena-jsonl", arena_jsonl_lines, "application/x-ndjson; charset=utf-8", "jsonl",
                           _writes_pairwise)
