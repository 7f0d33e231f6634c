"""Who may use the researcher API, the results pages and the admin's campaigns (docs/api.md §6.1).

Small DRF permission classes composed per view with `&` and `|` (as doccano does), e.g.
`IsResearcher & (IsOwner | IsSharedWith | IsSuperuser)` to read and act, `IsResearcher & (IsOwner | IsSuperuser)`
to share. `IsOwner`, `IsSharedWith` are object permissions (their view-level answer is yes), checked by
`get_object()` on what `Campaign.objects.visible_to(user)` (annotation/ownership.py) found: every view, page and
admin starts from that queryset, so a campaign outside it is never found. The evaluation app's views and pages
use these too.
"""
from __future__ import annotations

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from rest_framework.permissions import BasePermission

from .ownership import is_owner, is_researcher, is_shared_with, is_superuser


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


def researcher_required(view):
    """For the results pages: staff or the researchers group; anonymous users go to the admin login, others 403.
    The page itself finds its campaign in `Campaign.objects.visible_to(request.user)` (404 otherwise)."""
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path(), reverse("admin:login"))
        if not is_researcher(request.user):
            raise PermissionDenied("The results pages are for researchers.")
        return view(request, *args, **kwargs)
    return wrapped
