"""Who may use the researcher API, the results pages and the admin's campaigns, and which campaigns they see.

Researchers are staff users and members of the `researchers` group (superusers too). A researcher sees and acts
on the campaigns (and studies) they own or that are shared with them, directly or through one of their groups;
superusers see everything. A campaign without an owner (imported before campaigns had owners, by `load_demo`, or
from the command line without `--owner`) is visible to superusers only, until one of them gives it an owner or
shares it. Someone else's campaign is answered as if it did not exist (404), never 403.

Two pieces, used together:

- `visible_campaigns(user)` / `visible_studies(user)`: the querysets every view, page and admin starts from, so a
  campaign outside them is never found;
- small DRF permission classes composed per view with `&` and `|` (as doccano does), e.g.
  `IsResearcher & (IsOwner | IsSharedWith | IsSuperuser)` to read and act, `IsResearcher & (IsOwner | IsSuperuser)`
  to share. `IsOwner`, `IsSharedWith` are object permissions (their view-level answer is yes), checked by
  `get_object()` on what the visible queryset found.
"""
from __future__ import annotations

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.urls import reverse
from rest_framework.permissions import BasePermission

RESEARCHERS_GROUP = "researchers"


def _active(user) -> bool:
    return bool(user and user.is_authenticated and user.is_active)


def is_superuser(user) -> bool:
    return _active(user) and user.is_superuser


def is_researcher(user) -> bool:
    if not _active(user):
        return False
    return user.is_superuser or user.is_staff or user.groups.filter(name=RESEARCHERS_GROUP).exists()


# Querysets --------------------------------------------------------------------------------------------


def _owned_or_shared(model, user, queryset: QuerySet | None) -> QuerySet:
    """`queryset` (default: all of `model`) cut to what `user` may see; Exists() keeps one row per object."""
    queryset = model.objects.all() if queryset is None else queryset
    if not is_researcher(user):
        return queryset.none()
    if user.is_superuser:
        return queryset
    name = model._meta.model_name
    users = model.shared_with.through.objects.filter(**{f"{name}_id": OuterRef("pk"), "user_id": user.pk})
    groups = model.shared_with_groups.through.objects.filter(**{f"{name}_id": OuterRef("pk")},
                                                             group__user=user)
    return queryset.filter(Q(owner_id=user.pk) | Exists(users) | Exists(groups))


def visible_campaigns(user, queryset: QuerySet | None = None) -> QuerySet:
    """The campaigns `user` may see and act on: all for superusers; for other researchers their own and those
    shared with them or one of their groups; none for anyone else. `queryset` narrows (or annotates) the start."""
    from annotation.models import Campaign

    return _owned_or_shared(Campaign, user, queryset)


def visible_studies(user, queryset: QuerySet | None = None) -> QuerySet:
    """The studies `user` may see, by the same rule as campaigns (a study's owner is whoever created it by
    importing into it). The overview of a visible study shows only its campaigns that `user` may see."""
    from annotation.models import Study

    return _owned_or_shared(Study, user, queryset)


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


# DRF permission classes: compose them in `permission_classes` with & and | --------------------------------


class IsResearcher(BasePermission):
    message = "The researcher API needs a researcher's token; annotator sessions and HIT links have no access."

    def has_permission(self, request, view):
        return is_researcher(request.user)


class IsSuperuser(BasePermission):
    def has_permission(self, request, view):
        return is_superuser(request.user)

    def has_object_permission(self, request, view, obj):
        return is_superuser(request.user)


class IsOwner(BasePermission):
    """Object level: the campaign's (or study's) owner. At view level it says yes: compose it with IsResearcher."""

    message = "Only the owner (or a superuser) may do this."

    def has_object_permission(self, request, view, obj):
        return is_owner(request.user, obj)


class IsSharedWith(BasePermission):
    """Object level: the campaign (or study) is shared with the user or one of their groups."""

    def has_object_permission(self, request, view, obj):
        return is_shared_with(request.user, obj)


#: Reading a campaign and acting on it (results, exports, status, blocking, compute).
CAN_USE = IsResearcher & (IsOwner | IsSharedWith | IsSuperuser)
#: Sharing it with others, or taking a share back.
CAN_SHARE = IsResearcher & (IsOwner | IsSuperuser)


class ExplainsDenials:
    """For the view sets: composed permissions carry no message of their own, so a refusal says why here."""

    def permission_denied(self, request, message=None, code=None):
        if message is None:
            message = IsResearcher.message if not is_researcher(request.user) else IsOwner.message
        super().permission_denied(request, message, code)


# The results pages ------------------------------------------------------------------------------------


def researcher_required(view):
    """For the results pages: staff or the researchers group; anonymous users go to the admin login, others 403.
    The page itself finds its campaign in `visible_campaigns(request.user)` (404 otherwise)."""
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path(), reverse("admin:login"))
        if not is_researcher(request.user):
            raise PermissionDenied("The results pages are for researchers.")
        return view(request, *args, **kwargs)
    return wrapped
