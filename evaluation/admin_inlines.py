"""Read-only admin inlines for stored results (the shared base and the workers' table every family has) and the
admin's link to a campaign's results page.

Every inline is a plain table (no per-row object titles, no delete boxes) with numbers as the results
pages print them: p-values with `charts.format_p` (three significant digits), z-scores with three
decimals, raw scores, seconds and counts-like floats with one.
"""
from django.contrib import admin
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html, format_html_join

from .charts import format_p
from .models import ResultTable, WorkerGate, WorkerResult
from .presenters.formatting import fixed
from .serializers import WorkerResultSerializer

TEMPLATE = "admin/evaluation/readonly_tabular.html"


def is_p_value(name: str) -> bool:
    return name.startswith("p_value") or name.endswith("_p") or name == "p"


def number_text(value, name: str) -> str:
    """A stored number as the pages print it, chosen by its column's name."""
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, float):
        return str(value)
    if is_p_value(name):
        return format_p(value)
    if name == "z" or name.startswith("z_") or name.endswith("_z") or "kappa" in name:
        return fixed(value, 3)
    return fixed(value, 1)


def _rounded(name: str, verbose_name: str):
    @admin.display(description=verbose_name, ordering=name)
    def shown(self, obj):
        return number_text(getattr(obj, name), name)
    return shown


class ReadOnlyInline(admin.TabularInline):
    """A stored result table, read-only. Float columns are shown rounded: a subclass's `fields` naming a
    FloatField get a display method `<name>_shown` in its place (`__init_subclass__`); names that are neither
    stored fields nor attributes (a serializer's computed columns) are left out."""

    template = TEMPLATE
    extra = 0
    can_delete = False
    show_change_link = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        model, fields = getattr(cls, "model", None), getattr(cls, "fields", None)
        if model is None or not fields:
            return
        shown = []
        for name in fields:
            try:
                field = model._meta.get_field(name) if isinstance(name, str) else None
            except FieldDoesNotExist:
                field = None
            if field is None and isinstance(name, str) and not hasattr(cls, name) and not hasattr(model, name):
                continue  # a column of the API's serializer that is no stored field (e.g. `score` = mean_z)
            if isinstance(field, models.FloatField):
                setattr(cls, f"{name}_shown", _rounded(name, str(field.verbose_name)))
                name = f"{name}_shown"
            shown.append(name)
        cls.fields = shown
        cls.readonly_fields = shown

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
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
        columns = list(stored.columns or []) or (list(rows[0]) if rows else [])
        head = format_html_join("", "<th>{}</th>", ((c,) for c in columns))
        body = format_html_join("", "<tr>{}</tr>", ((format_html_join("", "<td>{}</td>", ((_cell(r.get(c), c),)
                                                                                        for c in columns)),)
                                                   for r in rows))
        return format_html("<table><thead><tr>{}</tr></thead><tbody>{}</tbody></table>", head, body)


def _cell(value, column: str = "") -> str:
    if isinstance(value, float):
        return format_p(value) if is_p_value(column) else f"{value:.3g}"
    return "–" if value is None else str(value)


class WorkerGateInline(ReadOnlyInline):
    """The workers the live reliability gate stopped (docs/methods.md §12.1); lift them from the gates' list."""

    model = WorkerGate
    fields = ["annotator", "rule", "reason", "p_value", "pairs", "missed_share", "created_at", "lifted_at"]
    readonly_fields = fields
    verbose_name = "gated worker"
    verbose_name_plural = "gated workers (live reliability gate; lift them under Results › Worker gates)"


def results_url(campaign) -> str:
    try:
        return reverse("results:campaign", args=[campaign.slug])
    except NoReverseMatch:
        return f"/results/{campaign.slug}/"
