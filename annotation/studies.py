"""Studies: groups of campaigns judged by one crowd, owned and shared like campaigns (docs/api.md, "Studies").

A model of the annotation app (imported into annotation.models), kept here with the one owner-aware way a study
name becomes a study (`Study.resolve`) and the campaigns a study pools (`Study.members`)."""
from django.conf import settings
from django.contrib.auth.models import Group
from django.db import IntegrityError, models, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils.text import slugify

from .ownership import OwnedQuerySet


class StudyNameError(ValueError):
    """A study name the importer cannot be given a study by (several studies of that name are shared with them)."""


class Study(models.Model):
    """Campaigns judged by the same crowd (one WMT year, say): a worker's reliability is tested over their
    quality-control pairs in all of the study's campaigns, and that verdict holds in each (docs/methods.md §4).

    A study is owned and shared like a campaign. Its name is unique per owner, so another researcher's study of
    the same name is a different study; campaigns join a study only through `Study.resolve` (or, in the admin, by
    choosing one the user may see), and only the campaigns of `members()` are pooled."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=220, unique=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                              related_name="owned_studies")
    shared_with = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="shared_studies")
    shared_with_groups = models.ManyToManyField(Group, blank=True, related_name="shared_studies")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = OwnedQuerySet.as_manager()  # Study.objects.visible_to(user): annotation/ownership.py

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "studies"
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="study_name_unique_per_owner")]

    def __str__(self):
        return self.name

    @classmethod
    def shared_with_user(cls, user) -> models.QuerySet:
        """The studies shared with `user`, directly or through one of their groups (not those they own)."""
        return cls.objects.filter(Q(shared_with=user) | Q(shared_with_groups__user=user)).exclude(
            owner=user).distinct()

    @classmethod
    def joinable_by(cls, owner) -> models.QuerySet:
        """The studies campaigns of `owner` may join (and be pooled in): their own and those shared with them;
        for None (an ownerless campaign), the ownerless studies."""
        if owner is None:
            return cls.objects.filter(owner__isnull=True)
        return cls.objects.filter(Q(owner=owner) | Q(pk__in=cls.shared_with_user(owner).values("pk")))

    @classmethod
    def resolve(cls, name: str, owner) -> "Study":
        """The study `owner` (a user, or None for an ownerless import) means by `name`: their own study of that
        name; else the one study of that name shared with them; else their own or a shared study whose slug is
        `name`; else a new study of theirs. Never a study the importer may not see: another owner's study of
        the same name is not joined. Several shared studies of that name raise StudyNameError."""
        study = cls._owned(name, owner)
        if study is not None:
            return study
        if owner is not None:
            shared = list(cls.shared_with_user(owner).filter(name=name).order_by("pk"))
            if len(shared) > 1:
                raise StudyNameError(
                    f"{len(shared)} studies named {name!r} are shared with you (slugs "
                    f"{', '.join(s.slug for s in shared)}): give the slug of the one to join")
            if shared:
                return shared[0]
            by_slug = (cls.objects.filter(slug=name, owner=owner).first()
                       or cls.shared_with_user(owner).filter(slug=name).first())
            if by_slug is not None:
                return by_slug
        return cls._create(name, owner)

    @classmethod
    def _owned(cls, name: str, owner) -> "Study | None":
        """`owner`'s study named `name` (the oldest ownerless one for None: ownerless names are not unique)."""
        return cls.objects.filter(Q(owner=owner) if owner is not None else Q(owner__isnull=True),
                                  name=name).order_by("pk").first()

    @classmethod
    def _create(cls, name: str, owner) -> "Study":
        """A new study of `owner` named `name`; a concurrent import that created it first wins (the per-owner
        unique name, or the unique slug, refuses the second insert, which then finds or numbers anew)."""
        base = slugify(name)[:200] or "study"
        for _ in range(5):
            existing = cls._owned(name, owner)
            if existing is not None:
                return existing
            slug, n = base, 1
            while cls.objects.filter(slug=slug).exists():
                n += 1
                slug = f"{base}-{n}"
            try:
                with transaction.atomic():
                    return cls.objects.create(name=name, slug=slug, owner=owner)
            except IntegrityError:
                continue
        raise IntegrityError(f"could not create the study {name!r}")

    def members(self) -> models.QuerySet:
        """The campaigns pooled in this study: those of its owner and of the researchers it is shared with
        (directly or through a group). A campaign of anyone else (placed there before studies were owned, or whose
        owner lost the share) is left out, and its own pool is itself alone."""
        if self.owner_id is None:
            return self.campaigns.filter(owner__isnull=True)
        users = self.shared_with.through.objects.filter(study_id=self.pk, user_id=OuterRef("owner_id"))
        groups = self.shared_with_groups.through.objects.filter(study_id=self.pk,
                                                                group__user=OuterRef("owner_id"))
        return self.campaigns.filter(Q(owner_id=self.owner_id) | Exists(users) | Exists(groups))
