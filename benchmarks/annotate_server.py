"""The annotator benchmark's server side (benchmarks/annotate.py): its own database and Redis database,
generated campaigns imported with manage.py, and gunicorn in a session of its own."""
from __future__ import annotations

import http.client
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import benchlib
from annotate_client import ACCEPT_HEADERS, Client
from annotate_machine import BIN, HOST, OUT, ROOT, WORDS, log


def bench_broker_url(broker_url: str, redis_db: int) -> str:
    """The benchmark's own Redis database on the same server, so that the recompute tasks its judgments
    queue never reach a Celery worker of the dev database. Empty (tasks in-process) without Redis."""
    parts = urlsplit(broker_url)
    if parts.scheme not in ("redis", "rediss"):
        return ""
    return parts._replace(path=f"/{redis_db}").geturl()


def flush_redis(url: str) -> None:
    if url:
        import redis

        try:
            redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=10).flushdb()
        except redis.RedisError as exc:
            log(f"could not empty {url}: {exc}")


def server_env(bench_url: str, broker_url: str, args) -> dict:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=bench_url, DEBUG="0", SECRET_KEY="bench", ALLOWED_HOSTS="127.0.0.1,localhost",
        CONN_MAX_AGE=str(args.conn_max_age), LOG_LEVEL="WARNING", PYTHONUNBUFFERED="1",
        CELERY_BROKER_URL=broker_url, CACHE_KEY_PREFIX="bench",
        # Plain HTTP on loopback, collected static files (DEBUG is off), and one address for 1,500 simulated
        # annotators: no HTTPS redirect, and the crowd-entry limits off (each annotator has its own worker id).
        SECURE_SSL_REDIRECT="0", STATIC_ROOT=str(Path(tempfile.gettempdir()) / "mteval-bench-static"),
        CROWD_ENTRY_RATE_PER_IP="", CROWD_ENTRY_RATE_PER_CAMPAIGN="", CROWD_MAX_OPEN_HITS_PER_IP="",
        MEDIA_ROOT=str(Path(tempfile.gettempdir()) / "mteval-bench-media"),
    )
    for name in ("DJANGO_SETTINGS_MODULE", "CELERY_RESULT_BACKEND", "CACHE_URL"):
        env.pop(name, None)
    if args.mode == "crowd":  # every annotator has an address of its own: the limits at their defaults
        for name in ("CROWD_ENTRY_RATE_PER_IP", "CROWD_ENTRY_RATE_PER_CAMPAIGN", "CROWD_MAX_OPEN_HITS_PER_IP"):
            env.pop(name, None)
    return env


def manage(env: dict, *argv: str) -> str:
    result = subprocess.run([sys.executable, "manage.py", *argv], cwd=ROOT, env=env, capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"manage.py {' '.join(argv)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 30))]
    return " ".join(words).capitalize() + "."


def write_campaign_file(path: Path, segments: int, systems: int, seed: int, media: int = 0) -> None:
    """The generated campaign file; with `media` > 0 every line carries an image (one of `media` files, named
    media/img-<k>.png; benchmarks/media_bundle.py packs them with the file into a bundle)."""
    rng = random.Random(seed)
    names = [f"system-{chr(65 + k)}" if k < 26 else f"system-{k}" for k in range(systems)]
    with path.open("w", encoding="utf-8") as handle:
        for i in range(segments):
            record = {
                "doc_id": f"doc-{i // 20:04d}", "seg_id": i % 20 + 1,
                "source": sentence(rng), "reference": sentence(rng),
                "systems": {name: sentence(rng) for name in names},
            }
            if media:
                record["media"] = [{"kind": "image", "src": f"media/img-{i % media}.png", "alt": f"Image {i}"}]
            handle.write(json.dumps(record) + "\n")


def import_campaign(env: dict, path: Path, name: str, redundancy: int, gate: bool = False) -> dict:
    extra = ["--gate"] if gate else []  # the live reliability gate (docs/methods.md §12.1)
    out = manage(env, "import_campaign", str(path), "--name", name, "--protocol", "adequacy",
                 "--redundancy", str(redundancy), "--seed", "1", *extra)
    return json.loads(out.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Server:
    """gunicorn in a session of its own; stop() always ends it (and only it)."""

    def __init__(self, env: dict, args):
        self.port = free_port()
        self.argv = [
            str(BIN / "gunicorn"), args.app, "-b", f"{HOST}:{self.port}",
            "-w", str(args.gunicorn_workers), "-k", args.worker_class, "--threads", str(args.threads),
            "--keep-alive", str(args.keep_alive), "--backlog", "2048", "--timeout", "60",
            "--log-level", "warning", "--error-logfile", "-", *args.gunicorn_arg,
        ]
        self.log_path = OUT / "gunicorn.log"
        self.env = env
        self.proc: subprocess.Popen | None = None

    @property
    def description(self) -> str:
        return " ".join(self.argv[1:]).replace(f"-b {HOST}:{self.port}", f"-b {HOST}:<port>")

    def start(self, timeout: float = 180.0) -> None:
        self.log_file = self.log_path.open("w")
        self.proc = subprocess.Popen(self.argv, cwd=ROOT, env=self.env, stdout=self.log_file, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.proc.returncode}; see {self.log_path}")
            try:
                conn = http.client.HTTPConnection(HOST, self.port, timeout=5)
                conn.request("GET", "/api/hit/warm-up/", headers=ACCEPT_HEADERS)
                status = conn.getresponse().status
                conn.close()
                if status == 404:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"gunicorn did not answer within {timeout:.0f} s; see {self.log_path}")

    def warm_up(self, requests: int = 100) -> None:
        """Make every worker (and thread) open its database connection before measuring."""

        def hit():
            client = Client(self.port)
            for _ in range(requests // 10):
                client.request("GET", "/api/hit/warm-up/")
            client.close()

        threads = [threading.Thread(target=hit) for _ in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            benchlib.stop_server(self.proc)
        finally:
            self.log_file.close()
