"""How the servers start and hold their database connections (config/settings.py, config/checks.py,
config/wsgi.py, the Makefile's .env; docs/api.md §1).

- Production settings fail closed: DEBUG off without SECRET_KEY or ALLOWED_HOSTS stops start-up.
- `make .env` writes a generated SECRET_KEY and DEBUG=1 once and never overwrites a .env.
- With DEBUG off and no `collectstatic`, the deployment check project.E001 (`manage.py check --deploy`)
  reports it and gunicorn stops at start-up with the message; after `collectstatic` the same server
  answers `/` with 200.
- PostgreSQL only: `manage.py runserver` under 60 concurrent requests leaves no connections behind
  (CONN_MAX_AGE defaults to 0 under runserver), and a kept connection that PostgreSQL ended is replaced
  instead of costing a 500 (CONN_HEALTH_CHECKS).
"""
from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.authtoken.models import Token

from config.checks import MISSING_MANIFEST, check_static_manifest

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
GUNICORN = str(Path(sys.executable).parent / "gunicorn")


def project_env(**overrides: str) -> dict[str, str]:
    """The environment for a server or command of the project (not the test settings)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "CONN_MAX_AGE")}
    env.update(DJANGO_SETTINGS_MODULE="config.settings", PYTHONUNBUFFERED="1", **overrides)
    return env


def production_env(tmp_path: Path, **overrides: str) -> dict[str, str]:
    values = dict(DEBUG="0", SECRET_KEY="test-" + uuid.uuid4().hex, ALLOWED_HOSTS="127.0.0.1,localhost",
                  STATIC_ROOT=str(tmp_path / "static"), DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
                  CELERY_BROKER_URL="", SECURE_SSL_REDIRECT="0")  # served over plain HTTP here, no TLS proxy
    return project_env(**{**values, **overrides})


def manage(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """A server process in a session of its own; stop() ends its process group and only it."""

    def __init__(self, argv: list[str], env: dict, port: int):
        self.port = port
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"the server exited with {self.proc.returncode}:\n{self.output()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"the server did not listen within {timeout} s")

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=10)
                break
            except subprocess.TimeoutExpired:
                continue

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-4000:]


def get(url: str, headers: dict | None = None, attempts: int = 1) -> int:
    """The status of a GET; a connection the server's listen queue refused or reset is tried again."""
    for attempt in range(attempts):
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=60) as response:
                return response.status
        except urllib.error.HTTPError as exc:
            return exc.code
        except (ConnectionError, http.client.RemoteDisconnected, urllib.error.URLError):
            if attempt == attempts - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


# --- settings that fail closed, and the development .env ----------------------------------------------

@pytest.mark.parametrize("missing, message", [
    ("SECRET_KEY", "SECRET_KEY must be set when DEBUG is off."),
    ("ALLOWED_HOSTS", "ALLOWED_HOSTS must be set when DEBUG is off."),
])
def test_production_settings_fail_closed(tmp_path, missing, message):
    """An empty variable in the environment also hides the one in a developer's .env (the environment wins)."""
    result = manage(production_env(tmp_path, **{missing: ""}), "check")
    assert result.returncode != 0
    assert message in result.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_writes_env_once(tmp_path):
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", str(tmp_path))}
    subprocess.run(["make", ".env"], cwd=tmp_path, env=env, check=True, capture_output=True)
    written = (tmp_path / ".env").read_text()
    values = dict(line.split("=", 1) for line in written.splitlines())
    assert values.keys() == {"SECRET_KEY", "DEBUG"} and values["DEBUG"] == "1"
    assert len(values["SECRET_KEY"]) >= 50
    assert (tmp_path / ".env").stat().st_mode & 0o077 == 0  # readable by its owner only
    subprocess.run(["make", ".env"], cwd=tmp_path, env=env, check=True, capture_output=True)
    assert (tmp_path / ".env").read_text() == written

    (tmp_path / ".env").write_text("SECRET_KEY=mine\n")
    os.utime(tmp_path / ".env", (0, 0))  # older than the Makefile: still never rewritten
    subprocess.run(["make", ".env"], cwd=tmp_path, env=env, check=True, capture_output=True)
    assert (tmp_path / ".env").read_text() == "SECRET_KEY=mine\n"


# --- static files with DEBUG off -------------------------------------------------------------------------

MANIFEST_STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}


def test_static_manifest_check(settings, tmp_path):
    from django.core.checks import registry

    assert check_static_manifest in registry.registry.get_checks(include_deployment_checks=True)
    assert check_static_manifest() == []  # the test settings (DEBUG=1): plain storage, nothing to check
    settings.STORAGES = MANIFEST_STORAGES
    settings.STATIC_ROOT = tmp_path
    [error] = check_static_manifest()
    assert error.id == MISSING_MANIFEST
    assert str(tmp_path / "staticfiles.json") in error.msg
    assert "python manage.py collectstatic" in error.hint
    (tmp_path / "staticfiles.json").write_text('{"paths": {}, "version": "1.1"}')
    assert check_static_manifest() == []


def test_server_stops_at_start_up_without_collected_static_files(tmp_path):
    env = production_env(tmp_path)
    port = free_port()
    argv = [GUNICORN, "config.wsgi", "-b", f"127.0.0.1:{port}", "-w", "1", "--no-control-socket"]
    refused = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0
    assert "staticfiles.json is missing" in refused.stderr and "python manage.py collectstatic" in refused.stderr

    assert manage(env, "collectstatic", "--noinput", "-v0").returncode == 0
    server = Server(argv, env, port)
    try:
        server.wait_ready()
        assert get(f"http://127.0.0.1:{port}/") == 200
        assert get(f"http://127.0.0.1:{port}/static/css/base.css") == 200
    finally:
        server.stop()


# --- database connections on PostgreSQL ---------------------------------------------------------------------

postgres_only = pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://", "pgsql://")),
    reason="needs PostgreSQL: set DATABASE_URL=postgres://... (SQLite has no server connections to count)",
)


def database_url(application: str) -> str:
    """The test database, with connections named `application` in pg_stat_activity."""
    db = connection.settings_dict
    credentials = urllib.parse.quote(db["USER"], safe="") + ":" + urllib.parse.quote(db["PASSWORD"], safe="")
    return (f"postgres://{credentials}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
            f"?application_name={application}")


def server_connections(application: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", [application])
        return cursor.fetchone()[0]


def researcher_token() -> str:
    user = get_user_model().objects.create_user("conn-researcher", password="pw", is_staff=True)
    return Token.objects.create(user=user).key


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_runserver_leaves_no_connections_behind():
    """60 concurrent requests that each read the database (token authentication, the campaign list), to
    `manage.py runserver` with the default CONN_MAX_AGE: every answer is 200, and once they are answered
    the server holds at most 2 connections (its threads' connections were closed with their requests;
    with CONN_MAX_AGE=60 they stayed open until the garbage collector found them)."""
    application = f"runserver-{uuid.uuid4().hex[:8]}"
    port = free_port()
    headers = {"Authorization": f"Token {researcher_token()}"}
    env = project_env(DEBUG="1", DATABASE_URL=database_url(application), CELERY_BROKER_URL="")
    server = Server([PYTHON, "manage.py", "runserver", f"127.0.0.1:{port}"], env, port)
    peak, done = [0], threading.Event()

    def sample():
        import psycopg2

        db = connection.settings_dict
        conn = psycopg2.connect(dbname=db["NAME"], user=db["USER"], password=db["PASSWORD"],
                                host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432)
        conn.autocommit = True
        try:
            with conn.cursor() as cur:
                while not done.is_set():
                    cur.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", [application])
                    peak[0] = max(peak[0], cur.fetchone()[0])
                    time.sleep(0.01)
        finally:
            conn.close()  # (psycopg2's `with connection` would only end the transaction)

    try:
        server.wait_ready()
        url = f"http://127.0.0.1:{port}/api/campaigns/"
        assert get(url, headers, attempts=50) == 200  # warm: the first request loads the URLconf
        time.sleep(0.5)
        baseline = server_connections(application)
        sampler = threading.Thread(target=sample)
        sampler.start()
        start = threading.Barrier(60)

        def request(_):
            start.wait()
            return get(url, headers, attempts=50)

        try:
            with ThreadPoolExecutor(60) as pool:
                statuses = list(pool.map(request, range(60)))
        finally:
            done.set()
            sampler.join()
        time.sleep(0.5)  # the last requests' request_finished closes their connections
        after = server_connections(application)
        print(f"\nrunserver, 60 concurrent requests: connections before {baseline}, peak {peak[0]}, after {after}")
        assert statuses == [200] * 60, sorted(set(statuses))
        assert after <= baseline + 2, f"{after} connections left open (before: {baseline}, peak {peak[0]})"
    finally:
        server.stop()


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_dead_kept_connection_is_replaced():
    """gunicorn (one sync worker, CONN_MAX_AGE=60 as docker-compose sets) keeps its connection between
    requests; PostgreSQL ends it (as a restart would); the next request still answers 200, on a new one."""
    application = f"gunicorn-{uuid.uuid4().hex[:8]}"
    port = free_port()
    headers = {"Authorization": f"Token {researcher_token()}"}
    env = project_env(DEBUG="1", DATABASE_URL=database_url(application), CELERY_BROKER_URL="", CONN_MAX_AGE="60")
    server = Server([GUNICORN, "config.wsgi", "-b", f"127.0.0.1:{port}", "-w", "1", "--no-control-socket"], env, port)
    url = f"http://127.0.0.1:{port}/api/campaigns/"
    try:
        server.wait_ready()
        assert get(url, headers) == 200
        assert server_connections(application) == 1  # kept after the request
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
                           [application])
        deadline = time.monotonic() + 10
        while server_connections(application) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server_connections(application) == 0
        assert [get(url, headers) for _ in range(3)] == [200, 200, 200]
        assert server_connections(application) == 1
    finally:
        server.stop()


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_the_shipped_gunicorn_settings_keep_the_connection_between_requests():
    """config/gunicorn.conf.py (what the Dockerfile and docker-compose run): three requests on one kept HTTP
    connection, one database connection for the worker. gunicorn's sync workers closed the connection after
    every response (`Connection: close`), so each annotator answer paid a new TCP connection (benchmarks/README.md,
    "Session 11")."""
    command = "gunicorn -c config/gunicorn.conf.py config.wsgi"
    assert command in (ROOT / "docker-compose.yml").read_text()
    assert '"gunicorn", "-c", "config/gunicorn.conf.py", "config.wsgi"' in (ROOT / "Dockerfile").read_text()
    application = f"gunicorn-{uuid.uuid4().hex[:8]}"
    port = free_port()
    env = project_env(DEBUG="1", DATABASE_URL=database_url(application), CELERY_BROKER_URL="", CONN_MAX_AGE="60",
                      GUNICORN_BIND=f"127.0.0.1:{port}", WEB_CONCURRENCY="1")
    server = Server([GUNICORN, "-c", "config/gunicorn.conf.py", "config.wsgi", "--no-control-socket"], env, port)
    headers = {"Authorization": f"Token {researcher_token()}"}
    try:
        server.wait_ready()
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        client.connect()
        first_socket = client.sock
        for _ in range(3):
            client.request("GET", "/api/campaigns/", headers=headers)
            response = client.getresponse()
            response.read()
            assert response.status == 200
            assert not response.will_close, response.getheader("Connection")
        assert client.sock is first_socket  # never reconnected
        client.close()
        assert server_connections(application) == 1
    finally:
        server.stop()


SHOW_PARALLEL = """
import sys
sys.argv = {argv!r}
import django
django.setup()
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute("SHOW max_parallel_workers_per_gather")
    print(cursor.fetchone()[0])
    cursor.execute("SHOW work_mem")
    print(cursor.fetchone()[0])
"""


@postgres_only
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("argv, extra, expected", [
    (["/venv/bin/celery", "-A", "config", "worker", "--concurrency=2"], {}, "0"),
    (["/venv/lib/celery/__main__.py", "-A", "config", "worker"], {}, "0"),  # python -m celery
    (["/venv/bin/celery", "-A", "config", "worker"], {"WORKER_DB_PARALLEL_WORKERS": "3"}, "3"),
    (["/venv/bin/gunicorn", "config.wsgi"], {}, None),  # the server's own default
    (["/venv/bin/celery", "-A", "config", "beat"], {}, None),
])
def test_a_celery_workers_statistics_reads_stay_in_its_own_backend(argv, extra, expected):
    """The worker's connections turn PostgreSQL's parallel query off (WORKER_DB_PARALLEL_WORKERS, default 0), so
    a whole-campaign read runs in the worker's one backend and not in processes outside its CPU share; every
    other process keeps the server's setting. Options given in DATABASE_URL are kept."""
    with connection.cursor() as cursor:
        cursor.execute("SHOW max_parallel_workers_per_gather")
        server_default = cursor.fetchone()[0]
    env = project_env(DATABASE_URL=database_url("parallel-check") + "&options=-c%20work_mem%3D5MB",
                      CELERY_BROKER_URL="", **extra)
    result = subprocess.run([PYTHON, "-c", SHOW_PARALLEL.format(argv=argv)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [expected or server_default, "5MB"]


def test_check_deploy_passes_with_the_compose_production_settings(tmp_path):
    """docker-compose's settings (DEBUG off, a strong key, HTTPS-only cookies, HSTS, the redirect, collected static
    files) pass `manage.py check --deploy` with no warning at all."""
    import secrets

    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    settings_env = {key: str(value) for key, value in compose["x-app"]["environment"].items()}
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), "STATIC_ROOT": str(tmp_path),
           "DJANGO_SETTINGS_MODULE": "config.settings"}
    for key in ("DEBUG", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_SSL_REDIRECT", "ALLOWED_HOSTS"):
        # ${NAME:-default}: the default compose uses when the environment does not set it
        env[key] = settings_env[key].split(":-", 1)[1].rstrip("}") if ":-" in settings_env[key] else settings_env[key]
    assert settings_env["SECRET_KEY"].startswith("${SECRET_KEY:?")  # no weak default: compose refuses to start
    env["SECRET_KEY"] = secrets.token_urlsafe(50)
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "collectstatic", "--noinput", "-v0"], env=env, check=True, timeout=120, cwd=ROOT)
    checked = subprocess.run([*manage, "check", "--deploy", "--fail-level", "WARNING"], env=env, capture_output=True,
                             text=True, timeout=120, cwd=ROOT)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "no issues" in checked.stdout
