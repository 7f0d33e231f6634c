"""The admin's campaign import form, generated from the protocols' import options.

It holds every option of every protocol; each row names the protocols that use it and
static/annotation/import-form.js shows only the chosen protocol's rows (without JavaScript
every row shows, its help saying which protocols use it). Validation is
`Protocol.parse_options`, the same as for the API and `manage.py import_campaign`.
"""
from decimal import Decimal

from django import forms

from .protocols import all_protocols, get_protocol, protocol_choices
from .protocols.options import Option, OptionError, help_text, union

#: The admin imports drafts to preview before publishing (the API and the command publish at once).
ADMIN_DEFAULTS = {"publish": False}


class RawField(forms.Field):
    """Hands the submitted value to `Protocol.parse_options` as it came; the widget only suggests its type."""

    def to_python(self, value):
        return value


def option_widget(option: Option) -> forms.Widget:
    bounds = {key: value for key, value in (("min", option.minimum), ("max", option.maximum)) if value is not None}
    if option.kind == "int":
        return forms.NumberInput(attrs={**bounds, "step": option.step or 1})
    if option.kind in ("float", "decimal"):
        step = "any" if option.kind == "float" else str(Decimal(1).scaleb(-(option.decimal_places or 0)))
        return forms.NumberInput(attrs={**bounds, "step": step})
    if option.kind == "bool":
        return forms.CheckboxInput()
    if option.kind == "choice":
        return forms.Select()
    if option.kind == "text":
        return forms.Textarea(attrs={"rows": 2 if option.max_length else 6})
    attrs = {"maxlength": option.max_length} if option.max_length else {}
    return forms.TextInput(attrs={**attrs, "placeholder": "A,B"} if option.kind == "list" else attrs)


def option_field(option: Option, protocols: list[str], every: list[str]) -> RawField:
    default = ADMIN_DEFAULTS.get(option.name, option.default)
    return RawField(required=False, label=option.title, initial=default, widget=option_widget(option),
                    help_text=help_text(option, protocols, every, default=ADMIN_DEFAULTS.get(option.name)))


class CampaignImportForm(forms.Form):
    """Everything a campaign needs, in one form; the file is validated whole and its errors shown by line."""

    use_required_attribute = False  # hidden rows of other protocols must not block the browser's submit

    file = forms.FileField(help_text="JSON Lines, one source segment a line.")
    name = forms.CharField(max_length=200)
    protocol = forms.ChoiceField(choices=protocol_choices)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        every = [p.name for p in all_protocols()]
        self.used_by: dict[str, list[str]] = {}
        for option, protocols in union(all_protocols()):
            self.fields[option.name] = option_field(option, protocols, every)
            if option.kind == "choice":
                self.fields[option.name].widget.choices = option.choice_list()
            self.used_by[option.name] = protocols
        self.parsed = None

    def rows(self) -> list[dict]:
        """The template's rows: each bound field with the protocols it applies to (none: every form)."""
        return [{"field": bound, "protocols": " ".join(self.used_by.get(bound.name, []))} for bound in self]

    def clean(self):
        data = super().clean()
        if not data.get("protocol"):
            return data
        protocol = get_protocol(data["protocol"])
        raw = {option.name: data.get(option.name) for option in protocol.option_fields()}
        try:
            self.parsed = protocol.parse_options(raw, defaults=ADMIN_DEFAULTS)
        except OptionError as exc:
            for name, reason in exc.errors:
                self.add_error(name if name in self.fields else None, reason)
        return data
