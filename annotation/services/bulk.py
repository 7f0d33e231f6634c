"""Fast inserts of many rows: PostgreSQL's COPY with ids drawn from the table's sequence,
and Django's bulk_create elsewhere (SQLite returns the ids itself)."""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from django.db import connection, models


def _is_postgres() -> bool:
    return connection.vendor == "postgresql"


def allocate_ids(model, n: int) -> list[int] | None:
    """n fresh primary keys for `model` on PostgreSQL (None elsewhere: let the database assign them)."""
    if not _is_postgres() or n == 0:
        return None
    table = model._meta.db_table
    with connection.cursor() as cursor:
        # Look the sequence up once: inside the generate_series query pg_get_serial_sequence() ran once per
        # row (3.5 s instead of 0.6 s for a million ids).
        cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
        sequence = cursor.fetchone()[0]
        cursor.execute("SELECT nextval(%s::regclass) FROM generate_series(1, %s)", [sequence, n])
        return [row[0] for row in cursor.fetchall()]


def _csv_field(value) -> str:
    """One CSV field for COPY: NULL as an unquoted \\N, every text quoted (so a text "\\N" stays text)."""
    if value is None:
        return "\\N"
    if value is True or value is False:
        return "t" if value else "f"
    if isinstance(value, str):
        return '"' + value.replace('"', '""') + '"'
    return str(value)


class _CsvReader:
    """A file-like object for COPY ... FROM STDIN that encodes `rows` as CSV a batch at a time, while
    PostgreSQL is already storing the rows sent before (psycopg2 calls read() until it returns "")."""

    def __init__(self, rows: Iterable[Sequence], batch: int = 2000):
        self.rows = iter(rows)
        self.batch = batch
        self.done = False

    def read(self, size: int = -1) -> str:
        if self.done:
            return ""
        lines = []
        for row in self.rows:
            lines.append(",".join(map(_csv_field, row)))
            if len(lines) == self.batch:
                break
        else:
            self.done = True
        return "\n".join(lines) + "\n" if lines else ""

    readline = read


def copy_rows(model, columns: Sequence[str], rows: Iterable[Sequence]) -> None:
    """COPY rows into `model`'s table (PostgreSQL only); `columns` are database column names.

    One COPY statement, streamed: rows are encoded a batch at a time as PostgreSQL reads them, so
    encoding in Python and storing in the database overlap, and no large buffer is built.
    """
    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(connection.ops.quote_name(c) for c in columns)
    sql = f"COPY {table} ({names}) FROM STDIN WITH (FORMAT csv, NULL '\\N')"
    with connection.cursor() as cursor:
        raw = cursor.cursor if hasattr(cursor, "cursor") else cursor
        raw.copy_expert(sql, _CsvReader(rows))


def insert(model, columns: Sequence[str], rows: list[Sequence], batch_size: int = 5000) -> list[int]:
    """Insert rows of plain values (one per field name in `columns`); returns the new primary keys in order.

    COPY on PostgreSQL (ids drawn from the sequence first), bulk_create elsewhere. Fields not in `columns`
    take their model default on both paths (Django keeps defaults in Python, not in the database, so COPY
    has to send them).
    """
    if not rows:
        return []
    fields = [model._meta.get_field(c) for c in columns]
    ids = allocate_ids(model, len(rows))
    if ids is None:
        objects = [model(**dict(zip((f.attname for f in fields), row, strict=True))) for row in rows]
        model.objects.bulk_create(objects, batch_size=batch_size)
        return [obj.pk for obj in objects]
    given = {f.attname for f in fields}
    defaults = [f for f in model._meta.concrete_fields
                if not f.primary_key and f.attname not in given and f.has_default()]
    if defaults:
        rows = [(*row, *[f.get_default() for f in defaults]) for row in rows]
        fields = [*fields, *defaults]
    encoders = [(lambda v: json.dumps(v)) if isinstance(f, models.JSONField) else None for f in fields]
    copy_rows(model, ["id", *[f.column for f in fields]],
              ([pk, *[enc(v) if enc else v for enc, v in zip(encoders, row, strict=True)]]
               for pk, row in zip(ids, rows, strict=True)))
    return ids
