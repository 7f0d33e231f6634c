"""Who may use the researcher API: staff, or members of the `researchers` group."""
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
