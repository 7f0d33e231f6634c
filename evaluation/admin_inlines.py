"""Read-only admin inlines for stored results: the shared base and the workers' table every family has."""
from django.contrib import admin

from .models import WorkerResult
from .serializers import WorkerResultSerializer


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class WorkerInline(ReadOnlyInline):
    model = WorkerResult
    fields = list(WorkerResultSerializer.Meta.fields)
    readonly_fields = fields
    ordering = ["p_value"]
