"""`manage.py import_campaign FILE --name NAME --protocol P [--redundancy K] [--seed S]` (CONTRACT.md)."""
import json

from django.core.management.base import BaseCommand, CommandError

from annotation.protocols import all_protocols
from annotation.services.campaign_import import CampaignFileError, import_campaign


class Command(BaseCommand):
    help = "Import a campaign file (JSON Lines) and build its HITs; prints {\"campaign\": slug, \"hits\": n}."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--name", required=True)
        parser.add_argument("--protocol", required=True, help=", ".join(p.name for p in all_protocols()))
        parser.add_argument("--redundancy", type=int, default=1, help="Distinct workers per HIT.")
        parser.add_argument("--seed", type=int, help="Random seed (a random one is chosen and stored if absent).")
        parser.add_argument("--hit-size", type=int, default=100)
        parser.add_argument("--source-language", default="")
        parser.add_argument("--target-language", default="en")
        parser.add_argument("--statement", default="", help="The Likert statement, in the target language.")
        parser.add_argument("--systems", help="Pairwise protocols: the two systems compared, A,B.")
        parser.add_argument("--unit", choices=["document", "sentence", "both"], help="Pairwise protocols.")

    def handle(self, *args, **opts):
        options = {}
        if opts["systems"]:
            options["systems"] = [s.strip() for s in opts["systems"].split(",") if s.strip()]
        if opts["unit"]:
            options["unit"] = opts["unit"]
        try:
            with open(opts["file"], "rb") as handle:
                result = import_campaign(
                    handle, name=opts["name"], protocol=opts["protocol"], redundancy=opts["redundancy"],
                    seed=opts["seed"], hit_size=opts["hit_size"], options=options,
                    source_language=opts["source_language"], target_language=opts["target_language"],
                    statement=opts["statement"],
                )
        except OSError as exc:
            raise CommandError(f"cannot read {opts['file']}: {exc.strerror}") from None
        except CampaignFileError as exc:
            raise CommandError(f"refused {opts['file']}: {exc}") from None
        self.stdout.write(json.dumps({"campaign": result.campaign.slug, "hits": result.hits}))
