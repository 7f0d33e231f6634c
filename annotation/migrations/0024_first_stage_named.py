"""A task's first stage carries a stage name (services/stages.py `FIRST_STAGE`), which `task_campaign_ids` reads to
find its later stages: an error-span campaign with a review stage was created without one, so its task's progress,
"over N judgments" and freshness counted the first stage only."""
from django.db import migrations


def name_first_stages(apps, schema_editor):
    Campaign = apps.get_model("annotation", "Campaign")
    feeding = Campaign.objects.filter(stage_input__isnull=False).values("stage_input_id")
    Campaign.objects.filter(stage_input__isnull=True, stage_name="", pk__in=feeding).update(stage_name="annotate")


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0023_merge_tutorial_tries"),
    ]

    operations = [
        migrations.RunPython(name_first_stages, migrations.RunPython.noop),
    ]
