"""Simulated annotators who complete HITs through the annotator JSON API.

The simulator looks the shown item up in the database only to know its true quality (a
real worker reads the text instead); everything it submits goes through the public API.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass

from annotation.models import HitItem

BAD_REFERENCE_PENALTY = 35.0
REFERENCE_QUALITY = 85.0


@dataclass
class Behaviour:
    kind: str  # "diligent", "random" or "constant"
    bias: float = 0.0
    scale: float = 1.0
    noise: float = 6.0
    constant: float = 50.0


def true_quality(item: HitItem, system_quality: dict[str, float]) -> float:
    if item.item_type == "reference":
        return REFERENCE_QUALITY
    quality = system_quality[item.output.system.name]
    return quality - BAD_REFERENCE_PENALTY if item.item_type == "bad_ref" else quality


def score_for(behaviour: Behaviour, quality: float, rng: random.Random) -> float:
    if behaviour.kind == "random":
        return round(rng.uniform(0, 100), 2)
    if behaviour.kind == "constant":
        return behaviour.constant
    value = 50 + behaviour.bias + behaviour.scale * (quality - 50) + rng.gauss(0, behaviour.noise)
    return round(min(100.0, max(0.0, value)), 2)


def complete_hit(client, slug: str, worker: str, behaviour: Behaviour, system_quality: dict[str, float],
                 rng: random.Random) -> str | None:
    """Enter the campaign as `worker` and answer every item; returns the completion code (None if no HIT)."""
    response = client.get(f"/c/{slug}/start/", {"worker_id": worker})
    if response.status_code != 302:
        return None
    token = response["Location"].rstrip("/").split("/")[-1]
    state = client.get(f"/api/hit/{token}/").json()
    items = {i.id: i for i in HitItem.objects.filter(hit__assignments__token=token)
             .select_related("output__system")}
    while not state["done"]:
        item = items[state["item"]["id"]]
        score = score_for(behaviour, true_quality(item, system_quality), rng)
        response = client.post(f"/api/hit/{token}/", json.dumps({"item": item.id, "score": score}),
                               content_type="application/json")
        assert response.status_code == 201, response.content
        state = response.json()
    return state["completion_code"]
