#!/usr/bin/env python
"""Benchmark of the error-span statistics (ESA, MQM) at WMT scale, on PostgreSQL.

    DATABASE_URL=postgres://... .venv/bin/python benchmarks/error_spans.py
        [--judgments 500000] [--spans 1500000] [--segments 33000] [--systems 15] [--raters 100] [--repeats 3]
        [--skip-import] [--keep-db] [--profile] [--seed 1]

Run from the project folder. DATABASE_URL only names the server: the benchmark drops and recreates a separate
database on it (`mteval_bench_spans`, `--db-name`), migrates it, and drops it at the end unless `--keep-db`; its
subprocesses use Redis database `--redis-db` (5) of CELERY_BROKER_URL's server as cache and broker (emptied before
and after; nothing is queued), or a local cache without Redis.

1. Generated with numpy: 15 systems of known quality (a random permutation over the names), 33,000 segments in
   documents of 5-15 segments, each document in one of 3 domains (45/35/20 %), 100 raters (5 of them score at
   random). Every (system, segment) is judged once, 2,500 of them by a second rater, and 2,500 judgments are
   perturbed copies (`bad_ref`, paired by partner_position with the original in the same HIT): 500,000 judgments
   in HITs of about 100 items, 1,500,000 spans in all (0-6 a judgment, mean 3, more and more often major for
   worse systems; non-overlapping, inside a target of 70-90 characters). ESA score: the system's quality + domain +
   segment + rater bias + noise − 1 per minor − 4 per major, rounded and clipped to 0-100; a perturbed copy has the
   original's errors and a major omission more and scores 15-40 lower (a random rater's: anything). Stored in
   bulk (annotation.building.bulk.insert: COPY) as two analysis-only campaigns with the same judgments: `esa`,
   and `mqm` with a category per span from the default taxonomy (minor Fluency/Punctuation and Non-translation
   included), both with options {"statistics_preset": "wmt24-esa"}.
   Then VACUUM (ANALYZE), as autovacuum would soon do.
2. `compute_error_spans(campaign)` (evaluation.families.error_spans.storage), database to stored results, in a
   fresh subprocess per configuration, `--repeats` times: ESA under wmt24-esa (per-domain Wilcoxon + Stouffer,
   WMT clusters), ESA under wmt25-esa, MQM under wmt24-esa. The functions it calls are wrapped with timers from
   the outside (nothing edited): load_observations, span_counts, add_counts, analyse (and inside it
   counted_rows, the significance tests, the clusters and the workers' test), spans_of, agreement,
   replace_results; "other" is the rest (the aggregate queries, the table rows). Target < 10 s. Peak memory of
   each subprocess (resource.getrusage ru_maxrss, and VmHWM). The stored ranking must recover the known order.
3. If `annotation/protocols/error_spans/mqm_tsv.py` registers `mqm-tsv`: the MQM judgments of the system items written
   as a Google MQM TSV (one row per error, a `No-error` row per judgment without one; about 1.5 million rows) and
   imported with `import_judgments(lines, fmt="mqm-tsv", name=..., pair="en-de")` in a subprocess. Target < 120 s.
   Then `compute_error_spans` on the imported campaign once.

Before each timed step it waits (up to `--wait-quiet` s) for other processes to go quiet and reports the cores
other processes used, the hypervisor's steal and a reference workload's time (stats.py's). Exit status 1 if a
target is missed or the ranking is wrong. JSON report in benchmarks/out/error-spans-<time>.json. See
benchmarks/README.md, "Error spans".
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shlex
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

from measure import calibrate, log, peak_mb, run_measured, vacuum_analyze, wait_until_quiet

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
TARGETS = {"compute_s": 10.0, "import_s": 120.0, "peak_mb": 1536.0}
DOMAINS = ("news", "speech", "social")
DOMAIN_SHARE = (0.45, 0.35, 0.20)
DOMAIN_OFFSET = (0.0, -4.0, -8.0)
SLOTS = 6  # at most SLOTS spans a judgment, one per sixth of the text
HIT_SIZE = 100
#: Category shares of the generated MQM errors (DEFAULT_MQM_TAXONOMY order); Non-translation weighs 25.
CATEGORY_SHARE = {"Accuracy/Mistranslation": 30, "Accuracy/Omission": 8, "Accuracy/Addition": 4,
                  "Accuracy/Untranslated": 3, "Fluency/Grammar": 14, "Fluency/Spelling": 6, "Fluency/Punctuation": 10,
                  "Fluency/Register": 3, "Fluency/Inconsistency": 3, "Terminology": 8, "Style": 7,
                  "Locale convention": 2, "Other": 1.8, "Non-translation": 0.2}
CONFIGS = (("esa", "wmt24-esa"), ("esa", "wmt25-esa"), ("mqm", "wmt24-esa"))
WORDS = ("the of and to in is that for it as was with be by on not he this are or his from at which but have an they "
         "you were her she there been one all we their has would when if so no will more what up can out about who "
         "into them some could time these two may then do first any like now my other over new only also see years "
         "after very most made way where just many such through long before must much should well people").split()


def own_peak_mb() -> float:
    """VmHWM: this process's own peak RSS since exec (ru_maxrss may carry the parent's from the fork)."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return math.nan


def setup_django() -> None:
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


# ---------------------------------------------------------------------------------------------
# The generated judgments
# ---------------------------------------------------------------------------------------------

def system_names(n: int) -> list[str]:
    return [f"sys-{chr(65 + k)}" if n <= 26 else f"sys-{k:02d}" for k in range(n)]


def generate(args):
    """Every judgment and span as numpy arrays (see the module's docstring). System k's quality rank is
    `rank_of[k]` (0 = best)."""
    import numpy as np

    rng = np.random.default_rng(args.seed)
    S, N, R = args.systems, args.segments, args.raters
    n_first = S * N
    n_double, n_bad = args.double, args.judgments - S * N - args.double
    if n_bad < 0 or n_double > n_first or n_bad > n_first:
        raise SystemExit(f"--judgments {args.judgments} must lie between --systems x --segments + --double "
                         f"({n_first + n_double:,}) and that + {n_first:,}")
    rank_of = rng.permutation(S)  # quality rank of each system (by name)
    quality = np.linspace(78.0, 50.0, S)[rank_of]
    p_span = np.linspace(0.35, 0.65, S)[rank_of]  # binomial(6, p): mean spans 2.1 .. 3.9
    p_major = np.linspace(0.15, 0.45, S)[rank_of]

    # documents of 5-15 segments, each in one domain
    sizes = []
    while sum(sizes) < N:
        sizes.append(int(rng.integers(5, 16)))
    sizes[-1] -= sum(sizes) - N
    if sizes[-1] <= 0:
        sizes.pop()
        sizes[-1] += N - sum(sizes)
    doc_size = np.array(sizes)
    doc_domain = rng.choice(len(DOMAINS), size=doc_size.size, p=DOMAIN_SHARE)
    seg_doc = np.repeat(np.arange(doc_size.size), doc_size)
    seg_number = np.arange(N) - np.repeat(np.cumsum(doc_size) - doc_size, doc_size) + 1  # 1-based within doc
    seg_difficulty = rng.normal(0.0, 8.0, N)
    out_length = rng.integers(70, 91, n_first)  # output o = segment * S + system
    src_length = rng.integers(70, 91, N)

    rater_bias = rng.normal(0.0, 5.0, R)
    rater_noise = rng.uniform(6.0, 14.0, R)
    random_rater = np.zeros(R, bool)
    random_rater[rng.choice(R, args.random_raters, replace=False)] = True

    # judgments: first ratings, second ratings of n_double outputs, perturbed copies of n_bad first ratings
    first_rater = rng.integers(0, R, n_first)
    doubled = np.sort(rng.choice(n_first, n_double, replace=False))
    second_rater = (first_rater[doubled] + 1 + rng.integers(0, R - 1, n_double)) % R
    perturbed = np.sort(rng.choice(n_first, n_bad, replace=False))
    output = np.concatenate([np.arange(n_first), doubled, perturbed])
    rater = np.concatenate([first_rater, second_rater, first_rater[perturbed]])
    kind = np.concatenate([np.zeros(n_first + n_double, np.int64), np.ones(n_bad, np.int64)])  # 1 = bad_ref
    J = output.size
    system, segment = output % S, output // S
    is_random = random_rater[rater]

    # spans: how many, adjusted to exactly --spans in all (perturbed copies and their originals left as drawn)
    bad = kind == 1
    k = rng.binomial(SLOTS, np.where(is_random, 0.5, p_span[system]))
    copied = bad & ~is_random  # a diligent rater's perturbed copy: the original's errors and one major more
    k[copied] = np.minimum(k[output[copied]] + 1, SLOTS)  # row o is output o's first rating
    k[bad & is_random] = np.maximum(k[bad & is_random], 1)
    fixed = bad.copy()
    fixed[output[bad]] = True
    diff = args.spans - int(k.sum())
    while diff:
        room = np.flatnonzero(~fixed & ((k < SLOTS) if diff > 0 else (k > 0)))
        if room.size == 0:
            raise SystemExit(f"--spans {args.spans:,} cannot be reached with at most {SLOTS} a judgment")
        k[rng.choice(room, min(abs(diff), room.size), replace=False)] += 1 if diff > 0 else -1
        diff = args.spans - int(k.sum())
    # each span in its own sixth of the target: non-overlapping, inside the text
    slots = np.where(np.arange(SLOTS)[None, :] < k[:, None], np.argsort(rng.random((J, SLOTS)), axis=1), SLOTS)
    slots.sort(axis=1)
    span_slot = slots[slots < SLOTS]  # judgment by judgment, in text order
    span_judgment = np.repeat(np.arange(J), k)
    width = out_length[output[span_judgment]] // SLOTS
    low = span_slot * width
    start = low + np.floor(rng.random(span_slot.size) * (width - 1)).astype(np.int64)
    room = low + width - start
    end = start + 1 + np.floor(rng.random(span_slot.size) * np.minimum(8, room)).astype(np.int64)
    major = rng.random(span_slot.size) < np.where(is_random[span_judgment], 0.5, p_major[system[span_judgment]])
    first_span = np.cumsum(k) - k
    major[first_span[bad & is_random]] = True
    share = np.array(list(CATEGORY_SHARE.values()), dtype=np.float64)
    category = rng.choice(share.size, size=span_slot.size, p=share / share.sum())
    omission = list(CATEGORY_SHARE).index("Accuracy/Omission")
    for j in np.flatnonzero(copied).tolist():  # the original's spans, plus a major omission in a free slot
        o = int(output[j])
        a, n = int(first_span[o]), int(k[o])
        spans = list(zip(span_slot[a:a + n].tolist(), start[a:a + n].tolist(), end[a:a + n].tolist(),
                         major[a:a + n].tolist(), category[a:a + n].tolist(), strict=True))
        if n < SLOTS:
            free = sorted(set(range(SLOTS)) - {x[0] for x in spans})
            slot = free[int(rng.integers(0, len(free)))]
            w = int(out_length[o]) // SLOTS
            spans = sorted([*spans, (slot, slot * w, slot * w + min(w, 4), True, omission)])
        else:
            minor = [i for i, x in enumerate(spans) if not x[3]]
            if minor:
                spans[minor[0]] = (*spans[minor[0]][:3], True, spans[minor[0]][4])
        b = int(first_span[j])
        for i, (slot, x0, x1, m, c) in enumerate(spans):
            span_slot[b + i], start[b + i], end[b + i], major[b + i], category[b + i] = slot, x0, x1, m, c
    same = span_judgment[1:] == span_judgment[:-1]
    assert (start < end).all() and (end <= out_length[output[span_judgment]]).all(), "a span out of bounds"
    assert (start[1:][same] >= end[:-1][same]).all(), "overlapping spans"
    n_major = np.bincount(span_judgment, weights=major, minlength=J)
    n_minor = k - n_major

    # scores
    domain = doc_domain[seg_doc[segment]]
    latent = (quality[system] + np.array(DOMAIN_OFFSET)[domain] + seg_difficulty[segment] + rater_bias[rater]
              + rng.normal(0.0, 1.0, J) * rater_noise[rater] - n_minor - 4.0 * n_major)
    latent[bad] = latent[output[bad]] - rng.uniform(15.0, 40.0, n_bad)  # row o is output o's first rating
    score = np.clip(np.rint(latent), 0, 100)
    score[is_random] = rng.integers(0, 101, int(is_random.sum()))
    seconds = np.round(rng.lognormal(np.log(30.0), 0.5, J), 1)

    # HITs: each rater's system judgments in document order, HIT_SIZE at a time; a perturbed copy goes at the
    # end of its original's HIT, the two paired by partner_position
    order = np.lexsort((segment, rater, kind))  # kind 0 first
    n_sys = n_first + n_double
    sys_order = order[:n_sys]
    r_sorted = rater[sys_order]
    starts_r = np.searchsorted(r_sorted, np.arange(R))
    pos_in_rater = np.arange(n_sys) - starts_r[r_sorted]
    hit_in_rater = pos_in_rater // HIT_SIZE
    hits_per_rater = np.bincount(r_sorted, minlength=R)
    hits_per_rater = (hits_per_rater + HIT_SIZE - 1) // HIT_SIZE
    first_hit = np.cumsum(hits_per_rater) - hits_per_rater
    hit = np.empty(J, np.int64)
    position = np.empty(J, np.int64)
    hit[sys_order] = first_hit[r_sorted] + hit_in_rater
    position[sys_order] = pos_in_rater % HIT_SIZE
    partner = np.full(J, -1, np.int64)
    bad_rows = np.flatnonzero(bad)
    original_rows = output[bad_rows]  # first ratings are rows 0 .. n_first-1, row = output
    hit[bad_rows] = hit[original_rows]
    by_hit = bad_rows[np.argsort(hit[bad_rows], kind="stable")]
    hit_sizes = np.bincount(hit[:n_sys], minlength=int(first_hit[-1] + hits_per_rater[-1]))
    rank_in_hit = np.arange(by_hit.size) - np.searchsorted(hit[by_hit], hit[by_hit])
    position[by_hit] = hit_sizes[hit[by_hit]] + rank_in_hit
    partner[bad_rows] = position[original_rows]
    partner[original_rows] = position[bad_rows]
    hit_sizes = np.bincount(hit, minlength=hit_sizes.size)
    hit_rater = np.repeat(np.arange(R), hits_per_rater)
    item_order = np.lexsort((position, hit))  # rows in (HIT, position) order: items and judgments stored so

    return {
        "names": system_names(S), "rank_of": rank_of, "quality": quality, "p_span": p_span, "p_major": p_major,
        "doc_size": doc_size, "doc_domain": doc_domain, "seg_doc": seg_doc, "seg_number": seg_number,
        "out_length": out_length, "src_length": src_length, "random_rater": random_rater,
        "output": output, "rater": rater, "kind": kind, "system": system, "segment": segment, "score": score,
        "seconds": seconds, "hit": hit, "position": position, "partner": partner, "hit_sizes": hit_sizes,
        "hit_rater": hit_rater, "item_order": item_order, "k": k, "span_judgment": span_judgment, "start": start,
        "end": end, "major": major, "category": category, "first_span": first_span,
    }


def texts(lengths, seed: int) -> list[str]:
    """Deterministic pseudo-sentences of the given lengths (code points)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    base = " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), 200_000))
    offsets = rng.integers(0, len(base) - 200, len(lengths))
    return [base[o:o + n].strip().ljust(n, ".")[:n].capitalize() for o, n in zip(offsets.tolist(), lengths.tolist(),
                                                                                  strict=True)]


def expected_order(g) -> list[str]:
    return [g["names"][k] for k in sorted(range(len(g["names"])), key=lambda k: int(g["rank_of"][k]))]


# ---------------------------------------------------------------------------------------------
# Child: building the campaigns in bulk
# ---------------------------------------------------------------------------------------------

def build(g, protocol: str, name: str, annotator_pks: list[int], out_text: list[str], src_text: list[str]):
    """One analysis-only campaign of the generated judgments, written as building.judgment_files.store_parsed
    writes one: bulk inserts (COPY), one transaction."""
    from django.db import transaction
    from django.utils import timezone

    from annotation.building.bulk import insert
    from annotation.building.campaign_files import unique_slug
    from annotation.building.spans import DEFAULT_MQM_TAXONOMY
    from annotation.models import (
        Assignment,
        Campaign,
        Document,
        Hit,
        HitItem,
        Judgment,
        Segment,
        System,
        SystemOutput,
        new_token,
    )

    mqm = protocol == "mqm"
    taxonomy = list(DEFAULT_MQM_TAXONOMY)
    categories = list(CATEGORY_SHARE)
    assert set(categories) == set(taxonomy), "CATEGORY_SHARE must list DEFAULT_MQM_TAXONOMY"
    options = {"statistics_preset": "wmt24-esa", "perturbation_rate": 0.0, "show_source": True}
    if mqm:
        options.update(taxonomy=taxonomy, critical=False, mqm_weights="google")
    now = timezone.now()
    names = g["names"]
    S = len(names)
    times = {}
    with transaction.atomic():
        t = time.perf_counter()
        campaign = Campaign.objects.create(
            name=name, slug=unique_slug(name), protocol=protocol, analysis_only=True, options=options,
            status=Campaign.Status.CLOSED, source_language="en", target_language="de", hit_size=HIT_SIZE,
            qc_test="wilcoxon")  # what a campaign file with this preset gets (evaluation/presets.py hooks)
        pk = campaign.pk
        doc_pks = insert(Document, ["campaign_id", "doc_id", "position", "domain"],
                         [(pk, f"doc{d:05d}", d, DOMAINS[dom]) for d, dom in enumerate(g["doc_domain"].tolist())])
        seg_pks = insert(Segment, ["campaign_id", "document_id", "seg_id", "source", "reference"],
                         [(pk, doc_pks[d], s, src_text[i], "") for i, (d, s) in
                          enumerate(zip(g["seg_doc"].tolist(), g["seg_number"].tolist(), strict=True))])
        system_pks = [s.pk for s in System.objects.bulk_create([System(campaign=campaign, name=n) for n in names])]
        n_out = len(out_text)
        out_pks = insert(SystemOutput, ["campaign_id", "segment_id", "system_id", "text"],
                         ((pk, seg_pks[o // S], system_pks[o % S], out_text[o]) for o in range(n_out)), count=n_out)
        times["texts"] = time.perf_counter() - t

        t = time.perf_counter()
        hit_rater = g["hit_rater"].tolist()
        hit_sizes = g["hit_sizes"].tolist()
        hit_pks = insert(Hit, ["campaign_id", "number", "size", "external_id"],
                         [(pk, n + 1, size, f"rater{r:03d}") for n, (r, size) in
                          enumerate(zip(hit_rater, hit_sizes, strict=True))])
        assignment_pks = insert(Assignment, ["campaign_id", "hit_id", "annotator_id", "token", "status", "position",
                                             "started_at", "last_activity_at", "completed_at", "completion_code"],
                                [(pk, h, annotator_pks[r], new_token(), Assignment.Status.COMPLETED, size, now, now,
                                  now, "") for h, r, size in zip(hit_pks, hit_rater, hit_sizes, strict=True)])
        order = g["item_order"].tolist()
        hit, position, partner = g["hit"].tolist(), g["position"].tolist(), g["partner"].tolist()
        output, kind, rater = g["output"].tolist(), g["kind"].tolist(), g["rater"].tolist()
        item_pks = insert(HitItem, ["hit_id", "position", "set_index", "item_type", "segment_id", "output_id", "text",
                                    "partner_position", "payload"],
                          ((hit_pks[hit[j]], position[j], position[j] // 10, "bad_ref" if kind[j] else "system",
                            seg_pks[output[j] // S], out_pks[output[j]],
                            out_text[output[j]][:40] if kind[j] else "", None if partner[j] < 0 else partner[j], {})
                           for j in order), count=len(order))
        times["hits_items"] = time.perf_counter() - t

        t = time.perf_counter()
        k, first = g["k"].tolist(), g["first_span"].tolist()
        start, end = g["start"].tolist(), g["end"].tolist()
        severity = ["major" if m else "minor" for m in g["major"].tolist()]
        category = [categories[c] for c in g["category"].tolist()]
        score, seconds = g["score"].tolist(), g["seconds"].tolist()

        def spans(j: int) -> list[dict]:
            a = first[j]
            if mqm:
                return [{"start": start[s], "end": end[s], "severity": severity[s], "category": category[s]}
                        for s in range(a, a + k[j])]
            return [{"start": start[s], "end": end[s], "severity": severity[s]} for s in range(a, a + k[j])]

        insert(Judgment, ["campaign_id", "assignment_id", "annotator_id", "item_id", "score", "spans", "seconds",
                          "created_at"],
               ((pk, assignment_pks[hit[j]], annotator_pks[rater[j]], item_pk, score[j], spans(j), seconds[j], now)
                for j, item_pk in zip(order, item_pks, strict=True)), count=len(order), return_ids=False)
        times["judgments"] = time.perf_counter() - t
    counts = {"judgments": Judgment.objects.filter(campaign=campaign).count(),
              "hits": len(hit_pks), "outputs": n_out, "segments": len(seg_pks), "documents": len(doc_pks)}
    return campaign.slug, times, counts


def write_mqm_tsv(path: Path, g, out_text: list[str], src_text: list[str]) -> int:
    """The system judgments (perturbed copies left out) as a Google MQM TSV: one row per error with its span marked
    <v>…</v> in the target, a No-error row for a judgment without errors. Returns the number of rows."""
    names = g["names"]
    S = len(names)
    categories = list(CATEGORY_SHARE)
    seg_doc, seg_number = g["seg_doc"].tolist(), g["seg_number"].tolist()
    k, first = g["k"].tolist(), g["first_span"].tolist()
    start, end, major, category = (g[x].tolist() for x in ("start", "end", "major", "category"))
    rows = 0
    with path.open("w", encoding="utf-8") as handle:
        handle.write("system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n")
        for j, (o, r, kd) in enumerate(zip(g["output"].tolist(), g["rater"].tolist(), g["kind"].tolist(),
                                           strict=True)):
            if kd:
                continue
            s = o // S
            text = out_text[o]
            head = f"{names[o % S]}\tdoc{seg_doc[s]:05d}\t{seg_number[s]}\t{s + 1}\trater{r:03d}\t{src_text[s]}\t"
            if k[j] == 0:
                handle.write(f"{head}{text}\tNo-error\tNo-error\n")
                rows += 1
                continue
            for x in range(first[j], first[j] + k[j]):
                a, b = start[x], end[x]
                handle.write(f"{head}{text[:a]}<v>{text[a:b]}</v>{text[b:]}\t{categories[category[x]]}\t"
                             f"{'Major' if major[x] else 'Minor'}\n")
                rows += 1
    return rows


def child_build(args) -> None:
    import numpy as np

    t = time.perf_counter()
    g = generate(args)
    out_text = texts(g["out_length"], args.seed + 1)
    src_text = texts(g["src_length"], args.seed + 2)
    generate_s = time.perf_counter() - t
    setup_django()
    from annotation.models import Annotator

    labels = [f"rater{r:03d}" for r in range(args.raters)]
    Annotator.objects.bulk_create([Annotator(external_id=x, source="imported") for x in labels])
    known = dict(Annotator.objects.filter(external_id__in=labels).values_list("external_id", "pk"))
    annotator_pks = [known[x] for x in labels]
    campaigns = {}
    for protocol in ("esa", "mqm"):
        t = time.perf_counter()
        slug, parts, counts = build(g, protocol, f"error spans benchmark {protocol}", annotator_pks, out_text,
                                    src_text)
        campaigns[protocol] = {"slug": slug, "seconds": time.perf_counter() - t, "parts_s": parts, **counts}
    tsv = None
    if args.tsv:
        t = time.perf_counter()
        rows = write_mqm_tsv(Path(args.tsv), g, out_text, src_text)
        tsv = {"path": args.tsv, "rows": rows, "mb": Path(args.tsv).stat().st_size / 2**20,
               "write_s": time.perf_counter() - t}
    kind, k = g["kind"], g["k"]
    domain_of_segment = g["doc_domain"][g["seg_doc"]]
    print(json.dumps({
        "generate_s": generate_s, "campaigns": campaigns, "tsv": tsv,
        "expected_order": expected_order(g), "quality": dict(zip(g["names"], g["quality"].tolist(), strict=True)),
        "mean_spans": dict(zip(g["names"], (SLOTS * g["p_span"]).tolist(), strict=True)),
        "random_raters": [f"rater{r:03d}" for r in np.flatnonzero(g["random_rater"]).tolist()],
        "data": {"judgments": int(kind.size), "system_judgments": int((kind == 0).sum()),
                 "bad_ref": int((kind == 1).sum()), "second_ratings": args.double, "spans": int(k.sum()),
                 "spans_max": int(k.max()), "judgments_without_spans": int((k == 0).sum()),
                 "major_share": float(g["major"].mean()), "segments": args.segments, "systems": args.systems,
                 "documents": int(g["doc_size"].size), "raters": args.raters, "hits": int(g["hit_sizes"].size),
                 "domain_segments": np.bincount(domain_of_segment, minlength=len(DOMAINS)).tolist(),
                 "mean_target_chars": float(g["out_length"].mean()), "peak_mb": peak_mb()},
    }))


# ---------------------------------------------------------------------------------------------
# Child: the statistics, timed by phase
# ---------------------------------------------------------------------------------------------

class Timers:
    """Wraps module attributes with timers (the callers look them up at call time; nothing edited)."""

    def __init__(self):
        self.parts: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def wrap(self, module, attribute: str, label: str) -> None:
        fn = getattr(module, attribute, None)
        if fn is None:
            return
        parts, calls = self.parts, self.calls

        def timed(*a, **kw):
            started = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                parts[label] = parts.get(label, 0.0) + time.perf_counter() - started
                calls[label] = calls.get(label, 0) + 1

        setattr(module, attribute, timed)

    def sql(self, execute, sql, params, many, context):
        """A database execute wrapper: the time of every query's execute (psycopg2 receives the rows there;
        turning them into Python tuples, fetchall, comes after)."""
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            label = "of all: SQL execute"
            self.parts[label] = self.parts.get(label, 0.0) + time.perf_counter() - started
            self.calls[label] = self.calls.get(label, 0) + 1

    def reset(self) -> None:
        self.parts.clear()
        self.calls.clear()


def stored_check(campaign, expected: list[str], kind: str) -> dict:
    """The stored ranking against the known order; per domain too; the workers' test."""
    from evaluation.models import CampaignResults, ResultTable, WorkerResult

    rows = {t.name: t.rows for t in ResultTable.objects.filter(campaign=campaign)}
    systems = rows.get("systems", [])
    by_rank = sorted(systems, key=lambda r: (r.get("rank") is None, r.get("rank") or 0, r["system"]))
    recovered = [r["system"] for r in by_rank]
    where = {name: i for i, name in enumerate(expected)}
    score = {r["system"]: r["score"] for r in systems}
    pairs_wrong = sum(1 for a in expected for b in expected
                      if where[a] < where[b] and score.get(a) is not None and score.get(b) is not None
                      and score[a] <= score[b])
    domain_wrong = {}
    for r in rows.get("domains", []):
        domain_wrong.setdefault(r["domain"], {})[r["system"]] = r["score"]
    domain_wrong = {d: sum(1 for a in expected for b in expected if where[a] < where[b]
                           and s.get(a) is not None and s.get(b) is not None and s[a] <= s[b])
                    for d, s in domain_wrong.items()}
    header = CampaignResults.objects.get(campaign=campaign)
    workers = list(WorkerResult.objects.filter(campaign=campaign).values("worker", "reliable", "pairs", "p_value"))
    significant = sum(1 for r in rows.get("significance", []) if r["p_value"] is not None and r["p_value"] < 0.05)
    return {
        "recovered": recovered, "expected": expected, "same_order": recovered == expected,
        "pairs_out_of_order": pairs_wrong, "domain_pairs_out_of_order": domain_wrong,
        "ranks": {r["system"]: r.get("rank") for r in systems},
        "rank_ranges": {r["system"]: r.get("rank_range") for r in systems},
        "clusters": len({r["cluster"] for r in systems if r.get("cluster")}),
        "scores": {r["system"]: r["score"] for r in by_rank}, "score_name": kind,
        "significant_pairs": significant, "significance_rows": len(rows.get("significance", [])),
        "unreliable_workers": sorted(w["worker"] for w in workers if not w["reliable"]),
        "workers": len(workers), "summary_counted": header.summary.get("counted"),
        "summary_spans": header.summary.get("spans"), "agreement": header.summary.get("agreement"),
        "breakdown_rows": len(rows.get("breakdown", [])), "tables": sorted(rows),
    }


def child_compute(args) -> None:
    setup_django()
    from django.db import connection

    from annotation.models import Campaign
    from evaluation import reliability_tests
    from evaluation import stats as stats_pkg
    from evaluation.families.error_spans import analysis, storage
    from evaluation.stats import error_spans as es

    timers = Timers()
    for name, label in (("span_classes", "span classes"), ("load_observations", "load observations"),
                        ("span_counts", "span counts"), ("add_counts", "add counts"), ("analyse", "analyse"),
                        ("breakdown_rows", "breakdown"), ("spans_of", "spans of shared items"),
                        ("agreement", "agreement"), ("replace_results", "store")):
        timers.wrap(storage, name, label)
    timers.wrap(analysis, "counted_rows", "analyse: counted rows")
    timers.wrap(es, "paired_significance", "analyse: significance")
    timers.wrap(analysis, "_randomization", "analyse: significance")
    timers.wrap(stats_pkg, "clusters", "analyse: clusters")
    timers.wrap(reliability_tests, "run", "analyse: workers' test")
    timers.wrap(es, "krippendorff_interval", "agreement: alpha")
    timers.wrap(es, "span_f1", "agreement: span F1")

    campaign = Campaign.objects.get(slug=args.slug)
    if args.preset:
        campaign.options = {**(campaign.options or {}), "statistics_preset": args.preset}
        campaign.save(update_fields=["options"])
    base = own_peak_mb()
    runs = []
    header = None
    for _ in range(args.repeats):
        timers.reset()
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        with connection.execute_wrapper(timers.sql):
            header = storage.compute_error_spans(campaign)
        wall = time.perf_counter() - started
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        top = {k: v for k, v in timers.parts.items() if ":" not in k}
        runs.append({"seconds": wall, "parts_s": dict(timers.parts), "other_s": wall - sum(top.values()),
                     "process_cpu_s": cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime,
                     "calls": dict(timers.calls)})
    profile = None
    if args.profile and header is not None:
        import cProfile
        import io
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(storage.compute_error_spans, campaign)
        text = io.StringIO()
        stats = pstats.Stats(profiler, stream=text)
        stats.sort_stats("cumulative").print_stats(35)
        stats.sort_stats("tottime").print_stats(25)
        profile = text.getvalue()
    check = stored_check(campaign, json.loads(args.expected), "mqm" if campaign.protocol == "mqm" else "esa") \
        if header is not None and args.expected else None
    print(json.dumps({"runs": runs, "returned": header is not None,
                      "recorded_seconds": header.seconds if header is not None else None,
                      "observations": header.summary.get("observations") if header is not None else None,
                      "check": check, "base_mb": base, "peak_mb": own_peak_mb(), "ru_maxrss_mb": peak_mb(),
                      "profile": profile}))


def child_import(args) -> None:
    setup_django()
    from annotation.services.judgment_import import import_judgments

    base = own_peak_mb()
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    with open(args.tsv, "rb") as handle:
        result = import_judgments(handle, fmt="mqm-tsv", name="error spans benchmark mqm-tsv import", pair="en-de")
    wall = time.perf_counter() - started
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"seconds": wall, "judgments": result.judgments, "slug": result.campaign.slug,
                      "process_cpu_s": cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime,
                      "base_mb": base, "peak_mb": own_peak_mb(), "ru_maxrss_mb": peak_mb()}))


# ---------------------------------------------------------------------------------------------
# Parent: orchestration
# ---------------------------------------------------------------------------------------------

def bench_env(bench_url: str, redis_url: str) -> dict:
    env = dict(os.environ)
    env.update(DATABASE_URL=bench_url, DEBUG="0", SECRET_KEY="bench", ALLOWED_HOSTS="127.0.0.1,localhost",
               RESULTS_AUTO_RECOMPUTE="0", CELERY_BROKER_URL=redis_url, CELERY_RESULT_BACKEND=redis_url,
               CACHE_URL=redis_url, CACHE_KEY_PREFIX="bench-spans", LOG_LEVEL="WARNING", PYTHONUNBUFFERED="1",
               DJANGO_SETTINGS_MODULE="config.settings")
    return env


def redis_url_of(args) -> str:
    broker = os.environ.get("CELERY_BROKER_URL", "")
    parts = urlsplit(broker)
    if parts.scheme not in ("redis", "rediss"):
        return ""
    return parts._replace(path=f"/{args.redis_db}").geturl()


def flush_redis(url: str) -> None:
    if not url:
        return
    import redis

    try:
        redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=10).flushdb()
    except redis.RedisError as exc:
        log(f"could not empty {url}: {exc}")


def child(args, mode: str, extra: list[str], env: dict, step: str, report: dict) -> dict:
    """Run this script as a child (`--child mode`) after waiting for quiet; returns its JSON with the CPU of
    PostgreSQL and of other processes meanwhile."""

    report["busy_before"][step] = wait_until_quiet(args.quiet_limit, args.wait_quiet)
    report["calibration"][step] = calibrate()
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", mode, "--seed", str(args.seed), *extra]
    out, wall, rss, cpu = run_measured(argv, env, args.db_name)
    lines = out.strip().splitlines()
    result = json.loads(lines[-1])
    for line in lines[:-1]:
        print(line)
    result.update(wall_s=wall, wait4_maxrss_mb=rss, **{f"{k}_during": v for k, v in cpu.items()})
    return result


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.child == "build":
        child_build(args)
        return 0
    if args.child == "compute":
        child_compute(args)
        return 0
    if args.child == "import":
        child_import(args)
        return 0
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from benchlib import bench_database_url, recreate_database

    shown = argv if argv is not None else sys.argv[1:]
    report: dict = {"command": " ".join([".venv/bin/python", "benchmarks/error_spans.py", *map(shlex.quote, shown)]),
                    "cpus": os.cpu_count(), "busy_before": {}, "calibration": {}, "started": datetime.now().isoformat()}
    server_url = os.environ.get("DATABASE_URL", "")
    bench_url, dev_db = bench_database_url(server_url, args.db_name, "benchmarks/error_spans.py")
    redis_url = redis_url_of(args)
    env = bench_env(bench_url, redis_url)
    report["database"], report["redis"] = args.db_name, redis_url or "(none: local cache)"
    started_all = time.perf_counter()
    tmp = tempfile.TemporaryDirectory(prefix="error-spans-bench-")
    try:
        log(f"preparing database {args.db_name!r} (dropped and recreated; {dev_db!r} is not touched), Redis "
            f"{report['redis']} (emptied)")
        recreate_database(server_url, args.db_name)
        flush_redis(redis_url)
        run_measured([sys.executable, "manage.py", "migrate", "--noinput"], env, args.db_name)

        have_import = False
        try:
            sys.path.insert(0, str(ROOT))
            have_import = (ROOT / "annotation" / "protocols" / "error_spans" / "mqm_tsv.py").exists() and \
                "parse_mqm_tsv" in (ROOT / "annotation" / "protocols" / "error_spans" / "mqm_tsv.py").read_text()
        except OSError:
            pass
        have_import = have_import and not args.skip_import
        tsv = str(Path(tmp.name) / "mqm.tsv") if have_import else ""
        log(f"generating {args.judgments:,} judgments with {args.spans:,} spans and building the ESA and MQM "
            "campaigns (bulk COPY)" + (" and the MQM TSV" if tsv else "") + " ...")
        built = child(args, "build", [*data_args(args), *(["--tsv", tsv] if tsv else [])], env, "build", report)
        report["build"] = built
        for protocol, c in built["campaigns"].items():
            log(f"built {protocol}: {c['judgments']:,} judgments, {c['hits']:,} HITs, {c['outputs']:,} outputs in "
                f"{c['seconds']:.1f} s (" + ", ".join(f"{k} {v:.1f}" for k, v in c["parts_s"].items()) + ")")
        d = built["data"]
        log(f"data: {d['judgments']:,} judgments ({d['bad_ref']:,} bad_ref, {d['second_ratings']:,} second ratings), "
            f"{d['spans']:,} spans (max {d['spans_max']} a judgment, {d['major_share']:.1%} major), "
            f"{d['documents']:,} documents, segments per domain {d['domain_segments']}")
        t = time.perf_counter()
        vacuum_analyze(bench_url)
        report["vacuum_analyze_s"] = time.perf_counter() - t
        log(f"VACUUM (ANALYZE) {report['vacuum_analyze_s']:.1f} s")

        expected = json.dumps(built["expected_order"])
        report["computes"] = []
        for protocol, preset in CONFIGS:
            step = f"{protocol} {preset}"
            extra = ["--slug", built["campaigns"][protocol]["slug"], "--preset", preset, "--repeats",
                     str(args.repeats), "--expected", expected, *(["--profile"] if args.profile else [])]
            result = child(args, "compute", extra, env, step, report)
            result.update(protocol=protocol, preset=preset)
            if result.get("profile"):
                print(f"---- cProfile, compute_error_spans, {step} ----\n{result['profile']}")
            report["computes"].append(result)
            times = [r["seconds"] for r in result["runs"]]
            check = result["check"] or {}
            log(f"compute_error_spans {step}: " + ", ".join(f"{x:.2f}" for x in times) + f" s (median "
                f"{statistics.median(times):.2f}); peak {result['peak_mb']:.0f} MB; PostgreSQL CPU "
                f"{result['postgres_cpu_s_during']:.1f} s; ranking recovered: {check.get('same_order')}")

        if have_import:
            result = child(args, "import", ["--tsv", tsv], env, "import mqm-tsv", report)
            result.update(rows=built["tsv"]["rows"], file_mb=built["tsv"]["mb"])
            report["import"] = result
            log(f"import_judgments mqm-tsv, {result['rows']:,} rows ({result['file_mb']:.0f} MB): "
                f"{result['seconds']:.1f} s ({result['judgments']:,} judgments; peak {result['peak_mb']:.0f} MB)")
            extra = ["--slug", result["slug"], "--preset", "wmt24-esa", "--repeats", "1", "--expected", expected]
            report["imported_compute"] = child(args, "compute", extra, env, "compute imported mqm-tsv", report)
            vacuum_analyze(bench_url)
            report["imported_compute_analyzed"] = child(args, "compute", extra, env,
                                                        "compute imported mqm-tsv after VACUUM (ANALYZE)", report)
        else:
            report["import"] = None
            log("the mqm-tsv import is not available (annotation/protocols/error_spans/mqm_tsv.py) or --skip-import")
    finally:
        tmp.cleanup()
        flush_redis(redis_url)
        if not args.keep_db:
            recreate_database(server_url, args.db_name, create=False)
    report["wall_s"] = time.perf_counter() - started_all
    print_summary(report)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"error-spans-{datetime.now():%Y%m%d-%H%M%S}.json"
    path.write_text(json.dumps(report, indent=2, default=float))
    log(f"report written to {path.relative_to(ROOT)}")
    return 0 if report["all_met"] else 1


def median_parts(runs: list[dict]) -> dict[str, float]:
    labels = list(dict.fromkeys(k for r in runs for k in r["parts_s"]))
    labels = [k for k in labels if not k.startswith("of all")] + [k for k in labels if k.startswith("of all")]
    parts = {k: statistics.median(r["parts_s"].get(k, 0.0) for r in runs) for k in labels}
    return {k: v for k, v in parts.items() if not k.startswith("of all")} | {
        "other": statistics.median(r["other_s"] for r in runs)} | {
        k: v for k, v in parts.items() if k.startswith("of all")}


def print_summary(report: dict) -> None:
    d = report["build"]["data"]
    lines = ["", "=" * 110, "Error-span statistics benchmark (benchmarks/error_spans.py)",
             f"  command: {report['command']}",
             f"  data: {d['judgments']:,} judgments ({d['system_judgments']:,} of system outputs, "
             f"{d['second_ratings']:,} of them second ratings; {d['bad_ref']:,} perturbed copies), "
             f"{d['spans']:,} spans "
             f"(0-{d['spans_max']} a judgment, {d['judgments_without_spans']:,} without, {d['major_share']:.1%} "
             f"major), {d['systems']} systems, {d['segments']:,} segments in {d['documents']:,} documents, 3 domains "
             f"{d['domain_segments']}, {d['raters']} raters, {d['hits']:,} HITs; {report['cpus']} CPUs",
             f"  database {report['database']} (separate), Redis {report['redis']}",
             "  other processes' load before each step (cores): "
             + ", ".join(f"{k} {v:.2f}" for k, v in report["busy_before"].items()),
             "  machine speed, reference workload (2M-step Python loop / 2M-float np.sort): "
             + "; ".join(f"{k} {v['python_loop_s']:.3f} / {v['numpy_sort_s']:.3f} s"
                         for k, v in report["calibration"].items())]
    for protocol, c in report["build"]["campaigns"].items():
        lines.append(f"  build {protocol} (bulk COPY, not a target): {c['seconds']:.1f} s = "
                     + " + ".join(f"{k} {v:.1f}" for k, v in c["parts_s"].items()))
    checks = []
    for c in report["computes"]:
        times = [r["seconds"] for r in c["runs"]]
        median = statistics.median(times)
        parts = median_parts(c["runs"])
        check = c["check"] or {}
        label = f"compute_error_spans, {c['protocol'].upper()} {c['preset']} (median of {len(times)})"
        checks.append((label, median, TARGETS["compute_s"], "s"))
        checks.append((f"peak memory, {c['protocol'].upper()} {c['preset']} subprocess (ru_maxrss)",
                       c["ru_maxrss_mb"], TARGETS["peak_mb"], "MB"))
        lines += [
            "",
            f"  {c['protocol'].upper()} under {c['preset']}: runs " + ", ".join(f"{x:.2f}" for x in times)
            + f" s; process CPU {statistics.median(r['process_cpu_s'] for r in c['runs']):.2f} s a run, PostgreSQL "
            f"{c['postgres_cpu_s_during'] / len(times):.2f} s a run; other processes {c['other_cores_during']:.2f} "
            f"cores, stolen {c['steal_cores_during']:.2f}; peak {c['ru_maxrss_mb']:.0f} MB (VmHWM "
            f"{c['peak_mb']:.0f}, {c['base_mb']:.0f} after start-up)",
            "    phases (median s): " + ", ".join(f"{k} {v:.2f}" for k, v in parts.items()),
            f"    ranking ({check.get('score_name')}): expected  " + " > ".join(check.get("expected", [])),
            "                       recovered " + " > ".join(check.get("recovered", []))
            + f"  -> same order: {check.get('same_order')}, pairs out of order by score "
            f"{check.get('pairs_out_of_order')}, per domain {check.get('domain_pairs_out_of_order')}",
            f"    {check.get('clusters')} clusters; {check.get('significant_pairs')} of "
            f"{check.get('significance_rows')} ordered pairs p < 0.05; "
            f"{sum(1 for r in check.get('rank_ranges', {}).values() if r and r[0] != r[1])} systems with a range "
            f"wider than one rank; unreliable workers {check.get('unreliable_workers')} (generated random raters "
            f"{report['build']['random_raters']}); agreement "
            + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                        for k, v in (check.get("agreement") or {}).items()),
        ]
        if not check.get("same_order"):
            checks.append((f"ranking {c['protocol'].upper()} {c['preset']}: pairs out of known order",
                           float(check.get("pairs_out_of_order") or 99), 0.5, ""))
    imp = report.get("import")
    if imp:
        checks.append((f"import_judgments mqm-tsv, {imp['rows']:,} rows", imp["seconds"], TARGETS["import_s"], "s"))
        checks.append(("peak memory, import subprocess (ru_maxrss)", imp["ru_maxrss_mb"], TARGETS["peak_mb"], "MB"))
        ic, ia = report["imported_compute"], report["imported_compute_analyzed"]
        lines += ["", f"  import mqm-tsv: {imp['rows']:,} rows, {imp['file_mb']:.0f} MB, {imp['judgments']:,} "
                  f"judgments: {imp['seconds']:.1f} s (importer CPU {imp['process_cpu_s']:.1f} s, PostgreSQL "
                  f"{imp['postgres_cpu_s_during']:.1f} s; other processes {imp['other_cores_during']:.2f} cores); "
                  f"peak {imp['ru_maxrss_mb']:.0f} MB",
                  f"  compute_error_spans on the imported campaign: {ic['runs'][0]['seconds']:.2f} s right after the "
                  f"import, {ia['runs'][0]['seconds']:.2f} s after VACUUM (ANALYZE) ("
                  + ", ".join(f"{k} {v:.2f}" for k, v in median_parts(ia["runs"]).items()) + "); "
                  + (f"{ic['observations']:,} observations; same order: {(ic['check'] or {}).get('same_order')}; "
                     f"{len((ic['check'] or {}).get('unreliable_workers', []))} of {(ic['check'] or {}).get('workers')}"
                     " workers flagged unreliable (no perturbed items in the file)"
                     if ic["returned"] else "returned None (no observations loaded)")]
    else:
        lines += ["", "  import mqm-tsv: not available (annotation/protocols/error_spans/mqm_tsv.py) or --skip-import"]
    report["all_met"] = all(value < target for _, value, target, _ in checks)
    lines += ["", f"  {'figure':<72} {'value':>9}  {'target':>9}  result"]
    for label, value, target, unit in checks:
        lines.append(f"  {label:<72} {value:>7.2f} {unit:<2} {'< ' + format(target, 'g'):>7} {unit:<2}  "
                     f"{'PASS' if value < target else 'FAIL'}")
    lines += [f"  all targets met: {report['all_met']}; benchmark wall time {report['wall_s']:.0f} s", "=" * 110]
    print("\n".join(lines), flush=True)


def data_args(args) -> list[str]:
    return ["--judgments", str(args.judgments), "--spans", str(args.spans), "--segments", str(args.segments),
            "--systems", str(args.systems), "--raters", str(args.raters), "--double", str(args.double),
            "--random-raters", str(args.random_raters)]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--judgments", type=int, default=500_000,
                        help="in all: systems x segments first ratings + --double second ratings + perturbed copies")
    parser.add_argument("--spans", type=int, default=1_500_000, help="error spans in all (0-6 a judgment)")
    parser.add_argument("--segments", type=int, default=33_000, help="segments (each judged for every system)")
    parser.add_argument("--systems", type=int, default=15, help="systems of known quality")
    parser.add_argument("--raters", type=int, default=100, help="raters")
    parser.add_argument("--random-raters", type=int, default=5, help="raters who score at random")
    parser.add_argument("--double", type=int, default=2_500, help="system outputs judged by a second rater")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each statistics configuration")
    parser.add_argument("--seed", type=int, default=1, help="of the generated data")
    parser.add_argument("--db-name", default="mteval_bench_spans", help="the separate database (dropped first)")
    parser.add_argument("--redis-db", type=int, default=5,
                        help="the Redis database (of CELERY_BROKER_URL's server) for cache and broker; emptied")
    parser.add_argument("--keep-db", action="store_true", help="leave the benchmark database for inspection")
    parser.add_argument("--skip-import", action="store_true", help="leave out the mqm-tsv import")
    parser.add_argument("--profile", action="store_true", help="cProfile one more run of each configuration")
    parser.add_argument("--quiet-limit", type=float, default=0.5,
                        help="before each timed step wait until other processes use fewer cores than this")
    parser.add_argument("--wait-quiet", type=float, default=30.0, help="longest such wait, seconds")
    parser.add_argument("--child", choices=("build", "compute", "import"), help=argparse.SUPPRESS)
    parser.add_argument("--slug", help=argparse.SUPPRESS)
    parser.add_argument("--preset", help=argparse.SUPPRESS)
    parser.add_argument("--expected", help=argparse.SUPPRESS)
    parser.add_argument("--tsv", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if min(args.judgments, args.spans, args.segments, args.systems, args.raters, args.repeats) < 1 \
            or args.raters < 2 or args.random_raters >= args.raters:
        parser.error("counts must be positive, --raters at least 2 and above --random-raters")
    return args


if __name__ == "__main__":
    sys.exit(main())
