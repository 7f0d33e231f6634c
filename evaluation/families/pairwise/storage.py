"""The pairwise analysis of one campaign (docs/methods.md §6-§7): load the judgments in one query,
count preferences per condition and rater, sign tests, spam misses and exclusion, majority
votes and agreement, and store the results in one transaction."""
from __future__ import annotations

import time

import numpy as np
from django.db.models import Max

from annotation.models import Annotator, Campaign, Judgment
from annotation.protocols.pairwise import DEFAULT_MAX_SPAM_MISS_RATE

from ... import stats
from ...models import CampaignResults, PairwiseResult, WorkerResult
from ...services.storing import finite as _finite
from ...services.storing import jsonable, replace_results
from ...stats import bradley_terry as bt
from ..common.battles import Battles

CRITERIA = ("adequacy", "fluency")
UNITS = ("document", "sentence")


def _condition_name(code: int) -> tuple[str, str]:
    return CRITERIA[code // len(UNITS)], UNITS[code % len(UNITS)]


def load_pairwise(campaign: Campaign) -> dict[str, np.ndarray]:
    """Arrays per judgment: rater, item key, condition, choice (0 first system, 1 second, 2 tie), spam flags."""
    rows = list(
        Judgment.objects.filter(campaign=campaign).exclude(choice="").order_by()
        .values_list("annotator_id", "assignment_id", "item__item_type", "item__payload__unit", "item__payload__key",
                     "item__payload__left", "item__payload__spam_side", "item__payload__criterion", "choice",
                     "seconds")
    )
    default_criterion = campaign.options.get("criterion") or (campaign.protocol_spec.criterion or "adequacy")
    n = len(rows)
    columns = list(zip(*rows, strict=True)) if rows else [()] * 10
    annotator, assignment, item_type, unit, key, left, spam_side, criterion, choice, seconds = columns
    left = np.array([int(v) for v in left], dtype=np.int64) if n else np.empty(0, np.int64)
    screen = np.array(choice, dtype=object)
    first_preferred = ((screen == "A") & (left == 0)) | ((screen == "B") & (left == 1))
    code = np.where(screen == "tie", 2, np.where(first_preferred, 0, 1)).astype(np.int64)
    side = np.array([s or "" for s in spam_side], dtype=object)
    corrupted = np.where(side == "A", left, 1 - left)  # 0: the first system was made nonsense
    is_spam = np.array(item_type, dtype=object) == "spam"
    crit = np.array([CRITERIA.index(c or default_criterion) for c in criterion], dtype=np.int64)
    unit_code = np.array([UNITS.index(u) for u in unit], dtype=np.int64)
    keys, item = np.unique(np.array([f"{c}|{k}" for c, k in zip(crit, key, strict=True)], dtype=object),
                           return_inverse=True) if n else (np.empty(0), np.empty(0, np.int64))
    return {
        "annotator": np.array(annotator, dtype=np.int64), "assignment": np.array(assignment, dtype=np.int64),
        "condition": crit * len(UNITS) + unit_code, "item": item.astype(np.int64), "n_items": len(keys),
        "choice": code, "is_spam": is_spam, "chose_spam": is_spam & (code == corrupted), "chose_tie": code == 2,
        "seconds": np.array([np.nan if s is None else s for s in seconds], dtype=np.float64),
    }


def compute_pairwise(campaign: Campaign) -> CampaignResults | None:
    started = time.perf_counter()
    last_id = Judgment.objects.filter(campaign=campaign).aggregate(m=Max("id"))["m"] or 0
    data = load_pairwise(campaign)
    if data["choice"].size == 0:
        return None
    annotator_ids, rater = np.unique(data["annotator"], return_inverse=True)
    n_raters, n_conditions = annotator_ids.size, len(CRITERIA) * len(UNITS)
    spam = stats.spam_misses(rater[data["is_spam"]], data["chose_spam"][data["is_spam"]],
                             data["chose_tie"][data["is_spam"]], n_raters)
    max_rate = float(campaign.options.get("max_spam_miss_rate", DEFAULT_MAX_SPAM_MISS_RATE))
    excluded = stats.excluded_raters(spam.miss_rate, max_rate)
    counts = stats.preference_counts(data["condition"], rater, data["choice"], n_conditions, n_raters,
                                     exclude=data["is_spam"] | excluded[rater])
    rater_counts = stats.preference_counts(data["condition"], rater, data["choice"], n_conditions, n_raters,
                                           exclude=data["is_spam"])
    plain = stats.sign_test(counts.a, counts.b, counts.t)
    emerson = stats.sign_test(counts.a, counts.b, counts.t, ties="emerson-simon")
    rater_plain = stats.sign_test(rater_counts.rater_a, rater_counts.rater_b, rater_counts.rater_t)
    rater_emerson = stats.sign_test(rater_counts.rater_a, rater_counts.rater_b, rater_counts.rater_t,
                                    ties="emerson-simon")
    used = ~data["is_spam"] & ~excluded[rater]
    majority = stats.majority_vote(data["item"][used], data["choice"][used], data["n_items"],
                                   condition=data["condition"][used], n_conditions=n_conditions)
    # Spam counts per condition: the rows of each condition's spam items.
    spam_rows = data["is_spam"]
    spam_missed = np.bincount(data["condition"][spam_rows & (data["chose_spam"] | data["chose_tie"])],
                              minlength=n_conditions)
    spam_ties = np.bincount(data["condition"][spam_rows & data["chose_tie"]], minlength=n_conditions)
    spam_seen = np.bincount(data["condition"][spam_rows], minlength=n_conditions)
    labels = {a.pk: a.label for a in Annotator.objects.filter(pk__in=annotator_ids.tolist()).select_related("user")}

    agreement, results = {}, []
    present = np.flatnonzero(np.bincount(data["condition"], minlength=n_conditions))
    for c in present:
        criterion, unit = _condition_name(int(c))
        in_condition = used & (data["condition"] == c)
        pairs = stats.pairwise_agreement(data["item"][in_condition], rater[in_condition], data["choice"][in_condition])
        fleiss = stats.fleiss_kappa(data["item"][in_condition], data["choice"][in_condition])
        agreement[f"{criterion}/{unit}"] = {
            "pairs": pairs.n_pairs, "p_agree": pairs.p_agree, "p_expected": pairs.p_expected, "kappa": pairs.kappa,
            "fleiss_kappa": fleiss.kappa, "landis_koch": stats.landis_koch(fleiss.kappa),
            "majority": {"a": majority.a[c], "b": majority.b[c], "t": majority.t[c], "items": majority.n[c]},
        }
        results.append(PairwiseResult(
            campaign=campaign, criterion=criterion, unit=unit, rater="", a=counts.a[c], b=counts.b[c],
            t=counts.t[c], x=plain.x[c], n=plain.n[c], p_value=_finite(plain.p[c]),
            p_value_emerson_simon=_finite(emerson.p[c]), spam_seen=spam_seen[c], spam_missed=spam_missed[c],
            spam_missed_ties=spam_ties[c]))
        for r in np.flatnonzero(rater_counts.rater_n[c] + np.bincount(rater[spam_rows & (data["condition"] == c)],
                                                                      minlength=n_raters)):
            mine = spam_rows & (data["condition"] == c) & (rater == r)
            results.append(PairwiseResult(
                campaign=campaign, criterion=criterion, unit=unit, rater=labels.get(int(annotator_ids[r]), ""),
                annotator_id=int(annotator_ids[r]), a=rater_counts.rater_a[c, r], b=rater_counts.rater_b[c, r],
                t=rater_counts.rater_t[c, r], x=rater_plain.x[c, r], n=rater_plain.n[c, r],
                p_value=_finite(rater_plain.p[c, r]), p_value_emerson_simon=_finite(rater_emerson.p[c, r]),
                spam_seen=int(mine.sum()), spam_missed=int((mine & (data["chose_spam"] | data["chose_tie"])).sum()),
                spam_missed_ties=int((mine & data["chose_tie"]).sum()), excluded=bool(excluded[r])))

    hits = np.bincount(rater[np.unique(data["assignment"], return_index=True)[1]], minlength=n_raters)
    seconds = stats.worker_means(rater[np.isfinite(data["seconds"])], data["seconds"][np.isfinite(data["seconds"])],
                                 n_raters)
    workers = [WorkerResult(
        campaign=campaign, annotator_id=int(aid), worker=labels.get(int(aid), ""), hits=int(hits[r]),
        judgments=int((rater == r).sum()), pairs=int(spam.seen[r]), test="spam", p_value=None,
        reliable=not bool(excluded[r]), mean_seconds=_finite(seconds[r])) for r, aid in enumerate(annotator_ids)]
    summary = {"systems": campaign.options.get("systems", []), "max_spam_miss_rate": max_rate,
               "raters": int(n_raters), "excluded_raters": int(excluded.sum())}
    system_rows = systems_table(campaign.options.get("systems") or ["first", "second"], int(counts.a.sum()),
                                int(counts.b.sum()), int(counts.t.sum()))
    return replace_results(campaign, {PairwiseResult: results, WorkerResult: workers}, {
        "seconds": time.perf_counter() - started, "judgments": int(data["choice"].size),
        "last_judgment_id": last_id, "summary": jsonable(summary), "agreement": jsonable(agreement),
        "translations": b""}, tables={"systems": system_rows})


def systems_table(systems: list[str], a: int, b: int, t: int, alpha: float = 0.05) -> list[dict]:
    """The two systems ranked by the share of preferences they won over all conditions (ties left out), with
    the two-sided sign test of those totals; a system wins only when it is preferred more often and p < α,
    and clusters and rank ranges follow the same rules as every family's (docs/methods.md §5.3, §7)."""
    share = np.array([a, b], dtype=np.float64) / (a + b) if a + b else np.array([np.nan, np.nan])
    p = float(stats.sign_test(a, b).p) if a + b else np.nan
    ranked = stats.clusters(share, np.array([[np.nan, p], [p, np.nan]]), alpha=alpha)
    rows = [{"system": name, "score": _finite(share[i]), "score_name": "preferred_share", "n": a + b,
             "preferred": (a, b)[i], "ties": t, "rank": int(ranked.rank[i]) if ranked.rank[i] > 0 else None,
             "rank_range": [int(ranked.rank_low[i]), int(ranked.rank_high[i])] if ranked.rank[i] > 0 else None,
             "cluster": int(ranked.cluster[i]) if ranked.cluster[i] > 0 else None, "p_value": _finite(p)}
            for i, name in enumerate(systems[:2])]
    return sorted(rows, key=lambda r: (r["rank"] or 3, r["system"]))


def pairwise_battles(campaign: Campaign, last_id: int) -> Battles:
    """The judgments up to `last_id` as battles (docs/methods.md §8.8): spam items and the raters the spam check
    excluded (the stored results' unreliable workers) left out. Side A's system is a: an imported arena battle's
    `model_a`, or the campaign system shown left; a tie stays a tie ("tie (bothbad)" keeps its code)."""
    excluded = WorkerResult.objects.filter(campaign=campaign, reliable=False).values_list("annotator_id", flat=True)
    rows = list(Judgment.objects.filter(campaign=campaign, id__lte=last_id).exclude(choice="")
                .exclude(item__item_type="spam").exclude(annotator_id__in=list(excluded)).order_by("pk")
                .values_list("choice", "item__payload__model_a", "item__payload__model_b", "item__payload__left",
                             "item__payload__bothbad"))
    systems = np.array(list(campaign.options.get("systems") or ["first", "second"])[:2], dtype=object)
    if not rows:
        return Battles([], np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64))
    choice, model_a, model_b, left, bothbad = (np.array(column, dtype=object) for column in zip(*rows, strict=True))
    named = np.array([m is not None for m in model_a], dtype=bool)
    left = np.where(named, 0, np.array([int(v or 0) for v in left]) % 2).astype(np.int64)
    shown_a = np.where(named, model_a, systems[left])
    shown_b = np.where(named, model_b, systems[1 - left])
    names, codes = np.unique(np.concatenate([shown_a, shown_b]).astype(str), return_inverse=True)
    outcome = np.select([choice == "A", choice == "B", bothbad == True], [bt.A_WINS, bt.B_WINS, bt.TIE_BOTHBAD],  # noqa: E712
                        bt.TIE)
    return Battles(names.tolist(), codes[:len(rows)], codes[len(rows):], outcome.astype(np.int64))
