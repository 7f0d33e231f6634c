"""Pairwise ranking of two systems on whole documents and on sentences: A better, tie, B
better (METHODS.md §7; 003 §2.2). Adequacy shows the source; fluency does not."""
from __future__ import annotations

import random

from ..services.pairwise_builder import UNITS, crosses_over, exposure, plan_pairwise_hits
from . import register
from .base import JudgmentError, Protocol, language_name, require_item_id

CHOICES = ("A", "B", "tie")
#: 003 §2.2: 5 spam documents per 55 and 16 spam sentences per 120.
DEFAULT_SPAM_RATES = {"document": 5 / 55, "sentence": 16 / 120}
DEFAULT_DOCS_PER_HIT = 10


class Pairwise(Protocol):
    family = "pairwise"
    template = "annotation/screens/pairwise.html"
    script = "annotation/pairwise.js"

    def __init__(self, name: str, label: str, criterion: str, statement: str):
        self.name = name
        self.label = label
        self.criterion = criterion
        self._statement = statement

    @property
    def shows_source(self) -> bool:
        return self.criterion == "adequacy"

    def default_statement(self, language: str) -> str:
        return self._statement.format(language=language_name(language))

    def check_options(self, options: dict, system_names: set[str], hit_size: int) -> list[str]:
        problems = []
        systems = options.get("systems") or []
        if len(systems) != 2 or systems[0] == systems[1]:
            problems.append("pairwise protocols compare two different systems: give --systems A,B")
        else:
            problems += [f"system {s!r} is not in the file" for s in systems if s not in system_names]
        options.setdefault("unit", "document")
        if options["unit"] not in UNITS:
            problems.append(f"unit must be one of {', '.join(UNITS)}")
        options.setdefault("docs_per_hit", DEFAULT_DOCS_PER_HIT)
        if not isinstance(options["docs_per_hit"], int) or options["docs_per_hit"] < 1:
            problems.append("docs_per_hit must be a positive integer")
        rates = {**DEFAULT_SPAM_RATES, **options.get("spam_rates", {})}
        if any(not isinstance(r, (int, float)) or not 0 <= r <= 1 for r in rates.values()):
            problems.append("spam rates must lie between 0 and 1")
        options["spam_rates"] = rates
        options["criterion"] = self.criterion
        return problems

    def plan_hits(self, content, hit_size, options, rng: random.Random):
        index = {name: i for i, name in enumerate(content.system_names)}
        systems = (index[options["systems"][0]], index[options["systems"][1]])
        return plan_pairwise_hits(content, systems, options["unit"], options["docs_per_hit"], options["spam_rates"],
                                  self.shows_source, rng)

    def hit_exposure(self, items) -> dict:
        return exposure(items)

    def conflicts(self, exposure: dict, seen: list[dict]) -> bool:
        return crosses_over(exposure, seen)

    export_columns = ("unit", "system_A", "system_B", "preferred")
    export_payload_keys = ("unit", "left", "doc_id")

    def export_values(self, payload: dict, options: dict, row: dict) -> dict:
        """Which system was on which side (A left, B right) and which one the judge preferred."""
        systems = options.get("systems") or ["", ""]
        left = payload.get("left") or 0
        shown = {"A": systems[left], "B": systems[1 - left]}
        return {"unit": payload.get("unit"), "system_A": shown["A"], "system_B": shown["B"],
                "preferred": shown.get(row["choice"], row["choice"]), "doc_id": row["doc_id"] or payload.get("doc_id")}

    def item_payload(self, item) -> dict:
        stored = item.payload
        payload = {"id": item.id, "protocol": self.name, "unit": stored["unit"], "A": stored["A"],
                   "B": stored["B"]}
        if self.shows_source:
            payload["source"] = stored.get("source", [])
        return payload

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        choice = body.get("choice")
        if choice not in CHOICES:
            raise JudgmentError("'choice' must be \"A\", \"B\" or \"tie\"")
        return {"choice": choice}


register(Pairwise(
    "pairwise-adequacy", "Pairwise ranking, adequacy (source shown)", "adequacy",
    "Read the source text and the two translations. Which translation expresses the meaning of the source better?",
))
register(Pairwise(
    "pairwise-fluency", "Pairwise ranking, fluency (no source)", "fluency",
    "Read the two texts. Which one is better written, more fluent {language}?",
))
