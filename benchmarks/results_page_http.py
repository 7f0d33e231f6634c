"""The HTTP side of benchmarks/results_page.py: gunicorn on a free loopback port (started and stopped), a client
logged in through the admin form with a session cookie, one timed page load, and the CPU of the server's session
and of the machine meanwhile."""
from __future__ import annotations

import http.cookiejar
import math
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime
from pathlib import Path

import benchlib

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
BIN = Path(sys.executable).parent
HOST = "127.0.0.1"
#: The researcher the benchmark creates (results_page.py) and logs in as.
USERNAME, PASSWORD = "bench-researcher", "bench-password-results"


def log(message: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# The server and the client
# ---------------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Server:
    """gunicorn in a session of its own; stop() always ends it (and only it)."""

    def __init__(self, env: dict, workers: int):
        self.port = free_port()
        self.argv = [str(BIN / "gunicorn"), "config.wsgi", "-b", f"{HOST}:{self.port}", "-w", str(workers),
                     "-k", "sync", "--timeout", "60", "--log-level", "warning", "--error-logfile", "-"]
        self.env = env
        self.log_path = OUT / "results-page-gunicorn.log"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 120.0) -> None:
        self.log_file = self.log_path.open("w")
        self.proc = subprocess.Popen(self.argv, cwd=ROOT, env=self.env, stdout=self.log_file,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.proc.returncode}; see {self.log_path}")
            try:
                with urllib.request.urlopen(f"http://{HOST}:{self.port}/admin/login/", timeout=5) as response:
                    if response.status == 200:
                        return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.2)
        raise RuntimeError(f"gunicorn did not answer within {timeout:.0f} s; see {self.log_path}")

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            benchlib.stop_server(self.proc)
        finally:
            self.log_file.close()


def logged_in_opener(base: str) -> urllib.request.OpenerDirector:
    """Log in through the admin login form, as a browser does; the opener keeps the session cookie."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(f"{base}/admin/login/?next=/admin/") as response:
        form = response.read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
    if not token:
        raise RuntimeError("no CSRF token on the admin login form")
    body = urllib.parse.urlencode({"csrfmiddlewaretoken": token.group(1), "username": USERNAME,
                                   "password": PASSWORD, "next": "/admin/"}).encode()
    request = urllib.request.Request(f"{base}/admin/login/?next=/admin/", data=body,
                                     headers={"Referer": f"{base}/admin/login/"})
    with opener.open(request) as response:  # 302 to /admin/, followed
        landed = response.geturl()
    if not landed.endswith("/admin/") or not any(c.name == "sessionid" for c in jar):
        raise RuntimeError(f"login failed: landed on {landed}")
    return opener


def fetch(opener: urllib.request.OpenerDirector, url: str) -> tuple[float, bytes]:
    started = time.perf_counter()
    with opener.open(url) as response:
        body = response.read()
        status, final = response.status, response.geturl()
    elapsed = (time.perf_counter() - started) * 1000
    if status != 200 or final != url:
        raise RuntimeError(f"GET {url} ended at {final} with {status} (not logged in?)")
    return elapsed, body


def machine_busy() -> float:
    """CPU seconds the whole machine has been busy (all but idle and iowait), from /proc/stat."""
    with open("/proc/stat") as handle:
        cpu = [int(x) for x in handle.readline().split()[1:]]
    return (sum(cpu[:8]) - cpu[3] - cpu[4]) / os.sysconf("SC_CLK_TCK")


def session_cpu(session: int) -> float:
    """CPU seconds used so far by the processes of one session (gunicorn's master and its workers)."""
    return sum(benchlib.cpu_seconds(fields) for _, _, fields, _ in benchlib.processes() if int(fields[3]) == session)


def self_cpu() -> float:
    usage = os.times()
    return usage.user + usage.system


def wait_until_quiet(limit: float, wait: float) -> float:
    """Wait (up to `wait` seconds) until the machine is nearly idle (the server is idle meanwhile);
    returns the cores other processes used in the last 2 s sample."""
    deadline = time.monotonic() + wait
    while True:
        busy, started = machine_busy(), time.monotonic()
        time.sleep(2.0)
        other = (machine_busy() - busy) / (time.monotonic() - started)
        if other < limit or time.monotonic() >= deadline:
            return other
        log(f"other processes use {other:.2f} cores; waiting for a quieter machine")


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]
