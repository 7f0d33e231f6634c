"""Simulated error-span and ranking workers for the live-gate tests, answering through the annotator JSON API.

As in tests/simulation.py, the simulator reads the shown item in the database only to know its true quality (a
perturbed copy or a gold unit; a real worker reads the text); everything it submits goes through the public API.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass

from annotation.models import HitItem

PERTURBATION_PENALTY = 35.0
GOLD_QUALITY = 92.0


@dataclass
class Judge:
    """A simulated worker. `kind`: "diligent" scores by quality with their own bias, scale and noise and marks a
    major error on a perturbed copy with probability `recall`; "random" scores (ranks) at random and marks random
    spans; "constant" gives every translation `constant` and marks nothing."""

    kind: str
    bias: float = 0.0
    scale: float = 1.0
    noise: float = 8.0
    recall: float = 0.9
    constant: float = 60.0


def diligent_crowd(rng: random.Random, n: int) -> list[Judge]:
    """`n` careful workers, each with their own bias, scale, noise and recall."""
    return [Judge("diligent", bias=rng.uniform(-12, 12), scale=rng.uniform(0.6, 1.2), noise=rng.uniform(4, 12),
                  recall=rng.uniform(0.6, 1.0)) for _ in range(n)]


def _score(judge: Judge, quality: float, rng: random.Random) -> float:
    if judge.kind == "random":
        return round(rng.uniform(0, 100), 2)
    if judge.kind == "constant":
        return judge.constant
    value = 50 + judge.bias + judge.scale * (quality - 50) + rng.gauss(0, judge.noise)
    return round(min(100.0, max(0.0, value)), 2)


def _spans(judge: Judge, text: str, perturbed: bool, quality: float, rng: random.Random,
           categories: list[str] | None) -> list[dict]:
    """Non-overlapping spans of 2 characters, 3 apart: a major one on a perturbed copy (with the judge's recall),
    minor ones more often on weaker translations; random judges mark 0–3 spans of random severity."""
    if judge.kind == "constant":
        return []
    if judge.kind == "random":
        severities = [rng.choice(("minor", "major")) for _ in range(rng.randint(0, 3))]
    else:
        severities = ["major"] if perturbed and rng.random() < judge.recall else []
        severities += ["minor"] * sum(rng.random() < (100 - quality) / 100 for _ in range(2))
    spans = [{"start": 3 * i, "end": min(3 * i + 2, len(text)), "severity": severity}
             for i, severity in enumerate(severities) if 3 * i + 2 <= len(text)]
    if categories:
        for span in spans:
            span["category"] = rng.choice(categories)
    return spans


def _hit_of(client, slug: str, worker: str) -> str | None:
    response = client.get(f"/c/{slug}/start/", {"worker_id": worker})
    if response.status_code != 302:
        return None
    return response["Location"].rstrip("/").split("/")[-1]


def answer_span_item(client, token: str, state: dict, stored: HitItem, judge: Judge, quality: dict[str, float],
                     rng: random.Random) -> dict:
    """Answer the current item of an ESA, MQM or contrastive-ESA HIT; the next state."""
    item = state["item"]
    if "candidates" in item:  # contrastive: one answer per column
        answers = {}
        for shown, planned in zip(item["candidates"], stored.payload["candidates"], strict=True):
            bad = planned["kind"] == "bad"
            q = quality[planned["name"]] - (PERTURBATION_PENALTY if bad else 0)
            answers[shown["key"]] = {"score": _score(judge, q, rng),
                                     "spans": _spans(judge, shown["text"], bad, q, rng, None)}
        body = {"item": item["id"], "candidates": answers}
    else:
        bad = stored.item_type == "bad_ref"
        q = quality[stored.output.system.name] - (PERTURBATION_PENALTY if bad else 0)
        body = {"item": item["id"], "score": _score(judge, q, rng),
                "spans": _spans(judge, item["candidate"], bad, q, rng, item.get("categories"))}
    response = client.post(f"/api/hit/{token}/", json.dumps(body), content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()


def complete_span_hit(client, slug: str, worker: str, judge: Judge, quality: dict[str, float],
                      rng: random.Random, stop_after: int | None = None) -> str | None:
    """Enter as `worker` and answer the HIT's items (all, or the first `stop_after`); the completion code, or None
    when no HIT was given (or the HIT was left unfinished)."""
    token = _hit_of(client, slug, worker)
    if token is None:
        return None
    items = {i.id: i for i in HitItem.objects.filter(hit__assignments__token=token).select_related("output__system")}
    state = client.get(f"/api/hit/{token}/").json()
    answered = 0
    while not state["done"] and (stop_after is None or answered < stop_after):
        state = answer_span_item(client, token, state, items[state["item"]["id"]], judge, quality, rng)
        answered += 1
    return state.get("completion_code") if state["done"] else None


def rank(candidates: list[dict], judge: Judge, quality: dict[str, float], rng: random.Random) -> dict[str, int]:
    """A diligent judge ranks by quality plus their noise (gold at GOLD_QUALITY, a known-bad output its original's
    quality less the penalty; bias and scale change no order); a random one gives a random order; a constant one
    ranks everything 1."""
    keys = [c["key"] for c in candidates]
    if judge.kind == "random":
        order = rng.sample(keys, len(keys))
        return {k: order.index(k) + 1 for k in keys}
    if judge.kind == "constant":
        return dict.fromkeys(keys, 1)
    value = {}
    for c in candidates:
        base = GOLD_QUALITY if c["kind"] == "gold" else quality[c["name"]]
        if c["kind"] == "bad":
            base -= PERTURBATION_PENALTY
        value[c["key"]] = base + rng.gauss(0, judge.noise)
    order = sorted(keys, key=lambda k: -value[k])
    return {k: order.index(k) + 1 for k in keys}


def complete_ranking_hit(client, slug: str, worker: str, judge: Judge, quality: dict[str, float],
                         rng: random.Random, stop_after: int | None = None) -> str | None:
    """As complete_span_hit, for a ranking HIT."""
    token = _hit_of(client, slug, worker)
    if token is None:
        return None
    payloads = dict(HitItem.objects.filter(hit__assignments__token=token).values_list("id", "payload"))
    state = client.get(f"/api/hit/{token}/").json()
    answered = 0
    while not state["done"] and (stop_after is None or answered < stop_after):
        item = state["item"]
        ranks = rank(payloads[item["id"]]["candidates"], judge, quality, rng)
        response = client.post(f"/api/hit/{token}/", json.dumps({"item": item["id"], "ranks": ranks}),
                               content_type="application/json")
        assert response.status_code == 201, response.content
        state = response.json()
        answered += 1
    return state.get("completion_code") if state["done"] else None
