"""`manage.py import_campaign FILE --name NAME --protocol P [--redundancy K] [--owner USERNAME]
[--settings-file FILE] ...`: every import option of every protocol (`Protocol.option_fields`) as a flag, validated
by `Protocol.parse_options`. A settings file (annotation/services/campaign_settings.py) gives the values of the
flags not given."""
import argparse
import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.protocols import UnknownProtocol, all_protocols, get_protocol
from annotation.protocols.options import OptionError, help_text, union
from annotation.services.campaign_import import CampaignFileError, import_campaign
from annotation.services.campaign_settings import SettingsFileError, combine, read_settings

OWNER_HELP = ("The user who owns the campaign (and a study the import creates): they see it in the API, the results "
              "pages and the admin. Without it only superusers see the campaign until it is given an owner.")
SETTINGS_HELP = ("A campaign's settings file (JSON, as GET /api/campaigns/<slug>/settings/ exports it): its values "
                 "stand for the options not given; options given here win over it. --protocol may then be left out. "
                 "(Django's own --settings names a Python settings module.)")
METAVARS = {"int": "N", "float": "X", "decimal": "AMOUNT", "list": "A,B", "text": "TEXT", "str": "TEXT"}


def owner_named(username: str | None):
    """The user called `username` (None for None), or a CommandError."""
    if username is None:
        return None
    user = get_user_model()._default_manager.filter(**{get_user_model().USERNAME_FIELD: username}).first()
    if user is None:
        raise CommandError(f"owner: no user called {username!r}")
    return user


class Command(BaseCommand):
    help = "Import a campaign file (JSON Lines) and build its HITs; prints {\"campaign\": slug, \"hits\": n}."

    def add_arguments(self, parser):
        protocols = [p.name for p in all_protocols() if not p.stage_only]
        parser.add_argument("file", help="the campaign file (JSON Lines), or a .zip bundle of it and its media "
                                         "(docs/api.md §2.1)")
        parser.add_argument("--name", required=True)
        parser.add_argument("--protocol", help=", ".join(protocols) + " (required unless --settings-file gives it)")
        parser.add_argument("--owner", metavar="USERNAME", help=OWNER_HELP)
        parser.add_argument("--settings-file", dest="settings_file", metavar="FILE", help=SETTINGS_HELP)
        for option, used_by in union(all_protocols()):
            # Every value reaches parse_options as given (None when absent), so the errors name the field.
            kwargs = {"dest": option.name, "default": None,
                      "help": help_text(option, used_by, protocols).replace("%", "%%")}
            if option.kind == "bool":
                kwargs["action"] = argparse.BooleanOptionalAction
            else:
                kwargs["metavar"] = METAVARS.get(option.kind, option.name.upper())
            parser.add_argument(option.flag, **kwargs)

    def handle(self, *args, **opts):
        owner = owner_named(opts["owner"])
        names = [option.name for option, _ in union(all_protocols())]
        given = {name: opts[name] for name in names if opts.get(name) is not None}
        try:
            settings = None
            if opts.get("settings_file"):
                with open(opts["settings_file"], "rb") as handle:
                    settings = read_settings(handle)
            name, raw = combine(opts["protocol"], given, settings)
        except OSError as exc:
            raise CommandError(f"cannot read {opts['settings_file']}: {exc.strerror}") from None
        except SettingsFileError as exc:
            raise CommandError(f"settings: {exc}") from None
        if not name:
            raise CommandError("protocol: required (give --protocol, or --settings-file)")
        try:
            protocol = get_protocol(name)
        except UnknownProtocol as exc:
            raise CommandError(f"protocol: {exc}") from None
        try:
            parsed = protocol.parse_options(raw)
        except OptionError as exc:
            raise CommandError(f"refused options: {exc}") from None
        try:
            with open(opts["file"], "rb") as handle:
                result = import_campaign(handle, name=opts["name"], protocol=protocol.name, parsed=parsed,
                                         owner=owner)
        except OSError as exc:
            raise CommandError(f"cannot read {opts['file']}: {exc.strerror}") from None
        except CampaignFileError as exc:
            raise CommandError(f"refused {opts['file']}: {exc}") from None
        self.stdout.write(json.dumps({"campaign": result.campaign.slug, "hits": result.hits,
                                      **({"warnings": result.warnings} if result.warnings else {})}))
