"""The benchmarks' own PostgreSQL database, beside the developer's (shared by annotate.py, stats.py and
results_page.py, which are run as scripts from the project folder: `.venv/bin/python benchmarks/X.py`)."""
from __future__ import annotations

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
