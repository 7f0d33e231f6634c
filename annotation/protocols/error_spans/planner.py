"""Plans error-span HITs (ESA, MQM, contrastive ESA; docs/methods.md §11).

A judge reads documents, not loose sentences: the unit of work is one system's translation of one
document (ESA, MQM) or one document with every system's translation side by side (contrastive
ESA). Units are shuffled and dealt into HITs of about `hit_size` segments, each unit whole and in
document order (a unit longer than a HIT is cut into HIT-sized runs).

Quality control (docs/methods.md §3, §11): in each HIT a share of the segments (`perturbation_rate`)
is shown a second time with its translation degraded by adequacy deletion, as a `bad_ref` item paired
with its original; the perturbed copy comes after the next unit, so the two are not seen together.
In contrastive ESA the degraded copy is an extra column of the same screen (candidate kind `bad`).
Segments marked `"tutorial": true` in the campaign file open every HIT as `tutorial` items and count
nowhere (silent attention checks, `tutorial_mode` silent: at random places between the HIT's units instead).
Everything is driven by one `random.Random`, so a campaign's seed reproduces its HITs.

ESA^AI (docs/methods.md#esa-ai): with `ai_error_free_rate` r < 1, an output on which the automatic system marked
no error (`"error_spans": {"<system>": []}` in the file) is sent to judges only if a seeded Bernoulli draw with
probability r says so; the sent ones carry `{"ai_error_free": true, "inclusion": r}` in their item payload, the
others get no item (the statistics find them as AI-clean outputs without one). Outputs with automatic errors,
or without an automatic verdict, are always sent.
"""
from __future__ import annotations

import random

from annotation.building.candidates import new_key
from annotation.building.degradation import CannotDegrade, degrade_adequacy
from annotation.building.hit_layout import CampaignContent, HitPlanError, ItemPlan
from annotation.building.tutorial_plans import tutorial_items as tutorial_items_of


def _is_tutorial(content: CampaignContent, index: int) -> bool:
    return bool(content.record is not None and content.record(index).get("tutorial"))


def _documents(content: CampaignContent) -> tuple[list[list[int]], list[int]]:
    """Segment indices per document in document order, without tutorial segments; and the tutorial segments."""
    documents: dict[int, list[int]] = {}
    tutorial = []
    for segment in content.segments:
        if _is_tutorial(content, segment.index):
            tutorial.append(segment.index)
        else:
            documents.setdefault(segment.doc, []).append(segment.index)
    return [documents[d] for d in sorted(documents)], tutorial


def _deal(units: list[list], hit_size: int) -> list[list[list]]:
    """Units (lists of segments) into HITs of at most `hit_size` segments, a unit whole where it fits."""
    runs = [unit[i:i + hit_size] for unit in units for i in range(0, len(unit), hit_size)]
    hits: list[list[list]] = []
    filled = 0
    for run in runs:
        if not hits or filled + len(run) > hit_size:
            hits.append([])
            filled = 0
        hits[-1].append(run)
        filled += len(run)
    return hits


def _perturbed_count(n_items: int, rate: float) -> int:
    return min(n_items, round(n_items * rate)) if rate > 0 and n_items else 0


def ai_error_free_draw(content: CampaignContent, documents: list[list[int]], rate: float, rng: random.Random
                       ) -> dict[int, bool]:
    """For each output the automatic system found error-free (its `error_spans` entry an empty list): whether it is
    sent (a Bernoulli draw with probability `rate`, from a generator seeded off `rng`), by output id. Nothing is
    drawn, and `rng` is left untouched, when the rule is off (rate 1)."""
    if rate >= 1 or content.record is None:
        return {}
    draw = random.Random(rng.getrandbits(64))
    names = content.system_names
    sent: dict[int, bool] = {}
    for doc in documents:
        for segment in doc:
            marked = content.record(segment).get("error_spans") or {}
            for system, name in enumerate(names):
                if marked.get(name) == []:
                    sent[content.outputs[segment * len(names) + system].id] = draw.random() < rate
    return sent


def plan_span_hits(content: CampaignContent, hit_size: int, perturbation_rate: float, rng: random.Random,
                   expected: dict | None = None, scatter: bool = False, ai_error_free_rate: float = 1.0
                   ) -> list[list[ItemPlan]]:
    """HITs of one system's documents (ESA, MQM): items are system outputs, in document order per unit; AI-clean
    outputs only as `ai_error_free_draw` sends them.
    `expected`: per tutorial segment index, per system index, its expected answer (building/training.py).
    `scatter` (silent attention checks): the tutorial items go between units at random places, not first."""
    documents, tutorial = _documents(content)
    if not documents:
        raise HitPlanError("the file has no segments to judge (every line is a tutorial line)")
    n_systems = len(content.system_names)
    tutorial_items = tutorial_items_of(content, tutorial, expected or {}, rng)
    drawn = ai_error_free_draw(content, documents, ai_error_free_rate, rng)
    units = [[content.outputs[s * n_systems + system] for s in doc] for doc in documents for system in range(n_systems)]
    if drawn:
        units = [kept for kept in ([o for o in unit if drawn.get(o.id, True)] for unit in units) if kept]
        if not units:
            raise HitPlanError("ai_error_free_rate: the draw sent no output to judges; raise the rate",
                               field="ai_error_free_rate", suggestion=1.0)
    rng.shuffle(units)
    hits = []
    for runs in _deal(units, hit_size):
        items: list[dict] = [] if scatter else [dict(t) for t in tutorial_items]
        boundaries = [0]
        originals = [o for run in runs for o in run]
        chosen: dict[int, str] = {}
        for o in rng.sample(originals, len(originals)):
            if len(chosen) >= _perturbed_count(len(originals), perturbation_rate):
                break
            try:
                chosen[o.id] = degrade_adequacy(o.text, rng)
            except CannotDegrade:
                continue
        copies_after: dict[int, list] = {}
        for u, run in enumerate(runs):
            for o in run:
                if o.id in chosen:
                    copies_after.setdefault((u + 1) % len(runs) if len(runs) > 1 else 0, []).append(o)
        for u, run in enumerate(runs):
            items.extend({"item_type": "system", "output": o, **_ai_payload(drawn, o.id, ai_error_free_rate)}
                         for o in run)
            items.extend({"item_type": "bad_ref", "output": o, "text": chosen[o.id]} for o in copies_after.get(u, ()))
            boundaries.append(len(items))
        if scatter:  # from the last place back, so the earlier places stay where they were
            for spot, check in sorted(((rng.choice(boundaries), t) for t in tutorial_items), key=lambda p: -p[0]):
                items.insert(spot, dict(check))
        hits.append(_span_plans(items))
    return hits


def _ai_payload(drawn: dict[int, bool], output: int, rate: float) -> dict:
    """The record of the draw on a sent AI-clean item: its inclusion probability."""
    return {"payload": {"ai_error_free": True, "inclusion": rate}} if output in drawn else {}


def _span_plans(items: list[dict]) -> list[ItemPlan]:
    plans = [ItemPlan(position=p, set_index=p // 10, item_type=i["item_type"], segment_id=i["output"].segment_id,
                      output_id=i["output"].id, text=i.get("text", ""), payload=dict(i.get("payload") or {}))
             for p, i in enumerate(items)]
    originals = {p.output_id: p for p in plans if p.item_type == "system"}
    for plan in plans:
        if plan.item_type == "bad_ref":
            original = originals[plan.output_id]
            plan.partner_position, original.partner_position = original.position, plan.position
    return plans


def plan_contrastive_hits(content: CampaignContent, hit_size: int, perturbation_rate: float, rng: random.Random,
                          expected: dict | None = None, scatter: bool = False) -> list[list[ItemPlan]]:
    """HITs of whole documents with every system side by side (contrastive ESA): one item per segment, its
    candidates in one random column order per document; on a share of the screens one more column holds a
    degraded copy of one of the outputs (kind `bad`, `of` naming the original's key).
    `expected`: per tutorial segment index, per system index, its expected answer, kept in the tutorial screen's
    payload by candidate key (`{"expected": {"candidates": {key: answer}}}`; building/training.py).
    `scatter` (silent attention checks): each tutorial screen goes between two documents at random, not first."""
    documents, tutorial = _documents(content)
    if not documents:
        raise HitPlanError("the file has no segments to judge (every line is a tutorial line)")
    names = content.system_names
    expected = expected or {}
    units = list(documents)
    rng.shuffle(units)
    hits = []
    for runs in _deal(units, hit_size):
        screens = [("system", run) for run in runs]
        if scatter:  # from the last place back, so the earlier places stay where they were
            for spot, segment in sorted(((rng.randrange(len(runs) + 1), s) for s in tutorial), key=lambda p: -p[0]):
                screens.insert(spot, ("tutorial", [segment]))
        else:
            screens.insert(0, ("tutorial", tutorial))
        n_segments = sum(len(run) for run in runs)
        perturbed = set(rng.sample(range(n_segments), _perturbed_count(n_segments, perturbation_rate)))
        plans: list[ItemPlan] = []
        counter = 0
        for item_type, run in screens:
            order = rng.sample(range(len(names)), len(names))
            for segment in run:
                taken: set[str] = set()
                candidates = [{"key": new_key(taken), "kind": "system", "system": s, "name": names[s]} for s in order]
                payload: dict = {"candidates": candidates}
                if item_type == "system":
                    if counter in perturbed:
                        _add_bad_column(candidates, content, segment, taken, rng)
                    counter += 1
                elif segment in expected:
                    payload["expected"] = {"candidates": {c["key"]: expected[segment][c["system"]]
                                                          for c in candidates if c["system"] in expected[segment]}}
                plans.append(ItemPlan(position=len(plans), set_index=len(plans) // 10, item_type=item_type,
                                      segment_id=segment, output_id=None, payload=payload))
        hits.append(plans)
    return hits


def _add_bad_column(candidates: list[dict], content: CampaignContent, segment: int, taken: set[str],
                    rng: random.Random) -> None:
    for original in rng.sample(candidates, len(candidates)):
        try:
            text = degrade_adequacy(content.output_text(segment, original["system"]), rng)
        except CannotDegrade:
            continue
        bad = {"key": new_key(taken), "kind": "bad", "system": original["system"], "name": original["name"],
               "of": original["key"], "text": text}
        candidates.insert(rng.randrange(len(candidates) + 1), bad)
        return
