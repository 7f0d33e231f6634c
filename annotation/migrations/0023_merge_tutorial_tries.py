# Joins the tutorial tries of issue 27 (0020_tutorial_tries) to the media, instructions and held-places merge.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0020_tutorial_tries'),
        ('annotation', '0022_merge_media_instructions_held_places'),
    ]

    operations = [
    ]
