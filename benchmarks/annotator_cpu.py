"""In-process CPU of one annotator request: Django's WSGI handler called directly in a loop, timed with
`time.process_time`, so the figure is this process's CPU per request, whatever else the machine runs (no
gunicorn, no HTTP client; PostgreSQL's own time is not counted). benchmarks/README.md, "Session 10, second round".

    DATABASE_URL=postgres://... .venv/bin/python benchmarks/annotator_cpu.py --db-name mteval_bench_x \\
        [--redis-db 9] [--blocks 16] [--block 20] [--fresh] [--code /path/to/another/checkout]

Builds (once, or again with --fresh) a plain DA campaign in its own database, then alternates blocks of
`--block` single-answer POSTs (each to the item the previous answer's response served) and of GETs, on
kept connections (CONN_MAX_AGE=60, health checks as configured), and prints the median microseconds per
request over `--blocks` blocks of each, as JSON (a new worker's entry, every HIT's worth of POSTs, left out).
`--code` runs another checkout's project code under this benchmark: benchmarks/annotator_cpu_ab.py alternates two.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.annotate_server import bench_broker_url, flush_redis, write_campaign_file  # noqa: E402
from benchmarks.benchlib import bench_database_url, cpu_seconds, recreate_database  # noqa: E402


def environ(method: str, path: str, body: bytes = b"", query: str = "") -> dict:
    return {
        "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query, "SCRIPT_NAME": "",
        "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80", "HTTP_HOST": "127.0.0.1", "REMOTE_ADDR": "127.0.0.1",
        "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)), "HTTP_ACCEPT": "application/json",
        "wsgi.input": io.BytesIO(body), "wsgi.url_scheme": "http", "wsgi.errors": sys.stderr,
        "wsgi.multithread": False, "wsgi.multiprocess": True, "wsgi.run_once": False, "wsgi.version": (1, 0),
    }


class Annotator:
    """Enters the campaign as fresh crowd workers and answers its items one at a time through `app`. A new worker's
    entry (a crowd link's redirect, every HIT's worth of POSTs) is not an annotator API request: the CPU it costs
    this process and the backend is kept in `entry_cpu` and `entry_backend`, for `timed` to leave out."""

    def __init__(self, app, slug: str):
        self.app, self.slug, self.serial, self.token, self.item = app, slug, 0, None, None
        self.entry_cpu, self.entry_backend, self.backend_pid = 0.0, 0.0, None

    def call(self, env: dict) -> tuple[str, dict, bytes]:
        out = {}

        def start_response(status, headers, exc_info=None):
            out["status"], out["headers"] = status, dict(headers)
        body = b"".join(self.app(env, start_response))
        return out["status"], out["headers"], body

    def enter(self) -> None:
        self.serial += 1
        worker = f"cpu-{os.getpid()}-{self.serial}"
        status, headers, _ = self.call(environ("GET", f"/c/{self.slug}/start/", query=f"worker_id={worker}"))
        assert status.startswith("302"), status
        self.token = headers["Location"].rstrip("/").split("/")[-1]
        self.get()

    def _backend_now(self) -> float:
        return backend_cpu(self.backend_pid) if self.backend_pid is not None else 0.0

    def get(self) -> None:
        status, _, body = self.call(environ("GET", f"/api/hit/{self.token}/"))
        assert status.startswith("200"), (status, body[:200])
        self.item = json.loads(body)["item"]["id"]

    def post(self) -> None:
        payload = json.dumps({"item": self.item, "score": 50}).encode()
        status, _, body = self.call(environ("POST", f"/api/hit/{self.token}/", payload))
        assert status.startswith("201"), (status, body[:200])
        state = json.loads(body)
        if state.get("done"):
            cpu, backend = time.process_time(), self._backend_now()
            self.enter()
            self.entry_cpu += time.process_time() - cpu
            self.entry_backend += self._backend_now() - backend
        else:
            self.item = state["item"]["id"]


def backend_cpu(pid: int) -> float:
    """CPU seconds of PostgreSQL's backend `pid` so far (Linux /proc, 10 ms ticks: sum it over many requests)."""
    with open(f"/proc/{pid}/stat", "rb") as handle:
        return cpu_seconds(handle.read().rsplit(b")", 1)[1].split())


def timed(block: int, step, backend: list, annotator: Annotator) -> float:
    """This process's CPU microseconds per call of `step` over `block` calls; adds the backend's CPU seconds. What
    a new worker's entry costs in between is left out."""
    from django.db import connections
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = annotator.backend_pid = cursor.fetchone()[0]
    entry_cpu, entry_backend = annotator.entry_cpu, annotator.entry_backend
    before_backend, start = backend_cpu(pid), time.process_time()
    for _ in range(block):
        step()
    elapsed = time.process_time() - start - (annotator.entry_cpu - entry_cpu)
    backend.append(backend_cpu(pid) - before_backend - (annotator.entry_backend - entry_backend))
    return elapsed / block * 1e6


def lockstep(annotator: Annotator, block: int) -> None:
    """Says `ready`, then for each line `post` or `get` on stdin times a block of `block` of them and answers
    {"us": CPU µs per request, "backend_s": the backend's CPU seconds over the block}, until stdin closes."""
    print("ready", flush=True)
    steps = {"post": annotator.post, "get": annotator.get}
    for line in sys.stdin:
        backend: list = []
        us = timed(block, steps[line.strip()], backend, annotator)
        print(json.dumps({"us": us, "backend_s": backend[0]}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db-name", default="mteval_bench_cpu")
    parser.add_argument("--redis-db", type=int, default=9)
    parser.add_argument("--blocks", type=int, default=16)
    parser.add_argument("--block", type=int, default=20)
    parser.add_argument("--fresh", action="store_true", help="build the database and campaign again")
    parser.add_argument("--lockstep", action="store_true",
                        help="run a block on each 'post' or 'get' line read from stdin and answer its figures as a "
                             "JSON line (benchmarks/annotator_cpu_ab.py interleaves two processes this way)")
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the checkout whose project code runs (default: this one; benchmarks/annotator_cpu_ab.py)")
    parser.add_argument("--ab-health-check", action="store_true",
                        help="alternate each block with one on Django's own health check (SELECT 1)")
    args = parser.parse_args()
    database_url = os.environ.get("DATABASE_URL", "postgres://mteval:mteval@127.0.0.1:5432/mteval")
    bench_url, _ = bench_database_url(database_url, args.db_name, "annotator_cpu.py")
    broker = bench_broker_url(os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0"), args.redis_db)
    os.environ.update(DATABASE_URL=bench_url, DEBUG="0", SECRET_KEY="bench", ALLOWED_HOSTS="127.0.0.1",
                      CONN_MAX_AGE="60", LOG_LEVEL="WARNING", CELERY_BROKER_URL=broker, CACHE_KEY_PREFIX="bench",
                      SECURE_SSL_REDIRECT="0", CROWD_ENTRY_RATE_PER_IP="", CROWD_ENTRY_RATE_PER_CAMPAIGN="",
                      CROWD_MAX_OPEN_HITS_PER_IP="", DJANGO_SETTINGS_MODULE="config.settings")
    if args.fresh:
        recreate_database(database_url, args.db_name)
    flush_redis(broker)
    sys.path.insert(0, str(args.code.resolve()))  # the project's code (config, annotation, ...) comes from there
    import django
    django.setup()
    from django.core.handlers.wsgi import WSGIHandler
    from django.core.management import call_command

    from annotation.models import Campaign

    call_command("migrate", verbosity=0)
    campaign = Campaign.objects.filter(name="cpu").first()
    if campaign is None:
        path = Path(tempfile.mkdtemp()) / "cpu.jsonl"
        write_campaign_file(path, segments=2000, systems=4, seed=1)
        call_command("import_campaign", str(path), "--name", "cpu", "--protocol", "adequacy", "--redundancy", "3",
                     "--seed", "1", stdout=io.StringIO())
        campaign = Campaign.objects.get(name="cpu")
    annotator = Annotator(WSGIHandler(), campaign.slug)
    annotator.enter()
    for _ in range(3 * args.block):  # warm: prepared statements, caches
        annotator.post()
    if args.lockstep:
        lockstep(annotator, args.block)
        return
    variants = {"this": None}
    if args.ab_health_check:
        from django.db import connections
        connection = connections["default"]
        from django.db.backends.postgresql.base import DatabaseWrapper
        ours = type(connection).is_usable
        variants = {"this": lambda: setattr(type(connection), "is_usable", ours),
                    "select-1": lambda: setattr(type(connection), "is_usable", DatabaseWrapper.is_usable)}
    figures = {name: ([], [], [], []) for name in variants}
    for _ in range(args.blocks):
        for name, switch in variants.items():
            if switch is not None:
                switch()
            posts, gets, post_backend, get_backend = figures[name]
            posts.append(timed(args.block, annotator.post, post_backend, annotator))
            gets.append(timed(args.block, annotator.get, get_backend, annotator))
    calls = args.blocks * args.block
    print(json.dumps({name: {"post_us": round(statistics.median(posts)), "get_us": round(statistics.median(gets)),
                             "post_backend_us": round(sum(post_backend) / calls * 1e6),
                             "get_backend_us": round(sum(get_backend) / calls * 1e6)}
                      for name, (posts, gets, post_backend, get_backend) in figures.items()}
                     | {"blocks": args.blocks, "block": args.block}))


if __name__ == "__main__":
    main()
