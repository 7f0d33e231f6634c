"""Fast inserts of many rows: PostgreSQL's COPY with ids drawn from the table's sequence,
and Django's bulk_create elsewhere (SQLite returns the ids itself)."""
from __future__ import annotations

import json
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice

from django.db import connection, models
from django.utils import timezone

#: Ids fetched from the sequence at a time.
ID_BATCH = 100_000


def _is_postgres() -> bool:
    return connection.vendor == "postgresql"


def allocate_ids(model, n: int) -> array | None:
    """n fresh primary keys for `model` on PostgreSQL, as an array of 64-bit integers (None elsewhere: let the
    database assign them)."""
    if not _is_postgres() or n == 0:
        return None
    table = model._meta.db_table
    ids = array("q")
    with connection.cursor() as cursor:
        # Look the sequence up once: inside the generate_series query pg_get_serial_sequence() ran once per
        # row (3.5 s instead of 0.6 s for a million ids).
        cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
        sequence = cursor.fetchone()[0]
        cursor.execute("SELECT nextval(%s::regclass) FROM generate_series(1, %s)", [sequence, n])
        while rows := cursor.fetchmany(ID_BATCH):
            ids.extend(row[0] for row in rows)
    return ids


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


def _missing_defaults(model, given: set[str]) -> list[tuple[models.Field, object]]:
    """What each concrete field outside `given` takes when a row is saved without it: its default (a callable
    default is returned as such, to be called per row), the time for auto_now(_add), and the empty value
    otherwise ("" for a text, None for a nullable column)."""
    now = timezone.now()
    values = []
    for f in model._meta.concrete_fields:
        if f.primary_key or f.attname in given:
            continue
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
            values.append((f, now))
        elif f.has_default() and callable(f.default):
            values.append((f, f.get_default))
        else:
            values.append((f, f.get_default()))
    return values


def _with_defaults(rows: Iterable[Sequence], defaults: list[tuple[models.Field, object]]) -> Iterator[tuple]:
    fixed = tuple(value for _, value in defaults)
    if not any(callable(value) for value in fixed):
        return ((*row, *fixed) for row in rows)
    return ((*row, *(value() if callable(value) else value for value in fixed)) for row in rows)


def insert(model, columns: Sequence[str], rows: Iterable[Sequence], *, count: int | None = None,
           batch_size: int = 5000, return_ids: bool = True) -> array | list[int]:
    """Insert rows of plain values (one per field name in `columns`); returns the new primary keys in order.

    `rows` may be a generator (then `count` says how many it yields), so that large imports stream their rows
    from where they are read to the database without holding them: COPY on PostgreSQL (ids drawn from the
    sequence first, or left to the column's default when `return_ids` is false), bulk_create `batch_size` rows
    at a time elsewhere. Fields not in `columns` take what Django would give them (their default, the time for
    auto_now_add, "" or None) on both paths: Django keeps defaults in Python, not in the database, so COPY
    has to send them.
    """
    if count is None:
        rows = rows if isinstance(rows, list) else list(rows)
        count = len(rows)
    if not count:
        return array("q")
    fields = [model._meta.get_field(c) for c in columns]
    if not _is_postgres():
        return _insert_in_batches(model, fields, rows, batch_size)
    defaults = _missing_defaults(model, {f.attname for f in fields})
    fields = [*fields, *(f for f, _ in defaults)]
    # None is SQL NULL, as Django stores it (a JSON null would make `IS NULL` differ between the two paths)
    encoders = [(lambda v: None if v is None else json.dumps(v)) if isinstance(f, models.JSONField) else None
                for f in fields]
    encoded = ([enc(v) if enc else v for enc, v in zip(encoders, row, strict=True)]
               for row in _with_defaults(rows, defaults))
    columns = [f.column for f in fields]
    if not return_ids:
        copy_rows(model, columns, _counted(encoded, count))
        return array("q")
    ids = allocate_ids(model, count)
    copy_rows(model, ["id", *columns], ([pk, *row] for pk, row in zip(ids, encoded, strict=True)))
    return ids


def _counted(rows: Iterable, count: int) -> Iterator:
    n = 0
    for n, row in enumerate(rows, start=1):  # noqa: B007
        yield row
    if n != count:
        raise ValueError(f"expected {count} rows, got {n}")


def _insert_in_batches(model, fields, rows: Iterable[Sequence], batch_size: int) -> array:
    names = [f.attname for f in fields]
    ids = array("q")
    rows = iter(rows)
    while batch := list(islice(rows, batch_size)):
        objects = [model(**dict(zip(names, row, strict=True))) for row in batch]
        model.objects.bulk_create(objects)
        ids.extend(obj.pk for obj in objects)
    return ids
