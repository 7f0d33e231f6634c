"""`manage.py import_judgments FILE --format FORMAT --name NAME [--systems A,B] [--rows TYPE] [--pair PAIR]
[--study STUDY] [--owner USERNAME] [--statistics-preset …, the statistics options] (docs/api.md)."""
import json

from django.core.management.base import BaseCommand, CommandError

from annotation.protocols import all_protocols
from annotation.protocols.options import help_text, union
from annotation.services.campaign_import import CampaignFileError
from annotation.services.judgment_import import (
    FORMAT_TEXT_OPTIONS,
    JUDGMENT_FORMATS,
    import_judgments,
    imported_answer,
)

from .import_campaign import OWNER_HELP, owner_named


class Command(BaseCommand):
    help = "Import judgments collected elsewhere into an analysis-only campaign; prints {campaign, judgments}."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--format", required=True, choices=sorted(JUDGMENT_FORMATS),
                            help="wmt-da, pairwise-csv, wmt-rank, or the error-span formats mqm-tsv (Google's MQM "
                                 "files) and esa-jsonl (docs/api.md §5).")
        parser.add_argument("--name", required=True)
        parser.add_argument("--protocol", help="The protocol the judgments were made with (wmt-da: adequacy).")
        parser.add_argument("--systems", help="pairwise-csv: the two systems compared, A,B.")
        for name, text in FORMAT_TEXT_OPTIONS.items():
            parser.add_argument(f"--{name}", help=text)
        parser.add_argument("--study", help="The study the campaign belongs to (the owner's of that name, or one "
                                            "shared with them, else a new one of theirs): workers' "
                                            "reliability is tested over all of its campaigns.")
        parser.add_argument("--owner", metavar="USERNAME", help=OWNER_HELP)
        for option, protocols in union(all_protocols(), analysis=True):  # the statistics options, as at import
            parser.add_argument(option.flag, dest=f"analysis_{option.name}", metavar=option.kind.upper(),
                                help=help_text(option, protocols, [p.name for p in all_protocols()]))

    def handle(self, *args, **opts):
        owner = owner_named(opts["owner"])
        options = {"study": opts["study"]} if opts["study"] else {}
        if opts["protocol"]:
            options["protocol"] = opts["protocol"]
        if opts["systems"]:
            options["systems"] = [s.strip() for s in opts["systems"].split(",") if s.strip()]
        options.update({name: opts[name] for name in FORMAT_TEXT_OPTIONS if opts[name] is not None})
        options["analysis"] = {name[len("analysis_"):]: value for name, value in opts.items()
                               if name.startswith("analysis_") and value is not None}
        try:
            with open(opts["file"], "rb") as handle:
                result = import_judgments(handle, fmt=opts["format"], name=opts["name"], owner=owner, **options)
        except OSError as exc:
            raise CommandError(f"cannot read {opts['file']}: {exc.strerror}") from None
        except CampaignFileError as exc:
            raise CommandError(f"refused {opts['file']}: {exc}") from None
        self.stdout.write(json.dumps(imported_answer(result)))
