"""Studies are owned like campaigns (docs/api.md, "Studies"): a study's name is unique per owner, not globally,
and a study holding campaigns of several owners is split. Before, a campaign joined a study by its name alone, so
another researcher's import could land in (and change the pooled verdicts of) someone else's study.

Each owner of campaigns in a study who is neither the study's owner nor someone it is shared with (directly or
through a group) gets a study of their own with the same name, and their campaigns move there; ownerless
campaigns in an owned study (and owned ones in an ownerless study) likewise. The constraint comes in 0016, after
these rows are written (PostgreSQL alters no table with pending trigger events in the same transaction)."""
from django.conf import settings
from django.db import migrations, models
from django.utils.text import slugify


def _free_slug(Study, name: str) -> str:
    base = slugify(name)[:200] or "study"
    slug, n = base, 1
    while Study.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


def _may_join(study, owner_id, memberships) -> bool:
    """Whether campaigns of `owner_id` belong in `study` (annotation.studies.Study.members, the same rule)."""
    if owner_id == study.owner_id:
        return True
    if owner_id is None or study.owner_id is None:
        return False
    if study.shared_with.filter(pk=owner_id).exists():
        return True
    groups = study.shared_with_groups.values_list("pk", flat=True)
    return memberships.filter(user_id=owner_id, group_id__in=list(groups)).exists()


def split_mixed_owner_studies(apps, schema_editor=None) -> dict[int, list[int]]:
    """Move every campaign whose owner may not join its study into a study of its owner's with the same name.
    Returns {original study pk: [new study pks]} (for the tests and the record)."""
    Study = apps.get_model("annotation", "Study")
    Campaign = apps.get_model("annotation", "Campaign")
    User = apps.get_model(settings.AUTH_USER_MODEL)
    memberships = User.groups.through.objects
    split: dict[int, list[int]] = {}
    for study in Study.objects.order_by("pk"):
        owners = sorted(set(Campaign.objects.filter(study_id=study.pk).values_list("owner_id", flat=True)),
                        key=lambda pk: (pk is None, pk or 0))
        for owner_id in owners:
            if _may_join(study, owner_id, memberships):
                continue
            own = Study.objects.create(name=study.name, slug=_free_slug(Study, study.name), owner_id=owner_id)
            theirs = Campaign.objects.filter(study_id=study.pk)
            theirs = theirs.filter(owner__isnull=True) if owner_id is None else theirs.filter(owner_id=owner_id)
            theirs.update(study_id=own.pk)
            split.setdefault(study.pk, []).append(own.pk)
    return split


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0014_hit_batch"),
        ("auth", "0012_alter_user_first_name_max_length"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(model_name="study", name="name", field=models.CharField(max_length=200)),
        migrations.RunPython(split_mixed_owner_studies, migrations.RunPython.noop),
    ]
