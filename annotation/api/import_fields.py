"""The campaign import options as DRF fields, generated from `Protocol.option_fields()`.

The fields are typed for the OpenAPI schema (bounds, choices, defaults) but hand the submitted
value on unchanged: `Protocol.parse_options` validates it, as for the admin form and
`manage.py import_campaign`, so the three give the same answer and the 400 names the field.
"""
from rest_framework import serializers

from ..protocols import all_protocols, get_protocol
from ..protocols.options import Option, OptionError, ParsedOptions, help_text, union


class _Raw:
    """Keeps the submitted value as it came (no conversion, no validators): parse_options decides."""

    def to_internal_value(self, data):
        return data

    def run_validators(self, value):
        return None


class RawInteger(_Raw, serializers.IntegerField):
    pass


class RawFloat(_Raw, serializers.FloatField):
    pass


class RawDecimal(_Raw, serializers.DecimalField):
    pass


class RawChar(_Raw, serializers.CharField):
    pass


class RawBoolean(_Raw, serializers.BooleanField):
    pass


class RawChoice(_Raw, serializers.ChoiceField):
    pass


def option_field(option: Option, protocols: list[str], every: list[str]) -> serializers.Field:
    common = {"required": False, "allow_null": True, "help_text": help_text(option, protocols, every),
              "label": option.title}
    if option.default is not None and not option.required:
        common["default"] = option.default
    bounds = {"min_value": option.minimum, "max_value": option.maximum}
    if option.kind == "int":
        return RawInteger(**bounds, **common)
    if option.kind == "float":
        return RawFloat(**bounds, **common)
    if option.kind == "decimal":
        return RawDecimal(max_digits=8, decimal_places=option.decimal_places or 0, **bounds, **common)
    if option.kind == "bool":
        return RawBoolean(**common)
    if option.kind == "choice":
        return RawChoice(choices=option.choice_list(), allow_blank=True, **common)
    style = {"base_template": "textarea.html"} if option.kind == "text" else {}
    return RawChar(allow_blank=True, max_length=option.max_length, style=style, **common)


def import_option_fields() -> dict[str, serializers.Field]:
    """One field per import option of any protocol (choices read now: tests may register more)."""
    every = [p.name for p in all_protocols()]
    return {option.name: option_field(option, protocols, every) for option, protocols in union(all_protocols())}


def submitted_options(attrs: dict, submitted) -> dict:
    """The option values the client sent (not the schema defaults DRF fills in)."""
    return {option.name: attrs.get(option.name) for option, _ in union(all_protocols()) if option.name in submitted}


def parse_raw(protocol: str, raw: dict) -> ParsedOptions:
    """`raw` parsed for `protocol`; a refusal as DRF's 400, each reason under its field."""
    try:
        return get_protocol(protocol).parse_options(raw)
    except OptionError as exc:
        detail: dict[str, list[str]] = {}
        for name, reason in exc.errors:
            detail.setdefault(name, []).append(reason)
        raise serializers.ValidationError(detail) from None


def parse_submitted(protocol: str, attrs: dict, submitted) -> ParsedOptions:
    """The options the client sent (not the schema defaults DRF fills in), parsed for `protocol`."""
    return parse_raw(protocol, submitted_options(attrs, submitted))


def analysis_option_fields() -> dict[str, serializers.Field]:
    """One field per statistics option of any protocol (`Protocol.analysis_options`), without schema defaults."""
    every = [p.name for p in all_protocols()]
    fields = {}
    for option, protocols in union(all_protocols(), analysis=True):
        field = option_field(option, protocols, every)
        field.default = serializers.empty
        fields[option.name] = field
    return fields


def check_analysis(attrs: dict, submitted) -> dict:
    """The statistics options the client sent, each checked against its declaration; a 400 names each bad one."""
    declared = {option.name: option for option, _ in union(all_protocols(), analysis=True)}
    given = {name: attrs.get(name) for name in declared if name in submitted}
    errors = {}
    for name, value in given.items():
        if value is None or isinstance(value, str) and not value.strip():
            continue
        try:
            declared[name].parse(value)
        except ValueError as exc:
            errors[name] = [str(exc)]
    if errors:
        raise serializers.ValidationError(errors)
    return given
