"""The SQL behind the annotator's state machine (judging.py), composed once and reused.

Each annotator request is a handful of fixed statements, and on this hot path Django's ORM
spent more CPU composing SQL and building model instances than the database spent running
it (benchmarks/README.md, "annotate.py"). So the statements are composed here once, from
the models' own field lists (they follow the schema), and rows come back as ordinary model
instances, with the same database converters the ORM applies, built as `Model.from_db` would
(directly, while no custom `from_db`/`__init__` or init signal receiver asks for more). On
PostgreSQL each statement is also prepared once per connection: planning the six-table read
took several times the CPU of running it. (SQL-level PREPARE needs each web process to keep
its own server connection, CONN_MAX_AGE > 0, and no transaction-pooling PgBouncer between.)

- `read(token, span)`: one SELECT for the assignment, its HIT and campaign, and the items at its
  current position and the `span` after it (0 for a GET, 1 for one answer, k for a batch of k) with their
  segments (and their documents) and outputs, and what their screens read beyond them
  (annotation/building/screen_context.py: the rows each protocol's `screen_reads` names, as JSON, only for
  the protocols that declare them; composed in judging_screen_sql.py). Columns no annotator request reads are
  left out (`_NOT_READ`). No lock is taken.
- `record(...)`: stores the judgments (one, or a batch's) and moves the assignment on, all or nothing, and only if
  the assignment is still active at the position that was read (optimistic concurrency: a
  parallel request for the same assignment either finds it moved on or waits for the row
  and then finds it moved on; this relies on READ COMMITTED, Django's default, where the
  waiting UPDATE re-checks its WHERE on the row as committed) and its campaign is still
  active (a pause or close committed after the read stores nothing: the same UPDATE checks
  the campaign row, no statement is added). On PostgreSQL this is one statement (the UPDATE
  in a CTE feeds the INSERT); elsewhere two statements in one transaction.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, connections, transaction
from django.db.models import Model, signals
from django.db.models.base import ModelState

from ..building import screen_context
from ..building.screen_context import ScreenContext
from ..models import Assignment, Campaign, Document, Hit, HitItem, Judgment, Segment, SystemOutput
from ..protocols import all_protocols, derived
from . import judging_screen_sql as screen_sql

INVALID_SQL_STATEMENT_NAME = "26000"  # PostgreSQL's SQLSTATE for an unknown prepared statement
READS_SEPARATOR = ","  # between the "<protocol>:<entry>" names of the read's one text parameter


def _quote(name: str) -> str:
    return connection.ops.quote_name(name)


class _Columns:
    """The concrete columns of `model` under a table alias, in field order, but those in `not_read`, and the
    instances built back from a row's slice of them (a field not read is loaded by Django when first asked for)."""

    def __init__(self, model, alias: str, not_read: tuple[str, ...] = ()):
        self.model = model
        self.alias = alias
        unknown = set(not_read) - {f.attname for f in model._meta.concrete_fields}
        if unknown:
            raise ValueError(f"{model.__name__} has no column {sorted(unknown)}")
        self.fields = [f for f in model._meta.concrete_fields if f.attname not in not_read]
        self.attnames = [f.attname for f in self.fields]
        self._converters: dict[str, list] = {}
        self._is_plain: bool | None = None

    def __len__(self) -> int:
        return len(self.fields)

    def select_list(self) -> str:
        return ", ".join(f"{self.alias}.{_quote(f.column)}" for f in self.fields)

    def _converters_for(self, db) -> list:
        """(column index, converter, expression) for each converter the ORM's compiler would apply."""
        if db.vendor not in self._converters:
            found = []
            for i, f in enumerate(self.fields):
                col = f.get_col(self.alias)
                found += [(i, converter, col)
                          for converter in db.ops.get_db_converters(col) + col.get_db_converters(db)]
            self._converters[db.vendor] = found
        return self._converters[db.vendor]

    def build(self, db, row, start: int):
        """The instance held in row[start:start + len(self)]; None when its primary key is NULL (outer join)."""
        values = list(row[start:start + len(self.fields)])
        if values[0] is None:
            return None
        for i, converter, col in self._converters_for(db):
            if values[i] is not None:
                values[i] = converter(values[i], col, db)
        if not self._plain():
            return self.model.from_db(DEFAULT_DB_ALIAS, self.attnames, values)
        # What from_db makes of the row, without Model.__init__'s per-field work (a fifth of the read's CPU).
        instance = self.model.__new__(self.model)
        instance.__dict__.update(zip(self.attnames, values, strict=True))
        instance._state = state = ModelState()
        state.adding, state.db = False, DEFAULT_DB_ALIAS
        return instance

    def _plain(self) -> bool:
        """True when nothing hooks into building this model (no custom from_db or __init__, no pre_init or
        post_init receivers): then setting the attributes read is all that from_db would do (it leaves a field not
        read unset, deferred, as here)."""
        if self._is_plain is None:
            model = self.model
            self._is_plain = (model.from_db.__func__ is Model.from_db.__func__ and model.__init__ is Model.__init__
                              and not signals.pre_init.has_listeners(model)
                              and not signals.post_init.has_listeners(model))
        return self._is_plain


#: Columns no annotator request reads, left out of the read: psycopg2 spends about 1 µs of CPU per column of a
#: result just describing it, and more decoding each value (benchmarks/README.md, "Session 12"). What the screen,
#: the checks, the write and the done state read stays; a column left out here that some code does read costs a
#: query of its own (Django's deferred loading), which tests/test_annotator_statements.py counts.
_NOT_READ = {
    Assignment: ("entry_ip", "browser_key"),
    Hit: ("number", "external_id", "exposure", "batch", "held"),
    Campaign: ("name", "slug", "analysis_only", "instructions", "seed", "redundancy", "qc_test", "qc_threshold",
               "hit_timeout_minutes", "payment_per_hit", "require_qualification", "owner_id", "require_signed_entry",
               "entry_limits", "entry_secret", "study_id", "created_at"),
}
_ASSIGNMENT = _Columns(Assignment, "a", _NOT_READ[Assignment])
_HIT = _Columns(Hit, "h", _NOT_READ[Hit])
_CAMPAIGN = _Columns(Campaign, "c", _NOT_READ[Campaign])
_ITEM = _Columns(HitItem, "i")
_SEGMENT = _Columns(Segment, "s")
_DOCUMENT = _Columns(Document, "d")  # the segment's document: its media come with the item (building/media_payload.py)
_OUTPUT = _Columns(SystemOutput, "o")
_READ_PARTS = (_ASSIGNMENT, _HIT, _CAMPAIGN, _ITEM, _SEGMENT, _DOCUMENT, _OUTPUT)


@dataclass
class Snapshot:
    """An assignment as one read found it: `assignment.hit` and `assignment.campaign` are loaded, and
    `items` holds the items at the positions read (those that exist), each with its HIT (and the
    HIT's campaign), segment (with its document) and output loaded."""

    assignment: Assignment
    items: dict[int, HitItem] = field(default_factory=dict)


def _prepared_names(db) -> set[str]:
    """The statements prepared on `db`'s current connection to the server (a new connection starts empty)."""
    raw = db.connection
    state = getattr(db, "_judging_prepared", None)
    if state is None or state[0] is not raw:
        state = (raw, set())
        db._judging_prepared = state
    return state[1]


class _Statement:
    """One statement of the hot path. `compose()` gives its SQL (with %s placeholders) and the
    database types of its parameters; it runs on first use, since quoting needs a connection."""

    def __init__(self, name: str, compose):
        self.name = f"judging_{name}"
        self._compose = compose
        self._sql: str | None = None
        self._types: list[str] = []

    @property
    def sql(self) -> str:
        if self._sql is None:
            self._sql, self._types = self._compose()
        return self._sql

    def execute(self, db, cursor, params: list) -> None:
        # Preparing pays off only on a connection that outlives the request (CONN_MAX_AGE > 0).
        if db.vendor != "postgresql" or not db.settings_dict.get("CONN_MAX_AGE"):
            cursor.execute(self.sql, params)
            return
        prepared = _prepared_names(db)
        if self.name not in prepared:
            self._prepare(cursor)
            prepared.add(self.name)
        execute = f"EXECUTE {self.name} ({', '.join(['%s'] * len(params))})"
        try:
            cursor.execute(execute, params)
        except DatabaseError as exc:
            # The server forgot it (DISCARD ALL or DEALLOCATE by a pooler, say) while the connection lived on:
            # prepare again, once, where the failed statement has not aborted an enclosing transaction.
            if getattr(exc.__cause__, "pgcode", None) != INVALID_SQL_STATEMENT_NAME or db.in_atomic_block:
                raise
            self._prepare(cursor)
            cursor.execute(execute, params)

    def _prepare(self, cursor) -> None:
        parts = self.sql.split("%s")
        numbered = parts[0] + "".join(f"${n}{part}" for n, part in enumerate(parts[1:], start=1))
        cursor.execute(f"PREPARE {self.name} ({', '.join(self._types)}) AS {numbered}")


def _types(fields) -> list[str]:
    return [f.cast_db_type(connection) for f in fields]


def _compose_read() -> tuple[str, list[str]]:
    table = {part.alias: _quote(part.model._meta.db_table) for part in _READ_PARTS}
    position = _quote("position")
    reads = f"string_to_array(CAST(%s AS text), '{READS_SEPARATOR}')" if connection.vendor == "postgresql" else "%s"
    context = ", ".join(screen_sql.context_columns(table))  # what the screens read beyond their items
    sql = (
        f"SELECT {', '.join(part.select_list() for part in _READ_PARTS)}, {context} "
        f"FROM {table['a']} a "
        f"JOIN {table['h']} h ON h.id = a.hit_id "
        f"JOIN {table['c']} c ON c.id = a.campaign_id "
        f"CROSS JOIN (SELECT {reads} AS reads) p "
        f"LEFT JOIN {table['i']} i ON i.hit_id = a.hit_id AND i.{position} BETWEEN a.{position} AND a.{position} + %s "
        f"LEFT JOIN {table['s']} s ON s.id = i.segment_id "
        f"LEFT JOIN {table['d']} d ON d.id = s.document_id "
        f"LEFT JOIN {table['o']} o ON o.id = i.output_id "
        f"WHERE a.{_quote('token')} = %s"
    )
    return sql, ["text", "integer"] + _types([Assignment._meta.get_field("token")])


_READ = _Statement("read", _compose_read)
_READ_OFFSETS = [sum(len(part) for part in _READ_PARTS[:k]) for k in range(len(_READ_PARTS) + 1)]


def _screen_reads(vendor: str) -> str:
    """What each protocol's screen reads beyond its items, as "<protocol>:<entry>" (building/screen_context.py):
    one text, comma-separated on PostgreSQL (adapting a list of texts cost ~30 µs a request), JSON elsewhere."""
    reads = [f"{p.name}:{what}" for p in all_protocols() for what in sorted(p.screen_reads)]
    if vendor != "postgresql":
        return json.dumps(reads)
    if any(READS_SEPARATOR in read for read in reads):
        raise ValueError(f"a protocol or screen read name holds {READS_SEPARATOR!r}: {reads}")
    return READS_SEPARATOR.join(reads)


def _context_param(db) -> str:
    """The read's one parameter, computed once per registry (protocols.derived), not on every request."""
    return derived(f"judging_sql.screen_reads.{db.vendor}", lambda: _screen_reads(db.vendor))


def _context(row, start: int) -> ScreenContext | None:
    values = [json.loads(v) if isinstance(v, str) else v for v in row[start:start + len(screen_context.READS)]]
    return ScreenContext(*values) if any(v is not None for v in values) else None


def read(token: str, span: int = 1) -> Snapshot | None:
    """The assignment with this token, its HIT, campaign and the `span` items from its current one on and the one
    after them (a POST of `span` answers: docs/api.md §8.3; a GET's span is 0, its current item alone); None if
    unknown."""
    db = connections[DEFAULT_DB_ALIAS]
    with db.cursor() as cursor:
        _READ.execute(db, cursor, [_context_param(db), span, token])
        rows = cursor.fetchall()
    if not rows:
        return None
    a_at, h_at, c_at, i_at, s_at, d_at, o_at, context_at = _READ_OFFSETS
    assignment = _ASSIGNMENT.build(db, rows[0], a_at)
    hit, campaign = _HIT.build(db, rows[0], h_at), _CAMPAIGN.build(db, rows[0], c_at)
    Hit.campaign.field.set_cached_value(hit, campaign)
    Assignment.hit.field.set_cached_value(assignment, hit)
    Assignment.campaign.field.set_cached_value(assignment, campaign)
    snapshot = Snapshot(assignment)
    for row in rows:
        item = _ITEM.build(db, row, i_at)
        if item is None:
            continue
        HitItem.hit.field.set_cached_value(item, hit)  # protocols read item.hit.campaign without a query
        segment = _SEGMENT.build(db, row, s_at)
        if segment is not None:  # its document too, for the media the screen shows
            Segment.document.field.set_cached_value(segment, _DOCUMENT.build(db, row, d_at))
        HitItem.segment.field.set_cached_value(item, segment)
        HitItem.output.field.set_cached_value(item, _OUTPUT.build(db, row, o_at))
        context = _context(row, context_at)
        if context is not None:  # what the item's screen reads beyond it (building/screen_context.py)
            item.screen_context = context
        snapshot.items[item.position] = item
    return snapshot


#: What `record` sets on the assignment, without and with completing it.
_ADVANCE = ("position", "last_item_id", "item_served_at", "last_activity_at")
_COMPLETE = _ADVANCE + ("status", "completed_at", "completion_code")
_GUARD = ("id", "position", "status")
_JUDGMENT_FIELDS = [f for f in Judgment._meta.concrete_fields if not f.primary_key]
_JUDGMENT_NAMES = tuple(f.name for f in _JUDGMENT_FIELDS)
_STAMPED = {f.attname for f in _JUDGMENT_FIELDS if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)}
#: Fields whose Django prep (get_db_prep_save) gives PostgreSQL back the int, float, text or aware datetime the hot
#: path sets, unchanged (psycopg2 adapts those itself): their values go to the cursor as they are, which saves a
#: request the prep's calls (~10 µs). JSON goes through Django's prep. tests/test_judging_sql.py compares the two.
AS_THEY_ARE = frozenset({"AutoField", "BigAutoField", "ForeignKey", "IntegerField", "BigIntegerField",
                         "SmallIntegerField", "PositiveIntegerField", "PositiveSmallIntegerField",
                         "PositiveBigIntegerField", "FloatField", "CharField", "TextField", "DateTimeField"})
_PARAM_FIELDS: dict[tuple, list] = {}


def _param_fields(db, model, names: tuple[str, ...]) -> list:
    """For each of `model`'s fields `names`, None where its value goes to the cursor as it is (AS_THEY_ARE, on
    PostgreSQL), else the field, whose get_db_prep_save makes the parameter."""
    key = (db.vendor, model, names)
    if key not in _PARAM_FIELDS:
        fields = [model._meta.get_field(name) for name in names]
        _PARAM_FIELDS[key] = [None if db.vendor == "postgresql" and f.get_internal_type() in AS_THEY_ARE else f
                          for f in fields]
    return _PARAM_FIELDS[key]


def _judgment_values(judgment: Judgment) -> list:
    """The judgment's values in _JUDGMENT_FIELDS order, the creation time stamped as a save would (pre_save)."""
    return [f.pre_save(judgment, True) if f.attname in _STAMPED else getattr(judgment, f.attname)
            for f in _JUDGMENT_FIELDS]


def _compose_update(names: tuple[str, ...]) -> tuple[str, list[str]]:
    """Set `names` on the assignment if it is still active at the position read and its campaign is still
    active (the guard)."""
    fields = [Assignment._meta.get_field(name) for name in names]
    guard = [Assignment._meta.get_field(name) for name in _GUARD]
    assignments, campaigns = _quote(Assignment._meta.db_table), _quote(Campaign._meta.db_table)
    campaign_status = Campaign._meta.get_field("status")
    open_campaign = (f"EXISTS (SELECT 1 FROM {campaigns} WHERE {campaigns}.{_quote('id')} = "
                     f"{assignments}.{_quote(Assignment._meta.get_field('campaign').column)} AND "
                     f"{campaigns}.{_quote(campaign_status.column)} = %s)")
    sql = (f"UPDATE {assignments} "
           f"SET {', '.join(f'{_quote(f.column)} = %s' for f in fields)} "
           f"WHERE {' AND '.join(f'{_quote(f.column)} = %s' for f in guard)} AND {open_campaign}")
    return sql, _types(fields + guard + [campaign_status])


def _compose_insert(rows: int = 1) -> tuple[str, list[str]]:
    row = ", ".join(["%s"] * len(_JUDGMENT_FIELDS))
    columns = ", ".join(_quote(f.column) for f in _JUDGMENT_FIELDS)
    return (f"INSERT INTO {_quote(Judgment._meta.db_table)} ({columns}) VALUES {', '.join([f'({row})'] * rows)}",
            _types(_JUDGMENT_FIELDS) * rows)


def _compose_record(names: tuple[str, ...], rows: int) -> tuple[str, list[str]]:
    """PostgreSQL: the guarded UPDATE feeds the INSERT of `rows` judgments, so all happen or none, in one
    statement. Each value is cast to its column's type: a VALUES list in FROM takes no type from the INSERT."""
    update, update_types = _compose_update(names)
    insert, insert_types = _compose_insert()
    into = insert.split(" VALUES ")[0]
    if rows == 1:
        values = ", ".join(["%s"] * len(_JUDGMENT_FIELDS))
        sql = f"WITH advanced AS ({update} RETURNING 1) {into} SELECT {values} FROM advanced"
        return sql, update_types + insert_types
    row = ", ".join(f"CAST(%s AS {db_type})" for db_type in insert_types)
    values = ", ".join([f"({row})"] * rows)
    return (f"WITH advanced AS ({update} RETURNING 1) {into} SELECT v.* FROM advanced, (VALUES {values}) v",
            update_types + insert_types * rows)


_STEPS = {_ADVANCE: "advance", _COMPLETE: "complete"}
_RECORD: dict[tuple[tuple[str, ...], int], _Statement] = {}  # (names, rows): made on first use
_UPDATE = {names: _Statement(f"update_{step}", lambda names=names: _compose_update(names))
           for names, step in _STEPS.items()}
_INSERT: dict[int, _Statement] = {}


def _record_statement(names: tuple[str, ...], rows: int) -> _Statement:
    key = (names, rows)
    if key not in _RECORD:
        _RECORD[key] = _Statement(f"record_{_STEPS[names]}{'' if rows == 1 else f'_{rows}'}",
                                  lambda: _compose_record(names, rows))
    return _RECORD[key]


def _insert_statement(rows: int) -> _Statement:
    return _INSERT.setdefault(rows, _Statement("insert" if rows == 1 else f"insert_{rows}",
                                               lambda: _compose_insert(rows)))


def record(assignment: Assignment, judgments: list[Judgment], expected_position: int) -> bool:
    """Store `judgments` (unsaved: one, or a batch's) and save `assignment`'s advanced fields, if the assignment
    is still active at `expected_position` in the database and its campaign still has the status read; True if stored.
    `assignment` carries the new values already (`position`, `last_item_id`, ...; also `status`, `completed_at`,
    `completion_code` when it completes). One statement on PostgreSQL, whatever the number of judgments."""
    db = connections[DEFAULT_DB_ALIAS]
    names = _COMPLETE if assignment.status == Assignment.Status.COMPLETED else _ADVANCE
    update_params = [value if field is None else field.get_db_prep_save(value, db) for field, value in zip(
        _param_fields(db, Assignment, names), [getattr(assignment, name) for name in names], strict=True)]
    # the campaign's status as read and let through (judging._check_open: active, or a draft for a trial's HIT)
    update_params += [assignment.pk, expected_position, Assignment.Status.ACTIVE, assignment.campaign.status]
    prepared = _param_fields(db, Judgment, _JUDGMENT_NAMES)
    insert_params = [value if field is None else field.get_db_prep_save(value, db) for judgment in judgments
                     for field, value in zip(prepared, _judgment_values(judgment), strict=True)]
    if db.vendor == "postgresql":
        with db.cursor() as cursor:
            _record_statement(names, len(judgments)).execute(db, cursor, update_params + insert_params)
            return cursor.rowcount == len(judgments)
    with transaction.atomic(), db.cursor() as cursor:
        _UPDATE[names].execute(db, cursor, update_params)
        if cursor.rowcount != 1:
            return False
        _insert_statement(len(judgments)).execute(db, cursor, insert_params)
        return True
