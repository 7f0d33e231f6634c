"""Relative ranking of N outputs of one segment, ties allowed, with optional gold control units
(docs/methods.md §8; Callison-Burch 2009 §4, Paul & Sumita 2011 §3-§4). The screens are planned
in services.ranking_builder; the statistics are the `ranking` result family's."""
from __future__ import annotations

import random

from annotation.building.candidates import answers_every_key
from annotation.building.instructions import candidate_systems, candidate_targets
from annotation.building.screen_context import SEGMENT_OUTPUTS, segment_outputs
from annotation.building.shared_options import BRADLEY_TERRY_OPTIONS, QC_THRESHOLD, SCREENS_PER_HIT
from annotation.building.shared_options import GATE_OPTIONS as _GATE
from annotation.protocols.base import JudgmentError, Protocol, Screen, language_name, require_item_id, require_only
from annotation.protocols.options import Option
from annotation.protocols.ranking.planner import GOLD_MODES, plan_ranking_hits

MAX_SCREEN_SIZE = 20
DEFAULT_GOLD_RATE = 0.10
#: Paul & Sumita 2011 §4.2: a worker is trusted after at least 4 gold units with at least 70 % right.
DEFAULT_MIN_GOLD, DEFAULT_MIN_GOLD_ACCURACY = 4, 0.70
#: The live reliability gate on the gold screens (docs/methods.md §12.1): the shared options, as Direct Assessment
#: takes them (the test's threshold, the gate and its rule).
GATE_OPTIONS = (QC_THRESHOLD, *_GATE)

RANKING_OPTIONS = (
    SCREENS_PER_HIT,
    Option("screen_size", "int", 5, "Outputs ranked on one screen (N); every pair of systems meets about "
           "equally often.", minimum=2, maximum=MAX_SCREEN_SIZE, target="options"),
    Option("gold", "choice", "none", "Gold control units: none; best (a known-good translation, the line's "
           "`gold` or else its reference, must be ranked first); best-worst (also a degraded output, which must "
           "be ranked in the bottom half while the gold is in the top half).",
           choices=tuple((mode, mode) for mode in GOLD_MODES), target="options"),
    Option("gold_rate", "float", DEFAULT_GOLD_RATE, "Share of screens that carry gold units.", minimum=0.0,
           maximum=1.0, target="options"),
    Option("show_reference", "bool", None, "Show the reference translation above the outputs.", target="options",
           default_text="shown unless gold units are on (the reference may be the gold)"),
    Option("min_gold", "int", DEFAULT_MIN_GOLD, "Gold units a worker must have judged to be trusted.",
           minimum=1, maximum=1000, target="options"),
    Option("min_gold_accuracy", "float", DEFAULT_MIN_GOLD_ACCURACY, "Share of gold units a trusted worker ranked "
           "right.", minimum=0.0, maximum=1.0, target="options"),
    Option("include_reference", "bool", None, "Count the human reference (_ref) among the ranked systems in the "
           "results (docs/methods.md §8).", target="options", default_text="yes"),
    *GATE_OPTIONS,
    *BRADLEY_TERRY_OPTIONS,
)


def gold_correct(rank_gold: int, rank_bad: int | None, n: int) -> bool:
    """Whether a screen's gold units were ranked right: best-only, the gold ranked 1; best-worst, the gold in the
    top half (rank ≤ ⌊N/2⌋) and the known-bad output in the bottom half (rank > N − ⌊N/2⌋)."""
    if rank_bad is None:
        return rank_gold == 1
    half = n // 2
    return rank_gold <= half and rank_bad > n - half


#: The constituent protocols show a highlighted phrase per output; they take no gold units.
CONSTITUENT_OPTIONS = tuple(o for o in RANKING_OPTIONS if o.name not in ("gold", "gold_rate", "min_gold",
                                                                         "min_gold_accuracy")
                            and o not in GATE_OPTIONS)
#: Constituent acceptance answers, stored as WMT08's CONSTITUENT_ACCEPT codes read as categories (1 yes, 2 no).
ACCEPT_CODES = {"yes": 1, "no": 2}


class Ranking(Protocol):
    family = "ranking"
    screen = Screen("ranking/ranking.html", ("annotation/choice_rows.js", "ranking/ranking.js"))
    own_options = RANKING_OPTIONS
    screen_reads = frozenset({SEGMENT_OUTPUTS})
    constituent = False
    judgment_formats = ("annotation.protocols.ranking.formats.WMT_RANK",)

    def __init__(self, name: str, label: str, statement: str):
        self.name = name
        self.label = label
        self._statement = statement

    def default_statement(self, language: str) -> str:
        return self._statement.format(language=language_name(language))

    def check_options(self, options: dict, system_names: set[str], hit_size: int) -> list[str]:
        options.setdefault("screen_size", 5)
        options.setdefault("gold", "none")
        options.setdefault("gold_rate", DEFAULT_GOLD_RATE)
        options.setdefault("min_gold", DEFAULT_MIN_GOLD)
        options.setdefault("min_gold_accuracy", DEFAULT_MIN_GOLD_ACCURACY)
        if options.get("show_reference") is None:
            options["show_reference"] = options["gold"] == "none"
        problems = []
        if len(system_names) < 2:
            problems.append("systems: ranking needs at least two systems in the file")
        if options["gold"] == "best-worst" and min(options["screen_size"], len(system_names)) < 3:
            problems.append("gold: best-worst needs at least 3 outputs per screen (screen_size)")
        if options.get("gate") and options["gold"] == "none":
            problems.append("gate: the live reliability gate of ranking tests the gold screens; choose gold best "
                            "or best-worst")
        return problems

    def size_warnings(self, options: dict, n_systems: int, hit_size: int, hit_sizes: list[int]) -> list[str]:
        asked = options.get("screen_size", 5)
        if n_systems >= asked:
            return []
        return [f"screen_size: the file has {n_systems} systems, so each screen ranks {n_systems} outputs, not "
                f"the {asked} asked for"]

    def plan_hits(self, content, hit_size, options, rng: random.Random):
        hits = plan_ranking_hits(content, options["screen_size"], hit_size, options["gold"], options["gold_rate"],
                                 rng, constituent=self.constituent)
        for items in hits:
            for item in items:
                item.payload["show_reference"] = options["show_reference"]
        return hits

    def refusal(self, campaign, annotator) -> str | None:
        """Paul & Sumita 2011 §4: a worker who has judged at least `min_gold` gold screens and ranked fewer than
        `min_gold_accuracy` of them right is blocked on the fly (workers still on probation are not)."""
        options = campaign.options or {}
        if options.get("gold", "none") == "none":
            return None
        from annotation.models import Judgment

        judged = Judgment.objects.filter(campaign=campaign, annotator=annotator, item__item_type="gold").values_list(
            "ranks", "item__payload")
        right = total = 0
        for ranks, payload in judged:
            kinds = {c["kind"]: c["key"] for c in payload.get("candidates", ())}
            if "gold" not in kinds or not ranks:
                continue
            total += 1
            bad = ranks.get(kinds["bad"]) if "bad" in kinds else None
            right += gold_correct(ranks.get(kinds["gold"], 0), bad, len(ranks))
        minimum = options.get("min_gold", DEFAULT_MIN_GOLD)
        if total >= minimum and right / total < options.get("min_gold_accuracy", DEFAULT_MIN_GOLD_ACCURACY):
            return "Thank you for your work. The control screens show that this task is not a good match for you, " \
                   "so no more HITs of this campaign are given to you."
        return None

    def item_payload(self, item) -> dict:
        stored = item.payload
        segment = item.segment
        texts = [text for _, text in segment_outputs(item)]
        candidates = [{"key": c["key"], "text": c.get("text") or texts[c["system"]]} for c in stored["candidates"]]
        payload = {"id": item.id, "protocol": self.name, "source": segment.source, "candidates": candidates}
        if self.constituent:
            payload["source_span"] = stored["source_span"]
            for shown, c in zip(candidates, stored["candidates"], strict=True):
                shown["span"] = c["span"]
        if stored.get("show_reference"):
            payload["reference"] = segment.reference
        return payload

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        ranks = body.get("ranks")
        if not isinstance(ranks, dict) or not ranks:
            raise JudgmentError("'ranks' must be an object of candidate key to rank (1 = best)")
        if len(ranks) > MAX_SCREEN_SIZE:
            raise JudgmentError(f"'ranks' holds {len(ranks)} entries; a screen has at most {MAX_SCREEN_SIZE}")
        for key, rank in ranks.items():
            if isinstance(rank, bool) or not isinstance(rank, int):
                raise JudgmentError(f"the rank of {key[:20]!r} must be an integer")
        require_only(body, {"item", "ranks"}, '{"item", "ranks"}')
        return {"ranks": dict(ranks)}

    def instruction_targets(self, item) -> list[tuple[str, str]]:
        """One instruction judgment per candidate shown."""
        return candidate_targets(item.payload)

    def instruction_systems(self, payload: dict, output_system: str | None, options: dict) -> dict[str, str | None]:
        return candidate_systems(payload)

    def check_answer(self, item, fields: dict) -> None:
        keys = answers_every_key(item, fields["ranks"], "a rank")
        ranks = fields["ranks"]
        n = len(keys)
        wrong = [k for k in keys if not 1 <= ranks[k] <= n]
        if wrong:
            raise JudgmentError(f"ranks must be integers from 1 to {n}; {wrong[0]!r} has {ranks[wrong[0]]}")

    export_columns = ("ranked",)
    export_payload_keys = ("candidates",)

    def export_values(self, payload: dict, options: dict, row: dict) -> dict:
        """The ranking as `system=rank` pairs in screen order (controls as [gold] and [bad:<system>])."""
        ranks = row.get("ranks") or {}
        return {"ranked": " ".join(f"{_label(c)}={ranks.get(c['key'], '')}" for c in payload.get("candidates") or [])}

    def preview_systems(self, item, options: dict) -> str:
        return "\n".join(f"{c['key']}: {_label(c)}" for c in item.payload["candidates"])


def _label(candidate: dict) -> str:
    name = candidate.get("name") or ""
    return {"gold": "[gold]", "bad": f"[bad:{name}]"}.get(candidate.get("kind"), name)


class ConstituentRanking(Ranking):
    """Ranking of one highlighted phrase per output (WMT08's constituent ranking, Callison-Burch 2009 §4)."""

    own_options = CONSTITUENT_OPTIONS
    constituent = True

    def check_options(self, options: dict, system_names: set[str], hit_size: int) -> list[str]:
        options["gold"] = "none"
        return super().check_options(options, system_names, hit_size)


class ConstituentAcceptance(ConstituentRanking):
    """For each highlighted phrase: is it an acceptable translation of the highlighted source phrase?"""

    family = "acceptance"
    own_options = tuple(o for o in CONSTITUENT_OPTIONS if o not in BRADLEY_TERRY_OPTIONS)  # no battles to fit
    screen = Screen("ranking/acceptance.html", ("annotation/choice_rows.js", "ranking/acceptance.js"))

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        accept = body.get("accept")
        if not isinstance(accept, dict) or not accept:
            raise JudgmentError("'accept' must be an object of candidate key to \"yes\" or \"no\"")
        if len(accept) > MAX_SCREEN_SIZE:
            raise JudgmentError(f"'accept' holds {len(accept)} entries; a screen has at most {MAX_SCREEN_SIZE}")
        wrong = [key for key, value in accept.items() if not isinstance(value, str) or value not in ACCEPT_CODES]
        if wrong:
            raise JudgmentError(f"the answer for {wrong[0][:20]!r} must be \"yes\" or \"no\"")
        require_only(body, {"item", "accept"}, '{"item", "accept"}')
        return {"ranks": {key: ACCEPT_CODES[value] for key, value in accept.items()}}

    def check_answer(self, item, fields: dict) -> None:
        answers_every_key(item, fields["ranks"], "an answer")


#: The protocols of this package, in the order of the protocol choices (settings.MTEVAL_PROTOCOLS).
PROTOCOLS = (
    Ranking(
        "ranking", "Relative ranking of N outputs (ties allowed)",
        "Rank the translations from best (1) to worst. Give equally good translations the same rank.",
    ),
    ConstituentRanking(
        "ranking-constituent", "Constituent ranking: rank the highlighted phrases (WMT08)",
        "Rank the highlighted phrases from best (1) to worst as translations of the highlighted source phrase. Give "
        "equally good ones the same rank.",
    ),
    ConstituentAcceptance(
        "constituent-acceptance", "Constituent acceptance: is each highlighted phrase acceptable? (WMT08)",
        "Is each highlighted phrase an acceptable translation of the highlighted source phrase?",
    ),
)
