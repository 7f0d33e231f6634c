"""The annotator benchmark beside statistics (benchmarks/annotate.py --mode beside-stats): a campaign of
1,000,000 DA judgments in the bench database (benchmarks/stats_campaign.py's generator, imported with
`manage.py import_judgments`; not timed), a real Celery worker (`celery -A config worker`) on the same machine,
database and Redis database as gunicorn, and a loop that queues the big campaign's recompute again as soon as
the previous one has finished, while the pace client judges the live (gated) campaign."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import benchlib
from annotate_cgroup import WorkerCgroup
from annotate_machine import BIN, OUT, ROOT, WORKER_BACKENDS, WORKER_NAME, log

#: PostgreSQL's application_name of the worker's connections: how its backends are told from gunicorn's.
WORKER_APP = "annotate-bench-worker"


def with_options(database_url: str, **options: str) -> str:
    """The URL with query options added (django-environ passes them to the driver: application_name,
    options="-c work_mem=64MB", ...)."""
    parts = urlsplit(database_url)
    query = dict(parse_qsl(parts.query))
    query.update({k: v for k, v in options.items() if v})
    return parts._replace(query=urlencode(query)).geturl()


def template_exists(server_url: str, name: str) -> bool:
    import psycopg2

    conn = psycopg2.connect(server_url)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
            return cur.fetchone() is not None
    finally:
        conn.close()


def copy_database(server_url: str, source: str, target: str) -> None:
    """CREATE DATABASE target TEMPLATE source (a file copy: seconds, where importing a million judgments takes
    minutes); target is dropped first. Nothing may be connected to source."""
    import psycopg2
    from psycopg2 import sql

    benchlib.recreate_database(server_url, target, create=False)
    conn = psycopg2.connect(server_url)
    try:
        conn.autocommit = True
        with conn.cursor() as cur:
            statement = sql.SQL("CREATE DATABASE {} TEMPLATE {}")
            cur.execute(statement.format(sql.Identifier(target), sql.Identifier(source)))
    finally:
        conn.close()


def import_stats_campaign(env: dict, judgments: int, seed: int) -> dict:
    """Generate `judgments` DA judgments (stats_campaign.py's WMT-like campaign) and import them; not timed."""
    import stats_campaign  # numpy only at import

    t = time.monotonic()
    g = stats_campaign.generate(judgments, seed)
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        path = Path(tmp) / "wmt-da.txt"
        stats_campaign.write_wmt_da(path, g)
        result = subprocess.run([sys.executable, "manage.py", "import_judgments", str(path), "--format", "wmt-da",
                                 "--name", "beside-stats campaign"], cwd=ROOT, capture_output=True, text=True,
                                env={**env, "RESULTS_AUTO_RECOMPUTE": "0"})
    if result.returncode:
        raise RuntimeError(f"import_judgments failed:\n{result.stdout}\n{result.stderr}")
    imported = json.loads(result.stdout.strip().splitlines()[-1])
    log(f"imported {imported['judgments']:,} judgments into {imported['campaign']!r} "
        f"({time.monotonic() - t:.0f} s, not measured)")
    return imported


class CeleryWorker:
    """`celery -A config worker` in a session of its own (with --worker-nice under `nice -n N`, its autogroup
    too; with --worker-cpu-max / --worker-cpu-weight in a CPU cgroup of its own, annotate_cgroup.py), on the bench
    database (its connections named WORKER_APP, with --worker-db-options) and the bench Redis database."""

    def __init__(self, env: dict, bench_url: str, args):
        url = with_options(bench_url, application_name=WORKER_APP, options=args.worker_db_options)
        self.env = {**env, "DATABASE_URL": url}
        self.argv = [str(BIN / "celery"), "-A", "config", "worker", "--loglevel=info", "-n", f"{WORKER_NAME}@%h",
                     f"--concurrency={args.worker_concurrency}"]
        self.nice = args.worker_nice
        if args.worker_nice:
            self.argv = ["nice", "-n", str(args.worker_nice), *self.argv]
        self.cgroup = None
        self.throttled: dict[str, int] = {}  # the cgroup's cpu.stat counters when it stopped
        if args.worker_cpu_max or args.worker_cpu_weight:
            self.cgroup = WorkerCgroup(f"mteval-{WORKER_APP}-{os.getpid()}", args.worker_cpu_max,
                                       args.worker_cpu_weight)
        self.log_path = OUT / "celery.log"
        self.proc: subprocess.Popen | None = None

    @property
    def description(self) -> str:
        text = " ".join(self.argv).replace(str(BIN) + "/", "")
        return text + (f"; in {self.cgroup.description}" if self.cgroup else "")

    def start(self) -> None:
        self.log_file = self.log_path.open("w")
        argv = self.argv
        if self.cgroup is not None:
            self.cgroup.create()
            argv = self.cgroup.wrap(argv)
        self.proc = subprocess.Popen(argv, cwd=ROOT, env=self.env, stdout=self.log_file,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        if self.nice:
            # With the kernel's autogroups (sched_autogroup_enabled), each session shares the CPU equally with
            # the others whatever its processes' nice: a session of its own needs the group's nice as well.
            try:
                with open(f"/proc/{self.proc.pid}/autogroup", "w") as handle:
                    handle.write(str(self.nice))
            except OSError as exc:
                log(f"could not set the worker's autogroup nice: {exc}")

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            benchlib.stop_server(self.proc)
        finally:
            self.log_file.close()
            if self.cgroup is not None:
                self.throttled = self.cgroup.throttled()
                self.cgroup.remove()


class RecomputeLoop(threading.Thread):
    """Queue the big campaign's compute task by name over the bench broker; when its CampaignResults row shows
    one more run, queue it again. Records each finished run (monotonic time, its own seconds). Also keeps
    annotate_machine.WORKER_BACKENDS up to date, and renices them with --worker-db-nice (we run as root)."""

    def __init__(self, broker_url: str, bench_url: str, campaign: int, db_nice: int):
        super().__init__(daemon=True, name="recompute-loop")
        from celery import Celery

        # CELERY_BROKER_URL in our environment (the dev broker) would win over broker=: name the connection.
        self.app = Celery("annotate-bench")
        self.connection = self.app.connection_for_write(broker_url)
        self.bench_url, self.campaign, self.db_nice = bench_url, campaign, db_nice
        self.finished: list[tuple[float, float]] = []
        self.queued = 0
        self.runs: int | None = None  # the results' run count last seen
        self.halt = threading.Event()

    def poll(self, cur) -> bool:
        """True when one more run has finished since the last look."""
        cur.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s", [WORKER_APP])
        pids = {pid for (pid,) in cur.fetchall()}
        for pid in pids - WORKER_BACKENDS if self.db_nice else ():
            try:
                os.setpriority(os.PRIO_PROCESS, pid, self.db_nice)
            except OSError:
                pass
        WORKER_BACKENDS.update(pids)
        cur.execute("SELECT runs, seconds FROM evaluation_campaignresults WHERE campaign_id = %s", [self.campaign])
        runs, seconds = cur.fetchone() or (0, 0.0)
        if self.runs is None:
            self.runs = runs
        elif runs > self.runs:
            self.runs = runs
            self.finished.append((time.monotonic(), seconds))
            return True
        return False

    def send(self) -> None:
        task = self.app.send_task("evaluation.tasks.compute_campaign_results", args=[self.campaign],
                                  connection=self.connection)
        self.queued += 1
        log(f"recompute loop: queued {task.id} ({len(self.finished)} finished so far)")

    def run(self) -> None:
        import psycopg2

        conn = psycopg2.connect(self.bench_url)
        conn.autocommit = True
        try:
            with conn.cursor() as cur:
                self.poll(cur)
                self.send()
                while not self.halt.wait(0.25):
                    if self.poll(cur):
                        self.send()
        finally:
            conn.close()
            self.connection.release()

    def stop(self) -> None:
        self.halt.set()
        self.join(timeout=10)

    def during(self, start: float, end: float) -> list[float]:
        """The seconds of each recompute that finished within [start, end]."""
        return [seconds for t, seconds in self.finished if start <= t <= end]


def stats_campaign(bench_url: str) -> dict:
    """The big campaign's id, slug and judgments (by the name import_stats_campaign gives it)."""
    import psycopg2

    conn = psycopg2.connect(bench_url)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT c.id, c.slug, (SELECT count(*) FROM annotation_judgment j WHERE j.campaign_id = c.id) "
                        "FROM annotation_campaign c WHERE c.name = 'beside-stats campaign'")
            pk, slug, judgments = cur.fetchone()
    finally:
        conn.close()
    return {"id": pk, "slug": slug, "judgments": judgments}


def prepare(server_url: str, bench_url: str, env: dict, args, migrate) -> dict:
    """The bench database with the big campaign: copied from --stats-template when that exists, else migrated
    and imported (and then saved as --stats-template when one is named)."""
    if args.stats_template and template_exists(server_url, args.stats_template):
        log(f"copying database {args.stats_template!r} to {args.db_name!r} (the big campaign is in it)")
        copy_database(server_url, args.stats_template, args.db_name)
        migrate()
    else:
        benchlib.recreate_database(server_url, args.db_name)
        migrate()
        log(f"generating and importing {args.stats_judgments:,} DA judgments (not measured)")
        import_stats_campaign(env, args.stats_judgments, seed=1)
        if args.stats_template:
            copy_database(server_url, args.db_name, args.stats_template)
            log(f"saved as database {args.stats_template!r} for the next runs (drop it when done)")
    return stats_campaign(bench_url)
