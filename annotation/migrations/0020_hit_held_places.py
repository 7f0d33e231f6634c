"""Each HIT's held places (its active or completed assignments) as a column, `Hit.held`, kept by database triggers
on the assignment table, whoever writes it (the hand-out, judging, imports' COPY, the admin): the hand-out then
walks the index (campaign, held, number) to the first free HIT instead of counting every live assignment of the
campaign at each hand-out (issue 22). The open-assignment index finds the places idle past the timeout."""
from django.db import migrations, models

HELD = "('active', 'completed')"

POSTGRES = [f"""
CREATE FUNCTION annotation_hit_held() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.status IN {HELD} THEN
    IF TG_OP = 'DELETE' OR NEW.status NOT IN {HELD} OR NEW.hit_id <> OLD.hit_id THEN
      UPDATE annotation_hit SET held = held - 1 WHERE id = OLD.hit_id;
    END IF;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.status IN {HELD} THEN
    IF TG_OP = 'INSERT' OR OLD.status NOT IN {HELD} OR NEW.hit_id <> OLD.hit_id THEN
      UPDATE annotation_hit SET held = held + 1 WHERE id = NEW.hit_id;
    END IF;
  END IF;
  RETURN NULL;
END $$""",
            "CREATE TRIGGER annotation_hit_held AFTER INSERT OR DELETE OR UPDATE OF status, hit_id "
            "ON annotation_assignment FOR EACH ROW EXECUTE FUNCTION annotation_hit_held()"]
POSTGRES_DROP = ["DROP TRIGGER IF EXISTS annotation_hit_held ON annotation_assignment",
                 "DROP FUNCTION IF EXISTS annotation_hit_held()"]

SQLITE = [
    f"""CREATE TRIGGER annotation_hit_held_insert AFTER INSERT ON annotation_assignment
WHEN NEW.status IN {HELD}
BEGIN UPDATE annotation_hit SET held = held + 1 WHERE id = NEW.hit_id; END""",
    f"""CREATE TRIGGER annotation_hit_held_delete AFTER DELETE ON annotation_assignment
WHEN OLD.status IN {HELD}
BEGIN UPDATE annotation_hit SET held = held - 1 WHERE id = OLD.hit_id; END""",
    f"""CREATE TRIGGER annotation_hit_held_update AFTER UPDATE OF status, hit_id ON annotation_assignment
WHEN (OLD.status IN {HELD}) <> (NEW.status IN {HELD}) OR OLD.hit_id <> NEW.hit_id
BEGIN
  UPDATE annotation_hit SET held = held - 1 WHERE id = OLD.hit_id AND OLD.status IN {HELD};
  UPDATE annotation_hit SET held = held + 1 WHERE id = NEW.hit_id AND NEW.status IN {HELD};
END"""]
SQLITE_DROP = ["DROP TRIGGER IF EXISTS annotation_hit_held_insert", "DROP TRIGGER IF EXISTS annotation_hit_held_delete",
               "DROP TRIGGER IF EXISTS annotation_hit_held_update"]

BACKFILL = (f"UPDATE annotation_hit SET held = (SELECT COUNT(*) FROM annotation_assignment a "
            f"WHERE a.hit_id = annotation_hit.id AND a.status IN {HELD})")


def _run(statements, schema_editor):
    for statement in statements:
        schema_editor.execute(statement)


def create_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor not in ("postgresql", "sqlite"):
        raise RuntimeError(f"Hit.held needs triggers written for {vendor}")
    _run(POSTGRES if vendor == "postgresql" else SQLITE, schema_editor)
    schema_editor.execute(BACKFILL)


def drop_triggers(apps, schema_editor):
    _run(POSTGRES_DROP if schema_editor.connection.vendor == "postgresql" else SQLITE_DROP, schema_editor)


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0019_language_codes"),
    ]

    operations = [
        migrations.AddField(
            model_name="hit",
            name="held",
            field=models.PositiveIntegerField(db_default=0, default=0, editable=False, help_text=(
                "Assignments of this HIT that are active or completed, kept by database triggers on the assignment "
                "table (migration 0020): the hand-out walks (campaign, held, number) to the first free HIT instead "
                "of counting every assignment of the campaign.")),
        ),
        migrations.AddIndex(
            model_name="assignment",
            index=models.Index(condition=models.Q(("status", "active")), fields=["campaign", "last_activity_at"],
                               name="assignment_open_idx"),
        ),
        migrations.AddIndex(
            model_name="hit",
            index=models.Index(fields=["campaign", "held", "number"], name="hit_free_places_idx"),
        ),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
