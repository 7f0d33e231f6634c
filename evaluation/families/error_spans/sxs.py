"""The side-by-side tables of a contrastive error-span campaign (MQM-SxS, contrastive ESA;
docs/methods.md#side-by-side): pairwise win rates of the systems shown together, and the consistency of marking
the same words alike across columns, with and without the screen's hint. The counting is evaluation/stats/sxs.py's;
this module reads the screens' texts, spans and hints and builds the rows."""
from __future__ import annotations

import numpy as np

from annotation.models import Judgment, SystemOutput

from ...services.storing import finite
from ...stats import sxs
from .analysis import SYSTEM

SEVERITY_CODES = {"minor": 0, "major": 1, "critical": 2}
WIN_RATES = ("system", "opponent", "wins", "ties", "losses", "n", "win_rate", "score_name")
CONSISTENCY = ("hint", "pairs", "both_marked", "alike", "share_alike", "share_both_marked")
HINT_LABELS = {"all": "all pairs", "hint": "hint shown", "no hint": "no hint shown"}


def win_rate_rows(names: list[str], obs, counted: np.ndarray, value: np.ndarray, kind: str) -> list[dict]:
    """Per ordered pair of systems: the screens (one judge, one item) where the system's item score was better,
    equal or worse than the opponent's, and the win rate wins / n."""
    rows = np.flatnonzero(counted & (obs.kind == SYSTEM))
    rates = sxs.win_rates(obs.judgment[rows], obs.system[rows], value[rows], len(names))
    n = rates.n
    out = []
    for a, b in zip(*np.nonzero(n), strict=True):
        out.append({"system": names[a], "opponent": names[b], "wins": int(rates.wins[a, b]),
                    "ties": int(rates.ties[a, b]), "losses": int(rates.wins[b, a]), "n": int(n[a, b]),
                    "win_rate": finite(rates.wins[a, b] / n[a, b]), "score_name": kind})
    return out


def consistency_rows(campaign, obs, counted: np.ndarray, system_pks: list[int]) -> list[dict]:
    """The share of identical text occurrences marked alike across the system columns of each counted screen,
    over all pairs and split by whether a hint about the pair was shown."""
    judgments = np.unique(obs.judgment[counted & (obs.kind == SYSTEM)]).tolist()
    severity_a, severity_b, hinted = [], [], []
    for start in range(0, len(judgments), 2000):
        chunk = (Judgment.objects.filter(pk__in=judgments[start:start + 2000])
                 .values_list("item__segment_id", "item__payload", "spans", "answer"))
        chunk = list(chunk)
        texts = {(segment, system): text for segment, system, text in SystemOutput.objects.filter(
            segment_id__in={c[0] for c in chunk}).values_list("segment_id", "system_id", "text")}
        for segment, payload, spans, answer in chunk:
            columns = [c for c in (payload or {}).get("candidates", ()) if c.get("kind") == "system"]
            column_texts = [texts.get((segment, system_pks[c["system"]]), "") for c in columns]
            position = {c["key"]: i for i, c in enumerate(columns)}
            marks = [[] for _ in columns]
            for span in spans or ():
                if span.get("candidate") in position and span.get("side", "target") == "target":
                    marks[position[span["candidate"]]].append((span["start"], span["end"], span["severity"]))
            shown = {(position.get(h["from"]), position.get(h["column"]), h["start"], h["end"])
                     for h in (answer or {}).get("hints", ())}
            for pair in sxs.identical_pairs(column_texts, marks):
                severity_a.append(SEVERITY_CODES.get(pair.severity_a, 3) if pair.severity_a else -1)
                severity_b.append(SEVERITY_CODES.get(pair.severity_b, 3) if pair.severity_b else -1)
                hinted.append((pair.column_a, pair.column_b, pair.start_b, pair.end_b) in shown
                              or (pair.column_b, pair.column_a, pair.start_a, pair.end_a) in shown)
    shares = sxs.consistency(severity_a, severity_b, hinted)
    return [{"hint": HINT_LABELS[name], "pairs": c.pairs, "both_marked": c.both_marked, "alike": c.alike,
             "share_alike": finite(c.share), "share_both_marked": finite(c.share_marked)}
            for name, c in shares.items()]
