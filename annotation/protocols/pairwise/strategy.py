"""Pairwise ranking of two systems on whole documents and on sentences: A better, tie, B
better (docs/methods.md §7; Läubli et al. 2018 §2.2). Adequacy shows the source; fluency does not."""
from __future__ import annotations

import random

from annotation.building.shared_options import BRADLEY_TERRY_OPTIONS
from annotation.protocols.base import JudgmentError, Protocol, Screen, language_name, require_item_id, require_only
from annotation.protocols.options import Option
from annotation.protocols.pairwise.planner import UNITS, crosses_over, exposure, plan_pairwise_hits

CHOICES = ("A", "B", "tie")
#: Läubli et al. 2018 §2.2: 5 spam documents per 55 and 16 spam sentences per 120.
DEFAULT_SPAM_RATES = {"document": 5 / 55, "sentence": 16 / 120}
DEFAULT_DOCS_PER_HIT = 10
DEFAULT_MAX_SPAM_MISS_RATE = 0.2
TWO_SYSTEMS = "pairwise protocols compare two different systems, e.g. A,B"
#: The pairwise protocols' own import options.
PAIRWISE_OPTIONS = (
    Option("systems", "list", None, "The two systems compared, A,B.", required=True, missing=TWO_SYSTEMS,
           target="options"),
    Option("unit", "choice", "document", "What is compared: whole documents, sentences, or both.",
           choices=tuple((unit, unit) for unit in UNITS), target="options"),
    Option("docs_per_hit", "int", DEFAULT_DOCS_PER_HIT, "Documents per HIT.", minimum=1, maximum=1000,
           target="options"),
    Option("spam_rate_document", "float", DEFAULT_SPAM_RATES["document"], "Spam documents per document item "
           "(Läubli et al. 2018: 5 of 55).", minimum=0.0, maximum=1.0, target="options",
           key=("spam_rates", "document")),
    Option("spam_rate_sentence", "float", DEFAULT_SPAM_RATES["sentence"], "Spam sentences per sentence item "
           "(Läubli et al. 2018: 16 of 120).", minimum=0.0, maximum=1.0, target="options",
           key=("spam_rates", "sentence")),
    Option("max_spam_miss_rate", "float", DEFAULT_MAX_SPAM_MISS_RATE, "Judges who miss a larger share of their "
           "spam items are excluded from the results.", minimum=0.0, maximum=1.0, target="options"),
    *BRADLEY_TERRY_OPTIONS,
)


class Pairwise(Protocol):
    family = "pairwise"
    screen = Screen("pairwise/pairwise.html", ("pairwise/pairwise.js",))
    shows_document = True  # document units show every sentence of the document (their media too)
    own_options = PAIRWISE_OPTIONS
    judgment_formats = ("annotation.protocols.pairwise.formats.PAIRWISE_CSV",
                        "annotation.protocols.pairwise.arena.ARENA")
    export_formats = ("annotation.protocols.pairwise.arena.ARENA_JSONL",)

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

    def check_parsed(self, values: dict) -> list[tuple[str, str]]:
        systems = values.get("systems") or []
        return [] if len(systems) == 2 and systems[0] != systems[1] else [("systems", TWO_SYSTEMS)]

    def check_options(self, options: dict, system_names: set[str], hit_size: int) -> list[str]:
        problems = []
        systems = options.get("systems") or []
        if len(systems) != 2 or systems[0] == systems[1]:
            problems.append(f"systems: {TWO_SYSTEMS}")
        else:
            problems += [f"systems: system {s!r} is not in the file" for s in systems if s not in system_names]
        options.setdefault("unit", "document")
        if options["unit"] not in UNITS:
            problems.append(f"unit: must be one of {', '.join(UNITS)}")
        options.setdefault("docs_per_hit", DEFAULT_DOCS_PER_HIT)
        if isinstance(options["docs_per_hit"], bool) or not isinstance(options["docs_per_hit"], int) \
                or options["docs_per_hit"] < 1:
            problems.append("docs_per_hit: must be a positive integer")
        rates = {**DEFAULT_SPAM_RATES, **options.get("spam_rates", {})}
        problems += [f"spam_rate_{unit}: must lie between 0 and 1" for unit, rate in rates.items()
                     if not isinstance(rate, (int, float)) or not 0 <= rate <= 1]
        options["spam_rates"] = rates
        options.setdefault("max_spam_miss_rate", DEFAULT_MAX_SPAM_MISS_RATE)
        rate = options["max_spam_miss_rate"]
        if not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            problems.append("max_spam_miss_rate: must lie between 0 and 1")
        options["criterion"] = self.criterion
        return problems

    def plan_hits(self, content, hit_size, options, rng: random.Random):
        index = {name: i for i, name in enumerate(content.system_names)}
        systems = (index[options["systems"][0]], index[options["systems"][1]])
        return plan_pairwise_hits(content, systems, options["unit"], options["docs_per_hit"], options["spam_rates"],
                                  self.shows_source, rng)

    def hit_exposure(self, items) -> dict:
        return exposure(items)

    def conflicts(self, exposure: dict, seen: list[dict], annotator_id: int | None = None) -> bool:
        return crosses_over(exposure, seen)

    export_columns = ("unit", "system_A", "system_B", "preferred")
    export_payload_keys = ("unit", "left", "doc_id", "model_a", "model_b")

    def export_values(self, payload: dict, options: dict, row: dict) -> dict:
        """Which system was on which side (A left, B right) and which one the judge preferred; an imported arena
        battle names its two models itself."""
        systems = options.get("systems") or ["", ""]
        left = payload.get("left") or 0
        if payload.get("model_a"):
            systems, left = [payload["model_a"], payload["model_b"]], 0
        shown = {"A": systems[left], "B": systems[1 - left]}
        return {"unit": payload.get("unit"), "system_A": shown["A"], "system_B": shown["B"],
                "preferred": shown.get(row["choice"], row["choice"]), "doc_id": row["doc_id"] or payload.get("doc_id")}

    def instruction_targets(self, item) -> list[tuple[str, str]]:
        """One instruction judgment per side."""
        return [("A", "Translation A"), ("B", "Translation B")]

    def instruction_systems(self, payload: dict, output_system: str | None, options: dict) -> dict[str, str | None]:
        shown = self.export_values(payload, options, {"choice": "", "doc_id": ""})
        return {"A": shown["system_A"] or None, "B": shown["system_B"] or None}

    def preview_systems(self, item, options: dict) -> str:
        """Which of the campaign's systems is on side A and which on B (`left` 0: the first system on A), and
        which side a spam item shuffled."""
        shown = self.export_values(item.payload, options, {"choice": "", "doc_id": ""})
        text = f"A: {shown['system_A']}\nB: {shown['system_B']}"
        spam = item.payload.get("spam_side")
        return f"{text}\n({spam} shuffled)" if spam else text

    def item_payload(self, item) -> dict:
        stored = item.payload
        payload = {"id": item.id, "protocol": self.name, "unit": stored["unit"], "A": stored["A"],
                   "B": stored["B"]}
        if self.shows_source:
            payload["source"] = stored.get("source", [])
        return payload

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        require_only(body, {"item", "choice"}, '{"item", "choice"}')
        choice = body.get("choice")
        if choice not in CHOICES:
            raise JudgmentError("'choice' must be \"A\", \"B\" or \"tie\"")
        return {"choice": choice}


#: The protocols of this package, in the order of the protocol choices (settings.MTEVAL_PROTOCOLS).
PROTOCOLS = (
    Pairwise(
        "pairwise-adequacy", "Pairwise ranking, adequacy (source shown)", "adequacy",
        "Read the source text and the two translations. Which translation expresses the meaning of the source better?",
    ),
    Pairwise(
        "pairwise-fluency", "Pairwise ranking, fluency (no source)", "fluency",
        "Read the two texts. Which one is better written, more fluent {language}?",
    ),
)
