"""The fixture campaigns of scripts/dump_outputs.py: one campaign file and import options per protocol, and the
answers of simulated workers, all deterministic (fixed texts, fixed seeds, one `random.Random` per worker and HIT).

Workers judge from what their screen shows, as people do: every text of the campaign file is known here with the
quality of the system that wrote it, so a careful worker scores, ranks and marks by that quality with a little noise,
a text the campaign degraded (a quality-control copy) is seen as bad, and the random worker answers at random (the
reliability tests have someone to catch). Nothing here imports the project: it is plain data and arithmetic."""
import json
import random

SYSTEMS = {"sys-A": 0.9, "sys-B": 0.72, "sys-C": 0.5, "sys-D": 0.3}
WORDS = ("harbour market river bridge town council school garden station museum library festival winter summer "
         "morning evening ferry island village road mill tower square church hill forest lake field farm").split()
VERBS = ("reopened closed moved grew opened welcomed changed lost gained hosted").split()
#: (worker id, skill): the noise of a careful worker's judgment; None answers at random.
WORKERS = (("careful-1", 4.0), ("careful-2", 8.0), ("careful-3", 12.0), ("random-1", None))
def stage_workers(stage: int) -> tuple:
    """The workers of the `stage`-th later stage: those of the first stage (who may not judge their own work) and
    two who have not seen the task yet."""
    return WORKERS + ((f"stage{stage}-1", 6.0), (f"stage{stage}-2", 10.0))


#: How many HITs each worker takes at most, per stage.
HITS_PER_WORKER = 3
DEGRADED = 0.05


def _sentence(doc: int, seg: int, system: int) -> str:
    noun, other = WORDS[(doc * 5 + seg) % len(WORDS)], WORDS[(doc * 3 + seg * 7 + 11) % len(WORDS)]
    verb = VERBS[(doc + seg) % len(VERBS)]
    styles = (f"The {noun} {verb} near the old {other} on day {seg}.",
              f"The {noun} has {verb} close to the {other} on day {seg}.",
              f"{noun.capitalize()} {verb} near old {other} day {seg}.",
              f"The {other} old near {noun} the {verb} {seg} day.")
    return f"{styles[system]} (d{doc})"


def campaign_lines(systems: int = 4, docs: int = 4, per_doc: int = 8) -> list[dict]:
    """The campaign file as dicts: `docs` documents of `per_doc` segments, `systems` systems of falling quality,
    a reference, a domain and constituent spans on every line."""
    names = list(SYSTEMS)[:systems]
    lines = []
    for d in range(docs):
        for s in range(per_doc):
            outputs = {name: _sentence(d, s, k) for k, name in enumerate(names)}
            reference = f"The {WORDS[(d * 5 + s) % len(WORDS)]} {VERBS[(d + s) % len(VERBS)]} by the old " \
                        f"{WORDS[(d * 3 + s * 7 + 11) % len(WORDS)]} on day {s}. (d{d})"
            lines.append({"doc_id": f"doc-{d}", "seg_id": s + 1, "domain": ("news", "speech")[d % 2],
                          "source": f"Der Satz {s} im Dokument {d} wird hier übersetzt.", "reference": reference,
                          "systems": outputs,
                          "constituent": {"source": [4, 9], "systems": {n: [0, 9] for n in names}}})
    return lines


def campaign_file(systems: int = 4) -> bytes:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in campaign_lines(systems)).encode()


#: The root protocols in a fixed order, each with its file's systems and its import options (the API's fields).
ROOTS = {
    "fluency": (4, {"hit_size": 20, "redundancy": 2, "study": "dump-da-study", "payment_per_hit": "1.50"}),
    "adequacy": (4, {"hit_size": 20, "redundancy": 2, "study": "dump-da-study", "gate": "true",
                     "gate_min_pairs": 3}),
    "source-adequacy": (4, {"hit_size": 20, "redundancy": 2, "qc_test": "wilcoxon"}),
    "pairwise-adequacy": (2, {"systems": "sys-A,sys-B", "docs_per_hit": 2, "unit": "both", "redundancy": 2}),
    "pairwise-fluency": (2, {"systems": "sys-B,sys-A", "docs_per_hit": 2, "redundancy": 2}),
    "ranking": (4, {"screen_size": 3, "screens_per_hit": 8, "gold": "best-worst", "gold_rate": "0.25",
                    "redundancy": 2, "min_gold": 2, "payment_per_hit": "0.80"}),
    "ranking-constituent": (4, {"screen_size": 4, "screens_per_hit": 6, "redundancy": 2}),
    "constituent-acceptance": (4, {"screen_size": 4, "screens_per_hit": 6, "redundancy": 2}),
    "esa": (3, {"segments_per_hit": 8, "perturbation_rate": "0.25", "min_items": 1, "redundancy": 2}),
    "mqm": (3, {"segments_per_hit": 8, "perturbation_rate": "0.25", "min_items": 1, "redundancy": 2}),
    "contrastive-esa": (3, {"segments_per_hit": 8, "perturbation_rate": "0.25", "min_items": 1, "redundancy": 2,
                            "statistics_preset": "wmt25-esa"}),
    "post-edit": (3, {"screens_per_hit": 2, "redundancy": 2, "verifiers": 2, "verify_items_per_hit": 4,
                      "exclude_own_work": "true"}),
    "reference-translation": (3, {"screens_per_hit": 2, "redundancy": 2, "detectors": 2, "detect_items_per_hit": 4,
                                  "exclude_own_work": "true"}),
    "reading-comprehension": (3, {"redundancy": 2, "voters": 2, "answerers": 1, "graders": 2,
                                  "grade_items_per_hit": 4, "exclude_own_work": "true"}),
}


class Oracle:
    """What a worker makes of a text: the quality of the system that wrote it (a reference is perfect, a text the
    campaign degraded is bad); a phrase of an output (a constituent) counts as that output."""

    def __init__(self, lines: list[dict]):
        self.known = {}
        for line in lines:
            self.known[line["reference"]] = 1.0
            for name, text in line["systems"].items():
                self.known[text] = SYSTEMS[name]

    def quality(self, text: str) -> float:
        if text in self.known:
            return self.known[text]
        found = [q for known, q in self.known.items() if text and text in known]
        return max(found) if len(found) == 1 else DEGRADED if not found else sum(found) / len(found)

    def machine(self, text: str) -> bool:
        return text in self.known and self.known[text] < 1.0


def _score(quality: float, rng: random.Random, noise: float | None) -> int:
    if noise is None:
        return rng.randint(0, 100)
    return max(0, min(100, round(100 * quality + rng.gauss(0, noise))))


def _spans(text: str, quality: float, rng: random.Random, noise: float | None, categories=None) -> list[dict]:
    """Non-overlapping spans over whole words: more and worse ones the worse the text."""
    words, at = [], 0
    for word in text.split(" "):
        words.append((at, at + len(word)))
        at += len(word) + 1
    count = rng.randint(0, 3) if noise is None else max(0, min(3, round((1 - quality) * 4 + rng.gauss(0, 0.5))))
    chosen = sorted(rng.sample(range(len(words)), min(count, len(words))))
    spans = []
    for k, w in enumerate(chosen):
        span = {"start": words[w][0], "end": words[w][1], "severity": "major" if quality < 0.4 else "minor"}
        if categories:
            span["category"] = categories[(w + k) % len(categories)]
        spans.append(span)
    return spans


def _ranks(qualities: dict, rng: random.Random, noise: float | None) -> dict:
    """1 for the best; equal ranks for outputs seen as equally good (ties are allowed)."""
    if noise is None:
        seen = {key: rng.random() for key in qualities}
    else:
        seen = {key: round(q * 10 + rng.gauss(0, noise / 10)) for key, q in qualities.items()}
    order = sorted(set(seen.values()), reverse=True)
    return {key: 1 + order.index(value) for key, value in seen.items()}


def answer(item: dict, oracle: Oracle, rng: random.Random, noise: float | None, worker: str) -> dict:
    """A worker's answer (without "item") to one item of any protocol, as its screen would send it."""
    protocol = item["protocol"]
    if protocol in ("fluency", "adequacy", "source-adequacy"):
        return {"score": _score(oracle.quality(item["candidate"]), rng, noise)}
    if protocol.startswith("pairwise"):
        qa = sum(map(oracle.quality, item["A"])) / max(1, len(item["A"]))
        qb = sum(map(oracle.quality, item["B"])) / max(1, len(item["B"]))
        diff = qa - qb + (rng.gauss(0, noise / 100) if noise else rng.uniform(-1, 1))
        return {"choice": "A" if diff > 0.08 else "B" if diff < -0.08 else "tie"}
    if protocol in ("ranking", "ranking-constituent"):
        return {"ranks": _ranks({c["key"]: oracle.quality(c["text"]) for c in item["candidates"]}, rng, noise)}
    if protocol == "constituent-acceptance":
        return {"accept": {c["key"]: "yes" if (oracle.quality(c["text"]) + (rng.gauss(0, noise / 100) if noise
                                                 else rng.uniform(-1, 1))) > 0.6 else "no"
                           for c in item["candidates"]}}
    if protocol in ("esa", "mqm"):
        quality = oracle.quality(item["candidate"])
        return {"spans": _spans(item["candidate"], quality, rng, noise, item.get("categories")),
                "score": _score(quality, rng, noise)}
    if protocol == "contrastive-esa":
        return {"candidates": {c["key"]: {"spans": _spans(c["text"], oracle.quality(c["text"]), rng, noise),
                                          "score": _score(oracle.quality(c["text"]), rng, noise)}
                               for c in item["candidates"]}}
    if protocol == "post-edit":
        return {"edits": [o if oracle.quality(o) > 0.8 else o.replace(" near ", " by ").replace("(d", f"[{worker}] (d")
                          for o in item["outputs"]]}
    if protocol == "post-edit-verify":
        good = noise is not None and rng.random() < 0.85
        return {"same_meaning": "yes" if good or rng.random() < 0.5 else "no", "acceptable": "yes" if good else "no"}
    if protocol == "reference-translation":
        body = {"translations": [f"Sentence translated by {worker}: {s}" for s in item["source"]],
                "pasted": [noise is None and k == 0 for k in range(len(item["source"]))]}
        if item["ask_background"]:
            body["background"] = {"native_language": "English", "target_language_years": 10 + len(worker),
                                  "country": "Ireland"}
        return body
    if protocol == "reference-translation-detect":
        return {"machine": sorted(c["key"] for c in item["candidates"]
                                  if oracle.machine(c["text"]) != (noise is None and rng.random() < 0.5))}
    if protocol == "reading-comprehension":
        return {"questions": [{"question": f"What did {worker} ask about part {k} of {len(item['article'])}?",
                               "answer": f"answer {k}"} for k in range(item["count"])]}
    if protocol == "reading-comprehension-vote":
        return {"good": "yes" if noise is not None or rng.random() < 0.5 else "no", "redundant_with": None}
    if protocol == "reading-comprehension-answer":
        return {"answers": {q["id"]: f"answer {k}" if noise is not None else "no idea"
                            for k, q in enumerate(item["questions"])}}
    if protocol == "reading-comprehension-grade":
        return {"correct": "yes" if item["answer"] == item["sample_answer"] or rng.random() < 0.2 else "no"}
    raise ValueError(f"no simulated answer for protocol {protocol!r}")
