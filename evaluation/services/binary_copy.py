"""Reading a PostgreSQL query's result straight into numpy arrays through `COPY ... TO STDOUT (FORMAT binary)`.

For queries of hundreds of thousands of rows of fixed-width columns (int8, float8, bool), building a Python tuple
per row costs more than the query itself; the binary COPY format is a fixed layout per row when no column is NULL,
so numpy reads it in one pass (`np.frombuffer` with a structured dtype). The caller casts every column to its
declared type and COALESCEs NULLs away; a NULL or a width that differs is an error, never a misread.
"""
from __future__ import annotations

import io
import struct

import numpy as np
from django.db import connection, transaction

#: The SQL types a column may have, as (numpy big-endian type, native type).
TYPES = {"int8": (">i8", np.int64), "float8": (">f8", np.float64), "bool": ("?", np.bool_)}
_SIGNATURE = b"PGCOPY\n\xff\r\n\x00"


class CopyFormatError(RuntimeError):
    """The COPY output is not the fixed layout the columns declare (a NULL, another type)."""


def copy_arrays(sql: str, params: list, columns: list[tuple[str, str]], jit: bool = False) -> dict[str, np.ndarray]:
    """Run `sql` (a SELECT whose columns are, in order, `columns`: (name, "int8" | "float8" | "bool")) and return
    one native numpy array per column. `jit` off: PostgreSQL's JIT compiles such one-off queries for longer than it
    saves (set for this transaction only)."""
    buffer = io.BytesIO()
    with transaction.atomic(), connection.cursor() as cursor:
        if not jit:
            cursor.execute("SET LOCAL jit = off")
        query = cursor.mogrify(sql, params)
        query = query.decode() if isinstance(query, bytes) else query
        cursor.copy_expert(f"COPY ({query}) TO STDOUT WITH (FORMAT binary)", buffer)
    return parse(buffer.getvalue(), columns)


def parse(data: bytes, columns: list[tuple[str, str]]) -> dict[str, np.ndarray]:
    """The arrays in a binary COPY stream of rows of the given fixed-width columns."""
    if not data.startswith(_SIGNATURE) or len(data) < 21:
        raise CopyFormatError("not a binary COPY stream")
    (extension,) = struct.unpack(">i", data[15:19])
    start = 19 + extension
    fields = [("fields", ">i2")]
    for name, kind in columns:
        fields += [(f"{name}__width", ">i4"), (name, TYPES[kind][0])]
    row = np.dtype(fields)
    body = len(data) - start - 2
    if body % row.itemsize or data[-2:] != b"\xff\xff":
        raise CopyFormatError("the rows are not of the declared fixed widths (a NULL or another type?)")
    records = np.frombuffer(data, dtype=row, count=body // row.itemsize, offset=start)
    if records.size and (records["fields"] != len(columns)).any():
        raise CopyFormatError(f"expected {len(columns)} columns a row")
    arrays = {}
    for name, kind in columns:
        width = np.dtype(TYPES[kind][0]).itemsize
        if records.size and (records[f"{name}__width"] != width).any():
            raise CopyFormatError(f"column {name} is not {kind} in every row (a NULL?)")
        arrays[name] = records[name].astype(TYPES[kind][1])
    return arrays
