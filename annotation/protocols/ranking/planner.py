"""Plans relative-ranking HITs: screens of N outputs of one segment (docs/methods.md §8).

Every segment gets ⌈S/N⌉ screens (S systems), so each of its outputs is shown at least once; the
last screen of a segment is filled up with outputs already shown. Which systems share a screen is
chosen greedily so that every pair of systems meets about equally often across the campaign: each
next system is the one that has met the systems already on the screen least often (ties broken by
how often it was shown, then at random). Outputs are shown in random order.

Gold units (Paul & Sumita 2011 §4.2): on a share of the screens (`gold_rate`) a known-good
translation (the line's `gold`, else its reference) replaces one random output; with `best-worst`
a second output is replaced by a degraded copy of a system output (docs/methods.md §3, adequacy
deletion), the known-bad one. Screens are shuffled and dealt into HITs of `screens_per_hit`, gold
screens spread evenly. Each candidate has an opaque key; the item's payload records which
system (its index among the campaign's systems in name order, and its name) or control stands behind it.
"""
from __future__ import annotations

import math
import random

from annotation.building.candidates import new_key
from annotation.services.degradation import CannotDegrade, degrade_adequacy
from annotation.services.hit_builder import CampaignContent, HitPlanError, ItemPlan

GOLD_MODES = ("none", "best", "best-worst")


class PairBalancer:
    """Chooses which systems share a screen so that pairs meet about equally often."""

    def __init__(self, n_systems: int, rng: random.Random):
        self.met = [[0] * n_systems for _ in range(n_systems)]
        self.shown = [0] * n_systems
        self.rng = rng

    def pick(self, size: int, must: list[int], may: list[int]) -> list[int]:
        """`size` systems: first from `must` (those not yet shown on this segment), then from `may`."""
        chosen: list[int] = []
        for pool in (must, may):
            pool = [s for s in pool if s not in chosen]
            while pool and len(chosen) < size:
                best = min(pool, key=lambda s: (sum(self.met[s][c] for c in chosen), self.shown[s], self.rng.random()))
                chosen.append(best)
                pool.remove(best)
        for i, a in enumerate(chosen):
            self.shown[a] += 1
            for b in chosen[i + 1:]:
                self.met[a][b] += 1
                self.met[b][a] += 1
        return chosen


def segment_screens(n_systems: int, size: int, balancer: PairBalancer) -> list[list[int]]:
    """The screens of one segment: every system at least once, ⌈S/N⌉ screens of `size` systems."""
    size = min(size, n_systems)
    remaining = list(range(n_systems))
    balancer.rng.shuffle(remaining)
    screens = []
    while remaining:
        screen = balancer.pick(size, remaining, list(range(n_systems)))
        remaining = [s for s in remaining if s not in screen]
        screens.append(screen)
    return screens


def _candidate(kind: str, system: int | None, keys: set[str], names: list[str], text: str = "") -> dict:
    candidate = {"key": new_key(keys), "kind": kind, "system": system, "name": "" if system is None else names[system]}
    if text:
        candidate["text"] = text
    return candidate


def _controls(content: CampaignContent, segment: int, systems: list[int], gold: str, rng: random.Random
              ) -> tuple[str, dict | None] | None:
    """The gold text and, for best-worst, the (system, degraded text) of a known-bad output; None if the
    segment can't carry a gold unit (best-worst needs a system output that can be degraded)."""
    record = content.record(segment) if content.record else {}
    good = record.get("gold") or content.segments[segment].reference
    if not good or not good.strip():
        return None
    if gold != "best-worst":
        return good, None
    for system in rng.sample(systems, len(systems)):
        try:
            return good, {"system": system, "text": degrade_adequacy(content.output_text(segment, system), rng)}
        except CannotDegrade:
            continue
    return None


def _replaceable(systems: list[int], shown: dict[int, int], wanted: int, rng: random.Random) -> list[int]:
    """Which slots the controls take: first those of systems shown again elsewhere on the segment (`shown`
    counts each system's screens there), so that no output loses its only place; then any."""
    order = rng.sample(range(len(systems)), len(systems))
    order.sort(key=lambda slot: shown.get(systems[slot], 1) < 2)
    return order[:wanted]


def plan_screen(content: CampaignContent, segment: int, systems: list[int], gold: str | None,
                rng: random.Random, shown: dict[int, int] | None = None) -> tuple[str, dict]:
    """One screen's item type and payload; `gold` is the gold mode for a gold screen, None otherwise. `shown`
    counts how many screens of the segment show each system (the controls' slots are taken from it)."""
    keys: set[str] = set()
    names = content.system_names
    candidates = [_candidate("system", s, keys, names) for s in systems]
    item_type = "system"
    shown = shown if shown is not None else {}
    if gold is not None and len(candidates) >= (3 if gold == "best-worst" else 2):
        controls = _controls(content, segment, systems, gold, rng)
        if controls is not None:
            good, bad = controls
            slots = _replaceable(systems, shown, 2 if bad else 1, rng)
            for slot in slots:
                shown[systems[slot]] = shown.get(systems[slot], 1) - 1
            candidates[slots[0]] = _candidate("gold", None, keys, names, good)
            if bad:
                candidates[slots[1]] = _candidate("bad", bad["system"], keys, names, bad["text"])
            item_type = "gold"
    rng.shuffle(candidates)
    return item_type, {"candidates": candidates, "gold_mode": gold if item_type == "gold" else None}


def constituent_spans(content: CampaignContent, segment: int) -> dict:
    """A segment's highlighted phrases (docs/api.md §2, `constituent`): the source span and each system's,
    [start, end) in code points, checked against the texts; raises HitPlanError naming the segment."""
    ref = content.segments[segment]
    where = f"doc_id={ref.doc_id!r} seg_id={ref.seg_id}"
    record = content.record(segment) if content.record else {}
    spans = record.get("constituent")
    if not isinstance(spans, dict) or not isinstance(spans.get("systems"), dict):
        raise HitPlanError(f"{where}: constituent protocols need a `constituent` object with `source` and "
                           "`systems` spans on every line")

    def span(value, text: str, what: str) -> list[int]:
        if (not isinstance(value, list) or len(value) != 2 or any(isinstance(v, bool) or not isinstance(v, int)
                                                                  for v in value)
                or not 0 <= value[0] < value[1] <= len(text)):
            raise HitPlanError(f"{where}: the {what} span must be [start, end] with 0 <= start < end <= "
                               f"{len(text)} (code points)")
        return [value[0], value[1]]

    result = {"source": span(spans.get("source"), ref.source, "source"), "systems": {}}
    for index, name in enumerate(content.system_names):
        if name not in spans["systems"]:
            raise HitPlanError(f"{where}: no constituent span for system {name!r}")
        result["systems"][index] = span(spans["systems"][name], content.output_text(segment, index),
                                        f"system {name!r}")
    return result


def plan_ranking_hits(content: CampaignContent, screen_size: int, screens_per_hit: int, gold: str,
                      gold_rate: float, rng: random.Random, constituent: bool = False) -> list[list[ItemPlan]]:
    """Every HIT of a ranking campaign; `constituent` adds each segment's highlighted phrases (WMT08's
    constituent ranking and acceptance, Callison-Burch 2009 §4) to its screens."""
    n_systems = len(content.system_names)
    if n_systems < 2:
        raise HitPlanError("ranking needs at least two systems in the file")
    if gold not in GOLD_MODES:
        raise HitPlanError(f"gold must be one of {', '.join(GOLD_MODES)}", "gold")
    balancer = PairBalancer(n_systems, rng)
    screens = [(segment.index, systems) for segment in content.segments
               for systems in segment_screens(n_systems, screen_size, balancer)]
    rng.shuffle(screens)
    n_gold = round(gold_rate * len(screens)) if gold != "none" else 0
    # Gold screens spread evenly: every k-th screen of the shuffled order.
    gold_at = {math.floor(i * len(screens) / n_gold) for i in range(n_gold)} if n_gold else set()
    shown: dict[int, dict[int, int]] = {}
    for segment, systems in screens:
        for system in systems:
            shown.setdefault(segment, {})[system] = shown.get(segment, {}).get(system, 0) + 1
    planned = [plan_screen(content, segment, systems, gold if i in gold_at else None, rng, shown[segment])
               + (segment,) for i, (segment, systems) in enumerate(screens)]
    if constituent:
        spans = {}
        for _item_type, payload, segment in planned:
            if segment not in spans:
                spans[segment] = constituent_spans(content, segment)
            payload["source_span"] = spans[segment]["source"]
            for candidate in payload["candidates"]:
                candidate["span"] = spans[segment]["systems"][candidate["system"]]
    hits = []
    for start in range(0, len(planned), screens_per_hit):
        chunk = planned[start:start + screens_per_hit]
        hits.append([ItemPlan(position=p, set_index=p, item_type=item_type, segment_id=segment, output_id=None,
                              payload=payload) for p, (item_type, payload, segment) in enumerate(chunk)])
    return hits
