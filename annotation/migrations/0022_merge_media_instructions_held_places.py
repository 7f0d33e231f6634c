# Joins the media (0020_media, 0021_judgment_media), instructions and held-places branches of issues 26 and 22.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0020_hit_held_places'),
        ('annotation', '0021_judgment_media'),
        ('annotation', '0021_merge_0020_instructions_0020_media'),
    ]

    operations = [
    ]
