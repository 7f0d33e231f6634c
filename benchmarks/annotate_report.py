"""The annotator benchmark's checks and report (benchmarks/annotate.py): what the database holds of a run
(lost, duplicated), percentiles, CPU per judgment, and the printed summary."""
from __future__ import annotations

import math
import os

from annotate_client import Stats

CAPACITY_TARGET = 300.0  # judgments stored per second, annotators submitting back to back
PACE_P95_TARGET_MS = 50.0  # p95 latency at 100 judgments/s, GET and POST alike


def check_database(bench_url: str, slug: str, prefix: str, accepted: list[tuple[str, int]]) -> dict:
    """What the database holds of one run: the judgments of the campaign's workers named `prefix-...`."""
    import psycopg2

    worker = "JOIN annotation_annotator w ON w.id = {t}.annotator_id AND w.external_id LIKE %(workers)s"
    conn = psycopg2.connect(bench_url)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT id FROM annotation_campaign WHERE slug = %s", [slug])
            params = {"campaign": cur.fetchone()[0], "workers": prefix + "-%"}
            cur.execute("SELECT a.token, j.item_id FROM annotation_judgment j "
                        "JOIN annotation_assignment a ON a.id = j.assignment_id " + worker.format(t="j") +
                        " WHERE j.campaign_id = %(campaign)s", params)
            rows = cur.fetchall()
            cur.execute("SELECT count(*), coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n "
                        "FROM annotation_judgment j " + worker.format(t="j") + " WHERE j.campaign_id = %(campaign)s "
                        "GROUP BY j.assignment_id, j.item_id HAVING count(*) > 1) d", params)
            duplicated_pairs, duplicated_rows = cur.fetchone()
            # An assignment's position is the number of its judgments (items are answered in order).
            cur.execute("SELECT count(*) FROM annotation_assignment a " + worker.format(t="a") +
                        " WHERE a.campaign_id = %(campaign)s AND a.position <> "
                        "(SELECT count(*) FROM annotation_judgment j WHERE j.assignment_id = a.id)", params)
            (inconsistent,) = cur.fetchone()
    finally:
        conn.close()
    answered, in_db = set(accepted), set(rows)
    return {
        "stored": len(rows),
        "expected": len(answered),
        "responses_201": len(accepted),
        "lost": len(answered - in_db),
        "stored_without_201": len(in_db - answered),
        "duplicated": int(duplicated_rows),
        "duplicated_pairs": duplicated_pairs,
        "inconsistent_assignments": inconsistent,
    }


# ---------------------------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------------------------

def percentiles(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    ordered = sorted(values)

    def at(q: float) -> float:
        return round(1000 * ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))], 2)

    return {"n": len(ordered), "p50": at(0.50), "p95": at(0.95), "p99": at(0.99), "max": round(1000 * ordered[-1], 2),
            "mean": round(1000 * sum(ordered) / len(ordered), 2)}


def fmt_latency(name: str, p: dict) -> str:
    if not p.get("n"):
        return f"  {name:<22} (none)"
    return (f"  {name:<22} n={p['n']:<6} p50={p['p50']:7.2f}  p95={p['p95']:7.2f}  p99={p['p99']:7.2f}  "
            f"max={p['max']:8.2f}  mean={p['mean']:7.2f} ms")


def fmt_check(check: dict, label: str = "database") -> list[str]:
    ok = check["lost"] == 0 and check["duplicated"] == 0 and check["inconsistent_assignments"] == 0
    return [
        f"  {label}: stored={check['stored']}  expected={check['expected']} (201 responses: "
        f"{check['responses_201']})  lost={check['lost']}  duplicated={check['duplicated']}  "
        f"stored-without-201={check['stored_without_201']}  inconsistent-assignments="
        f"{check['inconsistent_assignments']}  -> {'OK' if ok else 'FAILED'}",
    ]


def cpu_per_judgment(cores: dict, seconds: float, judgments: int) -> dict:
    """Milliseconds of CPU per stored judgment, per group, and the rate the machine's cores could sustain
    if nothing else ran (a projection from the CPU cost alone, not a measurement)."""
    if not judgments:
        return {}
    ms = {k: round(1000 * cores[k] * seconds / judgments, 2) for k in ("gunicorn", "postgres", "client")}
    ms["total"] = round(sum(ms.values()), 2)
    ms["server"] = round(ms["gunicorn"] + ms["postgres"], 2)  # the annotator path's own cost (goal: < 1 ms)
    ms["projected_rate_on_all_cores"] = round(1000 * (os.cpu_count() or 1) / ms["total"], 1) if ms["total"] else None
    return ms


def summarise_capacity(stats: Stats, t_start: float, check: dict, args) -> dict:
    elapsed = max(1e-9, stats.last_done - t_start)
    rate = check["expected"] / elapsed
    db_rate = check["stored"] / elapsed
    return {
        "cpu_ms_per_judgment": cpu_per_judgment(stats.cpu, stats.window, check["stored"]),
        "annotators": args.annotators, "duration": args.capacity_duration, "elapsed": round(elapsed, 2),
        "judgments_per_second": round(rate, 1), "db_judgments_per_second": round(db_rate, 1),
        "status": dict(stats.status), "errors": dict(stats.errors), "retries": stats.retries,
        "connections_opened": stats.connects, "cores_used": stats.cpu,
        "latency_ms": {k: percentiles(v) for k, v in stats.latency.items()}, "check": check,
        "target": CAPACITY_TARGET, "met": db_rate >= CAPACITY_TARGET,
    }


def summarise_pace(stats: Stats, setup: Stats, t0: float, working: int, check: dict, args) -> dict:
    target_rate = args.pace_annotators / args.think * args.batch  # judgments/s: each POST carries --batch answers
    latency = {k: percentiles(v) for k, v in stats.latency.items()}
    p95s = [latency[k]["p95"] for k in ("get", "post") if latency[k].get("n")]
    return {
        "annotators": args.pace_annotators, "holding_a_hit": working, "think_seconds": args.think,
        "duration": args.pace_duration, "target_rate": round(target_rate, 1),
        "warmup_seconds": args.think if args.warmup is None else args.warmup,
        "achieved_rate": round(stats.status["post 201"] * args.batch / args.pace_duration, 1), "batch": args.batch,
        "requests_per_second": round(sum(len(v) for v in stats.latency.values()) / args.pace_duration, 1),
        "status": dict(stats.status), "errors": dict(stats.errors), "retries": stats.retries,
        "connections_opened": stats.connects, "cores_used": stats.cpu, "latency_ms": latency,
        "client_lag_ms": percentiles(stats.lag),
        "service_ms": {k: percentiles(v) for k, v in stats.service.items()},
        "cpu_ms_per_judgment": cpu_per_judgment(stats.cpu, stats.window, stats.status["post 201"] * args.batch),
        "setup_start_ms": percentiles(setup.latency["start"]),
        "setup_errors": dict(setup.errors), "check": check,
        "target_p95_ms": PACE_P95_TARGET_MS, "met": bool(p95s) and max(p95s) < PACE_P95_TARGET_MS,
    }


def summarise_crowd(stats: Stats, t_start: float, check: dict, args) -> dict:
    """The capacity figures, for --crowd-annotators, with entry (start + HIT page + first GET) timed."""
    result = summarise_capacity(stats, t_start, check, args)
    result["annotators"] = args.crowd_annotators
    result.pop("target"), result.pop("met")
    return result


BESIDE_P99_TARGET_MS = 50.0  # p99 of GET and POST at 200 judgments/s beside a recomputing worker


def summarise_beside(pace: dict, during: list[float], finished: list, queued: int) -> dict:
    """The pace figures beside statistics: the p99 target, and the recomputes of the big campaign."""
    p99s = [pace["latency_ms"][k]["p99"] for k in ("get", "post") if pace["latency_ms"][k].get("n")]
    return {**pace, "target_p99_ms": BESIDE_P99_TARGET_MS,
            "met": bool(p99s) and max(p99s) < BESIDE_P99_TARGET_MS,
            "recomputes": {"finished_in_window": len(during), "seconds_each": [round(x, 1) for x in during],
                           "finished_in_all": len(finished), "queued": queued}}


def pace_lines(pace: dict, title: str) -> list[str]:
    lines = ["", f"{title}  {pace['annotators']} annotators ({pace['holding_a_hit']} holding a HIT), one judgment "
                 f"each ~{pace['think_seconds']:g} s, open loop, {pace['duration']:g} s measured after "
                 f"{pace['warmup_seconds']:g} s of warm-up"]
    lines.append(f"  rate: target {pace['target_rate']:.1f} judgments/s, achieved {pace['achieved_rate']:.1f} "
                 f"(201 responses); {pace['requests_per_second']:.1f} requests/s offered")
    lines.append(fmt_latency("GET-next", pace["latency_ms"]["get"]))
    lines.append(fmt_latency("POST", pace["latency_ms"]["post"]))
    if pace["latency_ms"]["start"].get("n"):
        lines.append(fmt_latency("start (new HIT)", pace["latency_ms"]["start"]))
    lines.append(fmt_latency("client send lag", pace["client_lag_ms"]))
    lines.append(fmt_latency("GET-next from send", pace["service_ms"]["get"]))
    lines.append(fmt_latency("POST from send", pace["service_ms"]["post"]))
    lines.append(fmt_latency("set-up start (unmeasured)", pace["setup_start_ms"]))
    lines.append(f"  responses: {pace['status']}  errors: {pace['errors'] or 'none'}  "
                 f"client retries: {pace['retries']}  connections opened: {pace['connections_opened']}")
    lines.append(f"  cores used on average: {pace['cores_used']}")
    lines.append(f"  CPU ms per judgment (GETs included): {pace['cpu_ms_per_judgment']}")
    if "recomputes" in pace:
        lines.append(f"  big campaign's recomputes: {pace['recomputes']}")
    lines += fmt_check(pace["check"], "database (warm-up included)")
    return lines


def closed_loop_lines(cap: dict, title: str, kinds: tuple[str, ...]) -> list[str]:
    lines = ["", f"{title}  {cap['annotators']} annotators back to back, {cap['duration']:g} s "
                 f"(measured over {cap['elapsed']:.2f} s)"]
    lines.append(f"  judgments/s: {cap['judgments_per_second']:.1f} (201 responses)   "
                 f"{cap['db_judgments_per_second']:.1f} (stored in the database)")
    for kind in kinds:
        lines.append(fmt_latency(kind + " (closed loop)", cap["latency_ms"].get(kind, {})))
    lines.append(f"  responses: {cap['status']}  errors: {cap['errors'] or 'none'}  "
                 f"client retries: {cap['retries']}  connections opened: {cap['connections_opened']}")
    lines.append(f"  cores used on average: {cap['cores_used']}")
    lines.append(f"  CPU ms per judgment: {cap['cpu_ms_per_judgment']}")
    return lines + fmt_check(cap["check"])


def print_summary(report: dict) -> None:
    lines = ["", "=" * 100, "ANNOTATOR API BENCHMARK", "=" * 100]
    lines.append(f"command:  {report['command']}")
    lines.append(f"server:   {report['server']}")
    lines.append(f"          DEBUG=0 CONN_MAX_AGE={report['conn_max_age']} database={report['database']} "
                 f"(PostgreSQL) broker/cache={report['broker']}")
    lines.append(f"          {os.cpu_count()} cores shared by server, database and client; calibration loop "
                 f"{report.get('calibration_ms')} ms (lower is faster)")
    modes = [m for m in ("capacity", "pace", "beside-stats", "crowd") if m in report]
    after = {mode: report[mode].get("calibration_after_ms") for mode in modes}
    if any(v is not None for v in after.values()):
        lines.append(f"          calibration loop after the runs: {after} ms (--slow-limit {report['slow_limit']:g})")
    if "worker" in report:
        lines.append(f"worker:   {report['worker']}")
        lines.append(f"          recomputing {report['stats_campaign']}")
    lines.append(f"campaign: {report['campaign']}")
    lines.append(f"client:   {report['client']}")
    cap, pace, beside, crowd = (report.get(m) for m in ("capacity", "pace", "beside-stats", "crowd"))
    if cap:
        lines += closed_loop_lines(cap, "CAPACITY", ("start", "get", "post"))
    if pace:
        lines += pace_lines(pace, "PACE")
    if beside:
        lines += pace_lines(beside, "BESIDE STATISTICS")
    if crowd:
        lines += closed_loop_lines(crowd, "CROWD (each annotator its own address; entry = start + page + GET)",
                                   ("entry", "start", "page", "get", "post"))
    lines += ["", "TARGETS"]
    if cap:
        lines.append(f"  capacity >= {CAPACITY_TARGET:.0f} judgments/s:    {cap['db_judgments_per_second']:8.1f}   "
                     f"{'MET' if cap['met'] else 'NOT MET'}")
    if pace:
        worst = max((pace["latency_ms"][k].get("p95", math.inf) for k in ("get", "post")), default=math.inf)
        lines.append(f"  pace p95 < {PACE_P95_TARGET_MS:.0f} ms (GET and POST): {worst:8.2f}   "
                     f"{'MET' if pace['met'] else 'NOT MET'}")
    if beside:
        worst = max((beside["latency_ms"][k].get("p99", math.inf) for k in ("get", "post")), default=math.inf)
        lines.append(f"  beside stats p99 < {BESIDE_P99_TARGET_MS:.0f} ms:      {worst:8.2f}   "
                     f"{'MET' if beside['met'] else 'NOT MET'}")
    checks = [r["check"] for r in (cap, pace, beside, crowd) if r]
    intact = all(c["lost"] == 0 and c["duplicated"] == 0 and c["inconsistent_assignments"] == 0 for c in checks)
    lines.append(f"  zero lost, zero duplicated:          {'MET' if intact else 'NOT MET'}")
    lines.append(f"  report: {report['report_path']}")
    lines.append("=" * 100)
    print("\n".join(lines), flush=True)
