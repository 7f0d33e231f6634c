"""Simulated judges for ranking campaigns, answering through the annotator JSON API: careful judges rank by
a known system quality plus noise; random rankers rank at random. The simulator reads the item's payload in
the database only to know what stands behind each candidate (a real judge reads the texts)."""
from __future__ import annotations

import json
import random

from annotation.models import HitItem

GOLD_QUALITY, BAD_QUALITY = 100.0, -50.0


def ranks_for(candidates: list[dict], quality: dict[str, float], careful: bool, rng: random.Random,
              noise: float = 8.0) -> dict[str, int]:
    keys = [c["key"] for c in candidates]
    if not careful:
        return {k: rng.randint(1, len(keys)) for k in keys}
    value = {}
    for c in candidates:
        base = {"gold": GOLD_QUALITY, "bad": BAD_QUALITY}.get(c["kind"], quality.get(c.get("name"), 50.0))
        value[c["key"]] = base + rng.gauss(0, noise)
    order = sorted(keys, key=lambda k: -value[k])
    return {k: order.index(k) + 1 for k in keys}


def complete_ranking_hit(client, slug: str, worker: str, quality: dict[str, float], careful: bool,
                         rng: random.Random) -> str | None:
    response = client.get(f"/c/{slug}/start/", {"worker_id": worker})
    if response.status_code != 302:
        return None
    token = response["Location"].rstrip("/").split("/")[-1]
    state = client.get(f"/api/hit/{token}/").json()
    payloads = dict(HitItem.objects.filter(hit__assignments__token=token).values_list("id", "payload"))
    while not state["done"]:
        item = state["item"]
        ranks = ranks_for(payloads[item["id"]]["candidates"], quality, careful, rng)
        response = client.post(f"/api/hit/{token}/", json.dumps({"item": item["id"], "ranks": ranks}),
                               content_type="application/json")
        assert response.status_code == 201, response.content
        state = response.json()
    return state["completion_code"]


def campaign_lines(n_segments: int, systems: list[str], seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    words = "the a house river green runs quickly under over small large old new city".split()
    lines = []
    for s in range(n_segments):
        source = " ".join(rng.choice(words) for _ in range(8))
        lines.append(json.dumps({"doc_id": f"d{s // 5}", "seg_id": s, "source": f"Quelle {s}: {source}",
                                 "reference": f"Reference {s}: {source}", "gold": f"Gold {s}: {source}",
                                 "systems": {name: f"{name} says {source} {s}" for name in systems}}))
    return lines
