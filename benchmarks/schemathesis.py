"""Schemathesis against a live server: does the researcher API do what its OpenAPI schema (`/api/schema/`) says?

`.venv/bin/python benchmarks/schemathesis.py [--max-examples 20] [--max-time 600] [--seed 1]` (README in this
folder). Needs DATABASE_URL on PostgreSQL; it never touches that database: it recreates a separate one on the same
server (`--db-name`, default `mteval_schemathesis`), migrates it, makes a researcher with a token, imports the
demo file as a few campaigns of different protocols, and starts gunicorn on a free loopback port with DEBUG off
and no broker (tasks in-process). Then `st run` with every check (`--checks all`) and benchmarks/schemathesis.toml,
bounded by examples per operation and time; its summary is printed and its exit status is this script's (0: no
failure). The server is stopped at the end, also on errors and Ctrl-C.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.benchlib import bench_database_url, recreate_database, stop_server  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
HOST = "127.0.0.1"
CONFIG = ROOT / "benchmarks" / "schemathesis.toml"
DEMO = ROOT / "annotation" / "demo" / "demo-de-en.jsonl"
#: (name, protocol, extra options): campaigns of several families, so that the stateful phase finds slugs whose
#: tables differ (an adaptive DA campaign, pairwise, post-editing with its verification stage, ESA).
CAMPAIGNS = [
    ("DA", "adequacy", []),
    ("Adaptive DA", "adequacy", ["--adaptive", "--budget-judgments", "1000", "--batch-hits", "2"]),
    ("Pairwise", "pairwise-adequacy", ["--systems", "online-A,neural-B", "--unit", "sentence"]),
    ("Post-edit", "post-edit", []),
    ("ESA", "esa", []),
]


def manage(env: dict, *argv: str) -> str:
    result = subprocess.run([sys.executable, "manage.py", *argv], cwd=ROOT, env=env, capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"manage.py {' '.join(argv)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def server_env(database_url: str) -> dict:
    env = dict(os.environ)
    env.update(DATABASE_URL=database_url, DEBUG="0", SECRET_KEY="schemathesis", ALLOWED_HOSTS=HOST,
               SECURE_SSL_REDIRECT="0", STATIC_ROOT=str(Path(tempfile.gettempdir()) / "mteval-schemathesis-static"),
               LOG_LEVEL="WARNING", PYTHONUNBUFFERED="1")
    for name in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "DJANGO_SETTINGS_MODULE", "CACHE_URL"):
        env.pop(name, None)  # tasks in-process: nothing queued on a broker another database's workers read
    return env


def prepare(env: dict) -> str:
    """Migrate, collect static files (DEBUG is off), make the researcher and the campaigns; the token's key."""
    manage(env, "migrate", "--noinput", "-v0")
    manage(env, "collectstatic", "--noinput", "-v0")
    manage(env, "shell", "-c", "from django.contrib.auth import get_user_model; "
                               "get_user_model().objects.create_user('researcher', is_staff=True)")
    token = manage(env, "drf_create_token", "researcher").split()[2]
    for name, protocol, extra in CAMPAIGNS:
        manage(env, "import_campaign", str(DEMO), "--name", name, "--protocol", protocol, "--owner", "researcher",
               *extra)
    return token


def wait_for(port: int, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {proc.returncode}")
        try:
            conn = http.client.HTTPConnection(HOST, port, timeout=5)
            conn.request("GET", "/api/schema/")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"the server did not answer within {timeout:.0f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db-name", default="mteval_schemathesis")
    parser.add_argument("--max-examples", type=int, default=20, help="test cases per operation and phase")
    parser.add_argument("--max-time", type=int, default=600, help="seconds for the whole run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--report", help="also write schemathesis's JSON report (ndjson events) here")
    args = parser.parse_args()

    url, _ = bench_database_url(os.environ.get("DATABASE_URL", ""), args.db_name, "benchmarks/schemathesis.py")
    recreate_database(os.environ["DATABASE_URL"], args.db_name)
    env = server_env(url)
    token = prepare(env)
    port = free_port()
    log_path = Path(tempfile.gettempdir()) / "mteval-schemathesis-server.log"
    print(f"server log: {log_path}")
    log = log_path.open("w")
    proc = subprocess.Popen([str(BIN / "gunicorn"), "config.wsgi", "-b", f"{HOST}:{port}", "-w", str(args.workers),
                             "--timeout", "120", "--log-level", "warning"], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(port, proc)
        argv = [str(BIN / "st"), "--config-file", str(CONFIG), "run", f"http://{HOST}:{port}/api/schema/",
                "--checks", "all", "--max-examples", str(args.max_examples), "--max-time", str(args.max_time),
                "--seed", str(args.seed), "--workers", "1", "--generation-database", "none", "--no-color"]
        if args.report:
            argv += ["--report", "ndjson", "--report-ndjson-path", args.report]
        started = time.monotonic()
        result = subprocess.run(argv, cwd=tempfile.gettempdir(), env={**env, "MTEVAL_TOKEN": token})
        print(json.dumps({"schemathesis_exit": result.returncode, "seconds": round(time.monotonic() - started, 1),
                          "max_examples": args.max_examples, "seed": args.seed}))
        return result.returncode
    finally:
        stop_server(proc)
        log.close()
        recreate_database(os.environ["DATABASE_URL"], args.db_name, create=False)


if __name__ == "__main__":
    sys.exit(main())
