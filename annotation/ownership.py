"""Who owns a campaign or a study, and which of them a user sees: `Campaign.objects.visible_to(user)`.

Researchers are staff users and members of the `researchers` group (superusers too). A researcher sees and acts
on the campaigns (and studies) they own or that are shared with them, directly or through one of their groups;
superusers see everything. A campaign without an owner (imported before campaigns had owners, by `load_demo`, or
from the command line without `--owner`) is visible to superusers only, until one of them gives it an owner or
shares it. Someone else's campaign is answered as if it did not exist (404), never 403.

A model layer module: it imports no other module of the app, so that models.py and studies.py can use it. The
API's permission classes built on these checks are in annotation/permissions.py.
"""
from __future__ import annotations

from django.db.models import Exists, OuterRef, Q, QuerySet

RESEARCHERS_GROUP = "researchers"


def _active(user) -> bool:
    return bool(user and user.is_authenticated and user.is_active)


def is_superuser(user) -> bool:
    return _active(user) and user.is_superuser


def is_researcher(user) -> bool:
    if not _active(user):
        return False
    return user.is_superuser or user.is_staff or user.groups.filter(name=RESEARCHERS_GROUP).exists()


def is_owner(user, obj) -> bool:
    return _active(user) and obj.owner_id is not None and obj.owner_id == user.pk


def is_shared_with(user, obj) -> bool:
    if not _active(user):
        return False
    return (obj.shared_with.filter(pk=user.pk).exists()
            or obj.shared_with_groups.filter(pk__in=user.groups.values("pk")).exists())


def can_share(user, obj) -> bool:
    """Sharing (and unsharing) a campaign or study: its owner, or a superuser."""
    return is_researcher(user) and (is_superuser(user) or is_owner(user, obj))


class OwnedQuerySet(QuerySet):
    """The queryset of an owned and shared model (a campaign, a study): an `owner` and the `shared_with` and
    `shared_with_groups` many-to-many fields."""

    def visible_to(self, user) -> QuerySet:
        """What `user` may see and act on: everything for superusers; for other researchers what they own and
        what is shared with them or one of their groups; nothing for anyone else. Chains like any filter (it
        narrows whatever the queryset already selects); Exists() keeps one row per object."""
        if not is_researcher(user):
            return self.none()
        if user.is_superuser:
            return self
        name = self.model._meta.concrete_model._meta.model_name  # a proxy's (the results admin's) is its model's
        users = self.model.shared_with.through.objects.filter(**{f"{name}_id": OuterRef("pk"), "user_id": user.pk})
        groups = self.model.shared_with_groups.through.objects.filter(**{f"{name}_id": OuterRef("pk")},
                                                                      group__user=user)
        return self.filter(Q(owner_id=user.pk) | Exists(users) | Exists(groups))
