"""Constituent acceptance results (docs/methods.md §8.7; WMT08, Callison-Burch 2009 §4): per system the share
of its highlighted phrases judged acceptable, ranked with bootstrap rank ranges and clusters, the share of
each answer code, and agreement treating the codes as categories."""
from __future__ import annotations

import time

import numpy as np
from django.db.models import Max

from annotation.models import Campaign, Judgment

from ... import stats
from ...models import CampaignResults
from ...services.results_read import freshness, stored_rows
from ...services.storing import finite, jsonable, replace_results
from ...stats import trueskill as ts
from ..base import Family, Table
from ..common.ranked import CONFIDENCE, bootstrap_runs, ranked_table, system_names
from ..common.slots import load_slots

#: The answer codes: our screen's yes (1) and no (2), and WMT08's CONSTITUENT_ACCEPT codes 1-3 as imported.
ACCEPTED = 1
MAX_CODE = 3


def accepted_share_runs(system: np.ndarray, accepted: np.ndarray, n_systems: int, runs: int, seed: int
                        ) -> np.ndarray:
    """The accepted share per system on each bootstrap resample of the answers (runs, n_systems)."""
    out = np.empty((runs, n_systems))
    for run in range(runs):
        sample = ts.bootstrap_sample(system.size, seed, run)
        n = np.bincount(system[sample], minlength=n_systems)
        yes = np.bincount(system[sample], weights=accepted[sample], minlength=n_systems)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[run] = np.where(n > 0, yes / np.maximum(n, 1), np.nan)
    return out


def compute_acceptance(campaign: Campaign) -> CampaignResults | None:
    started = time.perf_counter()
    last_id = Judgment.objects.filter(campaign=campaign).aggregate(m=Max("id"))["m"] or 0
    slots = load_slots(campaign, last_id)
    if slots.n_rankings == 0:
        return None
    names = system_names(campaign)
    runs_wanted, seed = bootstrap_runs(campaign), int(campaign.seed or 0)
    use = (slots.system >= 0) & (slots.rank >= 1) & (slots.rank <= MAX_CODE)
    system, code = slots.system[use], slots.rank[use]
    accepted = (code == ACCEPTED).astype(np.float64)
    n_systems = len(names)
    n = np.bincount(system, minlength=n_systems)
    yes = np.bincount(system, weights=accepted, minlength=n_systems)
    share = np.where(n > 0, yes / np.maximum(n, 1), np.nan)
    runs = accepted_share_runs(system, accepted, n_systems, runs_wanted, seed)
    table = ranked_table(share, runs if runs_wanted else None, CONFIDENCE)
    codes = np.bincount(system * (MAX_CODE + 1) + code, minlength=n_systems * (MAX_CODE + 1)).reshape(n_systems, -1)
    rows = sorted(({"system": name, "score": finite(share[i]), "score_name": "accepted", "n": int(n[i]),
                    "rank": int(table["rank"][i]),
                    "rank_range": [int(table["rank_low"][i]), int(table["rank_high"][i])],
                    "cluster": int(table["cluster"][i]) if table["cluster"][i] > 0 else None,
                    "low": finite(table["low"][i]), "high": finite(table["high"][i]),
                    **{f"code_{c}": int(codes[i, c]) for c in range(1, MAX_CODE + 1)}}
                   for i, name in enumerate(names) if n[i]), key=lambda r: (r["rank"], r["system"]))
    # Agreement: the same segment and system answered by two judges; the codes as categories (0-based).
    ranking = slots.ranking[use]
    segment = np.unique(slots.segment, return_inverse=True)[1][ranking]
    worker = np.unique(slots.annotator, return_inverse=True)[1][ranking]
    item = segment * n_systems + system
    agreement = stats.pairwise_agreement(item, worker, code - 1, chance="pooled") if code.size else None
    agreement_rows = [] if agreement is None else [{
        "kind": "inter", "comparisons": agreement.n_pairs, "agreements": agreement.n_agree,
        "p_agree": finite(agreement.p_agree), "p_expected": finite(agreement.p_expected),
        "kappa": finite(agreement.kappa)}]
    summary = {"answers": int(code.size), "judgments": slots.n_rankings, "systems": n_systems,
               "bootstrap_runs": runs_wanted, "default_score": "accepted"}
    return replace_results(campaign, {}, {
        "seconds": time.perf_counter() - started, "judgments": slots.n_rankings, "last_judgment_id": last_id,
        "summary": jsonable(summary), "agreement": {}, "translations": b""},
        tables={"systems": rows, "agreement": agreement_rows})


#: The downloads' headers before any results (the stored rows' keys, in order).
SYSTEM_COLUMNS = ("system", "score", "score_name", "n", "rank", "rank_range", "cluster", "low", "high",
                  *(f"code_{c}" for c in range(1, MAX_CODE + 1)))
AGREEMENT_COLUMNS = ("kind", "comparisons", "agreements", "p_agree", "p_expected", "kappa")

class AcceptanceFamily(Family):
    name = "acceptance"
    label = "Constituent acceptance"
    template = "evaluation/families/acceptance.html"
    sections = (("systems", "Accepted share"), ("agreement", "Agreement"))
    endpoints = ("agreement",)

    def compute(self, campaign):
        return compute_acceptance(campaign)

    def agreement(self, campaign, params):
        return {**freshness(campaign).as_api(), "results": stored_rows(campaign, "agreement")}

    def page_context(self, campaign, header, workers, request):
        return {"summary": header.summary if header else {}, "systems": stored_rows(campaign, "systems"),
                "agreement": stored_rows(campaign, "agreement")}

    def tables(self):
        return [Table("systems", self.stored_table("systems", SYSTEM_COLUMNS)),
                Table("agreement", self.stored_table("agreement", AGREEMENT_COLUMNS))]


#: The family object `settings.MTEVAL_RESULT_FAMILIES` names.
FAMILY = AcceptanceFamily()
