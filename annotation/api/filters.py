"""The API's filter backend (settings: DEFAULT_FILTER_BACKENDS): django-filter's, except that a boolean filter
(`?analysis_only=`, docs/api.md §6.2) takes `true` or `false` and answers anything else with a 400, as the schema
promises, where django-filter reads an unknown value as "no filter" and lists everything."""
from django import forms
from django.db import models
from django_filters import BooleanFilter, FilterSet
from django_filters.filterset import FILTER_FOR_DBFIELD_DEFAULTS
from django_filters.rest_framework import DjangoFilterBackend


class StrictBooleanField(forms.NullBooleanField):
    """`true` or `false`; absent or empty for no filter; anything else is invalid. A text input hands over the
    value as sent (NullBooleanField's select widget turns an unknown one into None: no filter)."""

    widget = forms.TextInput

    def to_python(self, value):
        if value in (None, ""):
            return None
        if value in ("true", "false"):
            return value == "true"
        raise forms.ValidationError("use true or false", code="invalid")

    def validate(self, value):
        """Whatever to_python let through is valid (None is "no filter")."""


class StrictBooleanFilter(BooleanFilter):
    field_class = StrictBooleanField


class StrictFilterSet(FilterSet):
    FILTER_DEFAULTS = {**FILTER_FOR_DBFIELD_DEFAULTS, models.BooleanField: {"filter_class": StrictBooleanFilter}}


class StrictFilterBackend(DjangoFilterBackend):
    """Builds the views' `filterset_fields` on StrictFilterSet."""

    filterset_base = StrictFilterSet
