"""The judgment export as Parquet (docs/api.md §6.4, `?format=parquet`), for campaigns too large for CSV: the same
rows and columns as the CSV export, written with pyarrow in row groups of `GROUP_ROWS` into a spooled temporary file
(never the whole campaign in memory) and then streamed. Typed columns: `hit`, `position`, `seg_id`, `tutorial_tries`
int64; `score`, `z`, `seconds` float64; `tutorial_passed` bool; every other column text, lists and objects (ranks,
spans, answers) as JSON text, as in the CSV."""
from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

GROUP_ROWS = 10_000
READ_BYTES = 1 << 20
#: Spooled in memory up to this size, then on disk.
IN_MEMORY = 32 << 20
TYPES = {"hit": pa.int64(), "position": pa.int64(), "seg_id": pa.int64(), "score": pa.float64(), "z": pa.float64(),
         "seconds": pa.float64(), "tutorial_tries": pa.int64(), "tutorial_passed": pa.bool_()}
CONTENT_TYPE = "application/vnd.apache.parquet"


def schema_for(columns: list[str]) -> pa.Schema:
    return pa.schema([pa.field(name, TYPES.get(name, pa.string())) for name in columns])


def _text(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _batch(rows: list[dict], schema: pa.Schema) -> pa.RecordBatch:
    arrays = []
    for field in schema:
        values = [row.get(field.name) for row in rows]
        if field.type == pa.string():
            values = [_text(v) for v in values]
        arrays.append(pa.array(values, type=field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def as_parquet(rows: Iterable[dict], columns: list[str]) -> Iterator[bytes]:
    """The export rows as one Parquet file, in chunks of bytes."""
    schema = schema_for(columns)
    with tempfile.SpooledTemporaryFile(max_size=IN_MEMORY) as spool:
        with pq.ParquetWriter(spool, schema, compression="zstd") as writer:
            chunk: list[dict] = []
            for row in rows:
                chunk.append(row)
                if len(chunk) == GROUP_ROWS:
                    writer.write_batch(_batch(chunk, schema))
                    chunk = []
            if chunk:
                writer.write_batch(_batch(chunk, schema))
        spool.seek(0)
        while block := spool.read(READ_BYTES):
            yield block
