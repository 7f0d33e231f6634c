"""Native languages stored as free text become BCP 47 codes where the text is a code or a common English name
("English" -> en, "British English" -> en-GB); other text is left as it is and matched as text (docs/api.md
§8.1)."""
from django.db import migrations, models

from annotation.languages import to_code


def to_codes(apps, schema_editor):
    for model, field in (("Campaign", "required_native_language"), ("Annotator", "native_language")):
        rows = apps.get_model("annotation", model).objects.exclude(**{field: ""})
        for row in rows.only("pk", field).iterator():
            code = to_code(getattr(row, field))
            if code is not None and code != getattr(row, field):
                type(row).objects.filter(pk=row.pk).update(**{field: code})


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0018_campaign_entry_limits'),
    ]

    operations = [
        migrations.AlterField(
            model_name='campaign',
            name='required_native_language',
            field=models.CharField(blank=True, help_text='Only workers who declare this native language may work: a BCP 47 code; en accepts en-GB, pt-BR accepts pt-BR only (docs/api.md §8.1).', max_length=64),
        ),
        migrations.RunPython(to_codes, migrations.RunPython.noop),
    ]
