"""A study's name is unique per owner (0015 split the studies that held several owners' campaigns)."""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0015_study_owner_scoped_names"),
    ]

    operations = [
        migrations.AddConstraint(
            model_name="study",
            constraint=models.UniqueConstraint(fields=("owner", "name"), name="study_name_unique_per_owner"),
        ),
    ]
