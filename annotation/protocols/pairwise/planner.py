"""Plans pairwise-ranking HITs of documents and sentences (docs/methods.md §3, §7; Läubli et al. 2018 §2.2).

Documents are dealt into groups of `docs_per_hit`. A HIT shows one group at document
level, or its sentences at sentence level, or — with unit "both" — one group at document
level and the *next* group's sentences, so that within a HIT no document is seen both
ways; the assignment step keeps workers from crossing over between HITs (`exposure`).
Each item shows the two systems in random left/right order. Spam items are extra copies
of some of the HIT's items whose one side is made nonsense by shuffling words (the first
and last 10 % stay), at the configured rate per unit. All randomness comes from one
`random.Random`, so the campaign's seed reproduces its HITs.
"""
from __future__ import annotations

import random
from itertools import groupby

from annotation.building.degradation import CannotDegrade, shuffle_for_spam
from annotation.building.hit_layout import CampaignContent, HitPlanError, ItemPlan, SegmentRef

UNITS = ("document", "sentence", "both")


def _item(content: CampaignContent, unit: str, segments: list[SegmentRef], systems: tuple[int, int],
          rng: random.Random, show_source: bool) -> dict:
    left = rng.randrange(2)
    shown = (systems[left], systems[1 - left])
    first = segments[0]
    key = f"document:{first.doc_id}" if unit == "document" else f"sentence:{first.doc_id}:{first.seg_id}"
    payload = {
        "unit": unit, "key": key, "doc_id": first.doc_id, "left": left, "spam_side": None,
        "A": [content.output_text(s.index, shown[0]) for s in segments],
        "B": [content.output_text(s.index, shown[1]) for s in segments],
    }
    if show_source:
        payload["source"] = [s.source for s in segments]
    return {"item_type": "system", "segment_id": first.index if unit == "sentence" else None, "payload": payload}


def _spam_copy(item: dict, rng: random.Random) -> dict | None:
    """The item with one side's words shuffled; None if no sentence of that side can be shuffled."""
    side = rng.choice("AB")
    texts, changed = [], False
    for text in item["payload"][side]:
        try:
            texts.append(shuffle_for_spam(text, rng))
            changed = True
        except CannotDegrade:
            texts.append(text)
    if not changed:
        return None
    payload = {**item["payload"], side: texts, "spam_side": side}
    return {**item, "item_type": "spam", "payload": payload}


def _with_spam(items: list[dict], rate: float, rng: random.Random) -> list[dict]:
    if not items or rate <= 0:
        return []
    wanted = max(1, round(rate * len(items)))
    spam = []
    for item in rng.sample(items, len(items)):
        copy = _spam_copy(item, rng)
        if copy is not None:
            spam.append(copy)
        if len(spam) == wanted:
            break
    return spam


def plan_pairwise_hits(content: CampaignContent, systems: tuple[int, int], unit: str, docs_per_hit: int,
                       spam_rates: dict[str, float], show_source: bool, rng: random.Random) -> list[list[ItemPlan]]:
    """Plan every HIT of a pairwise campaign comparing `systems` (indices into content.system_names)."""
    if unit not in UNITS:
        raise HitPlanError(f"unit must be one of {', '.join(UNITS)}")
    documents = [list(group) for _, group in groupby(content.segments, key=lambda s: s.doc)]
    order = list(range(len(documents)))
    rng.shuffle(order)
    groups = [order[i:i + docs_per_hit] for i in range(0, len(order), docs_per_hit)]
    if unit == "both":
        if len(groups) == 1:
            if len(order) < 2:
                raise HitPlanError("unit 'both' needs at least two documents, one seen whole and one by sentence")
            half = len(order) // 2
            groups = [order[:half], order[half:]]
        layout = [(groups[k], groups[(k + 1) % len(groups)]) for k in range(len(groups))]
    elif unit == "document":
        layout = [(group, []) for group in groups]
    else:
        layout = [([], group) for group in groups]

    hits = []
    for doc_level, sentence_level in layout:
        doc_items = [_item(content, "document", documents[d], systems, rng, show_source) for d in doc_level]
        sentence_items = [_item(content, "sentence", [s], systems, rng, show_source)
                          for d in sentence_level for s in documents[d]]
        items = (doc_items + sentence_items + _with_spam(doc_items, spam_rates["document"], rng)
                 + _with_spam(sentence_items, spam_rates["sentence"], rng))
        rng.shuffle(items)
        hits.append([ItemPlan(position=p, set_index=p // 10, item_type=i["item_type"], segment_id=i["segment_id"],
                              output_id=None, payload=i["payload"]) for p, i in enumerate(items)])
    return hits


def exposure(items: list[ItemPlan]) -> dict:
    """The documents a HIT shows whole and those it shows by sentence."""
    seen = {"document": set(), "sentence": set()}
    for item in items:
        seen[item.payload["unit"]].add(item.payload["doc_id"])
    return {unit: sorted(docs) for unit, docs in seen.items()}


def crosses_over(candidate: dict, seen: list[dict]) -> bool:
    """True if the candidate HIT shows by sentence a document the worker saw whole, or the reverse."""
    whole = {d for s in seen for d in s.get("document", ())}
    by_sentence = {d for s in seen for d in s.get("sentence", ())}
    return bool(whole.intersection(candidate.get("sentence", ())) or
                by_sentence.intersection(candidate.get("document", ())))
