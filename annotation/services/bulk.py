"""Fast inserts of many rows: PostgreSQL's COPY with ids drawn from the table's sequence,
and Django's bulk_create elsewhere (SQLite returns the ids itself)."""
from __future__ import annotations

import csv
import io
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
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)", [table, n])
        return [row[0] for row in cursor.fetchall()]


def _csv_value(value):
    if value is None:
        return r"\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    return value


def copy_rows(model, columns: Sequence[str], rows: Iterable[Sequence], chunk: int = 200_000) -> None:
    """COPY rows into `model`'s table (PostgreSQL only); `columns` are database column names."""
    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(connection.ops.quote_name(c) for c in columns)
    sql = f"COPY {table} ({names}) FROM STDIN WITH (FORMAT csv, NULL '\\N')"
    with connection.cursor() as cursor:
        raw = cursor.cursor if hasattr(cursor, "cursor") else cursor
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        count = 0
        for row in rows:
            writer.writerow([_csv_value(v) for v in row])
            count += 1
            if count % chunk == 0:
                buffer.seek(0)
                raw.copy_expert(sql, buffer)
                buffer = io.StringIO()
                writer = csv.writer(buffer)
        if buffer.tell():
            buffer.seek(0)
            raw.copy_expert(sql, buffer)


def insert(model, columns: Sequence[str], rows: list[Sequence], batch_size: int = 5000) -> list[int]:
    """Insert rows of plain values (one per field name in `columns`); returns the new primary keys in order.

    COPY on PostgreSQL (ids drawn from the sequence first), bulk_create elsewhere.
    """
    if not rows:
        return []
    fields = [model._meta.get_field(c) for c in columns]
    ids = allocate_ids(model, len(rows))
    if ids is None:
        objects = [model(**dict(zip((f.attname for f in fields), row, strict=True))) for row in rows]
        model.objects.bulk_create(objects, batch_size=batch_size)
        return [obj.pk for obj in objects]
    encoders = [(lambda v: json.dumps(v)) if isinstance(f, models.JSONField) else None for f in fields]
    copy_rows(model, ["id", *[f.column for f in fields]],
              ([pk, *[enc(v) if enc else v for enc, v in zip(encoders, row, strict=True)]]
               for pk, row in zip(ids, rows, strict=True)))
    return ids
