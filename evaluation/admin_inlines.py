"""Read-only admin inlines for stored results: the shared base and the workers' table every family has."""
from django.contrib import admin
from django.utils.html import format_html, format_html_join

from .models import ResultTable, WorkerResult
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


class ResultTableInline(ReadOnlyInline):
    """A family's tables stored as JSON rows, each shown as a small table."""

    model = ResultTable
    fields = ["name", "variant", "table"]
    readonly_fields = fields

    @admin.display(description="rows")
    def table(self, stored: ResultTable):
        rows = stored.rows or []
        columns = list(rows[0]) if rows else []
        head = format_html_join("", "<th>{}</th>", ((c,) for c in columns))
        body = format_html_join("", "<tr>{}</tr>", ((format_html_join("", "<td>{}</td>", ((_cell(r.get(c)),)
                                                                                        for c in columns)),)
                                                   for r in rows))
        return format_html("<table><thead><tr>{}</tr></thead><tbody>{}</tbody></table>", head, body)


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "–" if value is None else str(value)
