"""Who may use the researcher API and the results pages: staff, or members of the `researchers` group."""
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from rest_framework.permissions import BasePermission

RESEARCHERS_GROUP = "researchers"


def is_researcher(user) -> bool:
    if not user or not user.is_authenticated or not user.is_active:
        return False
    return user.is_staff or user.groups.filter(name=RESEARCHERS_GROUP).exists()


class IsResearcher(BasePermission):
    message = "The researcher API needs a researcher's token; annotator sessions and HIT links have no access."

    def has_permission(self, request, view):
        return is_researcher(request.user)


def researcher_required(view):
    """For the results pages: staff or the researchers group; anonymous users go to the admin login, others 403."""
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path(), reverse("admin:login"))
        if not is_researcher(request.user):
            raise PermissionDenied("The results pages are for researchers.")
        return view(request, *args, **kwargs)
    return wrapped
