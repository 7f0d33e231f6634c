"""The child processes of benchmarks/error_spans.py, each run and measured on its own: building the campaigns in
bulk (and the mqm-tsv file), computing their statistics timed by phase, importing the file."""
from __future__ import annotations

import json
import resource
import time
from pathlib import Path

from error_spans_data import CATEGORY_SHARE, DOMAINS, HIT_SIZE, SLOTS, expected_order, generate, texts
from measure import own_peak_mb, peak_mb, setup_django

ROOT = Path(__file__).resolve().parent.parent


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
