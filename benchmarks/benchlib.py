"""Plumbing shared by annotate.py, stats.py and results_page.py (run as scripts from the project folder:
`.venv/bin/python benchmarks/X.py`): the benchmarks' own PostgreSQL database beside the developer's,
CPU time of processes from Linux's /proc, and stopping a server's process group."""
from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from urllib.parse import urlsplit

POSTGRES_SCHEMES = ("postgres", "postgresql", "pgsql", "postgis")


def bench_database_url(database_url: str, name: str, script: str) -> tuple[str, str]:
    """The URL of database `name` on DATABASE_URL's server, and DATABASE_URL's own database name.
    Exits with a message unless DATABASE_URL is PostgreSQL and `name` is another database."""
    parts = urlsplit(database_url)
    if parts.scheme not in POSTGRES_SCHEMES:
        raise SystemExit(
            f"{script} needs DATABASE_URL to point at PostgreSQL "
            f"(postgres://user:password@host:port/db); got {database_url!r}. "
            'Start the local services with: eval "$(scripts/start-services.sh)"'
        )
    current = parts.path.lstrip("/")
    if name == current:
        raise SystemExit(f"--db-name {name!r} is the database of DATABASE_URL; the benchmark needs a separate one")
    return parts._replace(path="/" + name).geturl(), current


def recreate_database(database_url: str, name: str, create: bool = True) -> None:
    """Drop database `name` (closing its connections) on DATABASE_URL's server, and create it afresh."""
    import psycopg2
    from psycopg2 import sql

    conn = psycopg2.connect(database_url)
    try:
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            if create:
                cur.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    finally:
        conn.close()


def processes() -> Iterator[tuple[int, bytes, list[bytes], bytes]]:
    """(pid, name, the stat fields after the name, command line) of every process still readable in /proc.
    In the fields, [1] is the parent pid, [3] the session and [11] + [12] the user + system CPU ticks."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read()
        except OSError:  # ended meanwhile
            continue
        yield int(entry), stat[stat.index(b"(") + 1:stat.rindex(b")")], stat[stat.rindex(b")") + 2:].split(), cmdline


def cpu_seconds(fields: list[bytes]) -> float:
    """User + system CPU seconds from a process's stat fields (as `processes` yields them)."""
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def works_for_database(name: bytes, cmdline: bytes, database: str) -> bool:
    """A PostgreSQL process that works for `database`: its backends, and the server's own processes
    (checkpointer, WAL writer, ...); other databases' backends are left out."""
    if not name.startswith(b"postgres"):
        return False
    # A backend's title is "postgres: <cluster>: <user> <database> <client> <state>".
    title = cmdline.split(b"\0")[0].split(b": ")
    backend = len(title) >= 3 and title[2].count(b" ") >= 2
    return not backend or title[2].split(b" ")[1] == database.encode()


def stop_server(proc: subprocess.Popen) -> None:
    """SIGTERM (gunicorn's master stops its workers gracefully), then SIGKILL to the session it was
    started in (and nothing else) if it has not stopped within 20 s."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
