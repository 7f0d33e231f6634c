"""The columns of judging_sql.read that bring what an item's screen reads beyond it (building/screen_context.py,
the rows each protocol's `screen_reads` names), as JSON: one correlated subquery per entry, run only for the
protocols that declare it (the read's one parameter names them). Apart from judging_sql.py, whose read joins them
to the item's own row: what each entry reads is its own concern."""
from __future__ import annotations

from django.db import connection

from ..building import screen_context
from ..models import Segment, System, SystemOutput


def context_columns(table: dict) -> list[str]:
    """One column per `screen_context.READS` entry: its rows as a JSON array, or NULL unless "<the campaign's
    protocol>:<entry>" is in `p.reads` (the one parameter: what each protocol's screen reads)."""
    q = connection.ops.quote_name
    postgres = connection.vendor == "postgresql"
    segments, outputs, items = q(Segment._meta.db_table), q(SystemOutput._meta.db_table), table["i"]
    systems = q(System._meta.db_table)

    def rows(values: list[str], source: str, order: str) -> str:
        """The rows as a JSON array of arrays; a value named `json:<column>` is a JSON column, kept as JSON."""
        columns = [v.removeprefix("json:") for v in values]
        if postgres:
            return (f"COALESCE((SELECT json_agg(json_build_array({', '.join(columns)}) ORDER BY {order}) {source}), "
                    "'[]'::json)")
        # SQLite: a JSON text stays JSON only when json() wraps it where json_array() reads it.
        outer = [f"json(x.c{k})" if v.startswith("json:") else f"x.c{k}" for k, v in enumerate(values)]
        return (f"(SELECT json_group_array(json_array({', '.join(outer)})) FROM "
                f"(SELECT {', '.join(f'{c} AS c{k}' for k, c in enumerate(columns))} {source} ORDER BY {order}) x)")

    def json_value(column: str) -> str:
        return f"json:{column}"

    def unit(key: str) -> str:
        """The integer `key` of the item's payload (NULL when absent)."""
        if postgres:
            return f"CAST(i.{q('payload')} ->> '{key}' AS integer)"
        return f"CAST(json_extract(i.{q('payload')}, '$.{key}') AS integer)"

    reads = {
        screen_context.SEGMENT_OUTPUTS: rows(
            [f"o2.{q('system_id')}", f"o2.{q('text')}"],
            f"FROM {outputs} o2 WHERE o2.{q('segment_id')} = i.{q('segment_id')}", f"o2.{q('system_id')}"),
        screen_context.DOCUMENT_SEGMENTS: rows(
            [f"s2.{q('id')}", f"s2.{q('source')}", f"s2.{q('reference')}"],
            f"FROM {segments} s2 WHERE s2.{q('document_id')} = s.{q('document_id')}", f"s2.{q('seg_id')}"),
        screen_context.DOCUMENT_OUTPUTS: rows(
            [f"o2.{q('segment_id')}", f"o2.{q('system_id')}", f"o2.{q('text')}", json_value(f"o2.{q('spans')}"),
             f"o2.{q('id')}", f"y2.{q('name')}"],
            f"FROM {outputs} o2 JOIN {segments} s2 ON s2.{q('id')} = o2.{q('segment_id')} "
            f"JOIN {systems} y2 ON y2.{q('id')} = o2.{q('system_id')} "
            f"WHERE s2.{q('document_id')} = s.{q('document_id')}", f"o2.{q('system_id')}, o2.{q('segment_id')}"),
        screen_context.DOCUMENT_SYSTEM_OUTPUTS: rows(
            [f"o2.{q('segment_id')}", f"o2.{q('id')}", f"o2.{q('text')}"],
            f"FROM {outputs} o2 JOIN {segments} s2 ON s2.{q('id')} = o2.{q('segment_id')} "
            f"WHERE s2.{q('document_id')} = s.{q('document_id')} AND o2.{q('system_id')} = o.{q('system_id')}",
            f"s2.{q('seg_id')}"),
        screen_context.UNIT_ITEMS: rows(
            [f"i2.{q('id')}", f"i2.{q('text')}", f"i2.{q('output_id')}", f"o2.{q('text')}", f"s2.{q('reference')}",
             f"s2.{q('source')}"],
            f"FROM {items} i2 LEFT JOIN {outputs} o2 ON o2.{q('id')} = i2.{q('output_id')} "
            f"LEFT JOIN {segments} s2 ON s2.{q('id')} = i2.{q('segment_id')} "
            f"WHERE i2.{q('hit_id')} = i.{q('hit_id')} AND i2.{q('position')} >= {unit('first')} "
            f"AND i2.{q('position')} <= {unit('first')} + {unit('count')}", f"i2.{q('position')}"),
        screen_context.OTHER_ITEMS: rows(
            [f"i2.{q('text')}", json_value(f"i2.{q('payload')}")],
            f"FROM {items} i2 WHERE i2.{q('hit_id')} = i.{q('hit_id')} AND i2.{q('id')} <> i.{q('id')}",
            f"i2.{q('position')}"),
    }
    wanted = "c.{} || ':{}' = ANY(p.reads)" if postgres else "c.{} || ':{}' IN (SELECT value FROM json_each(p.reads))"
    only_if = {screen_context.UNIT_ITEMS: f" AND {unit('first')} IS NOT NULL"}  # an item of a unit
    return [f"CASE WHEN {wanted.format(q('protocol'), name)}{only_if.get(name, '')} THEN {reads[name]} END"
            for name in screen_context.READS]
