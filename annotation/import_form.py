"""The admin's campaign import form, generated from the protocols' import options.

It holds every option of every protocol; each row names the protocols that use it and
static/annotation/import-form.js shows only the chosen protocol's rows (without JavaScript
every row shows, its help saying which protocols use it). Validation is
`Protocol.parse_options`, the same as for the API and `manage.py import_campaign`.

Every option starts empty ("— default for the protocol —"; a text or number box shows its default as a
placeholder), so a submit carries only what the researcher changed and the defaults are resolved in one place,
`parse_options`, as for the API and the command: the same file and choices give the same campaign. A campaign's
settings file (annotation/services/campaign_settings.py) stands for the options left empty.

A refused submit keeps its file on the server (`KeptUploads`): the researcher corrects one field
and submits again without choosing the file anew.
"""
import secrets
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from django import forms
from django.conf import settings

from .protocols import all_protocols, get_protocol, importable_protocol_choices
from .protocols.options import Option, OptionError, describe_default, help_text, union
from .services.campaign_settings import SettingsFileError, combine, read_settings

#: The admin imports drafts to preview before publishing (the API and the command publish at once).
ADMIN_DEFAULTS = {"publish": False}
#: The empty first choice of every select: the option is left to its default (the protocol's, the preset's).
DEFAULT_CHOICE = ("", "— default for the protocol —")


class RawField(forms.Field):
    """Hands the submitted value to `Protocol.parse_options` as it came; the widget only suggests its type."""

    def to_python(self, value):
        return value


def option_widget(option: Option, default: object = None) -> forms.Widget:
    """The option's input, empty at first: a select's first choice is `DEFAULT_CHOICE`, a box shows the default
    as its placeholder; yes/no options are selects too (a checkbox cannot be left to the default)."""
    shown = describe_default(option, default)
    if option.kind in ("bool", "choice"):
        label = f"{DEFAULT_CHOICE[1]} ({shown})" if option.default is not None or option.default_text or \
            option.kind == "bool" else DEFAULT_CHOICE[1]
        values = [("true", "yes"), ("false", "no")] if option.kind == "bool" else option.choice_list()
        return forms.Select(choices=[(DEFAULT_CHOICE[0], label), *values])
    placeholder = {"placeholder": shown} if shown not in ("none", "") else {}
    bounds = {key: value for key, value in (("min", option.minimum), ("max", option.maximum)) if value is not None}
    if option.kind == "int":
        return forms.NumberInput(attrs={**bounds, "step": option.step or 1, **placeholder})
    if option.kind in ("float", "decimal"):
        step = "any" if option.kind == "float" else str(Decimal(1).scaleb(-(option.decimal_places or 0)))
        return forms.NumberInput(attrs={**bounds, "step": step, **placeholder})
    if option.kind == "text":
        return forms.Textarea(attrs={"rows": 2 if option.max_length else 6, **placeholder})
    attrs = {"maxlength": option.max_length} if option.max_length else {}
    return forms.TextInput(attrs={**attrs, "placeholder": "A,B"} if option.kind == "list" else {**attrs, **placeholder})


def option_field(option: Option, protocols: list[str], every: list[str]) -> RawField:
    default = ADMIN_DEFAULTS.get(option.name)
    return RawField(required=False, label=option.title, initial=None, widget=option_widget(option, default),
                    help_text=help_text(option, protocols, every, default=default))


class CampaignImportForm(forms.Form):
    """Everything a campaign needs, in one form; the file is validated whole and its errors shown by line."""

    use_required_attribute = False  # hidden rows of other protocols must not block the browser's submit

    file = forms.FileField(required=False, help_text="JSON Lines, one source segment a line; or a .zip bundle of "
                           "that file and its media (docs/api.md §2.1).")
    settings = forms.FileField(required=False, label="Settings file", help_text=(
        "Optional: a campaign's settings file (JSON, from a campaign's page or GET /api/campaigns/<slug>/settings/)."
        " Its values stand for the options left empty; the options you set here win over it."))
    name = forms.CharField(max_length=200)
    protocol = forms.ChoiceField(choices=lambda: [("", "— choose, or the settings file's —"),
                                                  *importable_protocol_choices()], required=False)

    def __init__(self, *args, kept: dict | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        #: The file kept from a refused submit (`KeptUploads.get`), used when no new file is chosen.
        self.kept = kept
        every = [p.name for p in all_protocols()]
        self.used_by: dict[str, list[str]] = {}
        for option, protocols in union(all_protocols()):
            self.fields[option.name] = option_field(option, protocols, every)
            self.used_by[option.name] = protocols
        self.parsed = None
        #: The option values parsed into `parsed`: the settings file's, then the submitted ones.
        self.raw: dict = {}

    def rows(self) -> list[dict]:
        """The template's rows: each bound field with the protocols it applies to (none: every form)."""
        return [{"field": bound, "protocols": " ".join(self.used_by.get(bound.name, []))} for bound in self]

    def suggest(self, suggestions: dict) -> None:
        """Say next to each option what would fit the file, e.g. {"hit_size": 20} (None: nothing fits)."""
        for name, value in suggestions.items():
            if name in self.fields and value is not None:
                fits = f"This file fills HIT sizes up to {value}." if name == "hit_size" else \
                    f"A value that fits this file: {value}."
                self.fields[name].help_text = f"{fits} {self.fields[name].help_text}"
                self[name].help_text = self.fields[name].help_text  # a bound field copies it when made

    def clean(self):
        data = super().clean()
        if not data.get("file") and not self.kept:
            self.add_error("file", forms.Field.default_error_messages["required"])
        try:
            settings = read_settings(data["settings"]) if data.get("settings") else None
            name, given = combine(data.get("protocol"), {n: data.get(n) for n in self.used_by}, settings)
        except SettingsFileError as exc:
            self.add_error("settings", str(exc))
            return data
        if not name:
            self.add_error("protocol", forms.Field.default_error_messages["required"])
            return data
        data["protocol"] = name
        protocol = get_protocol(name)
        self.raw = {option.name: given.get(option.name) for option in protocol.option_fields()}
        try:
            self.parsed = protocol.parse_options(self.raw, defaults=ADMIN_DEFAULTS)
        except OptionError as exc:
            for name, reason in exc.errors:
                self.add_error(name if name in self.fields else None, reason)
        return data


class KeptUploads:
    """Campaign files kept on the server across refused submits, each under a random token that the
    researcher's session holds (a token from another session finds nothing). The files live in
    MEDIA_ROOT/temp/campaign-imports (the system's temporary folder when MEDIA_ROOT is unset); a successful
    import deletes its file, and files older than `MAX_AGE` are swept whenever one is kept."""

    SESSION_KEY = "campaign_import_uploads"
    MAX_AGE = 24 * 3600
    #: Files one session keeps at most (the oldest goes first).
    PER_SESSION = 5

    def __init__(self, session):
        self.session = session

    @staticmethod
    def folder() -> Path:
        base = Path(settings.MEDIA_ROOT) / "temp" if settings.MEDIA_ROOT else Path(tempfile.gettempdir()) / "mteval"
        return base / "campaign-imports"

    def _entries(self) -> dict:
        return dict(self.session.get(self.SESSION_KEY, {}))

    def _path(self, token: str) -> Path:
        return self.folder() / token

    def keep(self, upload) -> dict:
        """Store `upload` (a Django UploadedFile) and return its entry: token, name, size."""
        folder = self.folder()
        folder.mkdir(parents=True, exist_ok=True)
        self._sweep(folder)
        token = secrets.token_urlsafe(24)
        with self._path(token).open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        entries = self._entries()
        entries[token] = {"name": Path(upload.name or "campaign.jsonl").name[:200], "size": upload.size,
                          "saved": time.time()}
        for old in sorted(entries, key=lambda t: entries[t]["saved"])[:-self.PER_SESSION]:
            self._path(old).unlink(missing_ok=True)
            del entries[old]
        self.session[self.SESSION_KEY] = entries
        return {"token": token, **entries[token]}

    def get(self, token: str | None) -> dict | None:
        """The kept file of this session under `token`, if it is still there."""
        entry = self._entries().get(token or "")
        if entry is None or not self._path(token).is_file():
            return None
        return {"token": token, **entry}

    def open(self, entry: dict):
        return self._path(entry["token"]).open("rb")

    def discard(self, entry: dict | None) -> None:
        if not entry:
            return
        self._path(entry["token"]).unlink(missing_ok=True)
        entries = self._entries()
        entries.pop(entry["token"], None)
        self.session[self.SESSION_KEY] = entries

    def _sweep(self, folder: Path) -> None:
        cutoff = time.time() - self.MAX_AGE
        for path in folder.iterdir():
            try:
                if path.is_file() and path.stat().st_mtime < cutoff:
                    path.unlink()
            except OSError:
                pass
