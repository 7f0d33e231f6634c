"""`manage.py sign_entry_link SLUG WORKER_ID [WORKER_ID ...]`: signed crowd entry links (docs/api.md §8.1).

One line per worker: `<base>/c/<slug>/start/?worker_id=W&signature=<hex HMAC-SHA256 of "<slug>:W" keyed with the
campaign's entry secret>`. `--secret` prints the secret instead, for computing signatures elsewhere (a survey
tool, a panel's mailer); keep it like a password."""
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Campaign
from annotation.services import assignment as assigning


class Command(BaseCommand):
    help = "Print signed crowd entry links of a campaign, one per worker id (or, with --secret, its entry secret)."

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the campaign's slug")
        parser.add_argument("worker_ids", nargs="*", metavar="WORKER_ID", help="worker ids to sign")
        parser.add_argument("--base-url", default="", help="the site's address, e.g. https://eval.example.org "
                            "(links are printed as paths without it)")
        parser.add_argument("--parameter", default="worker_id",
                            choices=[name for name, _ in assigning.WORKER_ID_PARAMETERS],
                            help="the URL parameter that carries the worker id (default worker_id)")
        parser.add_argument("--secret", action="store_true", help="print the campaign's entry secret instead")

    def handle(self, *args, slug, worker_ids, base_url, parameter, secret, **options):
        campaign = Campaign.objects.filter(slug=slug).first()
        if campaign is None:
            raise CommandError(f"no campaign {slug!r}")
        if secret:
            self.stdout.write(campaign.entry_secret)
            return
        if not worker_ids:
            raise CommandError("give at least one worker id (or --secret)")
        for worker_id in worker_ids:
            if not assigning.WORKER_ID_PATTERN.match(worker_id):
                raise CommandError(f"{worker_id!r}: a worker id is 1-255 letters, digits or . @ : + - _")
        if not campaign.require_signed_entry:
            self.stderr.write(f"Note: {slug} does not require signed entry links; its unsigned links work too.")
        for worker_id in worker_ids:
            self.stdout.write(base_url.rstrip("/") + assigning.signed_entry_path(campaign, worker_id, parameter))
